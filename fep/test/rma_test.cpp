// fi_rma, fi_atomic, fi_tagged and MR rules between the fixture's two endpoints: data lands where it
// should, and a rule the target enforces comes back as a CQ error entry with err and prov_errno (spec
// 2.2.5.6). The SES return code values are the spec's (digest F.5).
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <cstring>
#include <numeric>

#include "fixture.hpp"

namespace softuet_test {
namespace {

constexpr uint64_t kRcBadMkey = 0x1C;
constexpr uint64_t kRcBadAddr = 0x1D;
constexpr uint64_t kIdempotentSafe = uint64_t{1} << 63;

class SoftuetRma : public SoftuetApi {
 protected:
  void TearDown() override {
    for (fid_mr* mr : mrs_) EXPECT_EQ(fi_close(&mr->fid), 0);
    SoftuetApi::TearDown();
  }
  // Registers `buf` on endpoint B with `key`, bound and enabled (FI_MR_ENDPOINT).
  fid_mr* RegisterOnB(void* buf, size_t len, uint64_t key) {
    fid_mr* mr = nullptr;
    int r = fi_mr_reg(domain_, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, key, 0, &mr, nullptr);
    EXPECT_EQ(r, 0) << "fi_mr_reg: " << fi_err(r);
    if (r) return nullptr;
    mrs_.push_back(mr);
    EXPECT_EQ(fi_mr_bind(mr, &ep_[kB]->fid, 0), 0);
    EXPECT_EQ(fi_mr_enable(mr), 0);
    return mr;
  }
  std::vector<fid_mr*> mrs_;
};

TEST_F(SoftuetRma, MaxRmaSizeStaysWithinOneToFourGiB) {
  size_t v = 0, len = sizeof v;
  ASSERT_EQ(fi_getopt(&ep_[kA]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &v, &len), 0);
  EXPECT_GE(v, size_t{1} << 30);
  EXPECT_LE(v, (size_t{1} << 32) - 1);
  size_t low = (size_t{1} << 30) - 1, high = size_t{1} << 32, ok = size_t{2} << 30;
  EXPECT_EQ(fi_setopt(&ep_[kA]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &low, sizeof low), -FI_EINVAL);
  EXPECT_EQ(fi_setopt(&ep_[kA]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &high, sizeof high), -FI_EINVAL);
  EXPECT_EQ(fi_setopt(&ep_[kA]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &ok, sizeof ok), 0);
  ASSERT_EQ(fi_getopt(&ep_[kA]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &v, &len), 0);
  EXPECT_EQ(v, ok);
}

TEST_F(SoftuetRma, WriteThenReadBackMultiPacket) {
  std::vector<uint8_t> target(20000, 0), src(10000), back(10000, 0);
  std::iota(src.begin(), src.end(), uint8_t{7});
  ASSERT_NE(RegisterOnB(target.data(), target.size(), 0xC0DE), nullptr);
  ASSERT_NO_FATAL_FAILURE(Enable());
  int ctx_w = 0, ctx_r = 0;
  ASSERT_EQ(fi_write(ep_[kA], src.data(), src.size(), nullptr, addr_[kB], 100, 0xC0DE, &ctx_w), 0);
  EXPECT_EQ(Outcome(&ctx_w).err, 0);
  EXPECT_EQ(std::memcmp(target.data() + 100, src.data(), src.size()), 0);
  EXPECT_EQ(target[99], 0);
  EXPECT_EQ(target[100 + src.size()], 0);
  ASSERT_EQ(fi_read(ep_[kA], back.data(), back.size(), nullptr, addr_[kB], 100, 0xC0DE, &ctx_r), 0);
  EXPECT_EQ(Outcome(&ctx_r).err, 0);
  EXPECT_EQ(back, src);
}

// An OPTIMIZED key (Table 2-13) lets one-packet RMA and atomics travel in the optimized non-matching
// header, which names the MR by its RKEY/INDEX in ses.resource_index: data must land just the same, and
// an RKEY nobody registered must still fail (pytest/fep/test_header_choice.py watches the wire).
TEST_F(SoftuetRma, OptimizedKeyWriteReadAndAtomic) {
  constexpr uint64_t kOptimizedKey = (uint64_t{1} << 62) | 0x2A;
  std::vector<uint8_t> target(256, 0), src(64), back(64, 0);
  std::iota(src.begin(), src.end(), uint8_t{1});
  ASSERT_NE(RegisterOnB(target.data(), target.size(), kOptimizedKey), nullptr);
  ASSERT_NO_FATAL_FAILURE(Enable());
  int ctx_w = 0, ctx_r = 0, ctx_a = 0, ctx_bad = 0;
  ASSERT_EQ(fi_write(ep_[kA], src.data(), src.size(), nullptr, addr_[kB], 8, kOptimizedKey, &ctx_w), 0);
  EXPECT_EQ(Outcome(&ctx_w).err, 0);
  EXPECT_EQ(std::memcmp(target.data() + 8, src.data(), src.size()), 0);
  ASSERT_EQ(fi_read(ep_[kA], back.data(), back.size(), nullptr, addr_[kB], 8, kOptimizedKey, &ctx_r), 0);
  EXPECT_EQ(Outcome(&ctx_r).err, 0);
  EXPECT_EQ(back, src);
  uint64_t add = 5, was = 0;
  std::memcpy(target.data() + 128, &add, sizeof add);
  ASSERT_EQ(fi_fetch_atomic(ep_[kA], &add, 1, nullptr, &was, nullptr, addr_[kB], 128, kOptimizedKey, FI_UINT64,
                            FI_SUM, &ctx_a), 0);
  EXPECT_EQ(Outcome(&ctx_a).err, 0);
  EXPECT_EQ(was, 5u);
  uint64_t now = 0;
  std::memcpy(&now, target.data() + 128, sizeof now);
  EXPECT_EQ(now, 10u);
  ASSERT_EQ(fi_write(ep_[kA], src.data(), src.size(), nullptr, addr_[kB], 0, (uint64_t{1} << 62) | 0x2B, &ctx_bad), 0);
  const fi_cq_err_entry e = Outcome(&ctx_bad);
  EXPECT_EQ(e.err, FI_EKEYREJECTED);
  EXPECT_EQ(static_cast<uint64_t>(e.prov_errno), kRcBadMkey);
}

TEST_F(SoftuetRma, UnknownKeyIsRcBadMkey) {
  std::vector<uint8_t> target(64), src(8, 1);
  ASSERT_NE(RegisterOnB(target.data(), target.size(), 0xC0DE), nullptr);
  ASSERT_NO_FATAL_FAILURE(Enable());
  int ctx = 0;
  ASSERT_EQ(fi_write(ep_[kA], src.data(), src.size(), nullptr, addr_[kB], 0, 0xBAD, &ctx), 0);
  const fi_cq_err_entry e = Outcome(&ctx);
  EXPECT_EQ(e.err, FI_EKEYREJECTED);
  EXPECT_EQ(static_cast<uint64_t>(e.prov_errno), kRcBadMkey);
}

TEST_F(SoftuetRma, WriteBeyondTheMrIsRcBadAddr) {
  std::vector<uint8_t> target(64), src(16, 1);
  ASSERT_NE(RegisterOnB(target.data(), target.size(), 0xC0DE), nullptr);
  ASSERT_NO_FATAL_FAILURE(Enable());
  int ctx = 0;
  ASSERT_EQ(fi_write(ep_[kA], src.data(), src.size(), nullptr, addr_[kB], 56, 0xC0DE, &ctx), 0);
  const fi_cq_err_entry e = Outcome(&ctx);
  EXPECT_EQ(e.err, FI_EFAULT);
  EXPECT_EQ(static_cast<uint64_t>(e.prov_errno), kRcBadAddr);
  EXPECT_EQ(target, std::vector<uint8_t>(64, 0));
}

TEST_F(SoftuetRma, UserKeysFollowTable2_13) {
  std::vector<uint8_t> buf(64);
  fid_mr* mr = nullptr;
  // Reserved bits 61..56 and vendor bits 55..48 of a user key must be 0.
  EXPECT_EQ(fi_mr_reg(domain_, buf.data(), buf.size(), FI_REMOTE_WRITE, 0, uint64_t{1} << 60, 0, &mr, nullptr),
            -FI_EKEYREJECTED);
  EXPECT_EQ(fi_mr_reg(domain_, buf.data(), buf.size(), FI_REMOTE_WRITE, 0, uint64_t{1} << 50, 0, &mr, nullptr),
            -FI_EKEYREJECTED);
  // IDEMPOTENT_SAFE is kept in the key, and such an MR refuses a completion counter (spec 2.2.5.3.4.1-p).
  fid_mr* safe = RegisterOnB(buf.data(), buf.size(), kIdempotentSafe | 5);
  ASSERT_NE(safe, nullptr);
  EXPECT_EQ(fi_mr_key(safe), kIdempotentSafe | 5);
  fid_cntr* c = OpenCntr(FI_CNTR_EVENTS_COMP);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(fi_mr_bind(safe, &c->fid, FI_REMOTE_WRITE), 0);
  fid_mr* plain = RegisterOnB(buf.data(), buf.size(), 6);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(fi_mr_bind(plain, &c->fid, FI_REMOTE_WRITE), 0);
}

TEST_F(SoftuetRma, FetchAddAndCompareSwap) {
  uint64_t target[2] = {40, 7};
  ASSERT_NE(RegisterOnB(target, sizeof target, 0xA70), nullptr);
  ASSERT_NO_FATAL_FAILURE(Enable());
  uint64_t add = 2, old = 0, compare = 7, swap = 99, old2 = 0;
  int ctx1 = 0, ctx2 = 0;
  ASSERT_EQ(fi_fetch_atomic(ep_[kA], &add, 1, nullptr, &old, nullptr, addr_[kB], 0, 0xA70, FI_UINT64, FI_SUM, &ctx1), 0);
  EXPECT_EQ(Outcome(&ctx1).err, 0);
  EXPECT_EQ(old, 40u);
  EXPECT_EQ(target[0], 42u);
  ASSERT_EQ(fi_compare_atomic(ep_[kA], &swap, 1, nullptr, &compare, nullptr, &old2, nullptr, addr_[kB], 8, 0xA70,
                              FI_UINT64, FI_CSWAP, &ctx2), 0);
  EXPECT_EQ(Outcome(&ctx2).err, 0);
  EXPECT_EQ(old2, 7u);
  EXPECT_EQ(target[1], 99u);
}

TEST_F(SoftuetRma, TaggedReceiveTakesOnlyItsTag) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  char a[8] = "tag-one", b[8] = "tag-two", got[8] = {};
  int rctx = 0, s1 = 0, s2 = 0;
  ASSERT_EQ(fi_trecv(ep_[kB], got, sizeof got, nullptr, FI_ADDR_UNSPEC, 0x2, 0, &rctx), 0);
  ASSERT_EQ(fi_tsend(ep_[kA], a, sizeof a, nullptr, addr_[kB], 0x1, &s1), 0);
  ASSERT_EQ(fi_tsend(ep_[kA], b, sizeof b, nullptr, addr_[kB], 0x2, &s2), 0);
  std::map<void*, fi_cq_data_entry> done;
  ASSERT_NO_FATAL_FAILURE(WaitCompletions({&rctx, &s1, &s2}, &done));
  EXPECT_STREQ(got, "tag-two");
  EXPECT_TRUE(done[&rctx].flags & FI_TAGGED);
}

}  // namespace
}  // namespace softuet_test
