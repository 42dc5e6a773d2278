// fi_rma between two processes (UEC 1.0 §2.2.5.4.3) and the error entries of refused accesses
// (§2.2.5.6): data lands where it should and nowhere else; a write beyond the MR or with an unknown key
// fails with err = the libfabric code and prov_errno = the SES return code.
#include <rdma/fi_rma.h>

#include <numeric>

#include "area_traits.hpp"
#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 2);

namespace uet::cases {
namespace {

namespace w = uet::wire;

class Rma : public TwoSided {
 protected:
  void SetUp() override {
    UET_REQUIRE_PAIR_CLAIMS_KIND();
  }
  // A write of `len` bytes at `off` of the target MR; its outcome at the initiator.
  Outcome Write(const std::vector<uint8_t>& src, const RemoteMr& mr, uint64_t off, uint64_t key_delta = 0) {
    int ctx = 0;
    const ssize_t rc = me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, mr.base + off, mr.key + key_delta, &ctx); });
    EXPECT_EQ(rc, 0) << fi_refused("fi_write", rc);
    return rc ? Outcome{} : me.wait(&ctx);
  }
};

TEST_P(Rma, WriteThenReadBack) {
  covers({"2.2.5.4.3-b"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA));
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 12000, 0, "any", &mr)) << target.error();
  std::vector<uint8_t> src(5000), back(5000, 0);
  std::iota(src.begin(), src.end(), uint8_t{11});
  Capture cap;
  const bool wire = manifest().uet && cap.start();
  ASSERT_EQ(Write(src, mr, 100).state, Outcome::completed);
  // The read is ordered after the write at the target: once it completes, the write has landed too
  // (a write completion may only mean the data left the initiator).
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_read(me.ep, back.data(), back.size(), nullptr, dest, mr.base + 100, mr.key, &ctx); }), 0);
  ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
  EXPECT_EQ(back, src);
  EXPECT_EQ(target.read_mr(1, 100, src.size()), src) << "the written bytes at the target";
  EXPECT_EQ(target.read_mr(1, 99, 1), std::vector<uint8_t>{0}) << "the byte before was written";
  EXPECT_EQ(target.read_mr(1, 100 + src.size(), 1), std::vector<uint8_t>{0}) << "the byte after was written";
  if (manifest().uet) {
    ASSERT_TRUE(wire) << cap.error();
    const auto wr = cap.find([](const WireFrame& f) { return is_request(f); });
    ASSERT_TRUE(wr) << "no SES request captured";
    EXPECT_EQ(wr->get(w::Field::uet_ses_opcode), w::ses_request_opcode::UET_WRITE);
    const auto rd = cap.find([](const WireFrame& f) {
      return f.get(w::Field::uet_ses_opcode) == w::ses_request_opcode::UET_READ;
    });
    EXPECT_TRUE(rd) << "fi_read sent no UET_READ";
  }
}

TEST_P(Rma, WritedataCompletesAtTheTargetWithTheData) {
  covers({"2.2.5.4.3-b"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA));
  UET_NOT_APPLICABLE_IF(!manifest().uet && me.info->domain_attr->cq_data_size == 0, reason::kNonUetProviderLacks,
                        manifest().provider << " offers no remote CQ data");
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 64, 0, "any", &mr)) << target.error();
  const std::vector<uint8_t> src(16, 0x42);
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_writedata(me.ep, src.data(), src.size(), nullptr, 0xDA7A, dest, mr.base, mr.key, &ctx); }), 0);
  ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
  const RecvResult r = target.completion(-1, kArrivalMs);
  ASSERT_EQ(r.state, RecvResult::completed) << "no target completion for the remote CQ data " << target.error();
  EXPECT_TRUE(r.flags & FI_REMOTE_CQ_DATA);
  EXPECT_EQ(r.data, 0xDA7Au);
  EXPECT_EQ(target.read_mr(1, 0, 16), src);
}

TEST_P(Rma, WriteBeyondTheMrFailsAndWritesNothing) {
  covers({"2.2.5.4.3-b", "2.2.5.6-a", "2.2.5.6-c"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA));
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 64, 0, "any", &mr)) << target.error();
  const Outcome o = Write(std::vector<uint8_t>(16, 1), mr, 56);
  if (manifest().uet) {
    expect_error_entry(o, w::ses_return_code::RC_BAD_ADDR);
  }  // other providers may complete a write at the initiator before the target refuses it
  EXPECT_EQ(target.read_mr(1, 0, 64), std::vector<uint8_t>(64, 0)) << "the target MR was written";
}

TEST_P(Rma, WriteWithAnUnknownKeyFails) {
  covers({"2.2.5.6-a", "2.2.5.6-c"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA));
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 64, 0, "any", &mr)) << target.error();
  const Outcome o = Write(std::vector<uint8_t>(8, 1), mr, 0, 0x77);
  if (manifest().uet) {
    expect_error_entry(o, w::ses_return_code::RC_BAD_MKEY);
  }  // other providers may complete a write at the initiator before the target refuses it
  EXPECT_EQ(target.read_mr(1, 0, 64), std::vector<uint8_t>(64, 0));
}

UET_INSTANTIATE_TWO_SIDED_RDM(Rma);

TEST(RmaDgram, DgramEndpointsOfferNoRma) {
  covers({"2.2.5.4.3-a", "2.2.5.4.4-a"});
  UET_REQUIRE_UET_PROVIDER();
  for (uint64_t cap : {FI_RMA, FI_ATOMIC}) {
    InfoPtr hints = hints_for(FI_EP_DGRAM);
    hints->caps = FI_MSG | cap;
    EXPECT_FALSE(getinfo(hints.get())) << "fi_getinfo offered a DGRAM endpoint with " << fi_tostr(&cap, FI_TYPE_CAPS);
  }
}

}  // namespace
}  // namespace uet::cases
