// RUDI (choice rudi-criteria): RMA writes without remote CQ data and reads to an IDEMPOTENT_SAFE key land
// correctly over RUDI, fail with the same CQ error entry as over RUD, and every other case keeps RUD. Which
// delivery mode a call uses is seen on the wire: a UDP socket of the test stands in for the peer FEP, and
// the first byte of the frame it receives holds the PDS type.
#include <rdma/fi_rma.h>

#include <cstring>
#include <numeric>
#include <set>

#include "fixture.hpp"
#include "softuet/fi_addr_uet.h"

namespace softuet_test {
namespace {

constexpr uint64_t kIdempotentSafe = uint64_t{1} << 63;
constexpr uint64_t kSafeKey = kIdempotentSafe | 0x5151;
constexpr uint64_t kPlainKey = 0x5152;
constexpr uint64_t kRcBadMkey = 0x1C;
constexpr uint64_t kRcBadAddr = 0x1D;
constexpr unsigned kRudReq = 2, kRudiReq = 4;

class SoftuetRudi : public SoftuetApi {
 protected:
  void TearDown() override {
    for (fid_mr* mr : mrs_) EXPECT_EQ(fi_close(&mr->fid), 0);
    SoftuetApi::TearDown();
  }
  void Register(void* buf, size_t len, uint64_t key) {
    fid_mr* mr = nullptr;
    const int r = fi_mr_reg(domain_, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, key, 0, &mr, nullptr);
    ASSERT_EQ(r, 0) << "fi_mr_reg: " << fi_err(r);
    mrs_.push_back(mr);
    ASSERT_EQ(fi_mr_bind(mr, &ep_[kB]->fid, 0), 0);
    ASSERT_EQ(fi_mr_enable(mr), 0);
  }
  static uint32_t PktId(const std::vector<uint8_t>& f) {
    return uint32_t{f[4]} << 24 | uint32_t{f[5]} << 16 | uint32_t{f[6]} << 8 | f[7];
  }
  static constexpr uint8_t kAllCaps = softuet::kCapAiBase | softuet::kCapAiFull | softuet::kCapHpc;

