// fi_rma on RDM endpoints (§2.2.5.4.3; digest F.3 Table 2-25): writes are UET_WRITE requests carrying the
// data, reads are UET_READ requests answered by UET_RESPONSE_W_DATA. ses.memory_key is the target MR's
// key and ses.buffer_offset the offset in it (softuet does not use FI_MR_VIRT_ADDR). A read is split into
// requests of one payload MTU, so each response carries one whole message's data in one packet.
#include <rdma/fi_rma.h>

#include <cstring>

#include "softuet.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;

namespace {

struct RmaCall {
  const iovec* iov;
  size_t count;
  fi_addr_t dest;
  uint64_t addr;
  uint64_t key;
  void* context;
  uint64_t flags;
  const uint64_t* data;
  bool inject;
};

// What every RMA call does before its requests: the checks (the iovec first, so its length is never read
// from a bad one), the destination, the length, and progress. Caller holds the lock.
ssize_t rma_begin(Ep* ep, const RmaCall& c, uint64_t cap, size_t* len_out, Dest* to) {
  if (!iov_ok(c.iov, c.count)) return -FI_EINVAL;
  const size_t len = iov_len(c.iov, c.count);
  if (!ep->enabled) return -FI_EOPBADSTATE;
  // fi_rma is not supported on FI_EP_DGRAM (spec 2.2.5.4.3-a).
  if (ep->type != FI_EP_RDM || !(ep->caps & FI_RMA) || !(ep->caps & cap)) return -FI_EOPNOTSUPP;
  if (len > ep->max_rma_size) return -FI_EMSGSIZE;
  if (c.inject && len > kInjectSize) return -FI_EMSGSIZE;
  if (!resolve_dest(ep, c.dest, to)) return -FI_EINVAL;
  progress_deferring_output(ep->domain);  // the ACKs go with the request
  *len_out = len;
  return 0;
}

OpCompletion rma_completion(const Ep* ep, const RmaCall& c, uint64_t cq_flags, size_t len, Cntr* cntr) {
  OpCompletion done;
  done.context = c.context;
  done.cq_flags = cq_flags;
  done.want_completion = !c.inject && (!ep->tx_selective || (c.flags & FI_COMPLETION));
  done.len = len;
  done.cntr = cntr;
  return done;
}

ssize_t do_write(fid_ep* f, const RmaCall& c) {
  Ep* ep = obj<Ep>(f);
  Domain* d = ep->domain;
  std::lock_guard lock(d->mu);
  Dest to;
  size_t len = 0;
  if (ssize_t ret = rma_begin(ep, c, FI_WRITE, &len, &to)) return ret;
  OutRequest r;
  r.opcode = fault(d, Fault::wrong_rma_opcode) ? wire::ses_request_opcode::UET_SEND : wire::ses_request_opcode::UET_WRITE;
  r.match_bits = c.key;
  r.buffer_offset = c.addr;
  if (c.data) r.header_data = *c.data;
  r.payload = gather(c.iov, c.count, len);
  r.request_length = static_cast<uint32_t>(len);
  std::vector<OutRequest> msgs;
  msgs.push_back(std::move(r));
  return transport_submit(ep, to, std::move(msgs), rma_completion(ep, c, FI_WRITE | FI_RMA, len, ep->cntr_write));
}

ssize_t do_read(fid_ep* f, const RmaCall& c) {
  Ep* ep = obj<Ep>(f);
  std::lock_guard lock(ep->domain->mu);
  Dest to;
  size_t len = 0;
  if (ssize_t ret = rma_begin(ep, c, FI_READ, &len, &to)) return ret;
  std::vector<OutRequest> msgs;
  size_t off = 0;
  do {
    OutRequest r;
    r.opcode = wire::ses_request_opcode::UET_READ;
    r.match_bits = c.key;
    r.buffer_offset = c.addr + off;
    r.request_length = static_cast<uint32_t>(std::min(ep->domain->mtu.payload, len - off));
    r.result_offset = off;
    off += r.request_length;
    msgs.push_back(std::move(r));
  } while (off < len);
  OpCompletion done = rma_completion(ep, c, FI_READ | FI_RMA, len, ep->cntr_read);  // reads never inject
  done.result.assign(c.iov, c.iov + c.count);
  return transport_submit(ep, to, std::move(msgs), std::move(done));
}

ssize_t r_read(fid_ep* ep, void* buf, size_t len, void*, fi_addr_t src, uint64_t addr, uint64_t key, void* ctx) {
  iovec iov{buf, len};
  return do_read(ep, {&iov, 1, src, addr, key, ctx, obj<Ep>(ep)->tx_op_flags, nullptr, false});
}
ssize_t r_readv(fid_ep* ep, const iovec* iov, void**, size_t count, fi_addr_t src, uint64_t addr, uint64_t key,
                void* ctx) {
  return do_read(ep, {iov, count, src, addr, key, ctx, obj<Ep>(ep)->tx_op_flags, nullptr, false});
}
ssize_t r_readmsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov) return -FI_EINVAL;
  return do_read(ep, {msg->msg_iov, msg->iov_count, msg->addr, msg->rma_iov[0].addr, msg->rma_iov[0].key,
                      msg->context, flags, nullptr, false});
}
ssize_t r_write(fid_ep* ep, const void* buf, size_t len, void*, fi_addr_t dest, uint64_t addr, uint64_t key,
                void* ctx) {
  iovec iov{const_cast<void*>(buf), len};
  return do_write(ep, {&iov, 1, dest, addr, key, ctx, obj<Ep>(ep)->tx_op_flags, nullptr, false});
}
ssize_t r_writev(fid_ep* ep, const iovec* iov, void**, size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
                 void* ctx) {
  return do_write(ep, {iov, count, dest, addr, key, ctx, obj<Ep>(ep)->tx_op_flags, nullptr, false});
}
ssize_t r_writemsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov) return -FI_EINVAL;
  const uint64_t data = msg->data;
  return do_write(ep, {msg->msg_iov, msg->iov_count, msg->addr, msg->rma_iov[0].addr, msg->rma_iov[0].key,
                       msg->context, flags, (flags & FI_REMOTE_CQ_DATA) ? &data : nullptr, false});
}
ssize_t r_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest, uint64_t addr, uint64_t key) {
  iovec iov{const_cast<void*>(buf), len};
  return do_write(ep, {&iov, 1, dest, addr, key, nullptr, 0, nullptr, true});
}
ssize_t r_writedata(fid_ep* ep, const void* buf, size_t len, void*, uint64_t data, fi_addr_t dest, uint64_t addr,
                    uint64_t key, void* ctx) {
  iovec iov{const_cast<void*>(buf), len};
  return do_write(ep, {&iov, 1, dest, addr, key, ctx, obj<Ep>(ep)->tx_op_flags, &data, false});
}
ssize_t r_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest, uint64_t addr,
                     uint64_t key) {
  iovec iov{const_cast<void*>(buf), len};
  return do_write(ep, {&iov, 1, dest, addr, key, nullptr, 0, &data, true});
}

}  // namespace

