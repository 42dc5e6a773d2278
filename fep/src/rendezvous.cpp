// Large messages (§2.2.5.4.1.2, §2.2.5.4.2.2): HPC rendezvous and AI Full deferrable send.
//
// Rendezvous (choice rendezvous-protocol): a send whose buffer lies in an MR registered for remote read
// travels as UET_RENDEZVOUS_SEND/TSEND with at most UET_PROVIDER_MAX_EAGER_SIZE bytes of it; the target
// matches it, reads the rest with UET_READs from that MR, completes the receive, and only then gives the
// request its SES response, which completes the send.
//
// Deferrable send (choice deferrable-send-protocol): the whole message travels as UET_DEFERRABLE_SEND/TSEND
// with an initiator_restart_token. A target without a matching receive keeps only the header and answers
// RC_NO_MATCH; when a receive takes it, it sends UET_DEFERRABLE_RTR with both tokens and the initiator sends
// the message again. A FEP without AI Full takes a deferrable send as a send (2.2.2.1-c/d).
//
// Hooks elsewhere are a few lines: send_any (msg.cpp) asks large_send; execute (ses_target.cpp) dispatches
// the opcodes here; deliver/post_recv (recv.cpp) hand over the rendezvous and deferred messages a receive
// takes; transport.cpp encodes the headers, keeps a deferrable send's operation open until delivered, and
// finds the endpoint of an RTR by its token.
#include <cstring>

#include "softuet.hpp"
#include "uet/wire/profiles.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;
namespace op = wire::ses_request_opcode;

namespace {

// The FEP capabilities a destination address advertises (none unless its valid flag is set).
uint8_t peer_caps(const Dest& dest) {
  return (dest.addr.uet.flags & kAddrFlagCapsValid) ? dest.addr.uet.fep_caps : 0;
}

// The MR `desc` names, when it is one of this domain's (desc is the caller's pointer: never trusted).
Mr* mr_of_desc(Domain* d, void* desc) {
  if (!desc) return nullptr;
  for (const auto& [key, mr] : d->mrs)
    if (mr == desc) return mr;
  return nullptr;
}

// The rendezvous extension for a message in iov[0], when desc[0] names an MR of this endpoint registered
// for remote read that holds it (2.2.5.4.1.2-d): where the target reads it. eager_length is left to fill.
std::optional<RendezvousExt> rendezvous_source(Ep* ep, const iovec* iov, size_t count, void* const* desc) {
  if (count != 1 || !desc) return std::nullopt;
  const Mr* mr = mr_of_desc(ep->domain, desc[0]);
  if (!mr || !(mr->access & FI_REMOTE_READ) || !mr->enabled || mr->ep != ep) return std::nullopt;
  const auto base = reinterpret_cast<uintptr_t>(mr->buf), p = reinterpret_cast<uintptr_t>(iov[0].iov_base);
  if (p < base || iov[0].iov_len > mr->len || p - base > mr->len - iov[0].iov_len) return std::nullopt;
  RendezvousExt x;
  x.pid_on_fep = ep->domain->pid_on_fep;
  x.resource_index = ep->resource_index;
  x.read_offset = p - base;  // softuet's MR offsets are from the MR's start (no FI_MR_VIRT_ADDR)
  x.read_key = mr->key;
  return x;
}

// An initiator_restart_token unique among the FEP's active deferrable sends (2.2.10.4-h), never 0 (a
// target token of 0 means a first send; the initiator's keeps the same rule).
uint32_t alloc_restart_token(Domain* d) {
  if (fault(d, Fault::restart_token_reuse) && !d->restart_ops.empty()) return d->restart_ops.begin()->first;
  for (;;) {
    const uint32_t t = d->next_restart_token++;
    if (t && !d->restart_ops.count(t)) return t;
  }
}

uint32_t alloc_target_token(Domain* d) {
  for (;;) {
    const uint32_t t = d->next_target_token++;
    if (t && !d->restart_waits.count(t)) return t;
  }
}

// Where the target's own requests to an initiator go (the reads of a pull, an RTR): the initiator's AV
// entry at this endpoint when it has one, else an address made of what the request told (its FEP, its
// initiator ID). `at` overrides PIDonFEP and resource index (the rendezvous extension names them).
Dest dest_of(Ep* ep, const InRequest& m, std::optional<std::pair<uint16_t, uint16_t>> at) {
  Dest to;
  to.job_id = m.job_id;  // the JobID of the request the initiator sent (its checks apply)
  softuet_addr& a = to.addr;
  const fi_addr_t known = av_reverse(ep->av, m.src, m.initiator);
  if (known == FI_ADDR_NOTAVAIL || !av_lookup(ep->av, known, &a)) {
    a = softuet_addr{};
    a.uet.flags = kAddrFlagFaValid | kAddrFlagPidValid | kAddrFlagIndexValid | kAddrFlagInitiatorValid |
                  (m.src.ip.v6 ? kAddrFlagIpv6 : 0);
    std::memcpy(a.uet.fa, m.src.ip.fa.data(), m.src.ip.v6 ? 16 : 4);
    a.uet.initiator_id = m.initiator;
    a.trailer_magic = SOFTUET_ADDR_TRAILER_MAGIC;
    a.udp_port = m.src.port;
  }
  if (at) {
    a.uet.pid_on_fep = at->first;
    a.uet.start_index = at->second;
  }
  return to;
}

// The pull of rendezvous `id` ended: the receive completes, and the initiator gets the request's response.
void pull_done(Domain* d, uint64_t id, int err, uint64_t prov_errno) {
  const auto it = d->pulls.find(id);
  if (it == d->pulls.end()) return;
  Pull pull = std::move(it->second);
  d->pulls.erase(it);
  const size_t room = iov_len(pull.recv.iov.data(), pull.recv.iov.size());
  const size_t placed = err ? 0 : std::min<size_t>(pull.head.request_length, room);
  finish_recv(pull.ep, pull.recv, pull.head, placed, pull.head.request_length, err, prov_errno);
  Response rsp;
  rsp.rc = wire::ses_return_code::RC_OK;
  if (err) {
    // A read answered with a return code fails the rendezvous with it; a read that got no answer (FI_EIO
    // from the PDS, prov_errno FI_EIO) with RC_UNDELIVERABLE.
    const bool no_answer = (err == FI_EIO && prov_errno == FI_EIO) || prov_errno == 0;
    rsp.rc = no_answer ? wire::ses_return_code::RC_UNDELIVERABLE : prov_errno;
  }
  rsp.expected = pull.expected;
  rsp.modified_length = static_cast<uint32_t>(placed);
  send_later_response(pull.ep, pull.head.src, pull.head.message_id, pull.head.job_id, rsp);
}

// The RTR of target token `ttok` was refused or lost: the receive it kept goes back to the front of its
// queue (the restarted message will not come).
void rtr_failed(Domain* d, uint32_t ttok) {
  const auto w = d->restart_waits.find(ttok);
  if (w == d->restart_waits.end()) return;
  RestartWait wait = std::move(w->second);
  d->restart_waits.erase(w);
  (wait.tagged ? wait.ep->posted_tagged : wait.ep->posted).push_front(std::move(wait.recv));
}

}  // namespace

