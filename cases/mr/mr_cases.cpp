// Memory registration keys (UEC 1.0 §2.2.5.3.4.1, Table 2-13) within one process: the IDEMPOTENT_SAFE and
// OPTIMIZED bits a caller asks for stay in the key, provider keys included, and an IDEMPOTENT_SAFE region
// takes no completion counter.
#include <rdma/fi_domain.h>

#include <vector>

#include "conformance.hpp"
#include "endpoint.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {
namespace {

namespace w = uet::wire;

constexpr uint64_t kIdempotentSafe = uint64_t{1} << w::k_mr_key_idempotent_safe_bit;
constexpr uint64_t kOptimized = uint64_t{1} << w::k_mr_key_optimized_bit;

class MrKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    EndpointSpec spec;
    spec.caps = FI_MSG | FI_RMA;
    const int rc = me.open(spec);
    ASSERT_EQ(rc, 0) << me.failed << ": " << fi_err(rc);
  }
  void TearDown() override {
    if (cntr) fi_close(&cntr->fid);
  }
  Endpoint me;
  fid_cntr* cntr = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(256);
};

TEST_F(MrKeys, RequestedKeyBitsAreHonoured) {
  covers({"2.2.5.3.4.1-o", "2.2.5.3.4.1-n", "2.2.5.3.4.1-d"});
  uint64_t rkey = 7;
  for (const uint64_t bits : {kIdempotentSafe, kOptimized, kIdempotentSafe | kOptimized}) {
    fid_mr* mr = nullptr;
    // FI_MR_PROV_KEY (the endpoint's mr_mode): the provider may pick the RKEY, the two bits are the caller's.
    const int rc = me.register_mr(buf.data(), buf.size(), bits | rkey++, &mr);
    ASSERT_EQ(rc, 0) << "fi_mr_reg with requested_key bits 0x" << std::hex << bits << ": " << fi_err(rc);
    should((fi_mr_key(mr) & (kIdempotentSafe | kOptimized)) == bits,
           "fi_mr_key keeps the requested IDEMPOTENT_SAFE/OPTIMIZED bits (asked 0x" + to_hex(&bits, 8) + ")");
  }
}

TEST_F(MrKeys, IdempotentSafeRegionRefusesACompletionCounter) {
  covers({"2.2.5.3.4.1-p"});
  fid_mr* mr = nullptr;
  ASSERT_EQ(me.register_mr(buf.data(), buf.size(), kIdempotentSafe | 9, &mr), 0);
  ASSERT_TRUE(fi_mr_key(mr) & kIdempotentSafe) << "the provider dropped IDEMPOTENT_SAFE: nothing to check";
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  ASSERT_EQ(fi_cntr_open(me.domain, &attr, &cntr, nullptr), 0);
  EXPECT_NE(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), 0) << "a counter bound to an IDEMPOTENT_SAFE MR";
}

}  // namespace
}  // namespace uet::cases
