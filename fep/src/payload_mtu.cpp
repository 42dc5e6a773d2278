// The payload MTU (payload_mtu.hpp). The header bytes come from the codec paths the transport encodes with
// (wire_paths.hpp), the link MTU from the interface or SOFTUET_MTU.
#include "payload_mtu.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "wire_paths.hpp"

namespace softuet {

namespace {
constexpr size_t kIpv4Header = 20;
constexpr size_t kIpv6Header = 40;
constexpr size_t kUdpHeader = 8;

bool holds(const sockaddr* sa, const FepIp& ip) {
  if (!sa) return false;
  if (sa->sa_family == AF_INET && !ip.v6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, ip.fa.data(), 4) == 0;
  if (sa->sa_family == AF_INET6 && ip.v6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, ip.fa.data(), 16) == 0;
  return false;
}
}  // namespace

size_t ip_udp_overhead(bool ipv6) { return (ipv6 ? kIpv6Header : kIpv4Header) + kUdpHeader; }

size_t largest_data_header() {
  // Computed once: the encoders' graph walks are not free, and the answer never changes.
  static const size_t largest = [] {
    size_t n = 0;
    for (std::span<const uet::wire::Node> path : paths::kDataPaths) n = std::max(n, uet::codec::PathEncoder(path).header_size());
    return n;
  }();
  return largest;
}

size_t payload_for_link(uint32_t link_mtu, bool ipv6, size_t header) {
  const size_t overhead = ip_udp_overhead(ipv6) + header;
  if (link_mtu <= overhead) return 0;
  return std::min(kMaxPayloadMtu, (link_mtu - overhead) / kPayloadAlign * kPayloadAlign);
}

std::optional<uint32_t> interface_mtu(const FepIp& ip) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<uint32_t> mtu;
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (ifaddrs* i = list; i && fd >= 0 && !mtu; i = i->ifa_next) {
    if (!holds(i->ifa_addr, ip)) continue;
    ifreq req{};
    std::strncpy(req.ifr_name, i->ifa_name, IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFMTU, &req) == 0 && req.ifr_mtu > 0) mtu = static_cast<uint32_t>(req.ifr_mtu);
  }
  if (fd >= 0) close(fd);
  freeifaddrs(list);
  return mtu;
}

PathMtu fep_path_mtu(std::optional<uint32_t> configured, const FepIp& ip) {
  PathMtu p;
  p.configured = configured.has_value();
  p.link_mtu = configured ? *configured : interface_mtu(ip).value_or(0);
  // A loopback interface (65536) is larger than any IP packet.
  p.link_mtu = std::min(p.link_mtu, kMaxLinkMtu);
  p.payload = p.link_mtu ? payload_for_link(p.link_mtu, ip.v6, largest_data_header()) : kMaxPayloadMtu;
  return p;
}

int forbid_fragments(int fd, bool ipv6) {
  if (!ipv6) {
    const int pmtudisc = IP_PMTUDISC_DO;
    return setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtudisc, sizeof pmtudisc);
  }
  const int pmtudisc = IPV6_PMTUDISC_DO, on = 1;
  if (setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtudisc, sizeof pmtudisc) != 0) return -1;
  return setsockopt(fd, IPPROTO_IPV6, IPV6_DONTFRAG, &on, sizeof on);
}

}  // namespace softuet