bool tagged_opcode(uint64_t opcode) {
  return opcode == op::UET_TAGGED_SEND || opcode == op::UET_RENDEZVOUS_TSEND || opcode == op::UET_DEFERRABLE_TSEND;
}

std::optional<Deferral> large_send(Ep* ep, const Dest& dest, const iovec* iov, size_t count, void* const* desc,
                                   OutRequest& r) {
  Domain* d = ep->domain;
  const bool tagged = r.opcode == op::UET_TAGGED_SEND;
  if (ep->type != FI_EP_RDM || (!tagged && r.opcode != op::UET_SEND)) return std::nullopt;
  // SOFTUET_LARGE_SENDS=eager: every message goes whole, as the send it is.
  if (!d->cfg.large_send_protocols) return std::nullopt;
  if (r.request_length < (tagged ? d->cfg.tag_rendezvous_size : d->cfg.msg_rendezvous_size)) return std::nullopt;
  // The operations stay within the profile the two FEPs operate in (2.2.2.1-a/b; uet/wire/profiles.hpp,
  // choices profile-priority and no-common-profile).
  const uint8_t mine = d->cfg.fep_caps, peer = peer_caps(dest);
  wire::LargeSend kind = wire::large_send_kind(mine, peer);
  if (kind == wire::LargeSend::rendezvous) {
    if (std::optional<RendezvousExt> x = rendezvous_source(ep, iov, count, desc)) {
      // The eager bytes MUST NOT exceed UET_PROVIDER_MAX_EAGER_SIZE (2.2.5.4.1.2-e, 2.2.5.4.2.2-c), and travel
      // in the request's one packet.
      const size_t payload = d->mtu.payload;
      const size_t limit = fault(d, Fault::eager_over_limit) ? payload : std::min<size_t>(d->cfg.max_eager_size, payload);
      x->eager_length = static_cast<uint32_t>(std::min(r.payload.size(), limit));
      r.payload.resize(x->eager_length);
      r.opcode = tagged ? op::UET_RENDEZVOUS_TSEND : op::UET_RENDEZVOUS_SEND;
      r.rendezvous = x;
      return std::nullopt;
    }
    // Not from a region the target may read: between FEPs that also share AI Full, a deferrable send.
    if ((mine & kCapAiFull) && (peer & kCapAiFull)) kind = wire::LargeSend::deferrable;
  }
  // The knob: a FEP with HPC and AI Full sends deferrable sends to an HPC peer without AI Full.
  if (fault(d, Fault::deferrable_to_hpc) && (mine & kCapAiFull) && (peer & kCapHpc)) kind = wire::LargeSend::deferrable;
  if (kind != wire::LargeSend::deferrable) return std::nullopt;
  r.opcode = tagged ? op::UET_DEFERRABLE_TSEND : op::UET_DEFERRABLE_SEND;
  r.restart = RestartTokens{alloc_restart_token(d), 0};
  Deferral def;
  def.token = r.restart->initiator;
  def.dest = dest;
  def.request = r;  // kept for a restart: the caller's buffer is free once the call returns
  return def;
}

