// The transport's initiator side: frames of requests built with the codec encoder, the PDCs' sending half
// (PSNs, the backlog, retransmission and response timers), operations and their completions, and the end
// of an RDM endpoint. The kernel adds IP and UDP, so frames start at node `uet`. DGRAM uses UUD +
// UET_DATAGRAM_SEND; RDM uses RUD or ROD + UET_SEND (digest F.3, G.1). receive.cpp is the target's side,
// fep_socket.cpp the socket and progress, transport_shared.hpp what they share.
//
// RDM reliability (milestone 2) is the PDS engine of pds/pdc.hpp: one PeerPdc per {endpoint, peer FEP}
// holds an InitiatorPdc (PSNs, retransmission) and a TargetPdc (duplicate suppression, ACK/NACK, ROD
// order). The receiver ACKs (PDS type 7) what the engine says to ACK, and the packet that completes a
// message with an SES response (UET_RESPONSE, RC_OK) after the ACK; ROD NACKs (type 10, ROD_OOO) a gap.


#include <poll.h>

#include <algorithm>
#include <cstring>

#include "softuet.hpp"
#include "transport_shared.hpp"
#include "uet/codec/decoded.hpp"
#include "uet/wire/libfabric_gen.hpp"
#include "wire_paths.hpp"

namespace softuet {

using uet::codec::FieldValues;
using uet::wire::Field;
using uet::wire::Node;
namespace wire = uet::wire;
using pds::Clock;
using namespace paths;
using namespace transport;

namespace transport {


// PDS/SES values come from spec/wire.yaml through uet/wire/wire_gen.hpp (wire::pds_type::ACK, ...).
// The RUD/ROD request header size, from the parse graph (digest I.5).
const size_t kPdsReqSize = wire::node_info(Node::uet_pds_rud_rod_req).size;

// After an RDM endpoint's last frame, how long it keeps answering before it closes, and at most how long.
constexpr auto kLingerQuiet = std::chrono::milliseconds(200);
constexpr auto kLingerMax = std::chrono::milliseconds(3000);
// How many times a closing RDM endpoint restates the answers its peers may still lack (restate_answers),
// one per round of its linger. Nothing acknowledges the last answer of a PDC (UET's CLOSE handshake, CP
// CLOSE_CMD/CLOSE_REQ, is not in softuet; the digest names those packets only), so a peer that is not run
// before this endpoint is gone would ask again in vain: a restated answer waits for it in its socket
// instead, and it misses its answer only when every copy is lost, however late it runs.
constexpr unsigned kCloseRestatements = 3;

constexpr unsigned kResponseTries = 8;
// A rendezvous's response waits for the receive and the pull: the initiator asks again at most this often,
// without a limit (the message is not lost while its packets are ACKed).
constexpr auto kPatientPoll = std::chrono::milliseconds(200);

bool is_atomic(uint64_t opcode) {
  return opcode == wire::ses_request_opcode::UET_ATOMIC || opcode == wire::ses_request_opcode::UET_FETCHING_ATOMIC ||
         opcode == wire::ses_request_opcode::UET_TSEND_ATOMIC ||
         opcode == wire::ses_request_opcode::UET_TSEND_FETCH_ATOMIC;
}
// The AMO opcodes that carry the compare-and-swap extension: CSWAP..CSWAP_GT, not MSWAP (choice cas-for-mswap).
bool is_cas(uint8_t amo) { return amo >= wire::amo_opcode::CSWAP && amo <= wire::amo_opcode::CSWAP_GT; }

// The SES header a request travels in.
enum class SesHeader { standard, medium, small };

// Where a field lies in the frames of one path, found on first use.
template <const auto& Path, Field F>
const uet::codec::PathEncoder::Place& place() {
  static const uet::codec::PathEncoder::Place p = encoder<Path>().place_of(F);
  return p;
}

const uet::codec::PathEncoder& request_encoder(bool som, const OutRequest& r, SesHeader h) {
  if (h == SesHeader::medium) {
    if (!r.atomic) return encoder<kReqMedium>();
    return is_cas(r.atomic->opcode) ? encoder<kReqMediumCas>() : encoder<kReqMediumAtomic>();
  }
  if (h == SesHeader::small) {
    if (!r.atomic) return encoder<kReqSmall>();
    return is_cas(r.atomic->opcode) ? encoder<kReqSmallCas>() : encoder<kReqSmallAtomic>();
  }
  if (r.opcode == wire::ses_request_opcode::UET_DEFERRABLE_RTR) return encoder<kReqRtr>();
  if (r.restart) return som ? encoder<kReqSomDeferrable>() : encoder<kReqContDeferrable>();
  if (r.rendezvous) return som ? encoder<kReqSomRendezvous>() : encoder<kReqCont>();
  if (!r.atomic) return som ? encoder<kReqSom>() : encoder<kReqCont>();
  if (!is_cas(r.atomic->opcode)) return som ? encoder<kReqSomAtomic>() : encoder<kReqContAtomic>();
  return som ? encoder<kReqSomCas>() : encoder<kReqContCas>();
}

bool is_rma(uint64_t opcode) {
  return opcode == wire::ses_request_opcode::UET_WRITE || opcode == wire::ses_request_opcode::UET_READ;
}

// An OPTIMIZED key whose RKEY/INDEX fits ses.resource_index (Table 2-13).
bool optimized_key(uint64_t key) {
  return (key & kKeyOptimized) && !(key & wire::k_mr_key_rkey_mask & ~wire::k_mr_key_optimized_rkey_mask);
}

// The SES header of a request (choices optimized-header-criteria, small-message-criteria and
// small-rma-criteria): a one-packet RMA or atomic of at most small_message_max_length bytes without remote
// CQ data goes in the optimized non-matching header when its key is OPTIMIZED and the target FEP says it
// takes that header, else in the small RMA header; a one-packet send of at most that size in the small
// message header; everything else in the standard header.
SesHeader header_of(Domain* d, const Dest& dest, const OutRequest& r, size_t packets) {
  if (packets != 1 || r.request_length > wire::k_small_message_max_length) return SesHeader::standard;
  const uint64_t op = r.opcode;
  if (op == wire::ses_request_opcode::UET_SEND || op == wire::ses_request_opcode::UET_TAGGED_SEND)
    return fault(d, Fault::std_header_for_small_message) ? SesHeader::standard : SesHeader::medium;
  const bool rma_or_atomic = is_rma(op) || op == wire::ses_request_opcode::UET_ATOMIC ||
                             op == wire::ses_request_opcode::UET_FETCHING_ATOMIC;
  if (!rma_or_atomic || (r.header_data && !fault(d, Fault::small_rma_ignores_cq_data))) return SesHeader::standard;
  const bool target_takes_it = (dest.addr.uet.flags & kAddrFlagCapsValid) && (dest.addr.uet.fep_caps & kCapOptimizedHeader);
  if (optimized_key(r.match_bits) && target_takes_it && !fault(d, Fault::no_optimized_header)) return SesHeader::small;
  return fault(d, Fault::std_header_for_small_rma) ? SesHeader::standard : SesHeader::medium;
}

uint16_t next_message_id(Domain* d) {
  if (d->next_message_id == 0) d->next_message_id = 1;  // message_id 0 is invalid (digest I.7)
  return d->next_message_id++;
}

// A UET_DATAGRAM_SEND carries message_id 0 where spec-version rule datagram_message_id_zero holds (1.0.3 on),
// and is numbered like any request elsewhere.
uint16_t datagram_message_id(Domain* d) {
  return wire::rule_holds(wire::VersionRule::datagram_message_id_zero, d->cfg.spec_version) ? 0 : next_message_id(d);
}

uint64_t pds_req_type(pds::Mode m) { return m == pds::Mode::rod ? wire::pds_type::ROD_REQ : wire::pds_type::RUD_REQ; }

// A PDC id not in use by this domain (0 is never used, so 0 can mean "unknown").
uint16_t alloc_pdcid(Domain* d) {
  for (;;) {
    const uint16_t id = d->next_pdcid++;
    if (id == 0) continue;
    if (d->pdc_by_ini_id.count(id)) continue;
    bool used = false;
    for (const auto& [k, p] : d->pdcs) used |= p->tgt_id == id;
    if (!used) return id;
  }
}

// The SES standard request header fields common to every packet of a message (digest I.9).
void ses_fields(FieldValues& v, Ep* ep, const Dest& to, uint64_t opcode, uint16_t message_id, size_t len) {
  const softuet_addr& dest = to.addr;
  v.set(Field::uet_ses_opcode, opcode);
  v.set(Field::uet_ses_version, uet::wire::k_ses_version);
  // rel follows the destination address's mode: relative (flag bit 5 clear) -> 1.
  v.set(Field::uet_ses_rel, (dest.uet.flags & kAddrFlagAbsolute) ? 0 : 1);
  Domain* d = ep->domain;
  // A datagram's message_id 0 is another spec version's rule, not this knob's mistake.
  const bool numbered = opcode != wire::ses_request_opcode::UET_DATAGRAM_SEND;
  v.set(Field::uet_ses_message_id, fault(d, Fault::message_id_zero) && numbered ? 0 : message_id);
  // No RI generations: the generation MUST then be 0.
  v.set(Field::uet_ses_ri_generation, fault(d, Fault::nonzero_ri_generation) ? 1 : 0);
  v.set(Field::uet_ses_job_id, (to.job_id + (fault(d, Fault::wrong_job_id) ? 1 : 0)) & 0xFFFFFF);
  // {PIDonFEP, RI} of the destination address select the target endpoint (relative addressing).
  v.set(Field::uet_ses_pid_on_fep, fault(d, Fault::own_address_in_request) ? d->pid_on_fep : dest.uet.pid_on_fep);
  v.set(Field::uet_ses_resource_index, fault(d, Fault::own_address_in_request) ? ep->resource_index : dest.uet.start_index);
  if (fault(d, Fault::job_and_ri_zero)) v.set(Field::uet_ses_job_id, 0).set(Field::uet_ses_resource_index, 0);
  v.set(Field::uet_ses_buffer_offset, 0);
  v.set(Field::uet_ses_initiator, d->initiator + (fault(d, Fault::wrong_initiator) ? 1 : 0));
  v.set(Field::uet_ses_match_bits, 0);  // untagged: unused
  v.set(Field::uet_ses_request_length, len);
}

void atomic_fields(FieldValues& v, const AtomicExt& a) {
  v.set(Field::uet_ses_atomic_opcode, a.opcode).set(Field::uet_ses_atomic_datatype, a.datatype);
  v.set(Field::uet_ses_semantic_control_cpu_coherent, 0).set(Field::uet_ses_semantic_control_cacheable, 0);
  if (is_cas(a.opcode)) {
    std::vector<uint8_t> c(16, 0), w(16, 0);
    std::copy(a.compare.begin(), a.compare.end(), c.begin());
    std::copy(a.swap.begin(), a.swap.end(), w.begin());
    v.set_bytes(Field::uet_ses_compare_value, std::move(c));
    v.set_bytes(Field::uet_ses_swap_value, std::move(w));
  }
}

// `any_job`: the endpoint at {PIDonFEP, RI} whatever JobIDs it takes (the same_node_unchecked knob).
Ep* find_ep(Domain* d, uint64_t job, uint64_t pid, uint64_t ri, fi_ep_type type, bool any_job) {
  if (pid != d->pid_on_fep) return nullptr;
  for (Ep* ep : d->eps)
    if (ep->resource_index == ri && ep->type == type && ep->enabled &&
        (any_job || ep_accepts_job(ep, static_cast<uint32_t>(job)) || fault(d, Fault::endpoint_ignores_job_id)))
      return ep;
  return nullptr;
}

// The MR an optimized non-matching header names: the one with an OPTIMIZED key of that RKEY/INDEX.
const Mr* mr_of_rkey(Domain* d, uint64_t rkey) {
  for (const auto& [key, mr] : d->mrs)
    if (optimized_key(key) && (key & wire::k_mr_key_optimized_rkey_mask) == rkey) return mr;
  return nullptr;
}

// The endpoint that takes an optimized request for `mr`: the header names no RI. The one the MR is bound
// to; else (also when no MR has that RKEY, so that the request is answered RC_BAD_MKEY) the endpoint of the
// target PDC the request names; else, for a PDC being set up, an RDM endpoint that takes the JobID.
Ep* ep_of_optimized(Domain* d, const Mr* mr, uint64_t job, uint64_t pid, uint64_t dpdcid, const UdpPeer& from) {
  if (pid != d->pid_on_fep) return nullptr;
  if (mr && mr->ep) return mr->ep->enabled && ep_accepts_job(mr->ep, static_cast<uint32_t>(job)) ? mr->ep : nullptr;
  for (const auto& [key, p] : d->pdcs)
    if (p->tgt && p->tgt_id == dpdcid && p->peer == from && ep_accepts_job(p->ep, static_cast<uint32_t>(job))) return p->ep;
  for (Ep* ep : d->eps)
    if (ep->type == FI_EP_RDM && ep->enabled && ep_accepts_job(ep, static_cast<uint32_t>(job))) return ep;
  return nullptr;
}

// ---- PDCs ----

PeerPdc& peer_pdc(Domain* d, Ep* ep, const UdpPeer& peer) {
  auto& slot = d->pdcs[{ep, peer}];
  if (!slot) {
    slot = std::make_unique<PeerPdc>();
    slot->ep = ep;
    slot->peer = peer;
    slot->ini_id = alloc_pdcid(d);
    d->pdc_by_ini_id[slot->ini_id] = slot.get();
    slot->tgt_id = alloc_pdcid(d);
    slot->ini = std::make_unique<pds::InitiatorPdc>(ep->mode, static_cast<pds::Psn>(d->psn_rng()));
  }
  return *slot;
}

// Write the PDS request header for `f` over the first 12 bytes of `frame` and queue a copy to send.
void send_request(Domain* d, PeerPdc& p, const pds::RequestFields& f, std::vector<uint8_t>& frame, uint8_t next_hdr) {
  FieldValues v;
  v.set(Field::uet_pds_type, pds_req_type(p.ep->mode));
  v.set(Field::uet_pds_next_hdr, next_hdr);
  v.set(Field::uet_pds_flags_retx, f.retransmit ? 1 : 0);
  v.set(Field::uet_pds_flags_ar, f.ack_request ? 1 : 0);
  v.set(Field::uet_pds_flags_syn, f.syn ? 1 : 0);
  v.set(Field::uet_pds_clear_psn_offset, static_cast<uint16_t>(f.clear_psn_offset));
  if (fault(d, Fault::psn_reuse)) {
    if (!p.reused_psn) p.reused_psn = f.psn;
    v.set(Field::uet_pds_psn, *p.reused_psn);
  } else {
    v.set(Field::uet_pds_psn, f.psn);
  }
  v.set(Field::uet_pds_spdcid, p.ini_id);
  if (f.syn) {
    v.set(Field::uet_pds_use_rsv_pdc, 0);
    v.set(Field::uet_pds_psn_offset, f.psn_offset);
  } else {
    v.set(Field::uet_pds_dpdcid, p.peer_tgt_id.value_or(0));
  }
  const std::vector<uint8_t> pds = encoder<kReqPds>().encode(v);
  std::memcpy(frame.data(), pds.data(), kPdsReqSize);
  queue_frame(d, sockaddr_of(p.peer), std::vector<uint8_t>(frame));  // the original stays for retransmission
}

// ---- operations at the initiator ----

void finish_op_if_done(Domain* d, std::map<uint64_t, SendOp>::iterator it) {
  SendOp& op = it->second;
  if (op.packets_left || (op.responses_left && !op.failed)) return;
  // A deferrable send the target deferred is done when its restart is delivered (rendezvous.cpp).
  if (op.deferral && !op.deferral->delivered && !op.failed) return;
  if (!op.failed) complete_op(op.ep, op.done, 0, 0);
  forget_deferral(d, op);
  d->ops.erase(it);
}

// The operation failed: one error completion (for inject too, digest F.2), with the SES return code in
// prov_errno when a response said so (spec 2.2.5.6).
void fail_op(SendOp& op, int err, uint64_t prov_errno) {
  if (op.failed) return;
  op.failed = true;
  complete_op(op.ep, op.done, err, prov_errno);
}

void packet_done(Domain* d, uint64_t op_id, bool ok) {
  auto it = d->ops.find(op_id);
  if (it == d->ops.end()) return;
  if (!ok) fail_op(it->second, FI_EIO, FI_EIO);
  if (it->second.packets_left) --it->second.packets_left;
  finish_op_if_done(d, it);
}

// No longer waiting for this response: an un-numbered request's PSN no longer names it.
std::map<uint16_t, AwaitedResponse>::iterator forget_awaited(PeerPdc& p, std::map<uint16_t, AwaitedResponse>::iterator aw) {
  if (aw->second.unnumbered_psn) p.unnumbered.erase(*aw->second.unnumbered_psn);
  return p.awaited.erase(aw);
}

// The SES response of one of our messages arrived (in an ACK).
void response_arrived(Domain* d, PeerPdc& p, uint16_t message_id, uint64_t rc, const uint8_t* data, size_t len,
                      uint64_t data_offset) {
  auto aw = p.awaited.find(message_id);
  if (aw == p.awaited.end()) return;  // a duplicate response
  const uint64_t op_id = aw->second.op;
  const size_t result_offset = aw->second.result_offset;
  const bool deferrable = aw->second.deferrable;
  forget_awaited(p, aw);
  auto it = d->ops.find(op_id);
  if (it == d->ops.end()) return;
  SendOp& op = it->second;
  if (deferrable && op.deferral && rc == wire::ses_return_code::RC_NO_MATCH) {
    // The target deferred the message (choice deferrable-send-protocol): its RTR restarts it.
  } else if (deferrable && op.deferral && rc == wire::ses_return_code::RC_OK) {
    op.deferral->delivered = true;
  } else if (rc != wire::ses_return_code::RC_OK) {
    // err: the libfabric code of the SES return code (FI_EIO where none corresponds); prov_errno: the
    // SES return code itself (spec 2.2.5.6).
    const int err = fault(d, Fault::err_not_mapped) ? FI_EIO : uet::wire::libfabric::fi_errno_of_ses_rc(rc);
    fail_op(op, err, fault(d, Fault::prov_errno_not_rc) ? 0 : rc);
  } else if (data && len) {
    scatter(op.done.result, result_offset + data_offset, data, len);
  }
  if (op.responses_left) --op.responses_left;
  finish_op_if_done(d, it);
}

// Give PSNs to backlogged packets while the window has room.
void flush_backlog(Domain* d, PeerPdc& p, Clock::time_point now) {
  while (!p.backlog.empty() && p.ini->can_send()) {
    const uint64_t token = p.backlog.front();
    p.backlog.pop_front();
    auto it = p.sent.find(token);
    if (it == p.sent.end()) continue;
    // The last packet of a message asks for an ACK, so the completion does not wait for ack_every.
    it->second.last = p.ini->send(token, now, it->second.eom);
    SentPacket& sp = it->second;
    send_request(d, p, sp.last, sp.frame, sp.next_hdr);  // a lost first send is the retransmission timer's job
    if (!sp.numbered) {
      p.unnumbered[sp.last.psn] = sp.message_id;
      auto aw = p.awaited.find(sp.message_id);
      if (aw != p.awaited.end()) aw->second.unnumbered_psn = sp.last.psn;
    }
  }
}

void resend(Domain* d, PeerPdc& p, const std::vector<pds::ToSend>& list) {
  for (const pds::ToSend& t : list) {
    auto it = p.sent.find(t.token);
    if (it == p.sent.end()) continue;
    it->second.last = t.fields;
    send_request(d, p, t.fields, it->second.frame, it->second.next_hdr);
  }
}

// Messages whose last packet is ACKed but whose response is missing: ask again by resending that packet.
void run_response_timers(Domain* d, PeerPdc& p, Clock::time_point now) {
  for (auto it = p.awaited.begin(); it != p.awaited.end();) {
    AwaitedResponse& a = it->second;
    if (!a.deadline || now < *a.deadline) {
      ++it;
      continue;
    }
    if (pds::out_of_tries(a.tries++, kResponseTries, a.first_asked, now) && !a.patient) {
      // The peer forgot the response. Every packet was delivered (ACKed), but data a read or a fetching
      // atomic returns never came back.
      const uint64_t op_id = a.op;
      it = forget_awaited(p, it);
      auto op = d->ops.find(op_id);
      if (op == d->ops.end()) continue;
      if (!op->second.done.result.empty()) fail_op(op->second, FI_EIO, FI_EIO);
      if (op->second.responses_left) --op->second.responses_left;
      finish_op_if_done(d, op);
      continue;
    }
    a.eom_fields.retransmit = true;
    send_request(d, p, a.eom_fields, a.eom_frame, a.eom_next_hdr);
    a.deadline = now + (a.patient ? std::min<Clock::duration>(kResponseWait * a.tries, kPatientPoll) : kResponseWait * a.tries);
    ++it;
  }
}

void run_timers(Domain* d, Clock::time_point now) {
  for (auto& [key, pp] : d->pdcs) {
    PeerPdc& p = *pp;
    resend(d, p, p.ini->due(now));
    for (uint64_t token : p.ini->take_failed()) {
      auto it = p.sent.find(token);
      if (it == p.sent.end()) continue;
      const uint64_t op = it->second.op;
      if (auto aw = p.awaited.find(it->second.message_id); aw != p.awaited.end()) forget_awaited(p, aw);
      p.sent.erase(it);
      FI_WARN(&g_prov, FI_LOG_EP_DATA, "a packet to %s ran out of retransmissions\n",
              ip_text(p.peer.ip).c_str());
      packet_done(d, op, false);
    }
    if (!p.awaited.empty()) run_response_timers(d, p, now);
    flush_backlog(d, p, now);
  }
}

}  // namespace transport

namespace {

struct Built {
  uint64_t token;
  SentPacket packet;
};
// What the initiator waits for of each message it sends.
struct BuiltMessage {
  uint16_t message_id;
  size_t result_offset;
  bool patient;     // a rendezvous: its response comes once the target has pulled the data
  bool deferrable;  // a deferrable send: RC_NO_MATCH means deferred
};

// The frames of request messages, each packet's PDS header a placeholder (send_request writes the real one
// on every (re)send). False when encoding failed.
bool build_messages(Ep* ep, const Dest& dest, const std::vector<OutRequest>& msgs, std::vector<Built>& built,
                    std::vector<BuiltMessage>& ids) {
  Domain* d = ep->domain;
  try {
    for (const OutRequest& r : msgs) {
      const uint16_t message_id = next_message_id(d);
      const bool deferrable = r.opcode == wire::ses_request_opcode::UET_DEFERRABLE_SEND ||
                              r.opcode == wire::ses_request_opcode::UET_DEFERRABLE_TSEND;
      ids.push_back({message_id, r.result_offset, r.rendezvous.has_value(), deferrable});
      const size_t len = r.payload.size();
      const size_t mtu = d->mtu.payload;
      const size_t packets = len ? (len + mtu - 1) / mtu : 1;
      const SesHeader header = header_of(d, dest, r, packets);
      for (size_t k = 0; k < packets; ++k) {
        FieldValues v;
        v.set(Field::uet_pds_type, pds_req_type(ep->mode));
        v.set(Field::uet_pds_flags_syn, 1);
        ses_fields(v, ep, dest, r.opcode, message_id, r.request_length);
        v.set(Field::uet_ses_buffer_offset, r.buffer_offset);
        if (is_atomic(r.opcode) || r.opcode == wire::ses_request_opcode::UET_WRITE ||
            r.opcode == wire::ses_request_opcode::UET_READ)
          v.set(Field::uet_ses_memory_key, r.match_bits);
        else
          v.set(Field::uet_ses_match_bits, r.match_bits);
        if (r.atomic) atomic_fields(v, *r.atomic);
        if (r.restart) {
          // Deferrable send and RTR: the restart tokens (2.2.10.4-g), in every packet of the message.
          v.set(Field::uet_ses_initiator_restart_token, r.restart->initiator);
          v.set(Field::uet_ses_target_restart_token, r.restart->target);
        }
        const bool som = k == 0, eom = k + 1 == packets;
        if (r.rendezvous && som) {
          // The rendezvous extension header (choice rendezvous-ext-layout), after the SOM header only.
          v.set(Field::uet_ses_rdv_eager_length, r.rendezvous->eager_length);
          v.set(Field::uet_ses_rdv_ri_generation, 0);
          v.set(Field::uet_ses_rdv_pid_on_fep, r.rendezvous->pid_on_fep);
          v.set(Field::uet_ses_rdv_resource_index, r.rendezvous->resource_index);
          v.set(Field::uet_ses_rdv_read_offset, r.rendezvous->read_offset);
          v.set(Field::uet_ses_rdv_read_key, r.rendezvous->read_key);
        }
        v.set(Field::uet_ses_som, som).set(Field::uet_ses_eom, eom);
        const size_t off = k * mtu;
        const std::span<const uint8_t> payload(r.payload.data() + off, std::min(mtu, len - off));
        if (som) {
          v.set(Field::uet_ses_hd, r.header_data ? 1 : 0);
          if (r.header_data) v.set(Field::uet_ses_header_data, *r.header_data);
        } else {
          v.set(Field::uet_ses_hd, 0);
          v.set(Field::uet_ses_message_offset, off);
        }
        SentPacket sp;
        sp.eom = eom;
        sp.message_id = message_id;
        sp.numbered = header == SesHeader::standard;
        sp.next_hdr = header == SesHeader::medium  ? wire::pds_next_hdr::UET_HDR_REQUEST_MEDIUM
                      : header == SesHeader::small ? wire::pds_next_hdr::UET_HDR_REQUEST_SMALL
                                                   : wire::pds_next_hdr::UET_HDR_REQUEST_STD;
        // The optimized header names the MR by its RKEY/INDEX in ses.resource_index (spec 2.2.10.4).
        if (header == SesHeader::small) v.set(Field::uet_ses_resource_index, r.match_bits & wire::k_mr_key_optimized_rkey_mask);
        sp.frame = request_encoder(som, r, header).encode(v, payload);
        built.push_back({d->next_token++, std::move(sp)});
      }
    }
  } catch (const uet::codec::EncodeError& e) {
    FI_WARN(&g_prov, FI_LOG_EP_DATA, "encoding failed: %s\n", e.what());
    return false;
  }
  return true;
}

// Hand built messages of operation `op_id` to the PDC: awaited responses, then the packets.
void queue_messages(Domain* d, PeerPdc& p, uint64_t op_id, std::vector<Built>& built, const std::vector<BuiltMessage>& ids) {
  for (const BuiltMessage& m : ids) {
    AwaitedResponse& a = p.awaited[m.message_id];
    a = AwaitedResponse{};
    a.op = op_id;
    a.result_offset = m.result_offset;
    a.patient = m.patient;
    a.deferrable = m.deferrable;
  }
  for (Built& b : built) {
    b.packet.op = op_id;
    p.sent.emplace(b.token, std::move(b.packet));
    p.backlog.push_back(b.token);
  }
  flush_backlog(d, p, Clock::now());
  // A send while a window of operations is in flight waits for the next progress call, which the
  // application makes to see their completions (FI_PROGRESS_MANUAL), or for kSendBatch frames: the window
  // leaves in a few sendmmsg calls (about 1.8 us less kernel time per 64-byte packet on a veth), with the
  // ACKs an earlier CQ read left. A pingpong's send goes at once: besides itself, it has at most the
  // previous message in flight, whose ACK is still in the socket behind the request just answered (waiting
  // for the next progress call cost the RDM pingpong 3-5 % of its latency). The FEP thread sends what an
  // application that stops calling leaves.
  if (d->ops.size() <= 2 || d->outbox.size() >= kSendBatch) flush_outbox(d);
}

}  // namespace

ssize_t transport_submit(Ep* ep, const Dest& dest, std::vector<OutRequest>&& msgs, OpCompletion&& done,
                         std::optional<Deferral>&& deferral) {
  Domain* d = ep->domain;
  std::vector<Built> built;
  std::vector<BuiltMessage> ids;
  if (!build_messages(ep, dest, msgs, built, ids)) return -FI_EIO;
  if (rudi_applies(ep, dest, msgs)) {  // RUDI uses no PDC (rudi.cpp)
    std::vector<SentPacket> packets;
    for (Built& b : built) packets.push_back(std::move(b.packet));
    std::vector<std::pair<uint16_t, size_t>> message_ids;
    for (const BuiltMessage& m : ids) message_ids.emplace_back(m.message_id, m.result_offset);
    return rudi_submit(ep, dest, std::move(packets), message_ids, std::move(done));
  }
  PeerPdc& p = peer_pdc(d, ep, addr_peer(dest.addr));
  if (p.backlog.size() >= kQueueDepth * 4) return -FI_EAGAIN;  // the transmit queue is full
  const uint64_t op_id = d->next_op++;
  SendOp& op = d->ops[op_id];
  op.ep = ep;
  op.done = std::move(done);
  op.packets_left = built.size();
  op.responses_left = ids.size();
  if (deferral) {
    d->restart_ops[deferral->token] = op_id;
    op.deferral = std::move(deferral);
  }
  queue_messages(d, p, op_id, built, ids);
  return 0;
}

ssize_t transport_add_message(Ep* ep, uint64_t op_id, const Dest& dest, OutRequest&& msg) {
  Domain* d = ep->domain;
  const auto it = d->ops.find(op_id);
  if (it == d->ops.end()) return -FI_ENOENT;
  std::vector<OutRequest> msgs;
  msgs.push_back(std::move(msg));
  std::vector<Built> built;
  std::vector<BuiltMessage> ids;
  if (!build_messages(ep, dest, msgs, built, ids)) return -FI_EIO;
  it->second.packets_left += built.size();
  it->second.responses_left += ids.size();
  queue_messages(d, peer_pdc(d, ep, addr_peer(dest.addr)), op_id, built, ids);
  return 0;
}

void send_later_response(Ep* ep, const UdpPeer& peer, uint16_t message_id, uint32_t job_id, const Response& rsp) {
  Domain* d = ep->domain;
  const auto it = d->pdcs.find({ep, peer});
  if (it == d->pdcs.end() || !it->second->tgt) return;  // the peer restarted: nobody waits for it
  PeerPdc& p = *it->second;
  remember_response(p, message_id, rsp);
  if (!fault(d, Fault::no_ack)) send_ack(d, p, false, 0, message_id, job_id, &rsp);
  flush_outbox(d);
}

void transport_close_ep(Ep* ep) {
  Domain* d = ep->domain;
  const auto start = Clock::now();
  auto quiet_since = start;
  unsigned restated = 0;
  for (;;) {
    {
      std::lock_guard lock(d->mu);
      bool mine = false, unacked = false;
      for (const auto& [key, p] : d->pdcs) {
        if (p->ep != ep) continue;
        mine = true;
        unacked |= !p->sent.empty();
        if (restated < kCloseRestatements) restate_answers(d, *p);
      }
      // Nothing ever sent or received on RDM: nobody waits for an answer from this endpoint.
      if (!mine || ep->type != FI_EP_RDM) break;
      if (restated < kCloseRestatements) ++restated;
      const auto now = Clock::now();
      if (progress(d)) quiet_since = now;
      if (now - start >= kLingerMax) break;
      // Done when our own packets are all ACKed, our answers restated, and the peers have been quiet for a
      // while: a peer whose ACK from us was lost and that runs retransmits within its timeout, and we
      // answer it.
      if (!unacked && restated == kCloseRestatements && now - quiet_since >= kLingerQuiet) break;
    }
    pollfd pfd{d->sock, POLLIN, 0};
    int wait_ms;
    {
      std::lock_guard lock(d->mu);
      wait_ms = transport_wait_ms(d, 10);
    }
    poll(&pfd, 1, wait_ms);
  }
  wait_for_initiators_to_close(ep, start + std::chrono::milliseconds(d->cfg.close_wait_ms));
  std::lock_guard lock(d->mu);
  ep->enabled = false;  // from here no frame reaches it (find_ep), so no PDC for it is created again
  for (auto it = d->pdcs.begin(); it != d->pdcs.end();) {
    if (it->second->ep == ep) {
      d->pdc_by_ini_id.erase(it->second->ini_id);
      it = d->pdcs.erase(it);
    } else {
      ++it;
    }
  }
  rudi_close_ep(ep);
  rendezvous_close_ep(ep);
  for (auto it = d->ops.begin(); it != d->ops.end();) it = it->second.ep == ep ? d->ops.erase(it) : std::next(it);
  for (auto it = d->reassembly.begin(); it != d->reassembly.end();)
    it = std::get<2>(it->first) == ep->resource_index ? forget_reassembly(d, it) : std::next(it);
}

// The largest datagram (header and payload) transport_send copies into one buffer: copying 2 KiB costs
// less than the sendmsg arguments it saves.
constexpr size_t kFlatSendLimit = 2048;

ssize_t transport_send(Ep* ep, fi_addr_t dest_addr, const iovec* iov, size_t count, size_t len,
                       const uint64_t* header_data) {
  Domain* d = ep->domain;
  const bool rud = fault(d, Fault::dgram_over_rud);  // DGRAM MUST use UUD (spec 2.2.6-a)
  const uet::codec::PathEncoder& enc = rud ? encoder<kUudAsRud>() : encoder<kUud>();
  // The header of the endpoint's last datagram without remote CQ data is kept with its destination: while
  // the application names the same AV entry (and the AV has not changed), the next one rewrites only the
  // message id and the length.
  Ep::DgramHeader& kept = ep->dgram_header;
  const bool reuse = !header_data && !kept.bytes.empty() && kept.dest == dest_addr &&
                     kept.av_generation == ep->av->generation;
  // A header with remote CQ data is not kept: it is built in these.
  std::vector<uint8_t> own;
  SockAddr own_to;
  int own_fd = -1;
  std::vector<uint8_t>& header = header_data ? own : kept.bytes;
  SockAddr& to = header_data ? own_to : kept.to;
  int& fd = header_data ? own_fd : kept.fd;
  try {
    if (reuse) {
      using Place = uet::codec::PathEncoder::Place;
      const Place& id = rud ? place<kUudAsRud, Field::uet_ses_message_id>() : place<kUud, Field::uet_ses_message_id>();
      const Place& length = rud ? place<kUudAsRud, Field::uet_ses_request_length>()
                                : place<kUud, Field::uet_ses_request_length>();
      uet::codec::PathEncoder::rewrite(kept.bytes, id, datagram_message_id(d));
      uet::codec::PathEncoder::rewrite(kept.bytes, length, len);
    } else {
      Dest dest;
      if (!resolve_dest(ep, dest_addr, &dest)) return -FI_EINVAL;
      FieldValues v;
      v.set(Field::uet_pds_type, rud ? wire::pds_type::RUD_REQ : wire::pds_type::UUD_REQ);
      if (rud) v.set(Field::uet_pds_flags_syn, 1);
      ses_fields(v, ep, dest, wire::ses_request_opcode::UET_DATAGRAM_SEND, datagram_message_id(d), len);
      v.set(Field::uet_ses_som, 1).set(Field::uet_ses_eom, 1);
      v.set(Field::uet_ses_hd, header_data ? 1 : 0);
      if (header_data) v.set(Field::uet_ses_header_data, *header_data);
      header = enc.encode(v);
      const UdpPeer peer = addr_peer(dest.addr);
      to = sockaddr_of(peer);
      fd = entropy_socket(d, peer);
      if (!header_data) {
        kept.dest = dest_addr;
        kept.av_generation = ep->av->generation;
      }
    }
  } catch (const uet::codec::EncodeError& e) {
    FI_WARN(&g_prov, FI_LOG_EP_DATA, "encoding failed: %s\n", e.what());
    kept.bytes.clear();
    return -FI_EIO;
  }
  // A small datagram is copied behind its header and leaves by sendto, which skips the import of a message
  // header and an iovec list that sendmsg makes (0.17 us a send here: ./uet bench socket-calls); a larger
  // payload goes from the caller's buffers straight to the socket.
  const int sock = fd < 0 ? d->sock : fd;
  sockaddr* const name = fd < 0 ? &to.u.sa : nullptr;
  const socklen_t namelen = fd < 0 ? to.len : 0;
  alignas(8) uint8_t flat[kFlatSendLimit];
  const size_t flat_len = header.size() + len;
  const bool copy = flat_len <= sizeof flat;
  iovec parts[kIovLimit + 1];
  msghdr m{};
  if (copy) {
    memcpy(flat, header.data(), header.size());
    uint8_t* at = flat + header.size();
    for (size_t i = 0; i < count; ++i)
      if (iov[i].iov_len) at = static_cast<uint8_t*>(mempcpy(at, iov[i].iov_base, iov[i].iov_len));  // base may be NULL
  } else {
    parts[0] = {header.data(), header.size()};
    for (size_t i = 0; i < count; ++i) parts[i + 1] = iov[i];
    m.msg_name = name;
    m.msg_namelen = namelen;
    m.msg_iov = parts;
    m.msg_iovlen = count + 1;
  }
  ssize_t ret = 0;
  bool refused = false;
  while ((copy ? sendto(sock, flat, flat_len, 0, name, namelen) : sendmsg(sock, &m, 0)) < 0) {
    if (errno == EINTR) continue;
    // A connected socket reports an earlier datagram's ICMP port-unreachable on the next send, which did
    // not go: that datagram was lost, as datagrams may be; this one is sent again, once.
    if (errno == ECONNREFUSED && !refused) {
      refused = true;
      continue;
    }
    // EMSGSIZE: the datagram is larger than the path's MTU (fragmentation is off: payload_mtu.hpp), so the
    // FEP's MTU is set larger than its path's.
    ret = errno == EAGAIN || errno == ENOBUFS ? -FI_EAGAIN
          : errno == ECONNREFUSED             ? 0
          : errno == EMSGSIZE                 ? -FI_EMSGSIZE
                                              : -FI_EIO;
    if (ret == -FI_EIO || ret == -FI_EMSGSIZE) FI_WARN(&g_prov, FI_LOG_EP_DATA, "%s: %s\n", copy ? "sendto" : "sendmsg", strerror(errno));
    break;
  }
  flush_outbox(d);  // after our datagram, the ACKs an earlier call left
  return ret;
}


}  // namespace softuet
