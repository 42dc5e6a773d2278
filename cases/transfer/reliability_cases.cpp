// Reliable delivery under loss (UEC 1.0 §2.2.6): the harness drops a counted pattern of UET packets in
// both directions of the pair (this area's traits' loss_every below: nftables `numgen inc`, its offset from
// the run's seed, described in the cell plan and the report), so the same packets drop on every run. An
// RDM endpoint (RUD) delivers every message exactly once whatever was lost; one asked for send ordering
// (ROD) delivers them in the order they were sent. The capture shows the retransmissions that made up
// for the loss. Without loss applied (no namespace pair) the checks prove nothing: not applicable.
#include <cstdlib>
#include <map>

#include "area_traits.hpp"
#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .loss_every = 7, .weight = 2);

namespace uet::cases {
namespace {

namespace w = uet::wire;

constexpr int kMessages = 48;
constexpr size_t kSize = 1500;  // more than one packet of some providers, one of others: both paths count

std::vector<uint8_t> message(int i) {
  std::vector<uint8_t> m(kSize);
  for (size_t b = 0; b < m.size(); ++b) m[b] = static_cast<uint8_t>(i * 31 + b * 7 + 1);
  m[0] = static_cast<uint8_t>(i);  // the sequence number, so a receive says which message it got
  return m;
}

class Reliability : public TwoSided {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    UET_REQUIRE_PAIR_CLAIMS_KIND();
    UET_NOT_APPLICABLE_IF(!cell_plan().loss, reason::kNoLossApplied, "no loss was applied to the pair (the harness applies a counted drop "
                                             "pattern where the placement can impair the test link)");
    note("loss", cell_plan().loss->pattern);
  }

  // Sends every message (the receives are posted first) and gives, per receive, the sequence number it
  // got; fails the case when a send does not complete or a receive stays empty.
  void SendAll(std::vector<int>* out) {
    std::vector<int>& got = *out;
    for (int i = 0; i < kMessages; ++i) {
      if (target.post_recv(1 + i, kSize) != 0) {
        ADD_FAILURE() << "post_recv " << i << ": " << target.error();
        return;
      }
    }
    ASSERT_TRUE(cap.start()) << cap.error();
    std::vector<std::vector<uint8_t>> data;
    std::vector<int> ctx(kMessages);
    for (int i = 0; i < kMessages; ++i) {
      data.push_back(message(i));
      const ssize_t rc = me.post([&] { return fi_send(me.ep, data.back().data(), kSize, nullptr, dest, &ctx[i]); });
      if (rc != 0) {
        ADD_FAILURE() << "fi_send " << i << ": " << fi_err(rc);
        return;
      }
    }
    for (int i = 0; i < kMessages; ++i) {
      const Outcome o = me.wait(&ctx[i], 20000);
      if (o.state != Outcome::completed) {
        ADD_FAILURE() << "send " << i << " did not complete under loss (" << (o.state == Outcome::failed ? "failed" : "no completion")
                      << "): the lost packets were not made up for";
        return;
      }
    }
    for (int i = 0; i < kMessages; ++i) {
      const RecvResult r = target.completion(1 + i, kArrivalMs);
      if (r.state != RecvResult::completed || r.bytes.size() != kSize) {
        ADD_FAILURE() << "receive " << i << " got nothing " << target.error();
        return;
      }
      const int seq = r.bytes[0];
      EXPECT_EQ(r.bytes, message(seq)) << "receive " << i << " holds message " << seq << " damaged";
      got.push_back(seq);
    }
  }
  EndpointSpec Ordered(uint64_t msg_order) const {
    EndpointSpec spec = Spec(FI_MSG);
    spec.msg_order = msg_order;
    return spec;
  }

  // The capture shows the loss was made up for: at least one request went again (flags.retx).
  void ExpectRetransmissions() {
    const auto retx = cap.find([](const WireFrame& f) { return is_request(f) && f.get(w::Field::uet_pds_flags_retx) == 1u; }, 0);
    EXPECT_TRUE(retx) << "no retransmitted request on the wire although " << cell_plan().loss->pattern
                      << ": the loss did not reach the provider, or it recovered without resending";
  }

  // No message arrives twice: nothing more completes after the last one.
  void ExpectNoMore() {
    ASSERT_EQ(target.post_recv(1 + kMessages, kSize), 0) << target.error();
    EXPECT_EQ(target.completion(1 + kMessages, 300).state, RecvResult::none)
        << "a receive beyond the last message was filled: a message was delivered twice";
  }

  Capture cap;
};

// RUD: every message exactly once, in any order (2.2.6-b).
TEST_P(Reliability, EveryMessageArrivesOnceUnderLoss) {
  covers({"2.2.6-b"});
  UET_OPEN_BOTH(Ordered(0));
  std::vector<int> got;
  ASSERT_NO_FATAL_FAILURE(SendAll(&got));
  if (got.size() != kMessages) return;
  std::map<int, int> times;
  for (int seq : got) ++times[seq];
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(times[i], 1) << "message " << i << " arrived " << times[i] << " times";
  ExpectNoMore();
  ExpectRetransmissions();
}

// ROD: asked for send-after-send ordering, the messages arrive in the order they were sent (2.2.6-c/d).
TEST_P(Reliability, OrderedMessagesArriveInOrderUnderLoss) {
  covers({"2.2.6-c", "2.2.6-d"});
  UET_OPEN_BOTH(Ordered(FI_ORDER_SAS));
  std::vector<int> got;
  ASSERT_NO_FATAL_FAILURE(SendAll(&got));
  if (got.size() != kMessages) return;
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(got[i], i) << "receive " << i << " got message " << got[i];
  ExpectNoMore();
  ExpectRetransmissions();
}

UET_INSTANTIATE_TWO_SIDED_RDM(Reliability);

}  // namespace
}  // namespace uet::cases
