// fi_atomic between two processes (UEC 1.0 §2.2.5.4.4): the *valid calls, bulk non-fetching, one-element
// fetching and compare-swap atomics give the right values at both ends; the atomic opcode and datatype
// on the wire are those of Table 2-26.
#include <rdma/fi_atomic.h>

#include <cstring>

#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/libfabric_gen.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {
namespace {

namespace w = uet::wire;

std::vector<uint8_t> bytes_of(const std::vector<uint64_t>& v) {
  std::vector<uint8_t> b(v.size() * 8);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

class Atomic : public TwoSided {
 protected:
  void SetUp() override {
    UET_NOT_APPLICABLE_IF(GetParam().ep_type != FI_EP_RDM, "fi_atomic is not available on DGRAM endpoints (2.2.5.4.4-a)");
  }
  // Target MR 1 holding `values` (uint64).
  void Holding(const std::vector<uint64_t>& values, RemoteMr* mr) {
    ASSERT_TRUE(target.register_mr(1, values.size() * 8, 0, "any", mr)) << target.error();
    ASSERT_TRUE(target.write_mr(1, 0, bytes_of(values))) << target.error();
  }
  std::vector<uint8_t> TargetValues(size_t n) { return target.read_mr(1, 0, n * 8); }
};

TEST_P(Atomic, ValidCallsReportUint64Operations) {
  covers({"2.2.5.4.4-b", "2.2.5.4.4-c"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  size_t count = 0;
  ASSERT_EQ(fi_atomicvalid(me.ep, FI_UINT64, FI_SUM, &count), 0);
  EXPECT_GE(count, 2u) << "bulk non-fetching atomics take more than one element";
  ASSERT_EQ(fi_fetch_atomicvalid(me.ep, FI_UINT64, FI_SUM, &count), 0);
  if (manifest().uet) {
    EXPECT_EQ(count, 1u) << "fetching atomics are limited to one element";
  }
  ASSERT_EQ(fi_compare_atomicvalid(me.ep, FI_UINT64, FI_CSWAP, &count), 0);
  EXPECT_GE(count, 1u);
}

TEST_P(Atomic, BulkSumAddsEveryElement) {
  covers({"2.2.5.4.4-b", "2.2.5.4.4-d"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  RemoteMr mr;
  ASSERT_NO_FATAL_FAILURE(Holding({1, 2, 3, 4}, &mr));
  Capture cap;
  const bool wire = manifest().uet && cap.start();
  const uint64_t add[4] = {10, 20, 30, 40};
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_atomic(me.ep, add, 4, nullptr, dest, mr.base, mr.key, FI_UINT64, FI_SUM, &ctx); }), 0);
  const Outcome o = me.wait(&ctx);
  ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  EXPECT_EQ(TargetValues(4), bytes_of({11, 22, 33, 44}));
  if (manifest().uet) {
    ASSERT_TRUE(wire) << cap.error();
    const auto f = cap.find([](const WireFrame& f) { return is_request(f); });
    ASSERT_TRUE(f) << "no SES request captured";
    EXPECT_EQ(f->get(w::Field::uet_ses_opcode), w::ses_request_opcode::UET_ATOMIC);
    EXPECT_EQ(f->get(w::Field::uet_ses_atomic_opcode), *w::libfabric::amo_opcode_of(FI_SUM));
    EXPECT_EQ(f->get(w::Field::uet_ses_atomic_datatype), *w::libfabric::amo_datatype_of(FI_UINT64));
  }
}

TEST_P(Atomic, FetchingSumReturnsTheOldValue) {
  covers({"2.2.5.4.4-c", "2.2.5.4.4-d"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  RemoteMr mr;
  ASSERT_NO_FATAL_FAILURE(Holding({40, 7}, &mr));
  uint64_t add = 2, old = 0;
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_fetch_atomic(me.ep, &add, 1, nullptr, &old, nullptr, dest, mr.base, mr.key, FI_UINT64, FI_SUM, &ctx); }), 0);
  ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
  EXPECT_EQ(old, 40u);
  EXPECT_EQ(TargetValues(2), bytes_of({42, 7})) << "only the one element changes";
}

TEST_P(Atomic, CompareSwapSwapsOnlyOnEquality) {
  covers({"2.2.5.4.4-c", "2.2.5.4.4-d"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  RemoteMr mr;
  ASSERT_NO_FATAL_FAILURE(Holding({7, 8}, &mr));
  uint64_t compare = 7, swap = 99, old = 0;
  int c1 = 0, c2 = 0;
  ASSERT_EQ(me.post([&] { return fi_compare_atomic(me.ep, &swap, 1, nullptr, &compare, nullptr, &old, nullptr, dest, mr.base, mr.key,
                              FI_UINT64, FI_CSWAP, &c1); }), 0);
  ASSERT_EQ(me.wait(&c1).state, Outcome::completed);
  EXPECT_EQ(old, 7u);
  // The second element (8) differs from compare (7): it keeps its value.
  ASSERT_EQ(me.post([&] { return fi_compare_atomic(me.ep, &swap, 1, nullptr, &compare, nullptr, &old, nullptr, dest, mr.base + 8, mr.key,
                              FI_UINT64, FI_CSWAP, &c2); }), 0);
  ASSERT_EQ(me.wait(&c2).state, Outcome::completed);
  EXPECT_EQ(old, 8u);
  EXPECT_EQ(TargetValues(2), bytes_of({99, 8}));
}

UET_INSTANTIATE_TWO_SIDED(Atomic);

}  // namespace
}  // namespace uet::cases