Response rendezvous_arrived(Ep* ep, InRequest&& m) {
  // Rendezvous is an HPC operation (2.2.5.4.1.2-b); a request that would place more eager bytes than the
  // message has is malformed.
  if (!(ep->domain->cfg.fep_caps & kCapHpc) || !m.rendezvous || m.rendezvous->eager_length > m.request_length) {
    Response rsp;
    rsp.rc = wire::ses_return_code::RC_UNSUPPORTED_OP;
    return rsp;
  }
  return deliver(ep, std::move(m));
}

Response take_rendezvous(Ep* ep, PostedRecv&& r, InRequest&& m, bool tagged, bool expected) {
  Domain* d = ep->domain;
  const RendezvousExt x = *m.rendezvous;
  const size_t total = std::min<size_t>(m.request_length, iov_len(r.iov.data(), r.iov.size()));
  scatter(r.iov, 0, m.payload.data(), std::min(m.payload.size(), total));
  const uint64_t id = d->next_pull++;
  Pull& pull = d->pulls[id];
  pull.ep = ep;
  pull.recv = std::move(r);
  pull.tagged = tagged;
  pull.expected = expected;
  m.payload.clear();
  pull.head = std::move(m);
  Response later;
  later.later = true;
  // The rest of the message, as far as the receive holds it, in reads of one payload MTU each.
  std::vector<OutRequest> reads;
  for (size_t off = x.eager_length; off < total; off += d->mtu.payload) {
    OutRequest q;
    q.opcode = op::UET_READ;
    q.match_bits = x.read_key;
    q.buffer_offset = x.read_offset + off;
    q.request_length = static_cast<uint32_t>(std::min(d->mtu.payload, total - off));
    q.result_offset = off;
    reads.push_back(std::move(q));
  }
  if (reads.empty()) {
    pull_done(d, id, 0, 0);
    return later;
  }
  OpCompletion done;
  done.want_completion = false;
  done.result = pull.recv.iov;
  done.internal = [d, id](int err, uint64_t prov_errno) { pull_done(d, id, err, prov_errno); };
  const Dest from = dest_of(ep, pull.head, std::make_pair(x.pid_on_fep, x.resource_index));
  if (transport_submit(ep, from, std::move(reads), std::move(done)) != 0) pull_done(d, id, FI_EIO, FI_EIO);
  return later;
}

