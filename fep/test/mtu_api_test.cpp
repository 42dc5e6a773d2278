// SOFTUET_MTU through fi_getinfo: a datagram is one packet, so a DGRAM endpoint's max_msg_size is the payload
// MTU of the configured path; a value that is no MTU gives no info.
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "fixture.hpp"
#include "payload_mtu.hpp"

namespace softuet_test {
namespace {

// Sets SOFTUET_MTU for one test and restores what the environment had (ctest runs this binary with and
// without it).
class MtuVariable {
 public:
  explicit MtuVariable(const char* value) {
    if (const char* old = std::getenv("SOFTUET_MTU")) old_ = old;
    setenv("SOFTUET_MTU", value, 1);
  }
  ~MtuVariable() {
    if (old_) setenv("SOFTUET_MTU", old_->c_str(), 1);
    else unsetenv("SOFTUET_MTU");
  }

 private:
  std::optional<std::string> old_;
};

bool fep_on_ipv6() {
  const char* addr = std::getenv("SOFTUET_ADDR");
  return addr && std::strchr(addr, ':');
}

TEST(PathMtu, DatagramMaxMsgSizeIsThePayloadMtuOfTheConfiguredPath) {
  for (uint32_t mtu : {1280u, 1500u, 9000u}) {
    MtuVariable var(std::to_string(mtu).c_str());
    int rc = 0;
    fi_info* info = softuet_info(FI_EP_DGRAM, FI_MSG, nullptr, &rc);
    ASSERT_NE(info, nullptr) << "SOFTUET_MTU=" << mtu << ": " << fi_err(rc);
    EXPECT_EQ(info->ep_attr->max_msg_size,
              softuet::payload_for_link(mtu, fep_on_ipv6(), softuet::largest_data_header()))
        << "SOFTUET_MTU=" << mtu;
    fi_freeinfo(info);
  }
}

TEST(PathMtu, AValueThatIsNoMtuGivesNoInfo) {
  for (const char* bad : {"575", "65536", "1500x", "-1500", ""}) {
    MtuVariable var(bad);
    int rc = 0;
    fi_info* info = softuet_info(FI_EP_DGRAM, FI_MSG, nullptr, &rc);
    EXPECT_EQ(info, nullptr) << "SOFTUET_MTU='" << bad << "'";
    EXPECT_EQ(rc, -FI_ENODATA) << "SOFTUET_MTU='" << bad << "'";
    if (info) fi_freeinfo(info);
  }
}

}  // namespace
}  // namespace softuet_test
