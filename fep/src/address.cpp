// The local FEP address and the UET address of an endpoint (Table 2-10, choice uet-address-layout).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <unistd.h>

#include <cstring>

#include "softuet.hpp"

static_assert(SOFTUET_FI_ADDR_UET_VALUE == uet::wire::k_fi_addr_uet,
              "fi_addr_uet.h's literal must equal spec/wire.yaml constants.fi_addr_uet");

namespace softuet {

namespace {

// A FEP is the IP of its namespace (DESIGN.md): the first IPv4 address of an interface that is up and not
// loopback, else the first such IPv6 address that is not link-local (a link-local address needs a scope
// that a UET address cannot carry), else 127.0.0.1, so a namespace with only lo still gets a working FEP.
FepIp discover_ip() {
  std::optional<FepIp> v4, v6;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP)) continue;
      if (i->ifa_addr->sa_family == AF_INET && !v4) {
        FepIp ip;
        std::memcpy(ip.fa.data(), &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, 4);
        v4 = ip;
      } else if (i->ifa_addr->sa_family == AF_INET6 && !v6) {
        const in6_addr& a = reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr;
        if (IN6_IS_ADDR_LINKLOCAL(&a)) continue;
        FepIp ip;
        ip.v6 = true;
        std::memcpy(ip.fa.data(), &a, 16);
        v6 = ip;
      }
    }
    freeifaddrs(list);
  }
  if (v4) return *v4;
  if (v6) return *v6;
  return *parse_ip("127.0.0.1");
}

}  // namespace

std::optional<LocalIp> local_ip(const Config& cfg, std::string* error) {
  LocalIp local;
  if (!cfg.addr.empty()) {
    const std::optional<FepIp> ip = parse_ip(cfg.addr);
    if (!ip) {
      *error = "SOFTUET_ADDR='" + cfg.addr + "': not an IPv4 or IPv6 address";
      return std::nullopt;
    }
    local.ip = *ip;
  } else {
    local.ip = discover_ip();
  }
  local.text = ip_text(local.ip);
  return local;
}

// PIDonFEP names the process within the FEP (12 bits, constants.pid_on_fep_bits). Without a kernel driver
// to allocate it, the OS PID folded to 12 bits is the per-process value; 0 is avoided so that a zeroed
// header is never mistaken for a real PIDonFEP.
uint16_t process_pid_on_fep() {
  const uint16_t mask = (1u << uet::wire::k_pid_on_fep_bits) - 1;
  const uint16_t v = static_cast<uint16_t>(getpid()) & mask;
  return v ? v : 1;
}

// Without UET_PROVIDER_INITIATOR_ID: the low 20 bits of the address (its last four bytes, IPv4 or IPv6)
// and the PIDonFEP, so that two processes of a test fabric get different initiators.
uint32_t default_initiator(const LocalIp& local) {
  uint32_t low;
  std::memcpy(&low, local.ip.fa.data() + (local.ip.v6 ? 12 : 0), 4);
  return ((ntohl(low) & 0xFFFFFu) << uet::wire::k_pid_on_fep_bits) | process_pid_on_fep();
}

softuet_addr make_addr(const Config& cfg, const LocalIp& local, uint16_t pid_on_fep, uint16_t ri, uint32_t initiator) {
  softuet_addr a{};
  a.uet.version = static_cast<uint8_t>(uet::wire::k_addr_version);
  // Relative addressing (bit 5 clear): {FA, JobID, PIDonFEP, RI} selects the endpoint.
  a.uet.flags = kAddrFlagCapsValid | kAddrFlagFaValid | kAddrFlagPidValid | kAddrFlagIndexValid |
                kAddrFlagInitiatorValid | (local.ip.v6 ? kAddrFlagIpv6 : 0);
  a.uet.fep_caps = cfg.fep_caps;
  std::memcpy(a.uet.fa, local.ip.fa.data(), sizeof a.uet.fa);
  a.uet.pid_on_fep = pid_on_fep;
  a.uet.start_index = ri;
  a.uet.num_indices = ri ? 1 : 0;  // an fi_endpoint has exactly one application-visible RI (C.6)
  a.uet.initiator_id = initiator;
  a.trailer_magic = SOFTUET_ADDR_TRAILER_MAGIC;
  a.udp_port = cfg.udp_port;
  return a;
}

uint16_t addr_port(const softuet_addr& a) {
  return a.trailer_magic == SOFTUET_ADDR_TRAILER_MAGIC && a.udp_port ? a.udp_port
                                                                      : static_cast<uint16_t>(uet::wire::k_udp_port);
}

FepIp addr_ip(const softuet_addr& a) {
  FepIp ip;
  ip.v6 = a.uet.flags & kAddrFlagIpv6;
  std::memcpy(ip.fa.data(), a.uet.fa, ip.v6 ? 16 : 4);
  return ip;
}

UdpPeer addr_peer(const softuet_addr& a) { return {addr_ip(a), addr_port(a)}; }

std::string addr_to_string(const softuet_addr& a) {
  const FepIp ip = addr_ip(a);
  const std::string host = ip.v6 ? "[" + ip_text(ip) + "]" : ip_text(ip);
  char buf[160];
  snprintf(buf, sizeof buf, "fi_addr_uet://%s:%u/v%u;flags=0x%02x;caps=0x%02x;pid=%u;ri=%u+%u;init=0x%08x", host.c_str(),
           addr_port(a), a.uet.version, a.uet.flags, a.uet.fep_caps, a.uet.pid_on_fep, a.uet.start_index,
           a.uet.num_indices, a.uet.initiator_id);
  return buf;
}

}  // namespace softuet
