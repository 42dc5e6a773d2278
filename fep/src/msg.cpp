// fi_msg on RDM and DGRAM endpoints (§2.2.5.4.1): sends, and posted receives matched in posting order.
// Every call runs the domain's progress first (manual progress).
#include <cstring>

#include "softuet.hpp"

namespace softuet {

namespace {

size_t iov_len(const iovec* iov, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) n += iov[i].iov_len;
  return n;
}

ssize_t do_send(fid_ep* f, const iovec* iov, size_t count, fi_addr_t dest, void* context, uint64_t flags,
                const uint64_t* data, bool inject) {
  Ep* ep = obj<Ep>(f);
  Domain* d = ep->domain;
  if (count > kIovLimit || (count && !iov)) return -FI_EINVAL;
  for (size_t i = 0; i < count; ++i)
    if (iov[i].iov_len && !iov[i].iov_base) return -FI_EINVAL;
  const size_t len = iov_len(iov, count);
  std::lock_guard lock(d->mu);
  if (!ep->enabled) return -FI_EOPBADSTATE;
  if (!(ep->caps & FI_SEND)) return -FI_EOPNOTSUPP;
  if (len > (ep->type == FI_EP_DGRAM ? kPayloadMtu : kMaxRdmMsg)) return -FI_EMSGSIZE;
  if (inject && len > kInjectSize) return -FI_EMSGSIZE;
  softuet_addr to;
  if (!ep->av || !av_lookup(ep->av, dest, &to)) return -FI_EINVAL;
  progress(d);
  const bool want = !inject && (!ep->tx_selective || (flags & FI_COMPLETION));
  if (ep->type == FI_EP_RDM) {
    // FI_TRANSMIT_COMPLETE: the completion (or the error, for inject too) is written when every packet
    // of the message is ACKed (or one of them runs out of retransmissions).
    return transport_send_rdm(ep, to, iov, count, len, data, context, want);
  }
  const ssize_t ret = transport_send(ep, to, iov, count, len, data);
  if (ret) return ret;
  // DGRAM (UUD) is unreliable: the completion follows the hand-off to the kernel.
  if (want && ep->tx_cq) {
    Completion c;
    c.context = context;
    c.flags = FI_SEND | FI_MSG;
    cq_push(ep->tx_cq, c);
  }
  return 0;
}

ssize_t do_recv(fid_ep* f, const iovec* iov, size_t count, fi_addr_t src, void* context, uint64_t flags) {
  Ep* ep = obj<Ep>(f);
  Domain* d = ep->domain;
  if (count > kIovLimit || (count && !iov)) return -FI_EINVAL;
  for (size_t i = 0; i < count; ++i)
    if (iov[i].iov_len && !iov[i].iov_base) return -FI_EINVAL;
  std::lock_guard lock(d->mu);
  if (!ep->enabled) return -FI_EOPBADSTATE;
  if (!(ep->caps & FI_RECV)) return -FI_EOPNOTSUPP;
  // src_addr directs a receive only with FI_DIRECTED_RECV, which softuet does not offer yet, so it is
  // ignored as fi_msg(3) says (fi_pingpong passes 0 before its AV holds anything).
  PostedRecv r;
  r.iov.assign(iov, iov + count);
  r.context = context;
  r.src = src;
  r.flags = flags;
  if (!ep->unexpected.empty()) {
    Message m = std::move(ep->unexpected.front());
    ep->unexpected.pop_front();
    complete_recv(ep, r, m);
  } else {
    ep->posted.push_back(std::move(r));
  }
  progress(d);
  return 0;
}

ssize_t ep_recv(fid_ep* ep, void* buf, size_t len, void*, fi_addr_t src, void* context) {
  iovec iov{buf, len};
  return do_recv(ep, &iov, 1, src, context, obj<Ep>(ep)->rx_op_flags);
}
ssize_t ep_recvv(fid_ep* ep, const iovec* iov, void**, size_t count, fi_addr_t src, void* context) {
  return do_recv(ep, iov, count, src, context, obj<Ep>(ep)->rx_op_flags);
}
ssize_t ep_recvmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  if (!msg) return -FI_EINVAL;
  if (flags & FI_MULTI_RECV) return -FI_EOPNOTSUPP;
  return do_recv(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->context, flags);
}
ssize_t ep_send(fid_ep* ep, const void* buf, size_t len, void*, fi_addr_t dest, void* context) {
  iovec iov{const_cast<void*>(buf), len};
  return do_send(ep, &iov, 1, dest, context, obj<Ep>(ep)->tx_op_flags, nullptr, false);
}
ssize_t ep_sendv(fid_ep* ep, const iovec* iov, void**, size_t count, fi_addr_t dest, void* context) {
  return do_send(ep, iov, count, dest, context, obj<Ep>(ep)->tx_op_flags, nullptr, false);
}
ssize_t ep_sendmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  if (!msg) return -FI_EINVAL;
  const uint64_t data = msg->data;
  return do_send(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->context, flags,
                 (flags & FI_REMOTE_CQ_DATA) ? &data : nullptr, false);
}
ssize_t ep_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest) {
  iovec iov{const_cast<void*>(buf), len};
  return do_send(ep, &iov, 1, dest, nullptr, 0, nullptr, true);
}
ssize_t ep_senddata(fid_ep* ep, const void* buf, size_t len, void*, uint64_t data, fi_addr_t dest, void* context) {
  iovec iov{const_cast<void*>(buf), len};
  return do_send(ep, &iov, 1, dest, context, obj<Ep>(ep)->tx_op_flags, &data, false);
}
ssize_t ep_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest) {
  iovec iov{const_cast<void*>(buf), len};
  return do_send(ep, &iov, 1, dest, nullptr, 0, &data, true);
}

}  // namespace

