// The payload MTU (fep/src/payload_mtu.hpp): the largest data header, the payload a link leaves, the MTU of
// an interface, and that sockets refuse to fragment.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "payload_mtu.hpp"
#include "wire_paths.hpp"

namespace softuet {
namespace {

using uet::wire::Node;
using uet::wire::node_info;

// The sum of the spec's header sizes along a path (spec/wire.yaml nodes): what the encoder must agree with.
size_t spec_size(std::initializer_list<Node> nodes) {
  size_t n = 0;
  for (Node node : nodes) n += node_info(node).size;
  return n;
}

TEST(LargestDataHeader, IsTheRendezvousRequestWithItsExtensionHeader) {
  // RUD/ROD request (12) + standard SES header (12 + buffer_offset 8 + SOM 24) + rendezvous extension (24).
  const size_t rendezvous = spec_size({Node::uet_pds_rud_rod_req, Node::uet_ses_std, Node::uet_ses_std_buffer_offset,
                                       Node::uet_ses_std_som, Node::uet_ses_rendezvous});
  EXPECT_EQ(rendezvous, 80u);
  EXPECT_EQ(largest_data_header(), rendezvous);
  for (std::span<const Node> path : paths::kDataPaths)
    EXPECT_LE(uet::codec::PathEncoder(path).header_size(), largest_data_header());
}

TEST(LargestDataHeader, ExceedsEveryHeaderThatCarriesNoPayload) {
  // The CAS operands travel in their extension header: those paths are larger, and carry no payload.
  EXPECT_GT(paths::encoder<paths::kReqSomCas>().header_size(), largest_data_header());
}

struct LinkCase {
  uint32_t mtu;
  bool ipv6;
  size_t header;
  size_t payload;
};

class PayloadForLink : public ::testing::TestWithParam<LinkCase> {};

TEST_P(PayloadForLink, LeavesRoomForIpUdpAndTheHeader) {
  const LinkCase c = GetParam();
  EXPECT_EQ(payload_for_link(c.mtu, c.ipv6, c.header), c.payload);
  if (c.payload) {
    EXPECT_LE(ip_udp_overhead(c.ipv6) + c.header + c.payload, c.mtu) << "a full packet would not fit the link";
    EXPECT_EQ(c.payload % kPayloadAlign, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Links, PayloadForLink,
    ::testing::Values(LinkCase{1500, false, 80, 1392},   // 1500 - 20 - 8 - 80, a multiple of 8
                      LinkCase{1500, true, 80, 1368},    // 1500 - 40 - 8 - 80 = 1372, down to a multiple of 8
                      LinkCase{1280, true, 80, 1152},    // IPv6's minimum link
                      LinkCase{576, false, 80, 464},     // 468 down to a multiple of 8
                      LinkCase{4204, false, 80, 4096},   // exactly the largest payload
                      LinkCase{9000, false, 80, 4096},   // never more than the fabric's Max PDU
                      LinkCase{65535, true, 80, 4096},
                      LinkCase{108, false, 80, 0},       // nothing left
                      LinkCase{115, false, 80, 0},       // 7 bytes: less than one aligned unit
                      LinkCase{116, false, 80, 8}));

FepIp ipv4(const char* text) {
  FepIp ip;
  inet_pton(AF_INET, text, ip.fa.data());
  return ip;
}

uint32_t sys_mtu(const char* ifname) {
  std::ifstream in(std::string("/sys/class/net/") + ifname + "/mtu");
  uint32_t mtu = 0;
  in >> mtu;
  return mtu;
}

TEST(InterfaceMtu, OfTheLoopbackAddressIsLos) {
  const uint32_t lo = sys_mtu("lo");
  ASSERT_GT(lo, 0u) << "no /sys/class/net/lo/mtu";
  EXPECT_EQ(interface_mtu(ipv4("127.0.0.1")), lo);
}

TEST(InterfaceMtu, OfAnAddressNoInterfaceHoldsIsUnknown) {
  EXPECT_EQ(interface_mtu(ipv4("192.0.2.1")), std::nullopt);  // TEST-NET-1 (RFC 5737)
}

TEST(FepPathMtu, ConfiguredMtuIsTakenOverTheInterfaces) {
  const PathMtu p = fep_path_mtu(1300, ipv4("127.0.0.1"));
  EXPECT_TRUE(p.configured);
  EXPECT_EQ(p.link_mtu, 1300u);
  EXPECT_EQ(p.payload, payload_for_link(1300, false, largest_data_header()));
}

TEST(FepPathMtu, LoopbackLeavesTheLargestPayload) {
  const PathMtu p = fep_path_mtu(std::nullopt, ipv4("127.0.0.1"));
  EXPECT_FALSE(p.configured);
  EXPECT_EQ(p.link_mtu, std::min(sys_mtu("lo"), kMaxLinkMtu));
  EXPECT_EQ(p.payload, kMaxPayloadMtu);
}

TEST(FepPathMtu, UnknownInterfaceKeepsTheLargestPayload) {
  const PathMtu p = fep_path_mtu(std::nullopt, ipv4("192.0.2.1"));
  EXPECT_EQ(p.link_mtu, 0u);
  EXPECT_EQ(p.payload, kMaxPayloadMtu);
}

TEST(ForbidFragments, SetsDontFragmentOnIpv4) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(forbid_fragments(fd, false), 0);
  int v = -1;
  socklen_t len = sizeof v;
  ASSERT_EQ(getsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, &len), 0);
  EXPECT_EQ(v, IP_PMTUDISC_DO);
  close(fd);
}

TEST(ForbidFragments, SetsDontFragOnIpv6) {
  const int fd = socket(AF_INET6, SOCK_DGRAM, 0);
  if (fd < 0) GTEST_SKIP() << "no IPv6 sockets here";
  ASSERT_EQ(forbid_fragments(fd, true), 0);
  int v = -1;
  socklen_t len = sizeof v;
  ASSERT_EQ(getsockopt(fd, IPPROTO_IPV6, IPV6_DONTFRAG, &v, &len), 0);
  EXPECT_EQ(v, 1);
  ASSERT_EQ(getsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v, &len), 0);
  EXPECT_EQ(v, IPV6_PMTUDISC_DO);
  close(fd);
}

}  // namespace
}  // namespace softuet
