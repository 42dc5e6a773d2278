// Where a FEP is on the IP network: its address (IPv4 or IPv6, as the fa field of a UET address carries
// it) and the UDP port. The transport keys PDCs, reassembly and AV reverse lookups by it, so IPv4 and IPv6
// peers take the same path.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>

namespace softuet {

struct FepIp {
  bool v6 = false;
  std::array<uint8_t, 16> fa{};  // IPv4 in fa[0..3], network order; the rest zero
  auto operator<=>(const FepIp&) const = default;
};

struct UdpPeer {
  FepIp ip;
  uint16_t port = 0;  // host order
  auto operator<=>(const UdpPeer&) const = default;
};

// A socket address for sendmsg/recvfrom of either family.
struct SockAddr {
  union {
    sockaddr sa;
    sockaddr_in v4;
    sockaddr_in6 v6;
    sockaddr_storage any;
  } u{};
  socklen_t len = sizeof u;
};

SockAddr sockaddr_of(const UdpPeer& peer);
// The peer a received datagram came from; nullopt for a family the transport does not speak.
std::optional<UdpPeer> peer_of(const SockAddr& from);
// "198.18.0.1" or "2001:db8::1".
std::string ip_text(const FepIp& ip);
// Parses an IPv4 or IPv6 literal.
std::optional<FepIp> parse_ip(const std::string& text);

}  // namespace softuet
