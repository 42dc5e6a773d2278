// fi_tagged between two processes (UEC 1.0 §2.2.5.4.2): exact matching, the opcode and match bits on
// the wire, wildcards (refused with AI Full only, matched with HPC), directed tagged receives.
#include <rdma/fi_tagged.h>

#include "area_traits.hpp"
#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 2);

namespace uet::cases {
namespace {

namespace w = uet::wire;

class Tagged : public TwoSided {
 protected:
  void SetUp() override {
    UET_REQUIRE_PAIR_CLAIMS_KIND();
    UET_NOT_APPLICABLE_IF(!tagged_required(), reason::kNotClaimedProfile, "the initiator or the target claims neither ai_full nor hpc (fi_tagged: 2.2.5.4.2-b)");
  }
  void TSend(const void* buf, size_t len, uint64_t tag) {
    int ctx = 0;
    ASSERT_EQ(me.post([&] { return fi_tsend(me.ep, buf, len, nullptr, dest, tag, &ctx); }), 0);
    const Outcome o = me.wait(&ctx);
    ASSERT_EQ(o.state, Outcome::completed) << "tsend: err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  }
};

TEST_P(Tagged, ReceiveTakesOnlyItsTag) {
  covers({"2.2.5.4.2-b", "2.2.5.4.2-c", "2.2.5.4.2-d", "2.2.5.4.2-g", "2.2.5.4.2.1-d"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_TAGGED));
  constexpr uint64_t kTag = 0xA5A5000000002ull;
  // The neighbour tag differs in bit 0: a provider that sends the wrong match bits fills it instead.
  ASSERT_EQ(target.post_recv(1, 64, true, kTag ^ 1), 0) << target.error();
  ASSERT_EQ(target.post_recv(2, 64, true, kTag), 0) << target.error();
  Capture cap;
  const bool wire = manifest().uet && cap.start();
  const char msg[] = "tagged";
  ASSERT_NO_FATAL_FAILURE(TSend(msg, sizeof msg, kTag));
  const RecvResult r = target.completion(2, kArrivalMs);
  ASSERT_EQ(r.state, RecvResult::completed) << "the receive for the message's tag " << target.error();
  EXPECT_EQ(r.tag, kTag);
  EXPECT_TRUE(r.flags & FI_TAGGED) << "flags 0x" << std::hex << r.flags;
  EXPECT_EQ(std::string(r.bytes.begin(), r.bytes.end() - 1), msg);
  EXPECT_EQ(target.completion(1, 0).state, RecvResult::none) << "a receive for another tag took the message";
  if (manifest().uet) {
    ASSERT_TRUE(wire) << cap.error();
    const auto f = cap.find([](const WireFrame& f) { return is_request(f); });
    ASSERT_TRUE(f) << "no SES request captured";
    EXPECT_EQ(f->get(w::Field::uet_ses_opcode), w::ses_request_opcode::UET_TAGGED_SEND);
    EXPECT_EQ(f->get(w::Field::uet_ses_match_bits), kTag);
  }
}

TEST_P(Tagged, WildcardReceiveIsRefusedWithAiFullOnly) {
  covers({"2.2.5.4.2-d", "2.2.5.4.2-e", "2.2.2-b"});
  UET_REQUIRE_UET_PROVIDER();
  // The receive is the target's: its own profile decides (Table 2-4 footnote 1).
  UET_NOT_APPLICABLE_IF(target_manifest().claims_profile("hpc") || !target_manifest().claims_profile("ai_full"), reason::kNotClaimedProfile,
                        "applies to a target claiming AI Full without HPC");
  UET_OPEN_BOTH(Spec(FI_MSG | FI_TAGGED));
  const int rc = target.post_recv(1, 64, true, 0x100, 0xFF);
  EXPECT_LT(rc, 0) << "a tagged receive with ignore bits was accepted";
}

TEST_P(Tagged, WildcardReceiveMatchesWithHpc) {
  covers({"2.2.5.4.2-f", "2.2.2-b"});
  UET_NOT_APPLICABLE_IF(target_manifest().uet && !target_manifest().claims_profile("hpc"), reason::kNotClaimedProfile,
                        "wildcards are an HPC feature and the target does not claim HPC");
  UET_OPEN_BOTH(Spec(FI_MSG | FI_TAGGED));
  ASSERT_EQ(target.post_recv(1, 64, true, 0x100, 0xFF), 0) << target.error();
  const char msg[] = "wild";
  ASSERT_NO_FATAL_FAILURE(TSend(msg, sizeof msg, 0x1AB));
  const RecvResult r = target.completion(1, kArrivalMs);
  ASSERT_EQ(r.state, RecvResult::completed) << target.error();
  EXPECT_EQ(r.tag, 0x1ABu);
}

// A tagged receive directed at another initiator (this one's UET address with another initiator ID
// and PIDonFEP) is passed over; the one directed at this initiator takes the message.
TEST_P(Tagged, DirectedReceiveMatchesTheInitiator) {
  covers({"2.2.5.4.2.1-a", "2.2.5.4.2.1-g", "2.2.5.4.2.1-e", "2.2.2-c"});
  UET_REQUIRE_UET_PROVIDER();
  UET_OPEN_BOTH(Spec(FI_MSG | FI_TAGGED | FI_DIRECTED_RECV));
  fi_addr_t src_other = FI_ADDR_NOTAVAIL, src_me = FI_ADDR_NOTAVAIL;
  ASSERT_NO_FATAL_FAILURE(InsertOtherInitiatorAndMe(&src_other, &src_me));
  ASSERT_EQ(target.post_recv(1, 64, true, 7, 0, src_other), 0) << target.error();
  ASSERT_EQ(target.post_recv(2, 64, true, 7, 0, src_me), 0) << target.error();
  const char msg[] = "directed";
  ASSERT_NO_FATAL_FAILURE(TSend(msg, sizeof msg, 7));
  EXPECT_EQ(target.completion(2, kArrivalMs).state, RecvResult::completed)
      << "the receive directed at this initiator " << target.error();
  EXPECT_EQ(target.completion(1, 0).state, RecvResult::none) << "the receive directed at another initiator took it";
}

// A receive posted with src_addr FI_ADDR_UNSPEC does not match on ses.initiator (2.2.5.4.2.1-c): with
// FI_DIRECTED_RECV on and another initiator first in the target's AV, it still takes this initiator's
// message.
TEST_P(Tagged, ReceiveFromAnyAddressTakesEveryInitiator) {
  covers({"2.2.5.4.2.1-c"});
  UET_REQUIRE_UET_PROVIDER();
  UET_OPEN_BOTH(Spec(FI_TAGGED | FI_DIRECTED_RECV));
  fi_addr_t src_other = FI_ADDR_NOTAVAIL, src_me = FI_ADDR_NOTAVAIL;
  ASSERT_NO_FATAL_FAILURE(InsertOtherInitiatorAndMe(&src_other, &src_me));
  constexpr uint64_t kTag = 0x0A11;
  ASSERT_EQ(target.post_recv(1, 64, true, kTag, 0, FI_ADDR_UNSPEC), 0) << target.error();
  const char msg[] = "from anyone";
  ASSERT_NO_FATAL_FAILURE(TSend(msg, sizeof msg, kTag));
  const RecvResult r = target.completion(1, kArrivalMs);
  ASSERT_EQ(r.state, RecvResult::completed) << "the FI_ADDR_UNSPEC receive " << target.error();
  EXPECT_EQ(std::string(r.bytes.begin(), r.bytes.end() - 1), msg);
}

UET_INSTANTIATE_TWO_SIDED_RDM(Tagged);

TEST(TaggedDgram, DgramEndpointsOfferNoTagged) {
  covers({"2.2.5.4.2-a"});
  UET_REQUIRE_UET_PROVIDER();
  InfoPtr hints = hints_for(FI_EP_DGRAM);
  hints->caps = FI_MSG | FI_TAGGED;
  EXPECT_FALSE(getinfo(hints.get())) << "fi_getinfo offered a DGRAM endpoint with FI_TAGGED";
}

}  // namespace
}  // namespace uet::cases
