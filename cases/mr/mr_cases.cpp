// Memory registration keys (UEC 1.0 §2.2.5.3.4.1, Table 2-13) within one process: the IDEMPOTENT_SAFE and
// OPTIMIZED bits a caller asks for stay in the key, provider keys included, and an IDEMPOTENT_SAFE region
// takes no completion counter; user keys pass whole, keys outside the format are refused, provider keys
// have the format; fi_mr_regattr with each JobID method (§2.2.4.3.3); MRs bind to endpoints (§2.2.5).
#include <rdma/fi_domain.h>

#include <algorithm>
#include <vector>

#include "area_traits.hpp"
#include "conformance.hpp"
#include "endpoint.hpp"
#include "loopback.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 1);

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
    ASSERT_EQ(rc, 0) << fi_refused(me.failed, rc);
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

// Registration in a domain of the provider under test without an endpoint-side peer: the loopback pair.
class Mr : public ::testing::Test {
 protected:
  // Opens the pair with `mr_mode` and FI_RMA; a provider that has no such domain is not applicable when
  // it does not claim UET, a failure when it does.
  void Open(uint64_t mr_mode, size_t auth_key_size = 0, uint32_t job = 0) {
    const auto& types = manifest().endpoint_types;
    UET_NOT_APPLICABLE_IF(std::find(types.begin(), types.end(), FI_EP_RDM) == types.end(), reason::kNotClaimedEndpointType,
                          "the manifest claims no RDM endpoints, where registered memory is reached (fi_rma)");
    LoopbackSpec spec;
    spec.caps = FI_MSG | FI_RMA;
    spec.mr_mode = mr_mode;
    spec.auth_key_size = auth_key_size;
    spec.job = job;
    open_pair(lb, spec);
  }
  // Opens a domain where the application picks the keys; not applicable when the provider insists on
  // FI_MR_PROV_KEY (which a UET provider SHOULD NOT, 2.2.5.3.4-d: a warning then).
  void OpenUserKeys() {
    ASSERT_NO_FATAL_FAILURE(Open(FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR));
    if (IsSkipped()) return;
    const bool user_keys = !(lb.info->domain_attr->mr_mode & FI_MR_PROV_KEY);
    if (manifest().uet) should(user_keys, "the provider supports user-assigned keys (2.2.5.3.4-c)");
    UET_NOT_APPLICABLE_IF(!user_keys, reason::kNotClaimedFeature, "the provider requires FI_MR_PROV_KEY: keys are not the user's");
  }
  int Reg(uint64_t key, fid_mr** mr) { return lb.register_mr(1, buf.data(), buf.size(), key, mr); }
  Loopback lb;
  std::vector<uint8_t> buf = std::vector<uint8_t>(4096);
};