fi_ops_rma g_rma_ops = {sizeof(fi_ops_rma), r_read,    r_readv,     r_readmsg,  r_write,
                        r_writev,           r_writemsg, r_inject,   r_writedata, r_injectdata};

Response rma_target(Ep* ep, InRequest&& req) {
  Response rsp;
  const bool write = req.opcode == wire::ses_request_opcode::UET_WRITE;
  const size_t len = write ? req.payload.size() : req.request_length;
  // A read's data come back in one packet (UET_RESPONSE_W_DATA): no more than this FEP's payload MTU. The
  // initiator splits reads so; one that asks for more has a larger payload MTU than the fabric's.
  if (!write && len > ep->domain->mtu.payload) {
    rsp.rc = wire::ses_return_code::RC_UNSUPPORTED_SIZE;
    return rsp;
  }
  Mr* mr = mr_for_access(ep, req.match_bits, req.buffer_offset, len, write ? FI_REMOTE_WRITE : FI_REMOTE_READ,
                         req.job_id, &rsp.rc);
  if (!mr) return rsp;
  const size_t n = req.buffer_offset > mr->len ? 0 : std::min(len, mr->len - req.buffer_offset);
  auto* target = static_cast<uint8_t*>(const_cast<void*>(mr->buf)) + req.buffer_offset;
  rsp.modified_length = static_cast<uint32_t>(n);
  if (!write) {
    cntr_success(ep->cntr_remote_read, n);
    rsp.with_data = true;
    rsp.data.assign(target, target + n);
    return rsp;
  }
  if (n) std::memcpy(target, req.payload.data(), n);
  cntr_success(ep->cntr_remote_write, n);
  cntr_success(mr->cntr, n);
  // Remote CQ data of a write completes at the target (FI_REMOTE_CQ_DATA, fi_rma(3)).
  if (req.header_data && ep->rx_cq) {
    Completion c;
    c.flags = FI_REMOTE_WRITE | FI_RMA | FI_REMOTE_CQ_DATA;
    c.len = n;
    c.data = *req.header_data;
    c.src = av_reverse(ep->av, req.src, req.initiator);
    cq_push(ep->rx_cq, c);
  }
  return rsp;
}

}  // namespace softuet
