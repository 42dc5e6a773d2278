// Conversions between the transport's UdpPeer and the socket API's addresses.
#include "udp_peer.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace softuet {

SockAddr sockaddr_of(const UdpPeer& peer) {
  SockAddr s;
  if (peer.ip.v6) {
    s.u.v6.sin6_family = AF_INET6;
    s.u.v6.sin6_port = htons(peer.port);
    std::memcpy(&s.u.v6.sin6_addr, peer.ip.fa.data(), 16);
    s.len = sizeof s.u.v6;
  } else {
    s.u.v4.sin_family = AF_INET;
    s.u.v4.sin_port = htons(peer.port);
    std::memcpy(&s.u.v4.sin_addr, peer.ip.fa.data(), 4);
    s.len = sizeof s.u.v4;
  }
  return s;
}

std::optional<UdpPeer> peer_of(const SockAddr& from) {
  UdpPeer p;
  if (from.u.sa.sa_family == AF_INET) {
    std::memcpy(p.ip.fa.data(), &from.u.v4.sin_addr, 4);
    p.port = ntohs(from.u.v4.sin_port);
    return p;
  }
  if (from.u.sa.sa_family == AF_INET6) {
    p.ip.v6 = true;
    std::memcpy(p.ip.fa.data(), &from.u.v6.sin6_addr, 16);
    p.port = ntohs(from.u.v6.sin6_port);
    return p;
  }
  return std::nullopt;
}

std::string ip_text(const FepIp& ip) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(ip.v6 ? AF_INET6 : AF_INET, ip.fa.data(), text, sizeof text);
  return text;
}

std::optional<FepIp> parse_ip(const std::string& text) {
  FepIp ip;
  if (inet_pton(AF_INET, text.c_str(), ip.fa.data()) == 1) return ip;
  ip.v6 = true;
  if (inet_pton(AF_INET6, text.c_str(), ip.fa.data()) == 1) return ip;
  return std::nullopt;
}

}  // namespace softuet
