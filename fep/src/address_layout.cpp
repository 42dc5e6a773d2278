// The layouts of the address blobs softuet hands out and takes (SOFTUET_ADDR_LAYOUT), and the one place
// where a blob becomes a softuet_addr and back. The spec's figure of the layout is MISSING (digest C.5), so
// another provider may well lay the same Table 2-10 fields out otherwise; `wide52` is such a provider's
// layout, for running the suite against an address it does not know (cases/manifests/personalities/).
//
// wide52, 52 bytes, every multi-byte field in network order:
//   0 version (1)   1 flags (1)   2 caps (1)   3 reserved (1, zero)
//   4 PIDonFEP (4)   8 start resource index (4)   12 number of resource indices (4)   16 initiator ID (4)
//   20 reserved (4, zero)
//   24 the FEP's UDP socket address: a struct sockaddr_in (16 bytes, the rest zero) or sockaddr_in6 (28)
#include <arpa/inet.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>

#include "softuet.hpp"

namespace softuet {

namespace {

constexpr size_t kWideSize = 52;
constexpr size_t kWideSockaddr = 24;
static_assert(kWideSockaddr + sizeof(sockaddr_in6) == kWideSize, "the sockaddr slot holds an IPv6 one");
static_assert(kWideSize <= kMaxAddrBlob && sizeof(softuet_addr) <= kMaxAddrBlob, "kMaxAddrBlob holds every layout");

void put32(uint8_t* at, uint32_t v) {
  v = htonl(v);
  std::memcpy(at, &v, 4);
}

uint32_t get32(const uint8_t* at) {
  uint32_t v;
  std::memcpy(&v, at, 4);
  return ntohl(v);
}

void wide_from(const softuet_addr& a, uint8_t* out) {
  std::memset(out, 0, kWideSize);
  out[0] = a.uet.version;
  out[1] = a.uet.flags;
  out[2] = a.uet.fep_caps;
  put32(out + 4, a.uet.pid_on_fep);
  put32(out + 8, a.uet.start_index);
  put32(out + 12, a.uet.num_indices);
  put32(out + 16, a.uet.initiator_id);
  // An address without a valid FA (a filter given as fi_getinfo's node, say) has no socket address.
  if (!(a.uet.flags & kAddrFlagFaValid)) return;
  const SockAddr s = sockaddr_of(addr_peer(a));
  std::memcpy(out + kWideSockaddr, &s.u, s.len);
}

std::optional<softuet_addr> wide_to(const uint8_t* in) {
  softuet_addr a{};
  a.uet.version = in[0];
  a.uet.flags = in[1];
  a.uet.fep_caps = in[2];
  const uint32_t pid = get32(in + 4), start = get32(in + 8), count = get32(in + 12);
  // The fields are wider here than inside softuet: a value that does not fit is not an address.
  if (pid > UINT16_MAX || start > UINT16_MAX || count > UINT16_MAX) return std::nullopt;
  a.uet.pid_on_fep = static_cast<uint16_t>(pid);
  a.uet.start_index = static_cast<uint16_t>(start);
  a.uet.num_indices = static_cast<uint16_t>(count);
  a.uet.initiator_id = get32(in + 16);
  a.trailer_magic = SOFTUET_ADDR_TRAILER_MAGIC;
  sa_family_t family;
  std::memcpy(&family, in + kWideSockaddr, sizeof family);
  if (family == AF_UNSPEC && !(a.uet.flags & kAddrFlagFaValid)) return a;
  SockAddr s;
  s.len = family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  std::memcpy(&s.u, in + kWideSockaddr, s.len);
  const std::optional<UdpPeer> peer = peer_of(s);
  // The IPv6 flag and the socket address's family say the same, or the blob contradicts itself.
  if (!peer || peer->ip.v6 != static_cast<bool>(a.uet.flags & kAddrFlagIpv6)) return std::nullopt;
  std::memcpy(a.uet.fa, peer->ip.fa.data(), sizeof a.uet.fa);
  a.udp_port = peer->port;
  return a;
}

}  // namespace

namespace {

// Where the version and flags bytes are in a blob of `layout` (both layouts put them first, in this order).
constexpr size_t kVersionAt = 0, kFlagsAt = 1;
static_assert(offsetof(softuet_addr, uet) + offsetof(uet_addr, version) == kVersionAt &&
                  offsetof(softuet_addr, uet) + offsetof(uet_addr, flags) == kFlagsAt,
              "softuet's layout starts with version and flags");

bool has_fa(const softuet_addr& a) {
  return std::any_of(std::begin(a.uet.fa), std::end(a.uet.fa), [](uint8_t b) { return b != 0; });
}

std::optional<softuet_addr> decode(AddrLayout layout, const void* blob, size_t len) {
  if (layout == AddrLayout::wide52) {
    if (len < kWideSize) return std::nullopt;
    return wide_to(static_cast<const uint8_t*>(blob));
  }
  // softuet's own: the 32 bytes of choice uet-address-layout, and the port trailer when it is there (a
  // peer without it is on port 4793: addr_port).
  if (len < sizeof(uet_addr)) return std::nullopt;
  softuet_addr a{};
  std::memcpy(&a, blob, std::min(len, sizeof a));
  return a;
}

}  // namespace

size_t addr_blob_size(AddrLayout layout) { return layout == AddrLayout::wide52 ? kWideSize : sizeof(softuet_addr); }

void addr_to_blob(const Config& cfg, const softuet_addr& a, void* blob) {
  auto* out = static_cast<uint8_t*>(blob);
  if (cfg.addr_layout == AddrLayout::wide52) wide_from(a, out);
  else std::memcpy(blob, &a, sizeof a);
  // Inside, every address is the spec's version 0 with its FA-valid flag as it is; the blobs a personality
  // hands out carry its own version and, with SOFTUET_ADDR_FA_FLAG=clear, no FA-valid flag.
  if (a.uet.version == uet::wire::k_addr_version) out[kVersionAt] = cfg.addr_version;
  if (!cfg.addr_fa_flag) out[kFlagsAt] = static_cast<uint8_t>(out[kFlagsAt] & ~kAddrFlagFaValid);
}

std::optional<softuet_addr> addr_from_blob(const Config& cfg, const void* blob, size_t len) {
  if (!blob) return std::nullopt;
  std::optional<softuet_addr> a = decode(cfg.addr_layout, blob, len);
  // A blob of its own version is what addr_to_blob made: the spec's version inside, the FA valid where it has one.
  if (a && cfg.addr_version != uet::wire::k_addr_version && a->uet.version == cfg.addr_version) {
    a->uet.version = static_cast<uint8_t>(uet::wire::k_addr_version);
    if (!cfg.addr_fa_flag && has_fa(*a)) a->uet.flags |= kAddrFlagFaValid;
  }
  return a;
}

const char* addr_layout_name(AddrLayout layout) { return layout == AddrLayout::wide52 ? "wide52" : "softuet"; }

std::optional<AddrLayout> addr_layout_by_name(const std::string& name) {
  for (AddrLayout l : {AddrLayout::softuet, AddrLayout::wide52})
    if (name == addr_layout_name(l)) return l;
  return std::nullopt;
}

}  // namespace softuet
