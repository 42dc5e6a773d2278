// SOFTUET_UDP_PORT=auto (or 0): the FEP binds the port the kernel gives it, and every address it hands out
// names that port: fi_getinfo's src_addr (reserved before the domain exists), fi_getname, fi_av_straddr.
// Each domain gets a port of its own.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "fixture.hpp"
#include "probe_fabric.hpp"
#include "softuet/fi_addr_uet.h"

namespace softuet_test {
namespace {

softuet_addr NameOf(fid_ep* ep) {
  softuet_addr a{};
  size_t len = sizeof a;
  EXPECT_EQ(fi_getname(&ep->fid, &a, &len), 0);
  return a;
}

// Is `port` of the FEP's address taken: a socket of the test cannot bind it.
bool PortTaken(const softuet_addr& a, uint16_t port) {
  const bool v6 = a.uet.flags & softuet::kAddrFlagIpv6;
  const int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
  sockaddr_storage ss{};
  socklen_t len;
  if (v6) {
    auto* s = reinterpret_cast<sockaddr_in6*>(&ss);
    s->sin6_family = AF_INET6;
    s->sin6_port = htons(port);
    std::memcpy(&s->sin6_addr, a.uet.fa, 16);
    len = sizeof *s;
  } else {
    auto* s = reinterpret_cast<sockaddr_in*>(&ss);
    s->sin_family = AF_INET;
    s->sin_port = htons(port);
    std::memcpy(&s->sin_addr, a.uet.fa, 4);
    len = sizeof *s;
  }
  const bool taken = bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno == EADDRINUSE;
  close(fd);
  return taken;
}

class OwnPort : public SoftuetApi {
 protected:
  ScopedEnv port_{"SOFTUET_UDP_PORT", "auto"};
};

TEST_F(OwnPort, EveryAddressNamesThePortBound) {
  const auto* src = static_cast<const softuet_addr*>(info_->src_addr);
  const uint16_t port = src->udp_port;
  ASSERT_EQ(src->trailer_magic, SOFTUET_ADDR_TRAILER_MAGIC);
  ASSERT_NE(port, 0);
  for (int i : {kA, kB}) EXPECT_EQ(NameOf(ep_[i]).udp_port, port) << "fi_getname of endpoint " << i;
  EXPECT_TRUE(PortTaken(*src, port)) << "the domain's socket is not on port " << port;

  const softuet_addr b = NameOf(ep_[kB]);
  char text[200];
  size_t len = sizeof text;
  ASSERT_NE(fi_av_straddr(av_, &b, text, &len), nullptr);
  EXPECT_NE(std::string(text).find(":" + std::to_string(port) + "/"), std::string::npos) << text;

  // And the FEP works on it.
  ASSERT_NO_FATAL_FAILURE(Enable());
  ASSERT_NO_FATAL_FAILURE(SendAToB("port"));
}

TEST_F(OwnPort, ZeroMeansAutoToo) {
  ScopedEnv zero("SOFTUET_UDP_PORT", "0");
  int rc = 0;
  fi_info* info = softuet_info(FI_EP_RDM, FI_MSG, nullptr, &rc);
  ASSERT_NE(info, nullptr) << fi_err(rc);
  EXPECT_NE(static_cast<const softuet_addr*>(info->src_addr)->udp_port, 0);
  fi_freeinfo(info);
}

TEST_F(OwnPort, EachDomainGetsAPortOfItsOwn) {
  const uint16_t first = NameOf(ep_[kA]).udp_port;
  // fi_getinfo after the first domain took its socket reserves another port, which the next domain gets.
  softuet_probe::ProbeFabric second;
  ASSERT_EQ(second.open(FI_MSG), 0) << second.failed;
  const uint16_t offered = static_cast<const softuet_addr*>(second.info->src_addr)->udp_port;
  EXPECT_NE(offered, first);
  EXPECT_EQ(NameOf(second.ep).udp_port, offered);
}

}  // namespace
}  // namespace softuet_test
