// The FEP's address family (UET over IPv4 and IPv6 UDP): fi_getname carries the FEP's IP in the FA with
// the FA-type flag set for IPv6, and an address of the other family cannot be inserted (one FEP has one
// IP address and one socket). ctest runs this binary twice, on 127.0.0.1 and on ::1.
#include <arpa/inet.h>

#include <cstdlib>
#include <cstring>

#include "fixture.hpp"
#include "softuet/fi_addr_uet.h"

namespace softuet_test {
namespace {

class AddressFamily : public SoftuetApi {
 protected:
  softuet_addr NameOf(int i) {
    softuet_addr a{};
    size_t len = sizeof a;
    EXPECT_EQ(fi_getname(&ep_[i]->fid, &a, &len), 0);
    EXPECT_EQ(len, sizeof a);
    return a;
  }
  // SOFTUET_ADDR as the test runs it: ctest sets it, IPv4 or IPv6.
  static const char* FepAddr() {
    const char* s = std::getenv("SOFTUET_ADDR");
    return s ? s : "127.0.0.1";
  }
  static bool FepIsIpv6() { return std::strchr(FepAddr(), ':') != nullptr; }
};

TEST_F(AddressFamily, GetnameCarriesTheFepIpAndItsFamily) {
  const softuet_addr a = NameOf(kA);
  uint8_t want[16] = {};
  ASSERT_EQ(inet_pton(FepIsIpv6() ? AF_INET6 : AF_INET, FepAddr(), want), 1) << FepAddr();
  EXPECT_EQ(bool(a.uet.flags & softuet::kAddrFlagIpv6), FepIsIpv6()) << "flags 0x" << std::hex << int(a.uet.flags);
  EXPECT_TRUE(a.uet.flags & softuet::kAddrFlagFaValid);
  EXPECT_EQ(std::memcmp(a.uet.fa, want, sizeof want), 0);
}

TEST_F(AddressFamily, AnAddressOfTheOtherFamilyIsNotInserted) {
  softuet_addr other = NameOf(kB);
  other.uet.flags ^= softuet::kAddrFlagIpv6;
  fi_addr_t got = 0;
  EXPECT_EQ(fi_av_insert(av_, &other, 1, &got, 0, nullptr), 0);
  EXPECT_EQ(got, FI_ADDR_NOTAVAIL);
}

TEST_F(AddressFamily, MessagesFlowBetweenEndpointsOfTheFep) {
  Enable();
  char out[] = "over the FEP's own family";
  char in[sizeof out] = {};
  ASSERT_EQ(fi_recv(ep_[kB], in, sizeof in, nullptr, addr_[kA], in), 0);
  ASSERT_EQ(fi_send(ep_[kA], out, sizeof out, nullptr, addr_[kB], out), 0);
  std::map<void*, fi_cq_data_entry> got;
  ASSERT_NO_FATAL_FAILURE(WaitCompletions({in, out}, &got));
  EXPECT_STREQ(in, out);
}

}  // namespace
}  // namespace softuet_test
