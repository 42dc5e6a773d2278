// fi_tagged on RDM endpoints (§2.2.5.4.2): UET_TAGGED_SEND with ses.match_bits = tag (digest F.3), and
// tagged receives matched under `ignore`. Wildcards (any ignore bit) only where a profile allows them:
// HPC MUST support them, AI Full MUST reject them (digest F.2).
#include <rdma/fi_tagged.h>

#include "softuet.hpp"

namespace softuet {

namespace {

// A FEP advertising HPC supports wildcard matching; one advertising AI Full without HPC rejects it.
bool wildcard_allowed(const Ep* ep) {
  if (fault(ep->domain, Fault::wildcard_in_ai_full)) return true;
  return ep->domain->cfg.fep_caps & kCapHpc;
}

ssize_t trecv_checked(fid_ep* f, const iovec* iov, size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore,
                      void* context, uint64_t flags) {
  if (ignore && !wildcard_allowed(obj<Ep>(f))) return -FI_EINVAL;
  return recv_any(f, iov, count, src, context, flags, &tag, ignore);
}

ssize_t t_recv(fid_ep* ep, void* buf, size_t len, void*, fi_addr_t src, uint64_t tag, uint64_t ignore,
               void* context) {
  iovec iov{buf, len};
  return trecv_checked(ep, &iov, 1, src, tag, ignore, context, obj<Ep>(ep)->rx_op_flags);
}
ssize_t t_recvv(fid_ep* ep, const iovec* iov, void**, size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore,
                void* context) {
  return trecv_checked(ep, iov, count, src, tag, ignore, context, obj<Ep>(ep)->rx_op_flags);
}
ssize_t t_recvmsg(fid_ep* ep, const fi_msg_tagged* msg, uint64_t flags) {
  if (!msg) return -FI_EINVAL;
  if (flags & (FI_MULTI_RECV | FI_PEEK | FI_CLAIM)) return -FI_EOPNOTSUPP;
  return trecv_checked(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->tag, msg->ignore, msg->context, flags);
}

// The tag that goes on the wire: a fault knob may corrupt it to prove the tag check can fail.
uint64_t wire_tag(fid_ep* ep, uint64_t tag) {
  return fault(obj<Ep>(ep)->domain, Fault::wrong_match_bits) ? tag ^ 1 : tag;
}

ssize_t t_send(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest, uint64_t tag, void* context) {
  iovec iov{const_cast<void*>(buf), len};
  const uint64_t t = wire_tag(ep, tag);
  return send_any(ep, &iov, 1, dest, context, obj<Ep>(ep)->tx_op_flags, nullptr, false, &t, &desc);
}
ssize_t t_sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest, uint64_t tag, void* context) {
  const uint64_t t = wire_tag(ep, tag);
  return send_any(ep, iov, count, dest, context, obj<Ep>(ep)->tx_op_flags, nullptr, false, &t, desc);
}
ssize_t t_sendmsg(fid_ep* ep, const fi_msg_tagged* msg, uint64_t flags) {
  if (!msg) return -FI_EINVAL;
  const uint64_t data = msg->data;
  const uint64_t t = wire_tag(ep, msg->tag);
  return send_any(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->context, flags,
                  (flags & FI_REMOTE_CQ_DATA) ? &data : nullptr, false, &t, msg->desc);
}
ssize_t t_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest, uint64_t tag) {
  iovec iov{const_cast<void*>(buf), len};
  const uint64_t t = wire_tag(ep, tag);
  return send_any(ep, &iov, 1, dest, nullptr, 0, nullptr, true, &t);
}
ssize_t t_senddata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data, fi_addr_t dest, uint64_t tag,
                   void* context) {
  iovec iov{const_cast<void*>(buf), len};
  const uint64_t t = wire_tag(ep, tag);
  return send_any(ep, &iov, 1, dest, context, obj<Ep>(ep)->tx_op_flags, &data, false, &t, &desc);
}
ssize_t t_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest, uint64_t tag) {
  iovec iov{const_cast<void*>(buf), len};
  const uint64_t t = wire_tag(ep, tag);
  return send_any(ep, &iov, 1, dest, nullptr, 0, &data, true, &t);
}

}  // namespace

fi_ops_tagged g_tagged_ops = {sizeof(fi_ops_tagged), t_recv,   t_recvv,     t_recvmsg,   t_send,
                              t_sendv,               t_sendmsg, t_inject,   t_senddata,  t_injectdata};

}  // namespace softuet
