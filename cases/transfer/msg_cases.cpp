// fi_msg between two processes (UEC 1.0 §2.2.5.4.1): data integrity, message boundaries and posted
// order, remote CQ data, directed receives, and the SES opcode on the wire.
#include <rdma/fi_tagged.h>

#include <cstring>
#include <numeric>

#include "area_traits.hpp"
#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 6);

namespace uet::cases {
namespace {

namespace w = uet::wire;

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), seed);
  return v;
}

class Msg : public TwoSided {
 protected:
  // A payload that spans several packets on RDM and fits one datagram on DGRAM.
  size_t big() const { return GetParam().ep_type == FI_EP_RDM ? 10000 : 1000; }
  void Send(const std::vector<uint8_t>& data, int* ctx) {
    ASSERT_EQ(me.post([&] { return fi_send(me.ep, data.data(), data.size(), nullptr, dest, ctx); }), 0);
    const Outcome o = me.wait(ctx);
    ASSERT_EQ(o.state, Outcome::completed) << "send: err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  }
};

TEST_P(Msg, SendArrivesWholeInThePostedBuffer) {
  covers({"2.2.5.4.1-a", "2.2.5.4.1-b"});
  UET_OPEN_BOTH(Spec(FI_MSG));
  ASSERT_EQ(target.post_recv(1, big() + 64), 0) << target.error();
  const auto data = pattern(big(), 3);
  int ctx = 0;
  ASSERT_NO_FATAL_FAILURE(Send(data, &ctx));
  const RecvResult r = target.completion(1, kArrivalMs);
  ASSERT_EQ(r.state, RecvResult::completed) << target.error();
  EXPECT_EQ(r.len, data.size());
  EXPECT_TRUE(r.flags & FI_RECV);
  EXPECT_EQ(r.bytes, data);
}

TEST_P(Msg, MessagesKeepTheirBoundariesInPostingOrder) {
  covers({"2.2.5.4.1-b"});
  UET_OPEN_BOTH(Spec(FI_MSG));
  ASSERT_EQ(target.post_recv(1, 256), 0) << target.error();
  ASSERT_EQ(target.post_recv(2, 256), 0) << target.error();
  const auto first = pattern(100, 1), second = pattern(40, 9);
  int c1 = 0, c2 = 0;
  ASSERT_NO_FATAL_FAILURE(Send(first, &c1));
  ASSERT_NO_FATAL_FAILURE(Send(second, &c2));
  const RecvResult r1 = target.completion(1, kArrivalMs), r2 = target.completion(2, kArrivalMs);
  ASSERT_EQ(r1.state, RecvResult::completed) << target.error();
  ASSERT_EQ(r2.state, RecvResult::completed) << target.error();
  EXPECT_EQ(r1.bytes, first) << "the first message goes to the buffer posted first, alone";
  EXPECT_EQ(r2.bytes, second);
}

TEST_P(Msg, SenddataDeliversRemoteCqData) {
  covers({"2.2.5.4.1-d"});
  UET_OPEN_BOTH(Spec(FI_MSG));
  UET_NOT_APPLICABLE_IF(!manifest().uet && me.info->domain_attr->cq_data_size == 0, reason::kNonUetProviderLacks,
                        manifest().provider << " offers no remote CQ data (cq_data_size 0)");
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  Capture cap;
  const bool wire = manifest().uet && cap.start();
  const char msg[] = "with data";
  const uint64_t data = 0x5EED1234;
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_senddata(me.ep, msg, sizeof msg, nullptr, data, dest, &ctx); }), 0);
  ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
  const RecvResult r = target.completion(1, kArrivalMs);
  ASSERT_EQ(r.state, RecvResult::completed) << target.error();
  EXPECT_TRUE(r.flags & FI_REMOTE_CQ_DATA) << "flags 0x" << std::hex << r.flags;
  EXPECT_EQ(r.data, data);
  if (manifest().uet) {
    ASSERT_TRUE(wire) << cap.error();
    const auto f = cap.find([](const WireFrame& f) { return is_request(f); });
    ASSERT_TRUE(f) << "no SES request captured";
    EXPECT_EQ(f->get(w::Field::uet_ses_hd), 1u);
    EXPECT_EQ(f->get(w::Field::uet_ses_header_data), data);
  }
}

