// Endpoints (FI_EP_RDM, FI_EP_DGRAM): bindings, enable, getname, options. Each endpoint gets one resource
// index of the domain's FEP (RI >= 1); the data path is in msg.cpp and the transport (transport.cpp, receive.cpp).
#include <algorithm>
#include <cstring>

#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "softuet.hpp"

namespace softuet {

namespace {

// The endpoint's counter slots, by fi_ep_bind flag (fi_endpoint(3); FI_TRANSMIT is FI_SEND). fi_endpoint(3)
// ties FI_REMOTE_READ/WRITE to FI_RMA_EVENT, which softuet does not advertise; they are accepted anyway,
// so a target-side counter works without the application asking for the capability.
struct CntrSlot {
  uint64_t flag;
  Cntr* Ep::*slot;
};
constexpr CntrSlot kCntrSlots[] = {
    {FI_SEND, &Ep::cntr_send},
    {FI_RECV, &Ep::cntr_recv},
    {FI_READ, &Ep::cntr_read},
    {FI_WRITE, &Ep::cntr_write},
    {FI_REMOTE_READ, &Ep::cntr_remote_read},
    {FI_REMOTE_WRITE, &Ep::cntr_remote_write},
};

// Caller holds the domain lock. All or nothing: a refused bind leaves every slot as it was.
int bind_cntr(Ep* ep, Cntr* c, uint64_t flags) {
  if (c->domain != ep->domain) return -FI_EINVAL;
  uint64_t known = 0;
  for (const CntrSlot& s : kCntrSlots) known |= s.flag;
  if (!flags || (flags & ~known)) return -FI_EBADFLAGS;
  // "An endpoint may only be bound to a single CQ or counter for a given type of operation."
  for (const CntrSlot& s : kCntrSlots)
    if ((flags & s.flag) && ep->*s.slot) return -FI_EINVAL;
  for (const CntrSlot& s : kCntrSlots) {
    if (!(flags & s.flag)) continue;
    ep->*s.slot = c;
    ++c->binds;
  }
  return 0;
}

void unbind_cntrs(Ep* ep) {
  for (const CntrSlot& s : kCntrSlots) {
    if (Cntr* c = ep->*s.slot) --c->binds;
    ep->*s.slot = nullptr;
  }
}

int ep_close(fid* f) {
  Ep* ep = obj<Ep>(f);
  Domain* d = ep->domain;
  transport_close_ep(ep);
  {
    std::lock_guard lock(d->mu);
    d->eps.erase(std::remove(d->eps.begin(), d->eps.end(), ep), d->eps.end());
    unbind_cntrs(ep);
  }
  delete ep;
  return 0;
}

int ep_bind(fid* f, fid* bfid, uint64_t flags) {
  Ep* ep = obj<Ep>(f);
  if (!bfid) return -FI_EINVAL;
  std::lock_guard lock(ep->domain->mu);
  if (ep->enabled) return -FI_EOPBADSTATE;
  switch (bfid->fclass) {
    case FI_CLASS_CQ: {
      Cq* cq = obj<Cq>(bfid);
      if (cq->domain != ep->domain) return -FI_EINVAL;
      if (flags & ~uint64_t{FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION}) return -FI_EBADFLAGS;
      if (!(flags & (FI_TRANSMIT | FI_RECV))) return -FI_EBADFLAGS;
      if (flags & FI_TRANSMIT) {
        if (ep->tx_cq) return -FI_EINVAL;
        ep->tx_cq = cq;
        ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
      }
      if (flags & FI_RECV) {
        if (ep->rx_cq) return -FI_EINVAL;
        ep->rx_cq = cq;
        ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
      }
      return 0;
    }
    case FI_CLASS_AV: {
      Av* av = obj<Av>(bfid);
      if (av->domain != ep->domain || ep->av) return -FI_EINVAL;
      if (flags) return -FI_EBADFLAGS;
      ep->av = av;
      return 0;
    }
    case FI_CLASS_EQ:
      if (flags) return -FI_EBADFLAGS;
      ep->eq = obj<Eq>(bfid);
      return 0;
    case FI_CLASS_MR:
      return mr_bind_ep(obj<Mr>(bfid), ep);
    case FI_CLASS_CNTR:
      return bind_cntr(ep, obj<Cntr>(bfid), flags);
    default:
      return -FI_EINVAL;
  }
}

int ep_enable(Ep* ep) {
  {
    std::lock_guard lock(ep->domain->mu);
    // A connectionless endpoint needs an AV to name peers, and somewhere to report completions.
    if (!ep->av) return -FI_ENOAV;
    if (!ep->tx_cq && (ep->caps & FI_SEND)) return -FI_ENOCQ;
    if (!ep->rx_cq && (ep->caps & FI_RECV)) return -FI_ENOCQ;
    ep->enabled = true;
  }
  // Outside the domain's mutex: stopping a FEP thread waits for that mutex under fep_thread.cpp's lock.
  if (ep->type == FI_EP_RDM) fep_thread_start(ep->domain);
  return 0;
}

int ep_control(fid* f, int command, void* arg) {
  Ep* ep = obj<Ep>(f);
  if (command == FI_ENABLE) return ep_enable(ep);
  std::lock_guard lock(ep->domain->mu);
  switch (command) {
    case FI_GETOPSFLAG: {
      if (!arg) return -FI_EINVAL;
      auto* flags = static_cast<uint64_t*>(arg);
      if (*flags & FI_TRANSMIT) *flags = ep->tx_op_flags;
      else if (*flags & FI_RECV) *flags = ep->rx_op_flags;
      else return -FI_EINVAL;
      return 0;
    }
    case FI_SETOPSFLAG: {
      if (!arg) return -FI_EINVAL;
      uint64_t flags = *static_cast<uint64_t*>(arg);
      if (flags & FI_TRANSMIT) ep->tx_op_flags = flags & ~uint64_t{FI_TRANSMIT};
      else if (flags & FI_RECV) ep->rx_op_flags = flags & ~uint64_t{FI_RECV};
      else return -FI_EINVAL;
      return 0;
    }
    default:
      return -FI_ENOSYS;
  }
}

int ep_getname(fid* f, void* addr, size_t* addrlen) {
  Ep* ep = obj<Ep>(f);
  if (!addrlen) return -FI_EINVAL;
  const Domain* d = ep->domain;
  softuet_addr a = make_addr(d->cfg, d->ip, d->pid_on_fep, ep->resource_index, d->initiator);
  if (fault(d, Fault::getname_no_caps)) a.uet.flags &= ~kAddrFlagCapsValid;
  const size_t given = *addrlen, size = addr_blob_size(d->cfg.addr_layout);
  *addrlen = size;
  if (given < size || !addr) return -FI_ETOOSMALL;
  addr_to_blob(d->cfg, a, addr);
  return 0;
}

int ep_getopt(fid* f, int level, int optname, void* optval, size_t* optlen) {
  Ep* ep = obj<Ep>(f);
  if (level != FI_OPT_ENDPOINT) return -FI_ENOPROTOOPT;
  if (!optval || !optlen) return -FI_EINVAL;
  switch (optname) {
    case FI_OPT_MIN_MULTI_RECV:
      return -FI_ENOPROTOOPT;  // no FI_MULTI_RECV
    case FI_OPT_CM_DATA_SIZE:
      if (*optlen < sizeof(size_t)) return -FI_ETOOSMALL;
      *static_cast<size_t*>(optval) = 0;
      *optlen = sizeof(size_t);
      return 0;
    case FI_OPT_MAX_MSG_SIZE:
      if (*optlen < sizeof(size_t)) return -FI_ETOOSMALL;
      *static_cast<size_t*>(optval) = ep->type == FI_EP_DGRAM ? ep->domain->mtu.payload : kMaxRdmMsg;
      *optlen = sizeof(size_t);
      return 0;
    case FI_OPT_MAX_TAGGED_SIZE:
    case FI_OPT_MAX_ATOMIC_SIZE:
      if (ep->type != FI_EP_RDM) return -FI_ENOPROTOOPT;
      if (*optlen < sizeof(size_t)) return -FI_ETOOSMALL;
      *static_cast<size_t*>(optval) = kMaxRdmMsg;
      *optlen = sizeof(size_t);
      return 0;
    case FI_OPT_MAX_RMA_SIZE:
      if (ep->type != FI_EP_RDM) return -FI_ENOPROTOOPT;
      if (*optlen < sizeof(size_t)) return -FI_ETOOSMALL;
      *static_cast<size_t*>(optval) = ep->max_rma_size;
      *optlen = sizeof(size_t);
      return 0;
    case FI_OPT_INJECT_MSG_SIZE:
    case FI_OPT_INJECT_TAGGED_SIZE:
    case FI_OPT_INJECT_RMA_SIZE:
    case FI_OPT_INJECT_ATOMIC_SIZE:
      if (*optlen < sizeof(size_t)) return -FI_ETOOSMALL;
      *static_cast<size_t*>(optval) = kInjectSize;
      *optlen = sizeof(size_t);
      return 0;
    default:
      return -FI_ENOPROTOOPT;
  }
}

int ep_setopt(fid* f, int level, int optname, const void* optval, size_t optlen) {
  Ep* ep = obj<Ep>(f);
  if (level != FI_OPT_ENDPOINT) return -FI_ENOPROTOOPT;
  if (!optval) return -FI_EINVAL;
  if (optname != FI_OPT_MAX_RMA_SIZE || ep->type != FI_EP_RDM) return -FI_ENOPROTOOPT;
  if (optlen != sizeof(size_t)) return -FI_EINVAL;
  // The maximum RMA message size stays within [1 GiB, 4 GiB - 1] (spec 2.2.2-f).
  const size_t v = *static_cast<const size_t*>(optval);
  if (v < kMinMaxRmaSize || v > kMaxMaxRmaSize) return -FI_EINVAL;
  std::lock_guard lock(ep->domain->mu);
  if (ep->enabled) return -FI_EOPBADSTATE;
  ep->max_rma_size = v;
  return 0;
}

ssize_t ep_cancel(fid* f, void* context) {
  Ep* ep = obj<Ep>(f);
  std::lock_guard lock(ep->domain->mu);
  for (auto* queue : {&ep->posted, &ep->posted_tagged}) {
    for (auto it = queue->begin(); it != queue->end(); ++it) {
      if (it->context != context) continue;
      fi_cq_err_entry e{};
      e.op_context = context;
      e.flags = FI_RECV | (queue == &ep->posted ? FI_MSG : FI_TAGGED);
      e.tag = it->tag;
      e.err = FI_ECANCELED;
      e.prov_errno = -FI_ECANCELED;
      if (ep->rx_cq) cq_push_error(ep->rx_cq, e);
      queue->erase(it);
      return 0;
    }
  }
  return -FI_ENOENT;
}

ssize_t ep_rx_size_left(fid_ep* f) {
  Ep* ep = obj<Ep>(f);
  std::lock_guard lock(ep->domain->mu);
  return static_cast<ssize_t>(kQueueDepth - std::min(kQueueDepth, ep->posted.size()));
}

ssize_t ep_tx_size_left(fid_ep*) { return static_cast<ssize_t>(kQueueDepth); }

fi_ops g_ep_fi_ops = {sizeof(fi_ops), ep_close, ep_bind, ep_control, enosys, enosys, enosys};
fi_ops_ep g_ep_ops = {sizeof(fi_ops_ep), ep_cancel, ep_getopt, ep_setopt, enosys, enosys, ep_rx_size_left,
                      ep_tx_size_left};
fi_ops_cm g_cm_ops = {sizeof(fi_ops_cm), enosys, ep_getname, enosys, enosys, enosys,
                      enosys,            enosys, enosys,     enosys};
fi_ops_collective g_coll_ops = {sizeof(fi_ops_collective), enosys, enosys, enosys, enosys, enosys,
                                enosys, enosys, enosys, enosys, enosys, enosys};

bool ri_taken(const Domain* d, uint32_t ri) {
  for (const Ep* e : d->eps)
    if (e->resource_index == ri) return true;
  return false;
}

// The endpoint's resource index (digest C.6: exactly one application-visible RI per fi_endpoint): the first
// free one of the range fi_getinfo's service put in src_addr, else the next free one of the domain. RI 0 is
// reserved (digest C.2). Called with d->mu held.
int take_resource_index(Domain* d, const fi_info* info) {
  const uint32_t limit = 1u << uet::wire::k_resource_index_bits;
  const std::optional<softuet_addr> src = addr_from_blob(d->cfg, info->src_addr, info->src_addrlen);
  if (src && src->uet.num_indices && (src->uet.flags & kAddrFlagIndexValid)) {
    const uint32_t start = src->uet.start_index, end = start + src->uet.num_indices;
    if (start == 0 || end > limit) return -FI_EINVAL;
    for (uint32_t ri = start; ri < end; ++ri)
      if (!ri_taken(d, ri)) return static_cast<int>(ri);
    return -FI_EADDRINUSE;
  }
  for (uint32_t tries = 1; tries < limit; ++tries) {
    const uint32_t ri = d->next_ri;
    d->next_ri = static_cast<uint16_t>(ri + 1 < limit ? ri + 1 : 1);
    if (!ri_taken(d, ri)) return static_cast<int>(ri);
  }
  return -FI_ENOSPC;
}

}  // namespace

int ep_open(fid_domain* domain, fi_info* info, fid_ep** out, void* context) {
  if (!domain || !info || !out || !info->ep_attr) return -FI_EINVAL;
  Domain* d = obj<Domain>(domain);
  if (info->ep_attr->type != FI_EP_RDM && info->ep_attr->type != FI_EP_DGRAM) return -FI_EINVAL;
  if (!(info->ep_attr->type == FI_EP_RDM ? d->cfg.offers_rdm : d->cfg.offers_dgram)) {
    FI_WARN(&g_prov, FI_LOG_EP_CTRL, "%s endpoints are not offered (SOFTUET_EP_TYPES)\n",
            fi_tostr(&info->ep_attr->type, FI_TYPE_EP_TYPE));
    return -FI_EINVAL;
  }
  auto* ep = new (std::nothrow) Ep;
  if (!ep) return -FI_ENOMEM;
  ep->domain = d;
  ep->type = info->ep_attr->type;
  ep->caps = info->caps ? info->caps : (FI_MSG | FI_SEND | FI_RECV);
  if (!(ep->caps & (FI_SEND | FI_RECV))) ep->caps |= FI_SEND | FI_RECV;
  if (info->tx_attr) ep->tx_op_flags = info->tx_attr->op_flags;
  if (info->rx_attr) ep->rx_op_flags = info->rx_attr->op_flags;
  if (ep->type == FI_EP_RDM && info->tx_attr) {
    ep->mode = rdm_mode(info->tx_attr->msg_order);
    if (fault(d, Fault::ordering_ignored)) ep->mode = pds::Mode::rud;
  }
  if (int ret = ep_job_id(d, info, &ep->job_id)) {
    delete ep;
    return ret;
  }
  {
    std::lock_guard lock(d->mu);
    const int ri = take_resource_index(d, info);
    if (ri < 0) {
      delete ep;
      return ri;
    }
    ep->resource_index = static_cast<uint16_t>(ri);
    d->eps.push_back(ep);
  }
  ep->fid.fid.fclass = FI_CLASS_EP;
  ep->fid.fid.context = context;
  ep->fid.fid.ops = &g_ep_fi_ops;
  ep->fid.ops = &g_ep_ops;
  ep->fid.cm = &g_cm_ops;
  ep->fid.msg = &g_msg_ops;
  ep->fid.rma = &g_rma_ops;
  ep->fid.tagged = &g_tagged_ops;
  ep->fid.atomic = &g_atomic_ops;
  ep->fid.collective = &g_coll_ops;
  *out = &ep->fid;
  return 0;
}

}  // namespace softuet
