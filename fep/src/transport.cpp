// The wire: one UDP socket per domain on IP:port, UET frames built with the codec encoder and parsed with
// the codec decoder (the same tables as uet-decode). The kernel adds IP and UDP, so frames start at node
// `uet`. DGRAM uses UUD + UET_DATAGRAM_SEND; RDM uses RUD or ROD + UET_SEND (digest F.3, G.1).
//
// RDM reliability (milestone 2) is the PDS engine of pds/pdc.hpp: one PeerPdc per {endpoint, peer FEP}
// holds an InitiatorPdc (PSNs, retransmission) and a TargetPdc (duplicate suppression, ACK/NACK, ROD
// order). The receiver ACKs (PDS type 7) what the engine says to ACK, and the packet that completes a
// message with an SES response (UET_RESPONSE, RC_OK) after the ACK; ROD NACKs (type 10, ROD_OOO) a gap.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

#include "softuet.hpp"
#include "uet/codec/decoded.hpp"
#include "uet/codec/encoder.hpp"
#include "uet/wire/libfabric_gen.hpp"
#include "wire_paths.hpp"

namespace softuet {

using uet::codec::FieldValues;
using uet::wire::Field;
using uet::wire::Node;
namespace wire = uet::wire;
using pds::Clock;
using namespace paths;

namespace {

// PDS/SES values come from spec/wire.yaml through uet/wire/wire_gen.hpp (wire::pds_type::ACK, ...).
// The RUD/ROD request header size, from the parse graph (digest I.5).
const size_t kPdsReqSize = wire::node_info(Node::uet_pds_rud_rod_req).size;

// After an RDM endpoint's last frame, how long it keeps answering before it closes, and at most how long.
constexpr auto kLingerQuiet = std::chrono::milliseconds(200);
constexpr auto kLingerMax = std::chrono::milliseconds(3000);

// How long the initiator waits for the SES response of a message whose last packet is ACKed, before it
// sends that packet again, and how often.
constexpr auto kResponseWait = std::chrono::milliseconds(20);
// The receive buffer of a target with the truncated_request_acked knob: smaller than a full packet's payload
// on any path softuet sizes for (1152 bytes at the least, an IPv6 path of 1280).
constexpr size_t kTruncatingRecvBuffer = 1024;
constexpr unsigned kResponseTries = 8;
// A rendezvous's response waits for the receive and the pull: the initiator asks again at most this often,
// without a limit (the message is not lost while its packets are ACKed).
constexpr auto kPatientPoll = std::chrono::milliseconds(200);
size_t drain(Domain* d);

// How many given responses a target PDC keeps for duplicates.
constexpr size_t kGivenResponses = 4096;

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

constexpr uint64_t kKeyOptimized = uint64_t{1} << wire::k_mr_key_optimized_bit;

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
Ep* find_ep(Domain* d, uint64_t job, uint64_t pid, uint64_t ri, fi_ep_type type, bool any_job = false) {
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
    if (++a.tries > kResponseTries && !a.patient) {
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

// ---- the receive side ----

void send_ack(Domain* d, PeerPdc& p, bool retx, int16_t ack_psn_offset, uint16_t message_id, uint32_t job_id,
              const Response* rsp) {
  FieldValues v;
  v.set(Field::uet_pds_type, wire::pds_type::ACK);
  v.set(Field::uet_pds_flags_m, 0).set(Field::uet_pds_flags_retx, retx ? 1 : 0);
  v.set(Field::uet_pds_flags_p, 0).set(Field::uet_pds_flags_req, 0);
  v.set(Field::uet_pds_ack_psn_offset, static_cast<uint16_t>(ack_psn_offset));
  v.set(Field::uet_pds_cack_psn, p.tgt->cack_psn());
  v.set(Field::uet_pds_spdcid, p.tgt_id);
  v.set(Field::uet_pds_dpdcid, p.peer_ini_id.value_or(0));
  try {
    const SockAddr to = sockaddr_of(p.peer);
    if (!rsp) {
      v.set(Field::uet_pds_next_hdr, wire::pds_next_hdr::UET_HDR_NONE);
      queue_frame(d, to, encoder<kAck>().encode(v), true);
      return;
    }
    v.set(Field::uet_ses_rsp_list, rsp->expected ? wire::ses_list::UET_EXPECTED : wire::ses_list::UET_OVERFLOW);
    v.set(Field::uet_ses_rsp_version, uet::wire::k_ses_version);
    v.set(Field::uet_ses_rsp_return_code, rsp->rc);
    v.set(Field::uet_ses_rsp_job_id, job_id);
    v.set(Field::uet_ses_rsp_modified_length, rsp->modified_length);
    if (rsp->with_data) {
      // Reads and fetching atomics: the data rides in the ACK (UET_RESPONSE_W_DATA, digest F.3). The
      // initiator splits reads so that one response carries a whole message's data.
      v.set(Field::uet_pds_next_hdr, wire::pds_next_hdr::UET_HDR_RESPONSE_DATA);
      v.set(Field::uet_ses_rsp_opcode, wire::ses_response_opcode::UET_RESPONSE_W_DATA);
      v.set(Field::uet_ses_rsp_message_id, next_message_id(d));
      v.set(Field::uet_ses_rsp_read_request_message_id, message_id);
      v.set(Field::uet_ses_rsp_message_offset, 0);
      queue_frame(d, to, encoder<kAckRspData>().encode(v, rsp->data), true);
    } else {
      v.set(Field::uet_pds_next_hdr, wire::pds_next_hdr::UET_HDR_RESPONSE);
      v.set(Field::uet_ses_rsp_opcode, wire::ses_response_opcode::UET_RESPONSE);
      v.set(Field::uet_ses_rsp_message_id, message_id);
      v.set(Field::uet_ses_rsp_ri_generation, 0);
      queue_frame(d, to, encoder<kAckRsp>().encode(v), true);
    }
  } catch (const uet::codec::EncodeError& e) {
    FI_WARN(&g_prov, FI_LOG_EP_DATA, "encoding an ACK failed: %s\n", e.what());
  }
}

void send_nack(Domain* d, PeerPdc& p, pds::Psn psn) {
  FieldValues v;
  v.set(Field::uet_pds_type, wire::pds_type::NACK);
  v.set(Field::uet_pds_next_hdr, wire::pds_next_hdr::UET_HDR_NONE);
  v.set(Field::uet_pds_flags_m, 0).set(Field::uet_pds_flags_retx, 0).set(Field::uet_pds_flags_nt, 0);
  v.set(Field::uet_pds_nack_code, wire::pds_nack_code::ROD_OOO);
  v.set(Field::uet_pds_vendor_code, 0);
  v.set(Field::uet_pds_nack_psn, psn);
  v.set(Field::uet_pds_spdcid, p.tgt_id);
  v.set(Field::uet_pds_dpdcid, p.peer_ini_id.value_or(0));
  v.set(Field::uet_pds_nack_payload, 0);
  try {
    queue_frame(d, sockaddr_of(p.peer), encoder<kNack>().encode(v), true);
  } catch (const uet::codec::EncodeError& e) {
    FI_WARN(&g_prov, FI_LOG_EP_DATA, "encoding a NACK failed: %s\n", e.what());
  }
}

// The request fields of one packet (every packet of a message carries them; header_data only the SOM),
// written over `r`. r's payload buffer is reused, so a packet delivered at once costs no allocation.
void read_request(const uet::codec::Decoded& pkt, const uint8_t* buf, const UdpPeer& src, InRequest& r) {
  std::vector<uint8_t> payload = std::move(r.payload);
  r = InRequest{};
  r.opcode = *pkt.get(Field::uet_ses_opcode);
  r.job_id = static_cast<uint32_t>(*pkt.get(Field::uet_ses_job_id));
  r.initiator = static_cast<uint32_t>(pkt.get(Field::uet_ses_initiator).value_or(0));
  r.message_id = static_cast<uint16_t>(pkt.get(Field::uet_ses_message_id).value_or(0));
  r.request_length = static_cast<uint32_t>(pkt.get(Field::uet_ses_request_length).value_or(0));
  r.buffer_offset = pkt.get(Field::uet_ses_buffer_offset).value_or(0);
  r.match_bits = pkt.get(Field::uet_ses_memory_key).value_or(pkt.get(Field::uet_ses_match_bits).value_or(0));
  r.header_data = pkt.get(Field::uet_ses_header_data);
  r.src = src;
  if (auto amo = pkt.get(Field::uet_ses_atomic_opcode)) {
    AtomicExt a;
    a.opcode = static_cast<uint8_t>(*amo);
    a.datatype = static_cast<uint8_t>(*pkt.get(Field::uet_ses_atomic_datatype));
    if (pkt.get(Field::uet_ses_compare_value)) {
      const uint8_t* c = pkt.bytes_of(Field::uet_ses_compare_value);
      const uint8_t* w = pkt.bytes_of(Field::uet_ses_swap_value);
      a.compare.assign(c, c + 16);
      a.swap.assign(w, w + 16);
    }
    r.atomic = std::move(a);
  }
  if (auto eager = pkt.get(Field::uet_ses_rdv_eager_length)) {
    RendezvousExt x;
    x.eager_length = static_cast<uint32_t>(*eager);
    x.pid_on_fep = static_cast<uint16_t>(*pkt.get(Field::uet_ses_rdv_pid_on_fep));
    x.resource_index = static_cast<uint16_t>(*pkt.get(Field::uet_ses_rdv_resource_index));
    x.read_offset = *pkt.get(Field::uet_ses_rdv_read_offset);
    x.read_key = *pkt.get(Field::uet_ses_rdv_read_key);
    r.rendezvous = x;
  }
  if (auto itok = pkt.get(Field::uet_ses_initiator_restart_token))
    r.restart = RestartTokens{static_cast<uint32_t>(*itok),
                              static_cast<uint32_t>(pkt.get(Field::uet_ses_target_restart_token).value_or(0))};
  r.payload = std::move(payload);
  r.payload.assign(buf + pkt.payload_offset, buf + pkt.payload_offset + pkt.payload_len);
}

// When a new message does not fit in kReassemblyBudget, the messages that started longest ago are dropped
// (a message that never completes grows old); one message alone always fits, up to the largest write.
std::map<std::tuple<UdpPeer, uint16_t, uint16_t>, Reassembly>::iterator forget_reassembly(
    Domain* d, std::map<std::tuple<UdpPeer, uint16_t, uint16_t>, Reassembly>::iterator it) {
  d->reassembly_bytes -= it->second.req.payload.size();
  return d->reassembly.erase(it);
}

// Makes room for `bytes` more (and for one more message) by dropping the oldest messages but `keep`.
void make_room_for_reassembly(Domain* d, size_t bytes,
                              std::map<std::tuple<UdpPeer, uint16_t, uint16_t>, Reassembly>::iterator keep) {
  while (d->reassembly.size() > 1 && (d->reassembly_bytes + bytes > kReassemblyBudget || d->reassembly.size() > kQueueDepth)) {
    auto oldest = d->reassembly.end();
    for (auto i = d->reassembly.begin(); i != d->reassembly.end(); ++i)
      if (i != keep && (oldest == d->reassembly.end() || i->second.started < oldest->second.started)) oldest = i;
    forget_reassembly(d, oldest);
  }
}

// Reassemble one delivered RDM packet into its message; when the message is whole, carry it out. Returns
// the SES response when the packet completed its message.
std::optional<Response> handle_rud(Domain* d, Ep* ep, const uet::codec::Decoded& pkt, InRequest&& part) {
  const bool som = *pkt.get(Field::uet_ses_som), eom = *pkt.get(Field::uet_ses_eom);
  // A read, a compare-swap and an RTR carry no payload (the CAS operands travel in their extension header;
  // an RTR names the length of the message it asks for): the length they name is not the length that travels.
  const bool no_payload = part.opcode == wire::ses_request_opcode::UET_READ || (part.atomic && is_cas(part.atomic->opcode)) ||
                          part.opcode == wire::ses_request_opcode::UET_DEFERRABLE_RTR;
  // A rendezvous carries only its eager bytes; the target reads the rest.
  const uint64_t total = no_payload ? 0 : part.rendezvous ? part.rendezvous->eager_length : part.request_length;
  if (fault(d, Fault::truncated_request_acked) && part.payload.size() > kTruncatingRecvBuffer) {
    Response lost;  // RC_OK for a packet that did not fit: what the initiator learns is that it arrived
    lost.rc = wire::ses_return_code::RC_OK;
    lost.modified_length = static_cast<uint32_t>(part.request_length);
    return lost;
  }
  if (som && eom) {
    if (part.payload.size() != total) return std::nullopt;  // a single packet must carry the whole message
    return execute(ep, std::move(part));
  }
  // A receiver reassembles into memory: bound what a request_length may make it allocate. Writes may be
  // as large as the endpoint's maximum RMA size.
  const bool write = part.opcode == wire::ses_request_opcode::UET_WRITE;
  if (total > (write ? ep->max_rma_size : kMaxRdmMsg)) return std::nullopt;
  const uint64_t offset = som ? 0 : pkt.get(Field::uet_ses_message_offset).value_or(~0ull);
  // The sender chose the size of each packet (its payload MTU, which the spec wants equal across the fabric
  // but this FEP does not rely on): a packet is its message's bytes [offset, end), and may not overlap
  // another's.
  const uint64_t end = offset + part.payload.size();
  if (part.payload.empty() || end > total) return std::nullopt;
  const auto key = std::make_tuple(part.src, part.message_id, ep->resource_index);
  auto [it, fresh] = d->reassembly.try_emplace(key);
  Reassembly& r = it->second;
  if (fresh) {
    make_room_for_reassembly(d, total, it);
    r.started = d->next_reassembly++;
    r.req.payload.resize(total);
    d->reassembly_bytes += total;
  }
  if (r.req.payload.size() != total) return std::nullopt;
  const auto after = r.spans.lower_bound(offset);
  if ((after != r.spans.end() && after->first < end) || (after != r.spans.begin() && std::prev(after)->second > offset))
    return std::nullopt;
  r.spans.emplace_hint(after, offset, end);
  std::memcpy(r.req.payload.data() + offset, part.payload.data(), part.payload.size());
  r.received += part.payload.size();
  if (som) {
    // The SOM packet's header is the message's (header_data travels only there).
    r.som_seen = true;
    std::vector<uint8_t> payload = std::move(r.req.payload);
    r.req = std::move(part);
    r.req.payload = std::move(payload);
  }
  if (r.som_seen && r.received == total) {
    d->reassembly_bytes -= total;
    InRequest req = std::move(r.req);
    d->reassembly.erase(it);
    return execute(ep, std::move(req));
  }
  return std::nullopt;
}

void remember_response(PeerPdc& p, uint64_t key, const Response& rsp) {
  if (p.given.insert_or_assign(key, rsp).second) p.given_order.push_back(key);
  while (p.given_order.size() > kGivenResponses) {
    p.given.erase(p.given_order.front());
    p.given_order.pop_front();
  }
}

// An RDM request: through the target PDC first; only what it says to deliver reaches SES.
void handle_rdm_request(Domain* d, Ep* ep, const uet::codec::Decoded& pkt, InRequest&& m, uint64_t type) {
  const pds::Mode mode = type == wire::pds_type::ROD_REQ ? pds::Mode::rod : pds::Mode::rud;
  pds::RequestFields f;
  f.psn = static_cast<pds::Psn>(*pkt.get(Field::uet_pds_psn));
  f.syn = *pkt.get(Field::uet_pds_flags_syn);
  f.psn_offset = f.syn ? static_cast<uint16_t>(pkt.get(Field::uet_pds_psn_offset).value_or(0)) : 0;
  f.clear_psn_offset = static_cast<int16_t>(static_cast<uint16_t>(*pkt.get(Field::uet_pds_clear_psn_offset)));
  f.retransmit = *pkt.get(Field::uet_pds_flags_retx);
  f.ack_request = *pkt.get(Field::uet_pds_flags_ar);
  const uint16_t spdcid = static_cast<uint16_t>(*pkt.get(Field::uet_pds_spdcid));

  PeerPdc& p = peer_pdc(d, ep, m.src);
  if (f.syn) {
    // A SYN from another initiator PDC of that peer (it restarted): a new PDC replaces the old one.
    if (p.tgt && p.peer_ini_id != spdcid) {
      p.tgt.reset();
      p.given.clear();
      p.given_order.clear();
    }
    if (!p.tgt) {
      p.tgt = std::make_unique<pds::TargetPdc>(mode);
      p.tgt_mode = mode;
      p.peer_ini_id = spdcid;
    }
  } else {
    // Without SYN the request must name this PDC (INV_DPDCID NACKs come with the error milestone).
    if (!p.tgt || p.peer_ini_id != spdcid || pkt.get(Field::uet_pds_dpdcid).value_or(0) != p.tgt_id) return;
  }
  if (p.tgt_mode != mode) return;  // PDC_MODE_MISMATCH: dropped for now
  // The response's message_id is the request's; a request without one (small and medium headers) is
  // answered with 0 and remembered by its PSN (choice unnumbered-response-message-id).
  const uint16_t message_id = m.message_id;
  const uint64_t response_key = message_id ? message_id : (uint64_t{1} << 32) | f.psn;
  const uint32_t job_id = m.job_id;
  const pds::Verdict v = p.tgt->on_request(f);
  std::optional<Response> rsp;
  if (v.deliver || (v.duplicate && fault(d, Fault::duplicate_delivery))) rsp = handle_rud(d, ep, pkt, std::move(m));
  // A rendezvous is answered once its data is pulled (send_later_response); its packet is ACKed now.
  const bool later = rsp && rsp->later;
  if (later) rsp.reset();
  if (rsp) remember_response(p, response_key, *rsp);
  const Response* answer = rsp ? &*rsp : nullptr;
  if (!answer && v.duplicate) {
    // A retransmission of a message already carried out: its ACK (with the response) may have been lost.
    auto g = p.given.find(response_key);
    if (g != p.given.end()) answer = &g->second;
  }
  if ((v.send_ack || answer || later) && !fault(d, Fault::no_ack))
    send_ack(d, p, f.retransmit, v.ack_psn_offset, message_id, job_id, answer);
  if (v.nack_psn) send_nack(d, p, *v.nack_psn);
}

// An ACK or NACK for one of our initiator PDCs (named by dpdcid, from the peer it belongs to).
PeerPdc* pdc_of_reply(Domain* d, const uet::codec::Decoded& pkt, const UdpPeer& from) {
  const auto it = d->pdc_by_ini_id.find(static_cast<uint16_t>(*pkt.get(Field::uet_pds_dpdcid)));
  if (it == d->pdc_by_ini_id.end()) return nullptr;
  PeerPdc* p = it->second;
  if (p->peer != from) return nullptr;
  return p;
}

void handle_ack(Domain* d, const uet::codec::Decoded& pkt, const uint8_t* buf, const UdpPeer& from) {
  if (!pkt.has_layer(uet::wire::Header::uet_pds_ack) || pkt.get(Field::uet_pds_flags_p).value_or(0)) return;
  PeerPdc* p = pdc_of_reply(d, pkt, from);
  if (!p) return;
  const auto cack = static_cast<pds::Psn>(*pkt.get(Field::uet_pds_cack_psn));
  const auto offset = static_cast<int16_t>(static_cast<uint16_t>(*pkt.get(Field::uet_pds_ack_psn_offset)));
  const std::vector<uint64_t> done = p->ini->on_ack(cack, offset);
  if (p->ini->established() && !p->peer_tgt_id) p->peer_tgt_id = static_cast<uint16_t>(*pkt.get(Field::uet_pds_spdcid));
  const auto now = Clock::now();
  for (uint64_t token : done) {
    auto it = p->sent.find(token);
    if (it == p->sent.end()) continue;
    const uint64_t op = it->second.op;
    if (it->second.eom) {
      // Its response should be in this ACK; if not, it is asked for again after a while.
      auto aw = p->awaited.find(it->second.message_id);
      if (aw != p->awaited.end()) {
        aw->second.eom_frame = std::move(it->second.frame);
        aw->second.eom_next_hdr = it->second.next_hdr;
        aw->second.eom_fields = it->second.last;
        aw->second.deadline = now + kResponseWait;
      }
    }
    p->sent.erase(it);
    packet_done(d, op, true);
  }
  // Which of our messages a response answers: its message_id, or for a request that had none (message_id 0,
  // choice unnumbered-response-message-id) the PSN this ACK acknowledges.
  auto answered = [&](uint64_t wire_id) -> std::optional<uint16_t> {
    if (wire_id) return static_cast<uint16_t>(wire_id);
    const auto u = p->unnumbered.find(static_cast<pds::Psn>(cack + static_cast<pds::Psn>(offset)));
    if (u == p->unnumbered.end()) return std::nullopt;
    return u->second;
  };
  if (pkt.has_layer(uet::wire::Header::uet_ses_response)) {
    if (const auto id = answered(*pkt.get(Field::uet_ses_rsp_message_id)))
      response_arrived(d, *p, *id, *pkt.get(Field::uet_ses_rsp_return_code), nullptr, 0, 0);
  } else if (pkt.has_layer(uet::wire::Header::uet_ses_response_data)) {
    if (const auto id = answered(*pkt.get(Field::uet_ses_rsp_read_request_message_id)))
      response_arrived(d, *p, *id, *pkt.get(Field::uet_ses_rsp_return_code), buf + pkt.payload_offset,
                       pkt.payload_len, *pkt.get(Field::uet_ses_rsp_message_offset));
  }
  flush_backlog(d, *p, now);
}

void handle_nack(Domain* d, const uet::codec::Decoded& pkt, const UdpPeer& from) {
  if (!pkt.has_layer(uet::wire::Header::uet_pds_nack) || pkt.get(Field::uet_pds_flags_nt).value_or(1)) return;
  PeerPdc* p = pdc_of_reply(d, pkt, from);
  if (!p || *pkt.get(Field::uet_pds_nack_code) != wire::pds_nack_code::ROD_OOO) return;
  resend(d, *p, p->ini->on_nack(static_cast<pds::Psn>(*pkt.get(Field::uet_pds_nack_psn)), Clock::now()));
}

// Which endpoint type a request is for: DGRAM takes UUD datagrams, RDM the reliable delivery modes.
std::optional<fi_ep_type> ep_type_of(uint64_t pds_type, uint64_t opcode) {
  if (pds_type == wire::pds_type::UUD_REQ)
    return opcode == wire::ses_request_opcode::UET_DATAGRAM_SEND ? std::optional(FI_EP_DGRAM) : std::nullopt;
  if (pds_type != wire::pds_type::RUD_REQ && pds_type != wire::pds_type::ROD_REQ &&
      pds_type != wire::pds_type::RUDI_REQ)
    return std::nullopt;
  switch (opcode) {
    case wire::ses_request_opcode::UET_SEND:
    case wire::ses_request_opcode::UET_TAGGED_SEND:
    case wire::ses_request_opcode::UET_RENDEZVOUS_SEND:
    case wire::ses_request_opcode::UET_RENDEZVOUS_TSEND:
    case wire::ses_request_opcode::UET_DEFERRABLE_SEND:
    case wire::ses_request_opcode::UET_DEFERRABLE_TSEND:
    case wire::ses_request_opcode::UET_DEFERRABLE_RTR:
    case wire::ses_request_opcode::UET_WRITE:
    case wire::ses_request_opcode::UET_READ:
    case wire::ses_request_opcode::UET_ATOMIC:
    case wire::ses_request_opcode::UET_FETCHING_ATOMIC:
      return FI_EP_RDM;
    default:
      return std::nullopt;
  }
}

// `pkt` and `m` are the domain's: the decoded frame and the request read from it.
void handle_packet(Domain* d, const uint8_t* buf, size_t n, const UdpPeer& from, uet::codec::Decoded& pkt,
                   InRequest& m) {
  uet::codec::DecodeOptions opts;
  opts.udp_port = d->cfg.udp_port;
  opts.spec_version = d->cfg.spec_version;
  uet::codec::decode(buf, static_cast<uint32_t>(n), static_cast<uint32_t>(n), Node::uet, opts, pkt);
  if (pkt.status() != uet::codec::Status::uet) {
    FI_DBG(&g_prov, FI_LOG_EP_DATA, "dropped a frame that is not clean UET (%s)\n",
           uet::codec::status_name(pkt.status()));
    return;
  }
  const uint64_t type = *pkt.get(Field::uet_pds_type);
  if (type == wire::pds_type::ACK) return handle_ack(d, pkt, buf, from);
  if (type == wire::pds_type::NACK) return handle_nack(d, pkt, from);
  if (type == wire::pds_type::RUDI_RESP) return rudi_response(d, pkt, buf, from);
  const bool optimized = pkt.has_layer(uet::wire::Header::uet_ses_small);
  if (!pkt.has_layer(uet::wire::Header::uet_ses_std) && !pkt.has_layer(uet::wire::Header::uet_ses_medium) && !optimized) {
    FI_DBG(&g_prov, FI_LOG_EP_DATA, "dropped PDS type %lu without an SES request header\n",
           static_cast<unsigned long>(type));
    return;
  }
  if (fault(d, Fault::standard_header_only) && !pkt.has_layer(uet::wire::Header::uet_ses_std)) return;
  const uint64_t opcode = *pkt.get(Field::uet_ses_opcode);
  const std::optional<fi_ep_type> ep_type = ep_type_of(type, opcode);
  if (!ep_type) {
    FI_DBG(&g_prov, FI_LOG_EP_DATA, "dropped PDS type %lu opcode %lu: not implemented\n",
           static_cast<unsigned long>(type), static_cast<unsigned long>(opcode));
    return;
  }
  // Relative addressing: {JobID, PIDonFEP, RI} selects the endpoint (digest C.2); an RDM request without a
  // match is answered with why (refuse_unmatched). The optimized non-matching header names an MR by its
  // RKEY/INDEX instead of the endpoint's RI.
  const uint64_t rkey = *pkt.get(Field::uet_ses_resource_index);
  const Mr* optimized_mr = optimized ? mr_of_rkey(d, rkey) : nullptr;
  // The knob's short cut: a request from this node is taken as if it had the endpoint's own JobID.
  const bool short_cut = fault(d, Fault::same_node_unchecked) && from.ip == d->ip.ip;
  Ep* ep = nullptr;
  if (optimized) {
    ep = ep_of_optimized(d, optimized_mr, *pkt.get(Field::uet_ses_job_id), *pkt.get(Field::uet_ses_pid_on_fep),
                         pkt.get(Field::uet_pds_dpdcid).value_or(0), from);
  } else {
    // An RTR names the deferrable send it restarts by its initiator token, unique at this FEP (2.2.10.4-h).
    if (opcode == wire::ses_request_opcode::UET_DEFERRABLE_RTR)
      ep = rtr_endpoint(d, static_cast<uint32_t>(pkt.get(Field::uet_ses_initiator_restart_token).value_or(0)));
    if (!ep)
      ep = find_ep(d, *pkt.get(Field::uet_ses_job_id), *pkt.get(Field::uet_ses_pid_on_fep),
                   *pkt.get(Field::uet_ses_resource_index), *ep_type, short_cut);
  }
  std::optional<Refusal> refusal;
  if (!ep && !optimized && *ep_type == FI_EP_RDM) {
    refusal = refuse_unmatched(d, static_cast<uint32_t>(*pkt.get(Field::uet_ses_job_id)),
                               *pkt.get(Field::uet_ses_pid_on_fep), *pkt.get(Field::uet_ses_resource_index),
                               pkt.get(Field::uet_pds_dpdcid).value_or(0), from);
    if (refusal) ep = refusal->answering;
  }
  if (!ep) return;
  read_request(pkt, buf, from, m);
  if (short_cut) m.job_id = ep->job_id;
  if (refusal) m.refuse_rc = refusal->rc;
  if (optimized) m.match_bits = optimized_mr ? optimized_mr->key : kKeyOptimized | rkey;
  if (*ep_type == FI_EP_DGRAM) {
    // UUD datagrams are single packets (digest F.3).
    if (!*pkt.get(Field::uet_ses_som) || !*pkt.get(Field::uet_ses_eom)) return;
    if (m.payload.size() != m.request_length) return;
    deliver(ep, std::move(m));
    return;
  }
  if (type == wire::pds_type::RUDI_REQ) return rudi_request(d, ep, pkt, std::move(m));
  handle_rdm_request(d, ep, pkt, std::move(m), type);
}

}  // namespace

// One recvmmsg takes every frame waiting (up to kRecvBatch): a batch that comes back short means the socket
// is drained, so the common case of one frame costs one system call, not a second that fails.
constexpr size_t kRecvBatch = 16;
// A UET packet is one payload MTU and its headers; anything larger is not a packet this FEP can take.
constexpr size_t kRecvSlot = 16384;

struct RecvBatch {
  std::vector<uint8_t> bufs = std::vector<uint8_t>(kRecvBatch * kRecvSlot);
  SockAddr from[kRecvBatch];
  iovec iov[kRecvBatch];
  mmsghdr msgs[kRecvBatch] = {};
  uet::codec::Decoded pkt;
  InRequest req;  // the request of the frame being handled
  bool burst = false;  // the last look found frames: read the next ones in batches
  RecvBatch() {
    for (size_t i = 0; i < kRecvBatch; ++i) {
      iov[i] = {bufs.data() + i * kRecvSlot, kRecvSlot};
      msgs[i].msg_hdr.msg_name = &from[i].u;
      msgs[i].msg_hdr.msg_namelen = sizeof from[i].u;
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
  }
};

void RecvBatchDeleter::operator()(RecvBatch* b) const { delete b; }

void transport_receive(Domain* d, const uint8_t* buf, size_t len, const UdpPeer& from) {
  // A sealed packet (the first 5 bits: a TSS header) is handled as what it seals.
  if (len && (buf[0] >> 3) == wire::pds_type::UET_TSS) {
    if (tss_open(d, buf, len, from)) handle_packet(d, d->tss_plain.data(), d->tss_plain.size(), from, d->rx->pkt, d->rx->req);
    return;
  }
  handle_packet(d, buf, len, from, d->rx->pkt, d->rx->req);
}

int transport_open(Domain* d) {
  d->rx.reset(new RecvBatch);
  outbox_open(d);
  d->sock = socket(d->ip.ip.v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (d->sock < 0) return -FI_ENOMEM;
  // Bursts of RDM segments arrive faster than manual progress drains them; a larger buffer keeps the
  // kernel from dropping them (each drop costs a retransmission).
  int rcvbuf = 4 << 20;
  setsockopt(d->sock, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  // The data traffic class.
  if (set_dscp(d, d->sock) != 0)
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "cannot set DSCP %u: %s\n", d->dscp, strerror(errno));
  // Packets are sized to the path (payload_mtu.cpp); one that is not must fail to send, not leave in fragments.
  if (forbid_fragments(d->sock, d->ip.ip.v6) != 0)
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "cannot forbid IP fragmentation: %s\n", strerror(errno));
  const SockAddr a = sockaddr_of(UdpPeer{d->ip.ip, d->cfg.udp_port});
  if (bind(d->sock, &a.u.sa, a.len) != 0) {
    const int err = errno;
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "cannot bind the FEP socket to %s:%u: %s (set SOFTUET_UDP_PORT?)\n",
            d->ip.text.c_str(), d->cfg.udp_port, strerror(err));
    close(d->sock);
    d->sock = -1;
    return err == EADDRINUSE ? -FI_EADDRINUSE : -FI_EINVAL;
  }
  return 0;
}

void transport_close(Domain* d) {
  fep_thread_stop(d);
  flush_outbox(d);
  entropy_close(d);
  if (d->sock >= 0) close(d->sock);
  d->sock = -1;
}

size_t progress(Domain* d) {
  const size_t frames = progress_deferring_output(d);
  flush_outbox(d);
  return frames;
}

size_t progress_deferring_output(Domain* d) {
  // One writer (under the domain's mutex), so a plain increment of the relaxed atomic is enough.
  d->app_progress_calls.store(d->app_progress_calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  flush_outbox(d);
  return drain(d);
}

namespace {

// Hands frames [0, n) of the batch to handle_packet and makes their slots ready for the next call.
void handle_batch(Domain* d, RecvBatch& b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    msghdr& h = b.msgs[i].msg_hdr;
    if (!(h.msg_flags & MSG_TRUNC)) {
      b.from[i].len = h.msg_namelen;
      if (const std::optional<UdpPeer> peer = peer_of(b.from[i]))
        transport_receive(d, static_cast<uint8_t*>(b.iov[i].iov_base), b.msgs[i].msg_len, *peer);
    }
    h.msg_namelen = sizeof b.from[i].u;  // the kernel wrote the sender's length there
  }
}

size_t drain(Domain* d) {
  RecvBatch& b = *d->rx;
  size_t frames = 0;
  if (!b.burst) {
    // Quiet socket (the last look found nothing): one recvfrom. When a frame is there, it goes to the
    // application without the failing second read recvmmsg would make (about 0.2 us of each one-way trip
    // of a pingpong); the next look reads in batches, in case a burst has begun. recvfrom, not recvmsg:
    // it imports no message header or iovec list, so an empty look costs 280 ns here, not 406 ns, and
    // a waiting application sees its datagram sooner. MSG_TRUNC makes it return a datagram's full length.
    msghdr& h = b.msgs[0].msg_hdr;
    ssize_t got;
    do {
      got = recvfrom(d->sock, b.iov[0].iov_base, kRecvSlot, MSG_DONTWAIT | MSG_TRUNC, &b.from[0].u.sa, &h.msg_namelen);
    } while (got < 0 && errno == EINTR);
    if (got >= 0) {
      h.msg_flags = static_cast<size_t>(got) > kRecvSlot ? MSG_TRUNC : 0;
      b.msgs[0].msg_len = static_cast<unsigned>(got);
      handle_batch(d, b, 1);
      frames = 1;
      b.burst = true;
    }
  } else {
    for (;;) {
      const int n = recvmmsg(d->sock, b.msgs, kRecvBatch, MSG_DONTWAIT, nullptr);
      if (n < 0) {
        if (errno == EINTR) continue;
        break;  // EAGAIN: drained
      }
      handle_batch(d, b, static_cast<size_t>(n));
      frames += static_cast<size_t>(n);
      if (static_cast<size_t>(n) < kRecvBatch) break;
    }
    b.burst = frames > 0;
  }
  if (!d->pdcs.empty()) run_timers(d, Clock::now());
  if (!d->rudi_sent.empty()) rudi_timers(d, Clock::now());
  return frames;
}

}  // namespace

size_t transport_drain(Domain* d) { return drain(d); }

int transport_wait_ms(Domain* d, int cap_ms) {
  std::optional<Clock::time_point> next = rudi_next_deadline(d);
  for (const auto& [key, p] : d->pdcs) {
    const auto t = p->ini->next_deadline();
    if (t && (!next || *t < *next)) next = t;
  }
  if (!next) return cap_ms;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  if (left <= 0) return 0;
  return cap_ms < 0 ? static_cast<int>(left) : static_cast<int>(std::min<int64_t>(left, cap_ms));
}

std::vector<uint8_t> gather(const iovec* iov, size_t count, size_t len) {
  std::vector<uint8_t> msg;
  msg.reserve(len);
  for (size_t i = 0; i < count; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    msg.insert(msg.end(), p, p + iov[i].iov_len);
  }
  return msg;
}

bool iov_ok(const iovec* iov, size_t count) {
  if (count > kIovLimit || (count && !iov)) return false;
  for (size_t i = 0; i < count; ++i)
    if (iov[i].iov_len && !iov[i].iov_base) return false;
  return true;
}

size_t iov_len(const iovec* iov, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) n += iov[i].iov_len;
  return n;
}

size_t scatter(const IovList& iov, size_t offset, const uint8_t* data, size_t len) {
  size_t copied = 0;
  for (const iovec& v : iov) {
    if (copied == len) break;
    if (offset >= v.iov_len) {
      offset -= v.iov_len;
      continue;
    }
    const size_t n = std::min(v.iov_len - offset, len - copied);
    std::memcpy(static_cast<uint8_t*>(v.iov_base) + offset, data + copied, n);
    copied += n;
    offset = 0;
  }
  return copied;
}

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
  for (;;) {
    {
      std::lock_guard lock(d->mu);
      bool mine = false, unacked = false;
      for (const auto& [key, p] : d->pdcs) {
        if (p->ep != ep) continue;
        mine = true;
        unacked |= !p->sent.empty();
      }
      // Nothing ever sent or received on RDM: nobody waits for an answer from this endpoint.
      if (!mine || ep->type != FI_EP_RDM) break;
      const auto now = Clock::now();
      if (progress(d)) quiet_since = now;
      if (now - start >= kLingerMax) break;
      // Done when our own packets are all ACKed and the peers have been quiet for a while: a peer whose
      // ACK from us was lost retransmits within its timeout, and we answer it.
      if (!unacked && now - quiet_since >= kLingerQuiet) break;
    }
    pollfd pfd{d->sock, POLLIN, 0};
    int wait_ms;
    {
      std::lock_guard lock(d->mu);
      wait_ms = transport_wait_ms(d, 10);
    }
    poll(&pfd, 1, wait_ms);
  }
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