Response deferrable_arrived(Ep* ep, InRequest&& m) {
  Domain* d = ep->domain;
  if (!(d->cfg.fep_caps & kCapAiFull)) {
    // A FEP without AI Full (HPC) treats a deferrable send as a send, a deferrable tagged send as a tagged
    // send (2.2.2.1-c/d): it never defers, so it never sends an RTR.
    if (fault(d, Fault::hpc_rejects_deferrable)) {
      Response rsp;
      rsp.rc = wire::ses_return_code::RC_UNSUPPORTED_OP;
      return rsp;
    }
    return deliver(ep, std::move(m));
  }
  if (m.restart && m.restart->target) {
    // A restarted message: the receive kept for it takes it.
    const auto w = d->restart_waits.find(m.restart->target);
    if (w != d->restart_waits.end() && w->second.ep == ep && w->second.peer == m.src &&
        w->second.initiator_token == m.restart->initiator) {
      RestartWait wait = std::move(w->second);
      d->restart_waits.erase(w);
      Response rsp;
      rsp.rc = wire::ses_return_code::RC_OK;
      rsp.modified_length =
          static_cast<uint32_t>(std::min(m.payload.size(), iov_len(wait.recv.iov.data(), wait.recv.iov.size())));
      complete_recv(ep, wait.recv, m);
      return rsp;
    }
  }
  m.defer = true;
  return deliver(ep, std::move(m));
}

void take_deferred(Ep* ep, PostedRecv&& r, InRequest&& m, bool tagged) {
  Domain* d = ep->domain;
  const uint32_t ttok = alloc_target_token(d);
  RestartWait& w = d->restart_waits[ttok];
  w.ep = ep;
  w.recv = std::move(r);
  w.tagged = tagged;
  w.peer = m.src;
  w.initiator_token = m.restart ? m.restart->initiator : 0;
  OutRequest rtr;
  rtr.opcode = op::UET_DEFERRABLE_RTR;
  rtr.restart = RestartTokens{w.initiator_token, ttok};
  rtr.request_length = m.request_length;
  OpCompletion done;
  done.want_completion = false;
  done.internal = [d, ttok](int err, uint64_t) {
    if (err) rtr_failed(d, ttok);
  };
  std::vector<OutRequest> msgs;
  msgs.push_back(std::move(rtr));
  if (transport_submit(ep, dest_of(ep, m, std::nullopt), std::move(msgs), std::move(done)) != 0) rtr_failed(d, ttok);
}

Response rtr_arrived(Ep* ep, InRequest&& m) {
  Domain* d = ep->domain;
  Response rsp;
  rsp.rc = wire::ses_return_code::RC_NO_MATCH;
  if (!m.restart) return rsp;
  const auto t = d->restart_ops.find(m.restart->initiator);
  if (t == d->restart_ops.end()) return rsp;
  const auto o = d->ops.find(t->second);
  if (o == d->ops.end() || o->second.ep != ep || !o->second.deferral || o->second.failed) return rsp;
  const Deferral& def = *o->second.deferral;
  // Only the target the message went to, with the JobID it went with, may restart it.
  if (addr_peer(def.dest.addr) != m.src || def.dest.job_id != m.job_id) return rsp;
  OutRequest again = def.request;
  again.restart = RestartTokens{m.restart->initiator, m.restart->target};
  if (transport_add_message(ep, t->second, def.dest, std::move(again)) != 0) {
    rsp.rc = wire::ses_return_code::RC_UNDELIVERABLE;
    return rsp;
  }
  rsp.rc = wire::ses_return_code::RC_OK;
  return rsp;
}

Ep* rtr_endpoint(Domain* d, uint32_t initiator_token) {
  const auto t = d->restart_ops.find(initiator_token);
  if (t == d->restart_ops.end()) return nullptr;
  const auto o = d->ops.find(t->second);
  return o == d->ops.end() ? nullptr : o->second.ep;
}

void forget_deferral(Domain* d, const SendOp& sop) {
  if (!sop.deferral) return;
  const auto t = d->restart_ops.find(sop.deferral->token);
  if (t == d->restart_ops.end()) return;
  const auto o = d->ops.find(t->second);
  if (o == d->ops.end() || &o->second == &sop) d->restart_ops.erase(t);
}

void rendezvous_close_ep(Ep* ep) {
  Domain* d = ep->domain;
  for (auto it = d->restart_ops.begin(); it != d->restart_ops.end();) {
    const auto o = d->ops.find(it->second);
    it = o == d->ops.end() || o->second.ep == ep ? d->restart_ops.erase(it) : std::next(it);
  }
  for (auto it = d->restart_waits.begin(); it != d->restart_waits.end();)
    it = it->second.ep == ep ? d->restart_waits.erase(it) : std::next(it);
  for (auto it = d->pulls.begin(); it != d->pulls.end();) it = it->second.ep == ep ? d->pulls.erase(it) : std::next(it);
}

}  // namespace softuet