TEST_P(Msg, SendUsesTheTable2_22Opcode) {
  covers({"2.2.5.4.1-d", "2.2.5.4.1-a"});
  UET_REQUIRE_UET_PROVIDER();
  UET_OPEN_BOTH(Spec(FI_MSG));
  Capture cap;
  ASSERT_TRUE(cap.start()) << cap.error();
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  int ctx = 0;
  ASSERT_NO_FATAL_FAILURE(Send(pattern(32, 0), &ctx));
  const auto f = cap.find([](const WireFrame& f) { return is_request(f); });
  ASSERT_TRUE(f) << "no SES request captured";
  const uint64_t want = GetParam().ep_type == FI_EP_RDM ? w::ses_request_opcode::UET_SEND
                                                        : w::ses_request_opcode::UET_DATAGRAM_SEND;
  EXPECT_EQ(f->get(w::Field::uet_ses_opcode), want);
}

// A directed receive (FI_DIRECTED_RECV) for another initiator is passed over; one for this initiator
// takes the message. The other initiator is this one's UET address with another initiator ID and
// PIDonFEP (a UET address, so UET providers only).
UET_RDM_ONLY(Msg, DirectedReceiveTakesOnlyItsInitiator, "directed receives are checked on RDM endpoints");
TEST_P(Msg, DirectedReceiveTakesOnlyItsInitiator) {
  covers({"2.2.5.4.1-b", "2.2.4.3.1-e", "2.2.2-c"});
  UET_REQUIRE_UET_PROVIDER();
  UET_OPEN_BOTH(Spec(FI_MSG | FI_DIRECTED_RECV));
  fi_addr_t src_other = FI_ADDR_NOTAVAIL, src_me = FI_ADDR_NOTAVAIL;
  ASSERT_NO_FATAL_FAILURE(InsertOtherInitiatorAndMe(&src_other, &src_me));
  ASSERT_EQ(target.post_recv(1, 64, false, 0, 0, src_other), 0) << target.error();
  ASSERT_EQ(target.post_recv(2, 64, false, 0, 0, src_me), 0) << target.error();
  const auto data = pattern(48, 5);
  int ctx = 0;
  ASSERT_NO_FATAL_FAILURE(Send(data, &ctx));
  const RecvResult mine = target.completion(2, kArrivalMs);
  EXPECT_EQ(mine.state, RecvResult::completed) << "the receive directed at this initiator " << target.error();
  EXPECT_EQ(mine.bytes, data);
  EXPECT_EQ(target.completion(1, 0).state, RecvResult::none) << "the receive directed at another initiator took it";
}

// A message that arrives before its receive is posted (2.2.5.4.1.1-a/b): the target may keep it, defer
// it (deferrable send) or pull it later (rendezvous); whichever it does, the initiator must carry it
// through and the receive posted later gets it whole. One small and one multi-packet message (the
// latter at or above softuet's rendezvous size, so deferral and rendezvous are exercised too).
UET_RDM_ONLY(Msg, UnexpectedMessageArrivesInTheReceivePostedLater, "a datagram that finds no posted receive may be dropped (FI_EP_DGRAM is unreliable)");
TEST_P(Msg, UnexpectedMessageArrivesInTheReceivePostedLater) {
  covers({"2.2.5.4.1.1-a", "2.2.5.4.1.1-b", "2.2.5.4.1-a"});
  UET_OPEN_BOTH(Spec(FI_MSG));
  // Kept as the evidence of what the initiator sent: a message the target never got because its request was
  // malformed is the initiator's failure, not the target's (verdict.cpp).
  Capture cap;
  if (manifest().uet) (void)cap.start();
  int id = 0;
  for (const size_t len : {size_t{64}, big()}) {
    SCOPED_TRACE("message of " + std::to_string(len) + " bytes");
    const auto data = pattern(len, static_cast<uint8_t>(len));
    int ctx = 0;
    ASSERT_EQ(me.post([&] { return fi_send(me.ep, data.data(), data.size(), nullptr, dest, &ctx); }), 0);
    // A kept message completes its send now; a deferred or pulled one only once a receive takes it, so
    // the wait is bounded and its outcome not asserted here.
    Outcome o = me.wait(&ctx, kArrivalMs);
    ASSERT_NE(o.state, Outcome::failed) << "send: err " << o.error.err << ", prov_errno " << o.error.prov_errno;
    ASSERT_EQ(target.post_recv(++id, len + 64), 0) << target.error();
    const RecvResult r = target.completion(id, 15000);
    ASSERT_EQ(r.state, RecvResult::completed) << "the receive posted after the message " << target.error();
    EXPECT_EQ(r.bytes, data);
    if (o.state != Outcome::completed) o = me.wait(&ctx, 15000);
    EXPECT_EQ(o.state, Outcome::completed) << "send: err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  }
}

UET_INSTANTIATE_TWO_SIDED(Msg);

}  // namespace
}  // namespace uet::cases
