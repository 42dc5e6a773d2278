// The transport's target side: a received frame decoded with the codec decoder (the same tables as
// uet-decode), its endpoint found by relative addressing, the request reassembled and carried out, and
// the ACK, NACK or SES response it earns; ACKs and NACKs for our own packets go to the initiator side.


#include <cstring>
#include <set>

#include "softuet.hpp"
#include "transport_shared.hpp"
#include "uet/codec/decoded.hpp"
#include "wire_paths.hpp"

namespace softuet {

using uet::codec::FieldValues;
using uet::wire::Field;
using uet::wire::Node;
namespace wire = uet::wire;
using pds::Clock;
using namespace paths;
namespace transport {

// The receive buffer of a target with the truncated_request_acked knob: smaller than a full packet's payload
// on any path softuet sizes for (1152 bytes at the least, an IPv6 path of 1280).
constexpr size_t kTruncatingRecvBuffer = 1024;
// How many given responses a target PDC keeps for duplicates.
constexpr size_t kGivenResponses = 4096;


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
      p.unconfirmed.clear();
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
  // CLEAR_PSN is the oldest PSN the peer still waits to see ACKed: the answers below it reached it.
  const pds::Psn clear_psn = f.psn + static_cast<pds::Psn>(f.clear_psn_offset);
  for (auto it = p.unconfirmed.begin(); it != p.unconfirmed.end() && pds::psn_before(it->first, clear_psn);)
    it = p.unconfirmed.erase(it);
  if ((v.send_ack || answer || later) && !fault(d, Fault::no_ack)) {
    send_ack(d, p, f.retransmit, v.ack_psn_offset, message_id, job_id, answer);
    if (answer) {
      p.unconfirmed.insert_or_assign(f.psn, PeerPdc::Answer{message_id, job_id, response_key});
      if (p.unconfirmed.size() > kGivenResponses) p.unconfirmed.erase(p.unconfirmed.begin());
    }
  }
  if (v.nack_psn) send_nack(d, p, *v.nack_psn);
}

void restate_answers(Domain* d, PeerPdc& p) {
  if (!p.tgt || fault(d, Fault::no_ack)) return;
  const pds::Psn cack = p.tgt->cack_psn();
  // Newest first: several packets of one message may have been answered with its response; once is enough.
  std::set<uint64_t> restated;
  for (auto it = p.unconfirmed.rbegin(); it != p.unconfirmed.rend(); ++it) {
    const auto& [psn, a] = *it;
    const auto rsp = p.given.find(a.response_key);
    const auto offset = static_cast<int32_t>(psn - cack);  // ACK_PSN = CACK_PSN + ack_psn_offset
    if (rsp == p.given.end() || offset < INT16_MIN || offset > INT16_MAX || !restated.insert(a.response_key).second)
      continue;
    send_ack(d, p, false, static_cast<int16_t>(offset), a.message_id, a.job_id, &rsp->second);
  }
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
  const auto now = Clock::now();
  const std::vector<uint64_t> done = p->ini->on_ack(cack, offset, now);
  if (p->ini->established() && !p->peer_tgt_id) p->peer_tgt_id = static_cast<uint16_t>(*pkt.get(Field::uet_pds_spdcid));
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
        aw->second.first_asked = now;
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

// SOFTUET_JOB_ID_METHODS=none: a softuet without JobIDs takes the requests its peers without JobIDs send,
// whose only fault is JobID 0 (choice job-id-zero-invalid).
namespace {
bool no_job_ids(const Domain* d) { return !d->cfg.job_id_methods; }
bool only_job_id_zero(const uet::codec::Decoded& pkt) {
  if (!pkt.reached_uet || pkt.fragment || !pkt.n_diags) return false;
  for (size_t i = 0; i < pkt.n_diags; ++i)
    if (pkt.diags[i].kind != uet::codec::DiagKind::job_id_zero) return false;
  return true;
}
}  // namespace

// `pkt` and `m` are the domain's: the decoded frame and the request read from it.
void handle_packet(Domain* d, const uint8_t* buf, size_t n, const UdpPeer& from, uet::codec::Decoded& pkt,
                   InRequest& m) {
  uet::codec::DecodeOptions opts;
  opts.udp_port = d->cfg.udp_port;
  opts.spec_version = d->cfg.spec_version;
  uet::codec::decode(buf, static_cast<uint32_t>(n), static_cast<uint32_t>(n), Node::uet, opts, pkt);
  if (pkt.status() != uet::codec::Status::uet && !(no_job_ids(d) && only_job_id_zero(pkt))) {
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


}  // namespace transport

}  // namespace softuet
