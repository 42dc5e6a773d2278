// fi_msg on RDM and DGRAM endpoints (§2.2.5.4.1), and the send/receive checks fi_tagged shares. RDM sends
// become UET_SEND / UET_TAGGED_SEND requests (digest F.3); DGRAM sends UUD datagrams. Progress is manual:
// the CQ reads and the FEP thread run it, not the data calls (see send_any).
#include <cstring>

#include "softuet.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;

ssize_t send_any(fid_ep* f, const iovec* iov, size_t count, fi_addr_t dest, void* context, uint64_t flags,
                 const uint64_t* data, bool inject, const uint64_t* tag, void* const* desc) {
  Ep* ep = obj<Ep>(f);
  Domain* d = ep->domain;
  if (!iov_ok(iov, count)) return -FI_EINVAL;
  const size_t len = iov_len(iov, count);
  std::lock_guard lock(d->mu);
  if (!ep->enabled) return -FI_EOPBADSTATE;
  if (!(ep->caps & FI_SEND) || (tag && !(ep->caps & FI_TAGGED)) || (!tag && !(ep->caps & FI_MSG)))
    return -FI_EOPNOTSUPP;
  if (tag && ep->type != FI_EP_RDM) return -FI_EOPNOTSUPP;
  if (len > (ep->type == FI_EP_DGRAM ? d->mtu.payload : kMaxRdmMsg)) return -FI_EMSGSIZE;
  if (inject && len > kInjectSize) return -FI_EMSGSIZE;
  if (fault(d, Fault::no_header_data)) data = nullptr;
  // A send runs no progress: the CQ reads (and the FEP thread) do, and a pingpong's turn then costs no
  // system call beyond the one that sends. An RDM send takes the ACKs a CQ read left along (transport_submit).
  // DGRAM endpoints refuse tags (above), so the flags name FI_TAGGED only for a tagged RDM send.
  OpCompletion done;
  done.context = context;
  done.cq_flags = FI_SEND | (tag ? FI_TAGGED : FI_MSG);
  done.want_completion = !inject && (!ep->tx_selective || (flags & FI_COMPLETION));
  done.inject = inject;
  done.len = len;
  done.cntr = ep->cntr_send;
  if (ep->type == FI_EP_RDM) {
    // FI_TRANSMIT_COMPLETE: the completion (or the error, for inject too) is written when every packet
    // of the message is ACKed and the target's response has arrived.
    Dest to;
    if (!resolve_dest(ep, dest, &to)) return -FI_EINVAL;
    OutRequest r;
    const bool tagged_op = tag && !fault(d, Fault::tagged_as_send);
    r.opcode = tagged_op ? wire::ses_request_opcode::UET_TAGGED_SEND : wire::ses_request_opcode::UET_SEND;
    r.match_bits = tag ? *tag : 0;
    if (data) r.header_data = *data;
    r.payload = gather(iov, count, len);
    r.request_length = static_cast<uint32_t>(len);
    // A large message may go as a rendezvous (HPC) or a deferrable send (AI Full).
    std::optional<Deferral> deferral = inject ? std::nullopt : large_send(ep, to, iov, count, desc, r);
    std::vector<OutRequest> msgs;
    msgs.push_back(std::move(r));
    return transport_submit(ep, to, std::move(msgs), std::move(done), std::move(deferral));
  }
  const ssize_t ret = transport_send(ep, dest, iov, count, len, data);
  if (ret) return ret;
  // DGRAM (UUD) is unreliable: the completion follows the hand-off to the kernel.
  complete_op(ep, done, 0, 0);
  return 0;
}

ssize_t recv_any(fid_ep* f, const iovec* iov, size_t count, fi_addr_t src, void* context, uint64_t flags,
                 const uint64_t* tag, uint64_t ignore) {
  Ep* ep = obj<Ep>(f);
  Domain* d = ep->domain;
  if (!iov_ok(iov, count)) return -FI_EINVAL;
  std::lock_guard lock(d->mu);
  if (!ep->enabled) return -FI_EOPBADSTATE;
  if (!(ep->caps & FI_RECV) || (tag && !(ep->caps & FI_TAGGED)) || (!tag && !(ep->caps & FI_MSG)))
    return -FI_EOPNOTSUPP;
  PostedRecv r;
  r.iov.assign(iov, iov + count);
  r.context = context;
  r.src = src;
  r.flags = flags;
  if (flags & FI_AUTH_KEY) {
    if (!(d->cfg.job_id_methods & kJobIdAv)) return -FI_EOPNOTSUPP;  // SOFTUET_JOB_ID_METHODS
    // AV method (spec 2.2.4.3.1-c): src_addr is an auth key handle and only its JobID may use the buffer.
    const std::optional<uint32_t> job = av_auth_key_job(ep->av, src);
    if (!job) return -FI_EINVAL;
    r.job_id = job;
    r.src = FI_ADDR_UNSPEC;
  }
  if (tag) {
    r.tag = *tag;
    r.ignore = ignore;
  }
  // No progress here either: the ACKs a CQ read left wait for the application's next send (or CQ read, or
  // the FEP thread within kFepThreadStandBack), so that they leave together with its next request.
  post_recv(ep, std::move(r), tag != nullptr);
  return 0;
}

namespace {

ssize_t do_send(fid_ep* f, const iovec* iov, size_t count, fi_addr_t dest, void* context, uint64_t flags,
                const uint64_t* data, bool inject, void* const* desc = nullptr) {
  return send_any(f, iov, count, dest, context, flags, data, inject, nullptr, desc);
}

ssize_t do_recv(fid_ep* f, const iovec* iov, size_t count, fi_addr_t src, void* context, uint64_t flags) {
  return recv_any(f, iov, count, src, context, flags, nullptr, 0);
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
ssize_t ep_send(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest, void* context) {
  iovec iov{const_cast<void*>(buf), len};
  return do_send(ep, &iov, 1, dest, context, obj<Ep>(ep)->tx_op_flags, nullptr, false, &desc);
}
ssize_t ep_sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest, void* context) {
  return do_send(ep, iov, count, dest, context, obj<Ep>(ep)->tx_op_flags, nullptr, false, desc);
}
ssize_t ep_sendmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  if (!msg) return -FI_EINVAL;
  const uint64_t data = msg->data;
  return do_send(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->context, flags,
                 (flags & FI_REMOTE_CQ_DATA) ? &data : nullptr, false, msg->desc);
}
ssize_t ep_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest) {
  iovec iov{const_cast<void*>(buf), len};
  return do_send(ep, &iov, 1, dest, nullptr, 0, nullptr, true);
}
ssize_t ep_senddata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data, fi_addr_t dest, void* context) {
  iovec iov{const_cast<void*>(buf), len};
  return do_send(ep, &iov, 1, dest, context, obj<Ep>(ep)->tx_op_flags, &data, false, &desc);
}
ssize_t ep_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest) {
  iovec iov{const_cast<void*>(buf), len};
  return do_send(ep, &iov, 1, dest, nullptr, 0, &data, true);
}

}  // namespace

fi_ops_msg g_msg_ops = {sizeof(fi_ops_msg), ep_recv,     ep_recvv,  ep_recvmsg,   ep_send,
                        ep_sendv,           ep_sendmsg,  ep_inject, ep_senddata,  ep_injectdata};

}  // namespace softuet