TEST_F(Mr, UserKeysPassWhole) {
  covers({"2.2.5.3.4.1-a", "2.2.5.3.4.1-c", "2.2.5.3.4.1-d", "2.2.5.3.4.1-n", "2.2.5.3.4-c", "2.2.5.3.4-d"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(OpenUserKeys());
  for (const uint64_t key : {uint64_t{0x00001234ABCD}, kIdempotentSafe | 0x7777, kOptimized | 0x123,
                             kIdempotentSafe | kOptimized | 0xFFF, uint64_t{0x0000FFFFFFFFFFFF}}) {
    fid_mr* mr = nullptr;
    const int rc = Reg(key, &mr);
    ASSERT_EQ(rc, 0) << "fi_mr_reg with key 0x" << std::hex << key << ": " << fi_err(rc);
    EXPECT_EQ(fi_mr_key(mr), key) << "the 64-bit key fi_mr_key returns for requested key 0x" << std::hex << key;
  }
}

TEST_F(Mr, KeysOutsideTheFormatAreRefused) {
  covers({"2.2.5.3.4.1-a", "2.2.5.3.4.1-r"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(OpenUserKeys());
  const struct {
    uint64_t key;
    const char* why;
  } bad[] = {
      {uint64_t{1} << 56 | 1, "a reserved bit (61..56)"},
      {uint64_t{1} << 61 | 2, "a reserved bit (61..56)"},
      {uint64_t{1} << 48 | 3, "a vendor bit (55..48) in a user key"},
      {kOptimized | 0x1000, "an OPTIMIZED key with an RKEY beyond the optimized range"},
  };
  for (const auto& b : bad) {
    fid_mr* mr = nullptr;
    const int rc = Reg(b.key, &mr);
    EXPECT_LT(rc, 0) << "key 0x" << std::hex << b.key << " with " << b.why << " was registered";
  }
}

TEST_F(Mr, AKeyInUseIsRefused) {
  covers({"2.2.5-b"});
  UET_LOOPBACK(OpenUserKeys());
  fid_mr* first = nullptr;
  fid_mr* second = nullptr;
  ASSERT_EQ(Reg(0x4242, &first), 0);
  std::vector<uint8_t> other(64);
  const int rc = lb.register_mr(1, other.data(), other.size(), 0x4242, &second);
  EXPECT_LT(rc, 0) << "two regions registered with key 0x4242";
}

TEST_F(Mr, ProviderKeysHaveTheTable213Format) {
  covers({"2.2.5.3.4.1-a", "2.2.5.3.4.1-c", "2.2.5.3.4.1-e", "2.2.5.3.4.1-f", "2.2.5.3.4.1-o"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open(FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY));
  const size_t key_size = lb.info->domain_attr->mr_key_size;
  uint64_t rkey = 5;  // distinct requests, whatever the provider does with them
  for (const uint64_t bits : {uint64_t{0}, kIdempotentSafe, kOptimized, kIdempotentSafe | kOptimized}) {
    fid_mr* mr = nullptr;
    ASSERT_EQ(Reg(bits | rkey++, &mr), 0) << "requested bits 0x" << std::hex << bits;
    const uint64_t key = fi_mr_key(mr);
    EXPECT_EQ(key & w::k_mr_key_reserved_mask, 0u) << "reserved bits set in key 0x" << std::hex << key;
    if (key_size < 6) {
      EXPECT_EQ((key & w::k_mr_key_rkey_mask) >> (8 * key_size), 0u)
          << "RKEY bits above mr_key_size " << key_size << " set in key 0x" << std::hex << key;
    }
    if (key & kOptimized) {
      EXPECT_EQ(key & w::k_mr_key_rkey_mask & ~w::k_mr_key_optimized_rkey_mask, 0u)
          << "an OPTIMIZED key with an RKEY beyond the optimized range: 0x" << std::hex << key;
    }
    should((key & (kIdempotentSafe | kOptimized)) == bits, "a provider key keeps the requested IDEMPOTENT_SAFE/OPTIMIZED bits");
  }
}

TEST_F(Mr, CompletionCounterBindsOnlyWhereAllowed) {
  covers({"2.2.5.3.4.1-p"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(OpenUserKeys());
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  fid_cntr* cntr = nullptr;
  ASSERT_EQ(fi_cntr_open(lb.domain, &attr, &cntr, nullptr), 0);
  lb.cntrs.push_back(cntr);
  fid_mr* safe = nullptr;
  ASSERT_EQ(Reg(kIdempotentSafe | 0x99, &safe), 0);
  ASSERT_TRUE(fi_mr_key(safe) & kIdempotentSafe) << "the user key lost IDEMPOTENT_SAFE: nothing to check";
  EXPECT_NE(fi_mr_bind(safe, &cntr->fid, FI_REMOTE_WRITE), 0) << "a counter bound to an IDEMPOTENT_SAFE MR";
}

TEST_F(Mr, RegattrTakesEachJobIdMethod) {
  covers({"2.2.4.3.3-a", "2.2.4.3.3-b", "2.2.4.3.3-c"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open(FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY, 3, 0x0000AB));
  iovec iov{buf.data(), buf.size()};
  uint8_t job[3] = {0xAB, 0, 0};
  const struct {
    size_t size;
    uint8_t* key;
    bool ok;
    const char* what;
  } rows[] = {{0, nullptr, true, "auth_key_size 0 (any JobID)"},
              {3, job, true, "auth_key_size 3 (the JobID in auth_key)"},
              {3, nullptr, false, "auth_key_size 3 without auth_key"},
              {5, job, false, "auth_key_size 5"}};
  uint64_t key = 0x100;
  for (const auto& r : rows) {
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_WRITE | FI_REMOTE_READ;
    attr.requested_key = key++;
    attr.auth_key_size = r.size;
    attr.auth_key = r.key;
    fid_mr* mr = nullptr;
    const int rc = fi_mr_regattr(lb.domain, &attr, 0, &mr);
    if (mr) lb.mrs.push_back(mr);
    if (r.ok) {
      EXPECT_EQ(rc, 0) << r.what << ": " << fi_err(rc);
    } else {
      EXPECT_EQ(rc, -FI_EINVAL) << r.what;
    }
  }
}

TEST_F(Mr, RegattrWithAnAvAuthKey) {
  covers({"2.2.4.3.3-a", "2.2.4.3.3-d"});
  UET_REQUIRE_UET_PROVIDER();
  LoopbackSpec spec;
  spec.caps = FI_MSG | FI_RMA;
  spec.auth_key_size = FI_AV_AUTH_KEY;
  UET_LOOPBACK(open_pair(lb, spec));
  uint8_t job[3] = {0x21, 0x43, 0x00};
  fi_addr_t handle = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert_auth_key(lb.av, job, sizeof job, &handle, 0), 0);
  iovec iov{buf.data(), buf.size()};
  const auto regattr = [&](fid_av* av, fi_addr_t addr, uint64_t key) {
    fi_mr_auth_key k{};
    k.av = av;
    k.src_addr = addr;
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_WRITE | FI_REMOTE_READ;
    attr.requested_key = key;
    attr.auth_key_size = FI_AV_AUTH_KEY;
    attr.auth_key = reinterpret_cast<uint8_t*>(&k);
    fid_mr* mr = nullptr;
    const int r = fi_mr_regattr(lb.domain, &attr, 0, &mr);
    if (mr) lb.mrs.push_back(mr);
    return r;
  };
  EXPECT_EQ(regattr(lb.av, handle, 0x200), 0) << "fi_mr_auth_key naming the AV and an inserted auth key";
  EXPECT_EQ(regattr(nullptr, handle, 0x201), -FI_EINVAL) << "fi_mr_auth_key without an AV";
  EXPECT_EQ(regattr(lb.av, handle + 1000, 0x202), -FI_EINVAL) << "fi_mr_auth_key naming nothing inserted";
}

TEST_F(Mr, RegionsBindToEndpoints) {
  covers({"2.2.5-c"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open(FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY));
  ASSERT_TRUE(lb.info->domain_attr->mr_mode & FI_MR_ENDPOINT) << "FI_MR_ENDPOINT was asked for and dropped";
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(lb.domain, buf.data(), buf.size(), FI_REMOTE_WRITE, 0, 0x300, 0, &mr, nullptr), 0);
  lb.mrs.push_back(mr);
  EXPECT_EQ(fi_mr_bind(mr, &lb.ep[0]->fid, kNoSuchFlag), -FI_EBADFLAGS) << "fi_mr_bind to an endpoint with a bad flag";
  EXPECT_EQ(fi_mr_bind(mr, &lb.cq->fid, 0), -FI_EINVAL) << "fi_mr_bind to a CQ";
  EXPECT_EQ(fi_mr_bind(mr, &lb.ep[0]->fid, 0), 0) << "fi_mr_bind to an endpoint of the domain";
  EXPECT_EQ(fi_mr_enable(mr), 0);
}

}  // namespace
}  // namespace uet::cases
