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

std::optional<LocalIp> local_ip(const Config& cfg, std::string* error) {
  LocalIp ip;
  in_addr a{};
  if (!cfg.addr.empty()) {
    if (inet_pton(AF_INET, cfg.addr.c_str(), &a) != 1) {
      *error = "SOFTUET_ADDR='" + cfg.addr + "': not an IPv4 address";
      return std::nullopt;
    }
  } else {
    // A FEP is the IP of its namespace (DESIGN.md); a namespace with only lo still gets a working FEP.
    a.s_addr = htonl(INADDR_LOOPBACK);
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) == 0) {
      for (ifaddrs* i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        if ((i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP)) continue;
        a = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr;
        break;
      }
      freeifaddrs(list);
    }
  }
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, text, sizeof text);
  ip.ipv4 = a.s_addr;
  ip.text = text;
  return ip;
}

// PIDonFEP names the process within the FEP (12 bits, constants.pid_on_fep_bits). Without a kernel driver
// to allocate it, the OS PID folded to 12 bits is the per-process value; 0 is avoided so that a zeroed
// header is never mistaken for a real PIDonFEP.
uint16_t process_pid_on_fep() {
  const uint16_t mask = (1u << uet::wire::k_pid_on_fep_bits) - 1;
  const uint16_t v = static_cast<uint16_t>(getpid()) & mask;
  return v ? v : 1;
}

// Without UET_PROVIDER_INITIATOR_ID: the low 20 bits of the IPv4 address and the PIDonFEP, so that two
// processes of a test fabric get different initiators.
uint32_t default_initiator(const LocalIp& ip) {
  return ((ntohl(ip.ipv4) & 0xFFFFFu) << uet::wire::k_pid_on_fep_bits) | process_pid_on_fep();
}

softuet_addr make_addr(const Config& cfg, const LocalIp& ip, uint16_t ri, uint32_t initiator) {
  softuet_addr a{};
  a.uet.version = static_cast<uint8_t>(uet::wire::k_addr_version);
  // Relative addressing (bit 5 clear): {FA, JobID, PIDonFEP, RI} selects the endpoint; IPv4 (bit 6 clear).
  a.uet.flags = kAddrFlagCapsValid | kAddrFlagFaValid | kAddrFlagPidValid | kAddrFlagIndexValid |
                kAddrFlagInitiatorValid;
  a.uet.fep_caps = cfg.fep_caps;
  std::memcpy(a.uet.fa, &ip.ipv4, 4);
  a.uet.pid_on_fep = process_pid_on_fep();
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

uint32_t addr_ipv4(const softuet_addr& a) {
  uint32_t v;
  std::memcpy(&v, a.uet.fa, 4);
  return v;
}

std::string addr_to_string(const softuet_addr& a) {
  char ip[INET_ADDRSTRLEN] = {};
  in_addr in{};
  in.s_addr = addr_ipv4(a);
  inet_ntop(AF_INET, &in, ip, sizeof ip);
  char buf[160];
  snprintf(buf, sizeof buf, "fi_addr_uet://%s:%u/v%u;flags=0x%02x;caps=0x%02x;pid=%u;ri=%u+%u;init=0x%08x", ip,
           addr_port(a), a.uet.version, a.uet.flags, a.uet.fep_caps, a.uet.pid_on_fep, a.uet.start_index,
           a.uet.num_indices, a.uet.initiator_id);
  return buf;
}

}  // namespace softuet