fi_ops_msg g_msg_ops = {sizeof(fi_ops_msg), ep_recv,     ep_recvv,  ep_recvmsg,   ep_send,
                        ep_sendv,           ep_sendmsg,  ep_inject, ep_senddata,  ep_injectdata};

void complete_recv(Ep* ep, const PostedRecv& r, const Message& m) {
  size_t copied = 0;
  for (const iovec& v : r.iov) {
    const size_t n = std::min(v.iov_len, m.data.size() - copied);
    if (n) std::memcpy(v.iov_base, m.data.data() + copied, n);
    copied += n;
    if (copied == m.data.size()) break;
  }
  const uint64_t flags = FI_RECV | FI_MSG | (m.has_data ? FI_REMOTE_CQ_DATA : 0);
  void* buf = r.iov.empty() ? nullptr : r.iov[0].iov_base;
  if (!ep->rx_cq) return;
  if (copied < m.data.size()) {
    fi_cq_err_entry e{};
    e.op_context = r.context;
    e.flags = flags;
    e.len = copied;
    e.buf = buf;
    e.data = m.header_data;
    e.olen = m.data.size() - copied;
    e.err = FI_ETRUNC;
    e.prov_errno = -FI_ETRUNC;
    cq_push_error(ep->rx_cq, e);
    return;
  }
  if (ep->rx_selective && !(r.flags & FI_COMPLETION)) return;
  Completion c;
  c.context = r.context;
  c.flags = flags;
  c.len = copied;
  c.buf = buf;
  c.data = m.header_data;
  c.src = av_reverse(ep->av, m.src_ipv4, m.src_port, m.initiator);
  cq_push(ep->rx_cq, c);
}

bool deliver(Ep* ep, Message&& m) {
  if (!ep->posted.empty()) {
    PostedRecv r = std::move(ep->posted.front());
    ep->posted.pop_front();
    complete_recv(ep, r, m);
    return true;
  }
  // No posted receive: keep the message for the next one. Bounded, like a NIC's overflow list; beyond it
  // the message is dropped (the RC_NO_MATCH response comes with the error milestone).
  if (ep->unexpected.size() < kQueueDepth) ep->unexpected.push_back(std::move(m));
  return false;
}

}  // namespace softuet