  std::vector<fid_mr*> mrs_;
};

TEST_F(SoftuetRudi, WritesAndReadsOfOneByteToOneMiBLand) {
  constexpr size_t kMax = size_t{1} << 20, kOffset = 24;
  std::vector<uint8_t> target(kMax + kOffset, 0), src(kMax), back(kMax);
  ASSERT_NO_FATAL_FAILURE(Register(target.data(), target.size(), kSafeKey));
  ASSERT_NO_FATAL_FAILURE(Enable());
  uint8_t seed = 1;
  for (size_t len : {size_t{1}, size_t{100}, size_t{4096}, size_t{4097}, size_t{3 * 4096 + 5}, size_t{65536}, kMax}) {
    std::iota(src.begin(), src.begin() + static_cast<ptrdiff_t>(len), seed++);
    int ctx_w = 0, ctx_r = 0;
    ASSERT_EQ(fi_write(ep_[kA], src.data(), len, nullptr, addr_[kB], kOffset, kSafeKey, &ctx_w), 0);
    ASSERT_EQ(Outcome(&ctx_w).err, 0) << len << " B write";
    ASSERT_EQ(std::memcmp(target.data() + kOffset, src.data(), len), 0) << len << " B write";
    std::fill(back.begin(), back.end(), 0);
    ASSERT_EQ(fi_read(ep_[kA], back.data(), len, nullptr, addr_[kB], kOffset, kSafeKey, &ctx_r), 0);
    ASSERT_EQ(Outcome(&ctx_r).err, 0) << len << " B read";
    ASSERT_EQ(std::memcmp(back.data(), src.data(), len), 0) << len << " B read";
  }
}

// A one-packet RMA to an OPTIMIZED key travels in the optimized header, which names the MR by its RKEY
// instead of the endpoint: over RUDI too.
TEST_F(SoftuetRudi, OptimizedHeaderOverRudi) {
  constexpr uint64_t kOptimizedSafe = kIdempotentSafe | (uint64_t{1} << 62) | 0x15;
  std::vector<uint8_t> target(256, 0), src(200), back(200, 0);
  std::iota(src.begin(), src.end(), uint8_t{40});
  ASSERT_NO_FATAL_FAILURE(Register(target.data(), target.size(), kOptimizedSafe));
  ASSERT_NO_FATAL_FAILURE(Enable());
  int ctx_w = 0, ctx_r = 0;
  ASSERT_EQ(fi_write(ep_[kA], src.data(), src.size(), nullptr, addr_[kB], 8, kOptimizedSafe, &ctx_w), 0);
  ASSERT_EQ(Outcome(&ctx_w).err, 0);
  ASSERT_EQ(fi_read(ep_[kA], back.data(), back.size(), nullptr, addr_[kB], 8, kOptimizedSafe, &ctx_r), 0);
  ASSERT_EQ(Outcome(&ctx_r).err, 0);
  EXPECT_EQ(back, src);
}

// A bad key, or a write beyond the MR, is the same CQ error entry over RUDI as over RUD (spec 2.2.5.6).
TEST_F(SoftuetRudi, FailuresGiveTheSameErrorEntryAsRud) {
  std::vector<uint8_t> safe(64), plain(64), src(128, 9);
  ASSERT_NO_FATAL_FAILURE(Register(safe.data(), safe.size(), kSafeKey));
  ASSERT_NO_FATAL_FAILURE(Register(plain.data(), plain.size(), kPlainKey));
  ASSERT_NO_FATAL_FAILURE(Enable());
  struct Case {
    uint64_t rudi_key, rud_key;
    size_t len;
    uint64_t rc;
  };
  for (const Case& c : {Case{kSafeKey + 7, kPlainKey + 7, 8, kRcBadMkey}, Case{kSafeKey, kPlainKey, 128, kRcBadAddr}}) {
    int ctx[4] = {};
    ASSERT_EQ(fi_write(ep_[kA], src.data(), c.len, nullptr, addr_[kB], 0, c.rudi_key, &ctx[0]), 0);
    const fi_cq_err_entry w_rudi = Outcome(&ctx[0]);
    ASSERT_EQ(fi_write(ep_[kA], src.data(), c.len, nullptr, addr_[kB], 0, c.rud_key, &ctx[1]), 0);
    const fi_cq_err_entry w_rud = Outcome(&ctx[1]);
    EXPECT_EQ(w_rudi.prov_errno, static_cast<int>(c.rc));
    EXPECT_EQ(w_rudi.err, w_rud.err);
    EXPECT_EQ(w_rudi.prov_errno, w_rud.prov_errno);
    EXPECT_EQ(w_rudi.flags, w_rud.flags);
    ASSERT_EQ(fi_read(ep_[kA], src.data(), c.len, nullptr, addr_[kB], 0, c.rudi_key, &ctx[2]), 0);
    const fi_cq_err_entry r_rudi = Outcome(&ctx[2]);
    ASSERT_EQ(fi_read(ep_[kA], src.data(), c.len, nullptr, addr_[kB], 0, c.rud_key, &ctx[3]), 0);
    const fi_cq_err_entry r_rud = Outcome(&ctx[3]);
    EXPECT_EQ(r_rudi.prov_errno, static_cast<int>(c.rc));
    EXPECT_EQ(r_rudi.err, r_rud.err);
    EXPECT_EQ(r_rudi.prov_errno, r_rud.prov_errno);
  }
}

TEST_F(SoftuetRudi, SafeKeyToHpcPeerUsesRudiWithDistinctPktIds) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  const fi_addr_t peer = FakePeer(kAllCaps);
  std::vector<uint8_t> src(3 * 4096, 1);
  int ctx = 0;
  ASSERT_EQ(fi_write(ep_[kA], src.data(), src.size(), nullptr, peer, 0, kSafeKey, &ctx), 0);
  std::set<uint32_t> ids;
  for (int i = 0; i < 3; ++i) {
    const std::vector<uint8_t> f = Receive();
    ASSERT_EQ(PdsType(f), kRudiReq);
    ids.insert(PktId(f));
  }
  EXPECT_EQ(ids.size(), 3u);
}

TEST_F(SoftuetRudi, KeyWithoutIdempotentSafeKeepsRud) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  const fi_addr_t peer = FakePeer(kAllCaps);
  uint8_t byte = 1;
  int ctx = 0;
  ASSERT_EQ(fi_write(ep_[kA], &byte, 1, nullptr, peer, 0, kPlainKey, &ctx), 0);
  EXPECT_EQ(PdsType(Receive()), kRudReq);
}

TEST_F(SoftuetRudi, WriteWithRemoteCqDataKeepsRud) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  const fi_addr_t peer = FakePeer(kAllCaps);
  uint8_t byte = 1;
  int ctx = 0;
  ASSERT_EQ(fi_writedata(ep_[kA], &byte, 1, nullptr, 0x77, peer, 0, kSafeKey, &ctx), 0);
  EXPECT_EQ(PdsType(Receive()), kRudReq);
}

TEST_F(SoftuetRudi, PeerWithoutHpcKeepsRud) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  const fi_addr_t peer = FakePeer(softuet::kCapAiBase | softuet::kCapAiFull);
  uint8_t byte = 1;
  int ctx = 0;
  ASSERT_EQ(fi_read(ep_[kA], &byte, 1, nullptr, peer, 0, kSafeKey, &ctx), 0);
  EXPECT_EQ(PdsType(Receive()), kRudReq);
}

// An endpoint asked for ordering keeps ROD for everything (digest G.1).
class SoftuetRudiOrdered : public SoftuetRudi {
 protected:
  void AdjustHints(fi_info* hints) override { hints->tx_attr->msg_order = FI_ORDER_RAW; }
};

TEST_F(SoftuetRudiOrdered, OrderedEndpointKeepsRod) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  const fi_addr_t peer = FakePeer(kAllCaps);
  uint8_t byte = 1;
  int ctx = 0;
  ASSERT_EQ(fi_write(ep_[kA], &byte, 1, nullptr, peer, 0, kSafeKey, &ctx), 0);
  EXPECT_EQ(PdsType(Receive()), 3u);
}

}  // namespace
}  // namespace softuet_test
