// Address vectors within one process (UEC 1.0 §2.2.5.3.8, §2.2.4.1): insert, lookup and remove of
// endpoint addresses for every claimed endpoint type, and the auth keys of the AV JobID method
// (fi_av_insert_auth_key / fi_av_lookup_auth_key in an FI_AV_AUTH_KEY domain).
#include <rdma/fi_errno.h>

#include <cstring>
#include <vector>

#include "area_traits.hpp"
#include "conformance.hpp"
#include "loopback.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 1, .weight = 0.5);

namespace uet::cases {
namespace {

namespace w = uet::wire;

constexpr int kWaitMs = 3000;  // a completion on one host comes in milliseconds; this bounds a lost one

class Av : public ::testing::TestWithParam<Kind> {
 protected:
  // Opens the two endpoints of the kind under test; a non-UET provider without the capabilities is
  // not applicable, a UET provider fails.
  void Open(LoopbackSpec spec = {}) {
    spec.type = GetParam().ep_type;
    open_pair(lb, spec);
  }
  Loopback lb;
};

TEST_P(Av, LookupReturnsTheInsertedAddress) {
  covers({"2.2.5.3.8-a", "2.2.5.3.6-a"});
  UET_LOOPBACK(Open());
  for (int i = 0; i < 2; ++i) {
    const std::vector<uint8_t> want = lb.name(i);
    std::vector<uint8_t> got(want.size() + 16, 0xEE);
    size_t len = got.size();
    ASSERT_EQ(fi_av_lookup(lb.av, lb.addr[i], got.data(), &len), 0) << "fi_av_lookup of entry " << lb.addr[i];
    ASSERT_EQ(len, want.size()) << "the address length fi_av_lookup reports";
    got.resize(len);
    EXPECT_EQ(to_hex(got.data(), got.size()), to_hex(want.data(), want.size())) << "entry " << lb.addr[i];
  }
}

// Two endpoints of one FEP (one domain: the same fabric address and port, another PIDonFEP or resource index)
// are two destinations: the AV gives them distinct fi_addr values (FI_AV_TABLE indices in insertion order)
// and what is sent to each reaches that one. An AV that keys its entries by the FEP alone breaks both.
TEST_P(Av, EndpointsOfOneFepAreDistinctDestinations) {
  covers({"2.2.5.3.8-d", "2.2.5.1-d"});
  UET_LOOPBACK(Open());
  ASSERT_NE(lb.addr[0], lb.addr[1]) << "both endpoints' addresses were given fi_addr " << lb.addr[0] << ": "
                                    << to_hex(lb.name(0).data(), lb.name(0).size()) << " and "
                                    << to_hex(lb.name(1).data(), lb.name(1).size());
  char got[2][16] = {};
  const char sent[2][16] = {"to endpoint 0", "to endpoint 1"};
  int rctx[2], sctx[2];
  for (int i = 0; i < 2; ++i) ASSERT_EQ(fi_recv(lb.ep[i], got[i], sizeof got[i], nullptr, FI_ADDR_UNSPEC, &rctx[i]), 0);
  for (int i = 0; i < 2; ++i)  // endpoint 1 - i sends to endpoint i
    ASSERT_EQ(lb.post([&] { return fi_send(lb.ep[1 - i], sent[i], sizeof sent[i], nullptr, lb.addr[i], &sctx[i]); }), 0);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(lb.wait(&sctx[i], kWaitMs).state, Outcome::completed) << "the send to endpoint " << i;
    EXPECT_EQ(lb.wait(&rctx[i], kWaitMs).state, Outcome::completed) << "endpoint " << i << "'s receive";
    EXPECT_STREQ(got[i], sent[i]) << "endpoint " << i << " (fi_addr " << lb.addr[i] << ") received another's message";
  }
}

TEST_P(Av, LookupIntoAShortBufferReportsTheSize) {
  covers({"2.2.5.3.8-a"});
  UET_LOOPBACK(Open());
  const size_t want = lb.name(1).size();
  uint8_t small[4] = {};
  size_t len = sizeof small;
  const int rc = fi_av_lookup(lb.av, lb.addr[1], small, &len);
  // fi_av(3): the address is truncated and addrlen says how long it is; a provider may also refuse.
  EXPECT_TRUE(rc == 0 || rc == -FI_ETOOSMALL) << "fi_av_lookup into 4 bytes: " << fi_err(rc);
  EXPECT_EQ(len, want) << "addrlen after a short lookup";
}

TEST_P(Av, RemovedEntryIsGone) {
  covers({"2.2.5.3.8-a"});
  UET_LOOPBACK(Open());
  fi_addr_t gone = lb.addr[1];
  ASSERT_EQ(fi_av_remove(lb.av, &gone, 1, 0), 0);
  std::vector<uint8_t> buf(256);
  size_t len = buf.size();
  EXPECT_EQ(fi_av_lookup(lb.av, lb.addr[0], buf.data(), &len), 0) << "removing one entry lost another";
  if (manifest().uet) {
    // fi_av(3) leaves the use of a removed fi_addr_t undefined; a UET provider names it with a negative
    // FI_E* (the project's rule for bad input).
    len = buf.size();
    EXPECT_LT(fi_av_lookup(lb.av, gone, buf.data(), &len), 0) << "fi_av_lookup of a removed entry succeeded";
    EXPECT_LT(fi_av_remove(lb.av, &gone, 1, 0), 0) << "removing an entry twice";
    int ctx = 0;
    char byte = 0;
    const ssize_t rc = fi_send(lb.ep[0], &byte, 1, nullptr, gone, &ctx);
    EXPECT_LT(rc, 0) << "fi_send to a removed address was accepted";
  }
}

TEST_P(Av, AddressesOfAnotherFormatAreRefused) {
  covers({"2.2.5.1-a", "2.2.5.1-c"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open());
  const AddressLayout& layout = layout_of(manifest());
  std::vector<uint8_t> bad = lb.name(1);
  ASSERT_TRUE(layout.set(bad, AddrField::version, 0x7F)) << layout.misfit(bad.size());  // no such version of Table 2-10
  fi_addr_t a = 0;
  EXPECT_EQ(fi_av_insert(lb.av, bad.data(), 1, &a, 0, nullptr), 0) << "an address of version 0x7F was inserted";
  EXPECT_EQ(a, FI_ADDR_NOTAVAIL);
  bad = lb.name(1);
  // nothing to reach the FEP by
  ASSERT_TRUE(layout.set(bad, AddrField::flags, *layout.get(bad, AddrField::flags) & ~(uint64_t{1} << w::k_addr_flag_fa_valid)));
  a = 0;
  EXPECT_EQ(fi_av_insert(lb.av, bad.data(), 1, &a, 0, nullptr), 0) << "an address without a valid FA was inserted";
  EXPECT_EQ(a, FI_ADDR_NOTAVAIL);
}

TEST_P(Av, UnknownFlagsAreRefused) {
  covers({"2.2.5-b"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open());
  const std::vector<uint8_t> n = lb.name(1);
  fi_addr_t a = FI_ADDR_NOTAVAIL;
  EXPECT_EQ(fi_av_insert(lb.av, n.data(), 1, &a, kNoSuchFlag, nullptr), -FI_EBADFLAGS);
  fi_addr_t one = lb.addr[1];
  EXPECT_EQ(fi_av_remove(lb.av, &one, 1, kNoSuchFlag), -FI_EBADFLAGS);
}

// The AV JobID method: a domain opened with auth_key_size FI_AV_AUTH_KEY.
class AvAuthKey : public Av {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    LoopbackSpec spec;
    spec.auth_key_size = FI_AV_AUTH_KEY;
    spec.type = GetParam().ep_type;
    // The manifest says whether the provider has the AV method (HPC MUST, 2.2.4.1-s), not what fi_getinfo offers.
    UET_REQUIRE_AUTH_KEY_METHOD(spec.auth_key_size);
    const int rc = lb.open(spec);
    ASSERT_EQ(rc, 0) << fi_refused(lb.failed, rc) << " with auth_key_size FI_AV_AUTH_KEY";
    ASSERT_EQ(lb.enable(), 0) << lb.failed;
  }
};

TEST_P(AvAuthKey, InsertedAuthKeysLookUpAsInserted) {
  covers({"2.2.4.1-t", "2.2.4.1-m", "2.2.4.1-o", "2.2.4.1-s"});
  const uint32_t jobs[] = {0x123456, 0x000001, 0xABCDEF};
  fi_addr_t handles[3];
  for (int i = 0; i < 3; ++i) {
    uint8_t k[3];
    job_key(jobs[i], k);
    ASSERT_EQ(fi_av_insert_auth_key(lb.av, k, sizeof k, &handles[i], 0), 0) << "fi_av_insert_auth_key of JobID " << jobs[i];
  }
  EXPECT_NE(handles[0], handles[1]);
  EXPECT_NE(handles[1], handles[2]);
  for (int i = 0; i < 3; ++i) {
    uint8_t want[3], got[8] = {};
    job_key(jobs[i], want);
    size_t size = sizeof got;
    ASSERT_EQ(fi_av_lookup_auth_key(lb.av, handles[i], got, &size), 0);
    EXPECT_EQ(size, 3u) << "a JobID auth key is 3 bytes";
    EXPECT_EQ(to_hex(got, 3), to_hex(want, 3)) << "handle " << handles[i];
  }
}

TEST_P(AvAuthKey, AddressInsertedWithAnAuthKey) {
  covers({"2.2.4.1-m", "2.2.4.1-t"});
  uint8_t k[3];
  job_key(0x000777, k);
  fi_addr_t handle = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert_auth_key(lb.av, k, sizeof k, &handle, 0), 0);
  const std::vector<uint8_t> n = lb.name(1);
  fi_addr_t a = handle;  // FI_AUTH_KEY: fi_addr holds the auth key handle on input
  ASSERT_EQ(fi_av_insert(lb.av, n.data(), 1, &a, FI_AUTH_KEY, nullptr), 1);
  EXPECT_NE(a, FI_ADDR_NOTAVAIL);
  EXPECT_NE(a, handle) << "the address got the handle of its auth key as its fi_addr_t";
  std::vector<uint8_t> got(n.size());
  size_t len = got.size();
  ASSERT_EQ(fi_av_lookup(lb.av, a, got.data(), &len), 0);
  EXPECT_EQ(to_hex(got.data(), len), to_hex(n.data(), n.size()));
}

TEST_P(AvAuthKey, BadAuthKeyCallsAreRefused) {
  covers({"2.2.4.1-t"});
  uint8_t k[4] = {1, 2, 3, 4};
  fi_addr_t handle = FI_ADDR_NOTAVAIL;
  EXPECT_EQ(fi_av_insert_auth_key(lb.av, k, 2, &handle, 0), -FI_EINVAL) << "a 2-byte JobID";
  EXPECT_EQ(fi_av_insert_auth_key(lb.av, k, 4, &handle, 0), -FI_EINVAL) << "a 4-byte JobID";
  EXPECT_EQ(fi_av_insert_auth_key(lb.av, k, 3, &handle, kNoSuchFlag), -FI_EBADFLAGS);
  ASSERT_EQ(fi_av_insert_auth_key(lb.av, k, 3, &handle, 0), 0);
  uint8_t got[3];
  size_t size = 2;
  EXPECT_EQ(fi_av_lookup_auth_key(lb.av, handle, got, &size), -FI_ETOOSMALL);
  EXPECT_EQ(size, 3u) << "the size a short lookup reports";
  size = sizeof got;
  EXPECT_LT(fi_av_lookup_auth_key(lb.av, handle + 100, got, &size), 0) << "a handle never returned";
  EXPECT_LT(fi_av_lookup_auth_key(lb.av, lb.addr[1], got, &size), 0) << "an address inserted without auth key";
  fi_addr_t a = handle + 100;
  const std::vector<uint8_t> n = lb.name(1);
  EXPECT_LT(fi_av_insert(lb.av, n.data(), 1, &a, FI_AUTH_KEY, nullptr), 0) << "FI_AUTH_KEY with an unknown handle";
}

INSTANTIATE_TEST_SUITE_P(Claimed, Av, ::testing::ValuesIn(claimed_kinds()), [](const auto& i) { return i.param.name; });
INSTANTIATE_TEST_SUITE_P(Claimed, AvAuthKey, ::testing::ValuesIn(claimed_kinds()),
                         [](const auto& i) { return i.param.name; });

}  // namespace
}  // namespace uet::cases
