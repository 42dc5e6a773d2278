// IP fragment reassembly across frames, as Wireshark does it: fragments of one datagram share source,
// destination, identification and protocol; they may come in any order.
#include "uet/codec/reassembly.hpp"

#include <algorithm>
#include <cstring>

namespace uet::codec {
namespace {

using wire::Field;

// The largest IP datagram a 16-bit length field can describe.
constexpr uint32_t kMaxDatagram = 65535;

uint64_t value(const Decoded& d, Field f) { return d.values[static_cast<size_t>(f)]; }

void put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// RFC 791 header checksum of `len` bytes (with the checksum field zero).
uint16_t ip_checksum(const uint8_t* p, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += (uint32_t{p[i]} << 8) | p[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// What a fragment frame says about its place in the datagram.
struct Fragment {
  bool v6;
  uint32_t ip_at;     // offset of the IPv4/IPv6 header in the frame
  uint32_t diag_at;   // offset of the header that holds the fragment fields
  wire::Header header;
  uint32_t start, len;
  bool more;
};

void diag(Decoded& d, const Fragment& f, DiagKind kind, uint64_t v, const char* why) {
  if (d.n_diags < Decoded::kMaxDiags) d.diags[d.n_diags++] = {kind, f.header, kNoField, f.diag_at, v, why};
}

}  // namespace

const Reassembled* Reassembler::add_fragment(uint64_t number, Decoded& d) {
  if (d.status() != Status::fragment || d.caplen != d.len) return nullptr;  // a cut fragment cannot be used
  Fragment f{};
  Key key{};
  f.v6 = d.get(Field::ipv6_fraghdr_ident).has_value();
  if (f.v6) {
    f.ip_at = static_cast<uint32_t>(value(d, Field::ipv6_src)) - 8;
    f.diag_at = d.payload_offset - 8;
    f.header = wire::Header::ipv6_fraghdr;
    f.start = static_cast<uint32_t>(value(d, Field::ipv6_fraghdr_offset)) * 8;
    f.more = value(d, Field::ipv6_fraghdr_more) != 0;
    key = {6, static_cast<uint8_t>(value(d, Field::ipv6_fraghdr_nxt)),
           static_cast<uint32_t>(value(d, Field::ipv6_fraghdr_ident)), {}, {}};
    std::memcpy(key.src.data(), d.bytes_of(Field::ipv6_src), 16);
    std::memcpy(key.dst.data(), d.bytes_of(Field::ipv6_dst), 16);
  } else {
    f.ip_at = static_cast<uint32_t>(value(d, Field::ip_src)) - 12;
    f.diag_at = f.ip_at;
    f.header = wire::Header::ip;
    f.start = static_cast<uint32_t>(value(d, Field::ip_frag_offset)) * 8;
    f.more = (value(d, Field::ip_flags) & 1) != 0;
    key = {4, static_cast<uint8_t>(value(d, Field::ip_proto)), static_cast<uint32_t>(value(d, Field::ip_id)), {}, {}};
    std::memcpy(key.src.data(), d.bytes_of(Field::ip_src), 4);
    std::memcpy(key.dst.data(), d.bytes_of(Field::ip_dst), 4);
  }
  f.len = d.payload_len;
  const uint32_t end = f.start + f.len;
  if (f.more && (f.len == 0 || f.len % 8 != 0))
    return diag(d, f, DiagKind::fragment_inconsistent, f.len, "a fragment other than the last is not a positive multiple of 8 bytes"), nullptr;
  if (end > kMaxDatagram)
    return diag(d, f, DiagKind::fragment_inconsistent, end, "the fragment ends beyond the largest IP datagram (65535 bytes)"), nullptr;

  auto it = std::find_if(held_.begin(), held_.end(), [&](const Datagram& g) { return g.key == key; });
  if (it != held_.end()) {
    const Datagram& g = *it;
    constexpr const char* kBeyond = "fragments end beyond the length the last fragment gives";
    if (!f.more) {
      if (g.end && *g.end != end)
        return diag(d, f, DiagKind::fragment_inconsistent, end, "a second last fragment gives the datagram another length"), nullptr;
      for (const Piece& p : g.pieces)
        if (p.start + p.len > end) return diag(d, f, DiagKind::fragment_inconsistent, end, kBeyond), nullptr;
    } else if (g.end && end > *g.end) {
      return diag(d, f, DiagKind::fragment_inconsistent, end, kBeyond), nullptr;
    }
    for (const Piece& p : g.pieces)
      if (p.start < end && f.start < p.start + p.len)
        return diag(d, f, DiagKind::fragment_overlap, p.frame, "the fragment overlaps one held"), nullptr;
  } else {
    if (held_.size() >= max_datagrams_ && !held_.empty()) held_.erase(held_.begin());
    if (max_datagrams_ == 0) return nullptr;
    held_.push_back({key, {}, {}, std::nullopt, 0, {}, 0});
    it = held_.end() - 1;
  }

  Datagram& g = *it;
  if (g.data.size() < end) g.data.resize(end);
  std::memcpy(g.data.data() + f.start, d.frame + d.payload_offset, f.len);
  g.pieces.push_back({f.start, f.len, number});
  g.received += f.len;
  if (!f.more) g.end = end;
  if (f.start == 0) {
    // The reassembled frame starts as this one does, without an IPv6 fragment header.
    g.head.assign(d.frame, d.frame + (f.v6 ? f.ip_at + 40 : d.payload_offset));
    g.ip_at = f.ip_at;
  }
  if (!g.end || g.received != *g.end) return nullptr;
  const Reassembled* out = complete(g, d, f.diag_at);
  held_.erase(it);
  return out;
}

const Reassembled* Reassembler::complete(Datagram& g, Decoded& d, uint32_t diag_at) {
  const uint32_t total = *g.end;
  done_.frame = g.head;
  done_.frame.insert(done_.frame.end(), g.data.begin(), g.data.begin() + total);
  uint8_t* ip = done_.frame.data() + g.ip_at;
  if (g.key.version == 6) {
    put16(ip + 4, total);  // payload length, the fragment header gone
    ip[6] = g.key.proto;   // next header: what the fragment header announced
  } else {
    const uint32_t header = static_cast<uint32_t>(g.head.size()) - g.ip_at;
    if (header + total > kMaxDatagram) {
      Fragment f{};
      f.header = wire::Header::ip;
      f.diag_at = diag_at;
      diag(d, f, DiagKind::fragment_inconsistent, header + total, "the reassembled datagram exceeds 65535 bytes");
      return nullptr;
    }
    put16(ip + 2, header + total);
    ip[6] &= 0xc0;  // keep the reserved and DF flags; MF and the offset go
    ip[7] = 0;
    put16(ip + 10, 0);
    put16(ip + 10, ip_checksum(ip, header));
  }
  std::sort(g.pieces.begin(), g.pieces.end(), [](const Piece& a, const Piece& b) { return a.start < b.start; });
  done_.from.clear();
  for (const Piece& p : g.pieces) done_.from.push_back(p.frame);
  return &done_;
}

}  // namespace uet::codec
