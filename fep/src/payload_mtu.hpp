// The payload MTU: how many bytes of a message one UET packet carries, sized to the path so that no packet
// leaves in IP fragments (fep/DESIGN.md "Packet size"). Free of libfabric, so fep/test can test it alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "udp_peer.hpp"

namespace softuet {

// The most payload one packet carries whatever the link: the fabric's Max PDU. The spec leaves it to the
// implementation (digest A.2, footnote 5) but requires every FEP of a fabric to use the same value; 4096 is
// the common default (S-SPECQ). A FEP on a smaller link carries less.
inline constexpr size_t kMaxPayloadMtu = 4096;
// A payload MTU is a multiple of the largest atomic datatype softuet computes on (8 bytes), so every packet
// of a bulk atomic holds whole elements.
inline constexpr size_t kPayloadAlign = 8;
// The link MTUs softuet works with: from the IPv4 datagram every host must take (RFC 791) to the largest
// IP packet.
inline constexpr uint32_t kMinLinkMtu = 576;
inline constexpr uint32_t kMaxLinkMtu = 65535;

// The IP and UDP header bytes of a UET packet (softuet sends no IP options or IPv6 extension headers).
size_t ip_udp_overhead(bool ipv6);
// The largest PDS and SES headers of a packet that carries data (paths::kDataPaths in wire_paths.hpp).
size_t largest_data_header();
// Payload bytes per packet on a link of `link_mtu`: what is left after IP, UDP and `header`, rounded down to
// a multiple of kPayloadAlign, at most kMaxPayloadMtu; 0 when that leaves nothing.
size_t payload_for_link(uint32_t link_mtu, bool ipv6, size_t header);
// The MTU of the interface that holds `ip`; nullopt when no interface of this network namespace does.
std::optional<uint32_t> interface_mtu(const FepIp& ip);

struct PathMtu {
  uint32_t link_mtu = 0;    // 0: unknown (no interface holds the address)
  bool configured = false;  // from SOFTUET_MTU
  size_t payload = 0;       // payload_for_link of link_mtu; kMaxPayloadMtu when link_mtu is unknown
};
// A FEP's path MTU and payload MTU: `configured` (SOFTUET_MTU) if given, else its interface's.
PathMtu fep_path_mtu(std::optional<uint32_t> configured, const FepIp& ip);

// Turn IP fragmentation off on a socket (IP_PMTUDISC_DO; IPV6_DONTFRAG): a datagram larger than the path
// MTU fails to send (EMSGSIZE) instead of leaving in fragments. 0, or -1 with errno.
int forbid_fragments(int fd, bool ipv6);

}  // namespace softuet
