// RUDI: reliable unordered delivery for idempotent operations (HPC only, spec §2.2.6; choice rudi-criteria).
// RUDI uses no PDC (2.2.10.3-a): each request packet carries a pkt_id unique among this FEP's outstanding
// RUDI packets, and the target carries out every packet it receives, duplicates included, and answers each
// with a RUDI_RESP of the same pkt_id holding the SES response. That is safe only because the operations
// are idempotent (a write of the same bytes, a read) and the MR said so (IDEMPOTENT_SAFE).
//
// The request frames are built as for RUD (transport.cpp, same SES header choice); only the PDS header
// differs: the 12-byte RUD placeholder is replaced by the 8-byte RUDI header.
#include <cstring>

#include "softuet.hpp"
#include "uet/codec/decoded.hpp"
#include "uet/codec/encoder.hpp"
#include "uet/wire/libfabric_gen.hpp"
#include "uet/wire/profiles.hpp"
#include "wire_paths.hpp"

namespace softuet {

using uet::codec::FieldValues;
using uet::wire::Field;
using uet::wire::Node;
namespace wire = uet::wire;
using pds::Clock;
using namespace paths;

namespace {

constexpr uint64_t kIdempotentSafe = uint64_t{1} << wire::k_mr_key_idempotent_safe_bit;
const size_t kRudPlaceholder = wire::node_info(Node::uet_pds_rud_rod_req).size;
const size_t kRudiSize = wire::node_info(Node::uet_pds_rudi).size;

// Without a PDC there is no ACK window: the initiator's only loss signal is a missing response. The first
// wait is long enough for a busy target to answer a burst of a whole 1 MiB operation; it doubles to a cap.
constexpr auto kRudiRto = std::chrono::milliseconds(10);
constexpr auto kRudiMaxRto = std::chrono::milliseconds(200);
constexpr unsigned kRudiTries = 20;  // then the packet, and its operation, fail
// Packets in flight before a new operation waits (-FI_EAGAIN); one larger operation still goes alone.
constexpr size_t kRudiOutstanding = 8192;


std::vector<uint8_t> rudi_header(uint64_t type, uint8_t next_hdr, uint32_t pkt_id, bool retx) {
  FieldValues v;
  v.set(Field::uet_pds_type, type).set(Field::uet_pds_next_hdr, next_hdr);
  v.set(Field::uet_pds_flags_m, 0).set(Field::uet_pds_flags_retx, retx ? 1 : 0);
  v.set(Field::uet_pds_pkt_id, pkt_id);
  return encoder<kRudiPds>().encode(v);
}

uint32_t alloc_pkt_id(Domain* d) {
  for (;;) {
    const uint32_t id = d->next_pkt_id++;
    if (id != 0 && !d->rudi_sent.count(id)) return id;
  }
}

pds::TimePoint::duration rto(unsigned tries) {
  auto t = std::chrono::duration_cast<pds::TimePoint::duration>(kRudiRto);
  for (unsigned i = 0; i < tries && t < kRudiMaxRto; ++i) t *= 2;
  return std::min<pds::TimePoint::duration>(t, kRudiMaxRto);
}

// One packet of operation `op_id` is answered (or gave up): the operation completes with its last packet.
void packet_answered(Domain* d, uint64_t op_id, int err, uint64_t prov_errno) {
  auto it = d->ops.find(op_id);
  if (it == d->ops.end()) return;
  SendOp& op = it->second;
  if (err && !op.failed) {
    op.failed = true;
    complete_op(op.ep, op.done, err, prov_errno);
  }
  if (op.packets_left) --op.packets_left;
  if (op.packets_left) return;
  if (!op.failed) complete_op(op.ep, op.done, 0, 0);
  d->ops.erase(it);
}

void send_response(Domain* d, const UdpPeer& to, uint32_t pkt_id, uint16_t message_id, uint32_t job_id,
                   const Response& rsp) {
  FieldValues v;
  v.set(Field::uet_pds_type, wire::pds_type::RUDI_RESP);
  v.set(Field::uet_pds_flags_m, 0).set(Field::uet_pds_flags_retx, 0);
  v.set(Field::uet_pds_pkt_id, pkt_id);
  v.set(Field::uet_ses_rsp_list, wire::ses_list::UET_EXPECTED);
  v.set(Field::uet_ses_rsp_version, wire::k_ses_version);
  v.set(Field::uet_ses_rsp_return_code, rsp.rc);
  v.set(Field::uet_ses_rsp_job_id, job_id);
  v.set(Field::uet_ses_rsp_modified_length, rsp.modified_length);
  try {
    if (rsp.with_data) {
      // A read's data follows the RUDI header in UET_RESPONSE_W_DATA, as in a RUD ACK (choice rudi-criteria).
      v.set(Field::uet_pds_next_hdr, wire::pds_next_hdr::UET_HDR_RESPONSE_DATA);
      v.set(Field::uet_ses_rsp_opcode, wire::ses_response_opcode::UET_RESPONSE_W_DATA);
      v.set(Field::uet_ses_rsp_message_id, message_id);
      v.set(Field::uet_ses_rsp_read_request_message_id, message_id);
      v.set(Field::uet_ses_rsp_message_offset, 0);
      queue_frame(d, sockaddr_of(to), encoder<kRudiRspData>().encode(v, rsp.data), true);
    } else {
      v.set(Field::uet_pds_next_hdr, wire::pds_next_hdr::UET_HDR_RESPONSE);
      v.set(Field::uet_ses_rsp_opcode, wire::ses_response_opcode::UET_RESPONSE);
      v.set(Field::uet_ses_rsp_message_id, message_id);
      v.set(Field::uet_ses_rsp_ri_generation, 0);
      queue_frame(d, sockaddr_of(to), encoder<kRudiRsp>().encode(v), true);
    }
  } catch (const uet::codec::EncodeError& e) {
    FI_WARN(&g_prov, FI_LOG_EP_DATA, "encoding a RUDI response failed: %s\n", e.what());
  }
}

// What the target does with one RUDI packet: each is a whole write of its own bytes at its own offset, or a
// whole read of at most one payload MTU (the initiator splits reads so).
Response carry_out(Domain* d, Ep* ep, const uet::codec::Decoded& pkt, InRequest&& m) {
  Response rsp;
  const bool write = m.opcode == wire::ses_request_opcode::UET_WRITE;
  if (!write && m.opcode != wire::ses_request_opcode::UET_READ) {
    rsp.rc = wire::ses_return_code::RC_UNSUPPORTED_OP;
    return rsp;
  }
  // An MR that is not IDEMPOTENT_SAFE MUST NOT be the target of an idempotent operation (2.2.5.3.4.1-b):
  // a duplicate would be carried out twice.
  const auto named = d->mrs.find(m.match_bits);
  if (!(m.match_bits & kIdempotentSafe) && named != d->mrs.end()) {
    rsp.rc = wire::ses_return_code::RC_OP_VIOLATION;
    return rsp;
  }
  if (write) {
    const uint64_t offset = *pkt.get(Field::uet_ses_som) ? 0 : pkt.get(Field::uet_ses_message_offset).value_or(~0ull);
    if (offset > m.request_length || m.payload.size() > m.request_length - offset) {
      rsp.rc = wire::ses_return_code::RC_BAD_ADDR;
      return rsp;
    }
    m.buffer_offset += offset;
    m.header_data.reset();  // RUDI never carries remote CQ data: no target completion per packet
  }
  return rma_target(ep, std::move(m));
}

}  // namespace

bool rudi_applies(Ep* ep, const Dest& dest, const std::vector<OutRequest>& msgs) {
  Domain* d = ep->domain;
  if (msgs.empty() || ep->type != FI_EP_RDM || ep->mode != pds::Mode::rud) return false;
  if (!(d->cfg.fep_caps & kCapHpc)) return false;
  // RUDI is an HPC delivery mode: only between FEPs that operate in HPC (uet/wire/profiles.hpp).
  const uint8_t peer = (dest.addr.uet.flags & kAddrFlagCapsValid) ? dest.addr.uet.fep_caps : 0;
  if (!wire::rudi_allowed(d->cfg.fep_caps, peer) && !fault(d, Fault::rudi_without_hpc)) return false;
  for (const OutRequest& r : msgs) {
    const bool write = r.opcode == wire::ses_request_opcode::UET_WRITE && !r.header_data;
    if (!write && r.opcode != wire::ses_request_opcode::UET_READ) return false;
    if (!(r.match_bits & kIdempotentSafe) && !fault(d, Fault::rudi_to_unsafe_key)) return false;
  }
  return true;
}

ssize_t rudi_submit(Ep* ep, const Dest& dest, std::vector<SentPacket>&& packets,
                    const std::vector<std::pair<uint16_t, size_t>>& result_offsets, OpCompletion&& done) {
  Domain* d = ep->domain;
  if (!d->rudi_sent.empty() && d->rudi_sent.size() + packets.size() > kRudiOutstanding) return -FI_EAGAIN;
  const UdpPeer peer = addr_peer(dest.addr);
  const uint64_t op_id = d->next_op++;
  SendOp& op = d->ops[op_id];
  op.ep = ep;
  op.done = std::move(done);
  op.packets_left = packets.size();
  const auto now = Clock::now();
  for (SentPacket& sp : packets) {
    const uint32_t pkt_id = alloc_pkt_id(d);
    RudiPacket& rp = d->rudi_sent[pkt_id];
    const std::vector<uint8_t> pds = rudi_header(wire::pds_type::RUDI_REQ, sp.next_hdr, pkt_id, false);
    rp.frame.reserve(sp.frame.size() - kRudPlaceholder + kRudiSize);
    rp.frame.assign(pds.begin(), pds.end());
    rp.frame.insert(rp.frame.end(), sp.frame.begin() + static_cast<ptrdiff_t>(kRudPlaceholder), sp.frame.end());
    rp.peer = peer;
    rp.op = op_id;
    for (const auto& [message_id, offset] : result_offsets)
      if (message_id == sp.message_id) rp.result_offset = offset;
    rp.first_sent = now;
    rp.deadline = now + rto(0);
    queue_frame(d, sockaddr_of(peer), std::vector<uint8_t>(rp.frame));  // the original stays for retransmission
  }
  flush_outbox(d);
  return 0;
}

void rudi_request(Domain* d, Ep* ep, const uet::codec::Decoded& pkt, InRequest&& m) {
  // A FEP without HPC has no RUDI (2.2.6-b): the packet is dropped like one of an unknown type.
  if (!(d->cfg.fep_caps & kCapHpc)) return;
  const uint32_t pkt_id = static_cast<uint32_t>(*pkt.get(Field::uet_pds_pkt_id));
  const UdpPeer from = m.src;
  const uint16_t message_id = m.message_id;
  const uint32_t job_id = m.job_id;
  const Response rsp = carry_out(d, ep, pkt, std::move(m));
  send_response(d, from, pkt_id, message_id, job_id, rsp);
}

void rudi_response(Domain* d, const uet::codec::Decoded& pkt, const uint8_t* buf, const UdpPeer& from) {
  const auto it = d->rudi_sent.find(static_cast<uint32_t>(pkt.get(Field::uet_pds_pkt_id).value_or(0)));
  if (it == d->rudi_sent.end() || it->second.peer != from) return;  // a duplicate response, or not ours
  const bool plain = pkt.has_layer(wire::Header::uet_ses_response);
  const bool with_data = pkt.has_layer(wire::Header::uet_ses_response_data);
  if (!plain && !with_data) return;
  const uint64_t op_id = it->second.op;
  const size_t result_offset = it->second.result_offset;
  d->rudi_sent.erase(it);
  const uint64_t rc = *pkt.get(Field::uet_ses_rsp_return_code);
  if (rc != wire::ses_return_code::RC_OK) {
    // The same error entry as over RUD (spec 2.2.5.6): err from the SES return code, prov_errno the code.
    const int err = fault(d, Fault::err_not_mapped) ? FI_EIO : wire::libfabric::fi_errno_of_ses_rc(rc);
    return packet_answered(d, op_id, err, fault(d, Fault::prov_errno_not_rc) ? 0 : rc);
  }
  const auto op = d->ops.find(op_id);
  if (with_data && op != d->ops.end() && !op->second.failed)
    scatter(op->second.done.result, result_offset + *pkt.get(Field::uet_ses_rsp_message_offset),
            buf + pkt.payload_offset, pkt.payload_len);
  packet_answered(d, op_id, 0, 0);
}

void rudi_timers(Domain* d, pds::TimePoint now) {
  for (auto it = d->rudi_sent.begin(); it != d->rudi_sent.end();) {
    RudiPacket& rp = it->second;
    if (now < rp.deadline) {
      ++it;
      continue;
    }
    if (pds::out_of_tries(rp.tries++, kRudiTries, rp.first_sent, now)) {
      FI_WARN(&g_prov, FI_LOG_EP_DATA, "a RUDI packet to %s ran out of retransmissions\n", ip_text(rp.peer.ip).c_str());
      const uint64_t op_id = rp.op;
      it = d->rudi_sent.erase(it);
      packet_answered(d, op_id, FI_EIO, FI_EIO);
      continue;
    }
    encoder<kRudiPds>().rewrite(rp.frame, Field::uet_pds_flags_retx, 1);
    rp.deadline = now + rto(rp.tries);
    queue_frame(d, sockaddr_of(rp.peer), std::vector<uint8_t>(rp.frame));
    ++it;
  }
}

std::optional<pds::TimePoint> rudi_next_deadline(const Domain* d) {
  std::optional<pds::TimePoint> next;
  for (const auto& [id, rp] : d->rudi_sent)
    if (!next || rp.deadline < *next) next = rp.deadline;
  return next;
}

void rudi_close_ep(Ep* ep) {
  Domain* d = ep->domain;
  for (auto it = d->rudi_sent.begin(); it != d->rudi_sent.end();) {
    const auto op = d->ops.find(it->second.op);
    it = op == d->ops.end() || op->second.ep == ep ? d->rudi_sent.erase(it) : std::next(it);
  }
}

}  // namespace softuet
