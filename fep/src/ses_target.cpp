// SES semantics on both ends of a request: at the target, a whole request message is carried out by the
// part of softuet its opcode belongs to (digest F.3); at the initiator, an operation's completion or error
// entry is written (spec 2.2.5.6: err is the libfabric code, prov_errno the SES return code).
#include "softuet.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;

Response execute(Ep* ep, InRequest&& req) {
  if (req.refuse_rc) {
    Response r;
    r.rc = req.refuse_rc;
    return r;
  }
  switch (req.opcode) {
    case wire::ses_request_opcode::UET_SEND:
    case wire::ses_request_opcode::UET_TAGGED_SEND:
      return deliver(ep, std::move(req));
    case wire::ses_request_opcode::UET_RENDEZVOUS_SEND:
    case wire::ses_request_opcode::UET_RENDEZVOUS_TSEND:
      return rendezvous_arrived(ep, std::move(req));
    case wire::ses_request_opcode::UET_DEFERRABLE_SEND:
    case wire::ses_request_opcode::UET_DEFERRABLE_TSEND:
      return deferrable_arrived(ep, std::move(req));
    case wire::ses_request_opcode::UET_DEFERRABLE_RTR:
      return rtr_arrived(ep, std::move(req));
    case wire::ses_request_opcode::UET_WRITE:
    case wire::ses_request_opcode::UET_READ:
      return rma_target(ep, std::move(req));
    case wire::ses_request_opcode::UET_ATOMIC:
    case wire::ses_request_opcode::UET_FETCHING_ATOMIC:
      return atomic_target(ep, std::move(req));
    default: {
      Response r;
      r.rc = wire::ses_return_code::RC_UNSUPPORTED_OP;
      return r;
    }
  }
}

void complete_op(Ep* ep, const OpCompletion& done, int err, uint64_t prov_errno) {
  if (done.internal) {
    // The provider's own request (a rendezvous pull, an RTR): no CQ entry, no counter.
    const auto internal = done.internal;  // it may submit requests, which may move the operation
    internal(err, prov_errno);
    return;
  }
  if (err) {
    cntr_failure(done.cntr);
    if (!ep->tx_cq || (done.inject && fault(ep->domain, Fault::inject_error_silent))) return;
    fi_cq_err_entry e{};
    e.op_context = done.context;
    e.flags = done.cq_flags;
    e.tag = done.tag;
    e.err = err;
    e.prov_errno = static_cast<int>(prov_errno);
    cq_push_error(ep->tx_cq, e);
    return;
  }
  cntr_success(done.cntr, done.len);
  if (!done.want_completion || !ep->tx_cq) return;
  Completion c;
  c.context = done.context;
  c.flags = done.cq_flags;
  c.len = done.len;
  c.tag = done.tag;
  cq_push(ep->tx_cq, c);
}

}  // namespace softuet
