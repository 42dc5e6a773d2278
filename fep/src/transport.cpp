// The wire: one UDP socket per domain on IP:port, UET frames built with the codec encoder and parsed with
// the codec decoder (the same tables as uet-decode). The kernel adds IP and UDP, so frames start at node
// `uet`. DGRAM uses UUD + UET_DATAGRAM_SEND; RDM uses RUD + UET_SEND (digest F.3, G.1).
//
// Milestone 1 has no PDS reliability: no ACK is ever sent or expected, nothing is retransmitted, so RDM
// is only as reliable as the network under it until milestone 2.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "softuet.hpp"
#include "uet/codec/decoded.hpp"
#include "uet/codec/encoder.hpp"

namespace softuet {

using uet::codec::FieldValues;
using uet::wire::Field;
using uet::wire::Node;

namespace {

constexpr uint64_t kPdsRudReq = 2;
constexpr uint64_t kPdsUudReq = 6;
constexpr uint64_t kOpSend = 0x05;
constexpr uint64_t kOpDatagramSend = 0x07;
constexpr uint32_t kPsnOffsetMax = 0xFFF;  // the SYN overlay's psn_offset is 12 bits

constexpr Node kUudPath[] = {Node::uet, Node::uet_pds, Node::uet_pds_uud, Node::uet_pds_next,
                             Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_som};
constexpr Node kRudSomPath[] = {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next,
                                Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_som};
constexpr Node kRudContPath[] = {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next,
                                 Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_cont};

uint16_t next_message_id(Domain* d) {
  if (d->next_message_id == 0) d->next_message_id = 1;  // message_id 0 is invalid (digest I.7)
  return d->next_message_id++;
}

// The SES standard request header fields common to every packet of a message (digest I.9).
void ses_fields(FieldValues& v, Domain* d, const softuet_addr& dest, uint64_t opcode, uint16_t message_id,
                size_t len) {
  v.set(Field::uet_ses_opcode, opcode);
  v.set(Field::uet_ses_version, uet::wire::k_ses_version);
  // rel follows the destination address's mode: relative (flag bit 5 clear) -> 1.
  v.set(Field::uet_ses_rel, (dest.uet.flags & kAddrFlagAbsolute) ? 0 : 1);
  v.set(Field::uet_ses_message_id, message_id);
  v.set(Field::uet_ses_ri_generation, 0);  // no RI generations: MUST then be 0
  v.set(Field::uet_ses_job_id, d->cfg.job_id);
  v.set(Field::uet_ses_pid_on_fep, dest.uet.pid_on_fep);
  v.set(Field::uet_ses_resource_index, dest.uet.start_index);
  v.set(Field::uet_ses_buffer_offset, 0);
  v.set(Field::uet_ses_initiator, d->initiator);
  v.set(Field::uet_ses_match_bits, 0);  // untagged: unused
  v.set(Field::uet_ses_request_length, len);
}

ssize_t send_frame(Domain* d, const sockaddr_in& to, const std::vector<uint8_t>& frame) {
  for (;;) {
    const ssize_t n = sendto(d->sock, frame.data(), frame.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    if (n >= 0) return 0;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == ENOBUFS) return -FI_EAGAIN;
    FI_WARN(&g_prov, FI_LOG_EP_DATA, "sendto: %s\n", strerror(errno));
    return -FI_EIO;
  }
}

Ep* find_ep(Domain* d, uint64_t pid, uint64_t ri, fi_ep_type type) {
  if (pid != d->pid_on_fep) return nullptr;
  for (Ep* ep : d->eps)
    if (ep->resource_index == ri && ep->type == type && ep->enabled) return ep;
  return nullptr;
}

void handle_rud(Domain* d, Ep* ep, const uet::codec::Decoded& pkt, Message&& part, uint32_t src_ip, uint16_t src_port) {
  const uint64_t som = *pkt.get(Field::uet_ses_som), eom = *pkt.get(Field::uet_ses_eom);
  const uint64_t total = *pkt.get(Field::uet_ses_request_length);
  if (som && eom) {
    if (part.data.size() != total) return;  // a single packet must carry the whole message
    deliver(ep, std::move(part));
    return;
  }
  if (total > kMaxRdmMsg) return;
  const uint64_t offset = som ? 0 : pkt.get(Field::uet_ses_message_offset).value_or(~0ull);
  if (offset % kPayloadMtu || offset + part.data.size() > total) return;
  const auto key = std::make_tuple(src_ip, src_port, static_cast<uint16_t>(*pkt.get(Field::uet_ses_message_id)),
                                   ep->resource_index);
  auto [it, fresh] = d->reassembly.try_emplace(key);
  Reassembly& r = it->second;
  if (fresh) {
    if (d->reassembly.size() > kQueueDepth) d->reassembly.erase(d->reassembly.begin() == it ? std::next(it) : d->reassembly.begin());
    r.msg.data.resize(total);
    r.msg.src_ipv4 = src_ip;
    r.msg.src_port = src_port;
    r.msg.initiator = part.initiator;
    r.have.assign((total + kPayloadMtu - 1) / kPayloadMtu, false);
  }
  if (r.msg.data.size() != total) return;
  const size_t index = offset / kPayloadMtu;
  if (index >= r.have.size() || r.have[index]) return;
  r.have[index] = true;
  std::memcpy(r.msg.data.data() + offset, part.data.data(), part.data.size());
  r.received += part.data.size();
  if (som) {
    r.som_seen = true;
    r.msg.has_data = part.has_data;
    r.msg.header_data = part.header_data;
  }
  if (r.som_seen && r.received == total) {
    Message m = std::move(r.msg);
    d->reassembly.erase(it);
    deliver(ep, std::move(m));
  }
}

void handle_packet(Domain* d, const uint8_t* buf, size_t n, const sockaddr_in& from) {
  static thread_local uet::codec::Decoded pkt;
  uet::codec::DecodeOptions opts;
  opts.udp_port = d->cfg.udp_port;
  uet::codec::decode(buf, static_cast<uint32_t>(n), static_cast<uint32_t>(n), Node::uet, opts, pkt);
  if (pkt.status() != uet::codec::Status::uet || !pkt.has_layer(uet::wire::Header::uet_ses_std)) {
    FI_DBG(&g_prov, FI_LOG_EP_DATA, "dropped a frame that is not a clean UET request (%s)\n",
           uet::codec::status_name(pkt.status()));
    return;
  }
  const uint64_t type = *pkt.get(Field::uet_pds_type);
  const uint64_t opcode = *pkt.get(Field::uet_ses_opcode);
  fi_ep_type ep_type;
  if (type == kPdsUudReq && opcode == kOpDatagramSend) ep_type = FI_EP_DGRAM;
  else if (type == kPdsRudReq && opcode == kOpSend) ep_type = FI_EP_RDM;
  else {
    FI_DBG(&g_prov, FI_LOG_EP_DATA, "dropped PDS type %lu opcode %lu: not in milestone 1\n",
           static_cast<unsigned long>(type), static_cast<unsigned long>(opcode));
    return;
  }
  // Relative addressing: {JobID, PIDonFEP, RI} selects the endpoint (digest C.2). Without a match the
  // packet is dropped; the RC_BAD_* responses come with SES responses (milestone 2 and 4).
  if (*pkt.get(Field::uet_ses_job_id) != d->cfg.job_id) return;
  Ep* ep = find_ep(d, *pkt.get(Field::uet_ses_pid_on_fep), *pkt.get(Field::uet_ses_resource_index), ep_type);
  if (!ep) return;
  Message m;
  m.data.assign(buf + pkt.payload_offset, buf + pkt.payload_offset + pkt.payload_len);
  m.src_ipv4 = from.sin_addr.s_addr;
  m.src_port = ntohs(from.sin_port);
  m.initiator = static_cast<uint32_t>(*pkt.get(Field::uet_ses_initiator));
  if (auto hd = pkt.get(Field::uet_ses_header_data)) {
    m.has_data = true;
    m.header_data = *hd;
  }
  if (ep_type == FI_EP_DGRAM) {
    // UUD datagrams are single packets (digest F.3).
    if (!*pkt.get(Field::uet_ses_som) || !*pkt.get(Field::uet_ses_eom)) return;
    if (m.data.size() != *pkt.get(Field::uet_ses_request_length)) return;
    deliver(ep, std::move(m));
    return;
  }
  handle_rud(d, ep, pkt, std::move(m), m.src_ipv4, m.src_port);
}

}  // namespace

int transport_open(Domain* d) {
  d->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (d->sock < 0) return -FI_ENOMEM;
  // Bursts of RDM segments arrive faster than manual progress drains them; a larger buffer keeps the
  // kernel from dropping them (there is no retransmission before milestone 2).
  int rcvbuf = 4 << 20;
  setsockopt(d->sock, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(d->cfg.udp_port);
  a.sin_addr.s_addr = d->ip.ipv4;
  if (bind(d->sock, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
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
  if (d->sock >= 0) close(d->sock);
  d->sock = -1;
}

void progress(Domain* d) {
  static thread_local std::vector<uint8_t> buf(65536);
  for (;;) {
    sockaddr_in from{};
    socklen_t fromlen = sizeof from;
    const ssize_t n = recvfrom(d->sock, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &fromlen);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN: drained
    }
    handle_packet(d, buf.data(), static_cast<size_t>(n), from);
  }
}

ssize_t transport_send(Ep* ep, const softuet_addr& dest, const iovec* iov, size_t count, size_t len,
                       const uint64_t* header_data) {
  Domain* d = ep->domain;
  std::vector<uint8_t> msg;
  msg.reserve(len);
  for (size_t i = 0; i < count; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    msg.insert(msg.end(), p, p + iov[i].iov_len);
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(addr_port(dest));
  to.sin_addr.s_addr = addr_ipv4(dest);
  const uint16_t message_id = next_message_id(d);

  try {
    if (ep->type == FI_EP_DGRAM) {
      FieldValues v;
      v.set(Field::uet_pds_type, kPdsUudReq);
      ses_fields(v, d, dest, kOpDatagramSend, message_id, len);
      v.set(Field::uet_ses_som, 1).set(Field::uet_ses_eom, 1);
      v.set(Field::uet_ses_hd, header_data ? 1 : 0);
      if (header_data) v.set(Field::uet_ses_header_data, *header_data);
      return send_frame(d, to, uet::codec::encode_path(kUudPath, v, msg));
    }

    auto [it, fresh] = d->pdcs.try_emplace({to.sin_addr.s_addr, addr_port(dest)});
    Pdc& pdc = it->second;
    if (fresh) {
      static std::mt19937 rng{std::random_device{}()};
      pdc.spdcid = d->next_spdcid++;
      pdc.start_psn = pdc.next_psn = static_cast<uint32_t>(rng());
    }
    const size_t packets = len ? (len + kPayloadMtu - 1) / kPayloadMtu : 1;
    for (size_t k = 0; k < packets; ++k) {
      // Without ACKs the PDC never leaves its SYN state; once psn_offset would overflow its 12 bits, a
      // new PDC starts where the old one stopped.
      if (pdc.next_psn - pdc.start_psn > kPsnOffsetMax) {
        pdc.spdcid = d->next_spdcid++;
        pdc.start_psn = pdc.next_psn;
      }
      const uint32_t psn = pdc.next_psn++;
      FieldValues v;
      v.set(Field::uet_pds_type, kPdsRudReq);
      v.set(Field::uet_pds_flags_syn, 1);
      v.set(Field::uet_pds_psn, psn);
      v.set(Field::uet_pds_spdcid, pdc.spdcid);
      v.set(Field::uet_pds_psn_offset, psn - pdc.start_psn);
      v.set(Field::uet_pds_use_rsv_pdc, 0);
      // CLEAR_PSN = PSN + offset: nothing before the PDC's start PSN is outstanding.
      v.set(Field::uet_pds_clear_psn_offset, static_cast<uint16_t>(-static_cast<int32_t>(psn - pdc.start_psn)));
      ses_fields(v, d, dest, kOpSend, message_id, len);
      const bool som = k == 0, eom = k + 1 == packets;
      v.set(Field::uet_ses_som, som).set(Field::uet_ses_eom, eom);
      const size_t off = k * kPayloadMtu;
      const std::span<const uint8_t> payload(msg.data() + off, std::min(kPayloadMtu, len - off));
      if (som) {
        v.set(Field::uet_ses_hd, header_data ? 1 : 0);
        if (header_data) v.set(Field::uet_ses_header_data, *header_data);
      } else {
        v.set(Field::uet_ses_hd, 0);
        v.set(Field::uet_ses_message_offset, off);
      }
      const ssize_t ret = send_frame(d, to, uet::codec::encode_path(som ? std::span<const Node>(kRudSomPath)
                                                                        : std::span<const Node>(kRudContPath),
                                                                    v, payload));
      if (ret) return k == 0 ? ret : -FI_EIO;
    }
    return 0;
  } catch (const uet::codec::EncodeError& e) {
    FI_WARN(&g_prov, FI_LOG_EP_DATA, "encoding failed: %s\n", e.what());
    return -FI_EIO;
  }
}

}  // namespace softuet
