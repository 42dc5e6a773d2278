// The receive side of fi_msg and fi_tagged: posted receives and unexpected messages, one pair of queues
// for untagged and one for tagged messages (digest F.2 SHOULD), searched in posting order.
#include <cstring>

#include "softuet.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;

namespace {

bool is_tagged(const InRequest& m) { return tagged_opcode(m.opcode); }

}  // namespace

bool recv_matches(Ep* ep, const PostedRecv& r, const InRequest& m, bool tagged) {
  if (tagged && ((m.match_bits ^ r.tag) & ~r.ignore)) return false;
  // Authorization (spec 2.2.4.3.1/2): a buffer posted for one JobID takes only that JobID.
  if (r.job_id && *r.job_id != m.job_id && !fault(ep->domain, Fault::no_authorization)) return false;
  // A directed receive takes only the initiator named by src_addr's UET address (digest F.2); without
  // FI_DIRECTED_RECV src_addr is ignored (fi_msg(3)).
  fi_addr_t src = r.src;
  if (src == FI_ADDR_UNSPEC && fault(ep->domain, Fault::unspec_recv_directed)) src = 0;
  if ((ep->caps & FI_DIRECTED_RECV) && src != FI_ADDR_UNSPEC) {
    softuet_addr a;
    if (!ep->av || !av_lookup(ep->av, src, &a)) return false;
    if (a.uet.initiator_id != m.initiator && !fault(ep->domain, Fault::directed_recv_ignored)) return false;
  }
  return true;
}

void complete_recv(Ep* ep, const PostedRecv& r, const InRequest& m) {
  const size_t copied = scatter(r.iov, 0, m.payload.data(), m.payload.size());
  finish_recv(ep, r, m, copied, m.payload.size());
}

void finish_recv(Ep* ep, const PostedRecv& r, const InRequest& m, size_t copied, size_t total, int err,
                 uint64_t prov_errno) {
  const bool tagged = is_tagged(m);
  const uint64_t flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG) | (m.header_data ? FI_REMOTE_CQ_DATA : 0);
  void* buf = r.iov.empty() ? nullptr : r.iov[0].iov_base;
  if (err || copied < total) {
    cntr_failure(ep->cntr_recv);
    if (!ep->rx_cq) return;
    fi_cq_err_entry e{};
    e.op_context = r.context;
    e.flags = flags;
    e.len = copied;
    e.buf = buf;
    e.data = m.header_data.value_or(0);
    e.tag = tagged ? m.match_bits : 0;
    e.olen = total > copied ? total - copied : 0;
    e.err = err ? err : FI_ETRUNC;
    e.prov_errno = err ? static_cast<int>(prov_errno) : -FI_ETRUNC;
    cq_push_error(ep->rx_cq, e);
    return;
  }
  cntr_success(ep->cntr_recv, copied);
  if (!ep->rx_cq || (ep->rx_selective && !(r.flags & FI_COMPLETION))) return;
  Completion c;
  c.context = r.context;
  c.flags = flags;
  c.len = copied;
  c.buf = buf;
  c.data = m.header_data.value_or(0);
  c.tag = tagged ? m.match_bits : 0;
  c.src = av_reverse(ep->av, m.src, m.initiator, ep->type == FI_EP_DGRAM);  // datagrams: entropy port
  cq_push(ep->rx_cq, c);
}

Response deliver(Ep* ep, InRequest&& m) {
  const bool tagged = is_tagged(m);
  auto& posted = tagged ? ep->posted_tagged : ep->posted;
  Response rsp;
  rsp.rc = wire::ses_return_code::RC_OK;
  for (auto it = posted.begin(); it != posted.end(); ++it) {
    if (!recv_matches(ep, *it, m, tagged)) continue;
    PostedRecv r = std::move(*it);
    if (it == posted.begin()) posted.pop_front();  // the common case, and far cheaper than erase
    else posted.erase(it);
    if (m.rendezvous) return take_rendezvous(ep, std::move(r), std::move(m), tagged, true);
    rsp.modified_length = static_cast<uint32_t>(std::min(m.payload.size(), iov_len(r.iov.data(), r.iov.size())));
    complete_recv(ep, r, m);
    return rsp;
  }
  // No posted receive: keep the message for the next one (the overflow list). Bounded, like a NIC's;
  // beyond it the message is refused.
  auto& unexpected = tagged ? ep->unexpected_tagged : ep->unexpected;
  rsp.expected = false;
  if (m.defer) {
    // A deferrable send (choice deferrable-send-protocol): only its tokens are kept, and the initiator
    // learns from RC_NO_MATCH that an RTR will ask for the message when a receive takes it.
    m.payload.clear();
    m.deferred = true;
    rsp.rc = wire::ses_return_code::RC_NO_MATCH;
    unexpected.push_back(std::move(m));
    return rsp;
  }
  if (unexpected.size() >= kQueueDepth) {
    rsp.rc = wire::ses_return_code::RC_NO_MATCH;
    return rsp;
  }
  rsp.modified_length = static_cast<uint32_t>(m.payload.size());
  if (fault(ep->domain, Fault::unexpected_dropped)) return rsp;
  // A rendezvous waits with its eager bytes; its response comes once a receive took it and the rest is read.
  rsp.later = m.rendezvous.has_value();
  unexpected.push_back(std::move(m));
  return rsp;
}

ssize_t post_recv(Ep* ep, PostedRecv&& r, bool tagged) {
  auto& unexpected = tagged ? ep->unexpected_tagged : ep->unexpected;
  for (auto it = unexpected.begin(); it != unexpected.end(); ++it) {
    if (!recv_matches(ep, r, *it, tagged)) continue;
    InRequest m = std::move(*it);
    unexpected.erase(it);
    if (m.deferred) {
      take_deferred(ep, std::move(r), std::move(m), tagged);
    } else if (m.rendezvous) {
      take_rendezvous(ep, std::move(r), std::move(m), tagged, false);
    } else {
      complete_recv(ep, r, m);
    }
    return 0;
  }
  (tagged ? ep->posted_tagged : ep->posted).push_back(std::move(r));
  return 0;
}

}  // namespace softuet
