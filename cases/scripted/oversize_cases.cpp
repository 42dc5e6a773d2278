// A request packet larger than what the target can take (more than its posted receive holds, or more than a
// buffer it keeps for a packet) is either delivered, as far as the receive holds it, with a response that
// says how much was placed, or refused with an error return code and nothing delivered: a target must never
// answer RC_OK for a message that reached no buffer (2.2.5.4.1-b: the message is what the receive gets).
// Knob truncated_request_acked (RC_OK, and a packet of more than 1 KiB dropped) breaks both cases.
#include <rdma/fi_errno.h>

#include <algorithm>

#include "scripted_fixture.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {
namespace {

namespace w = uet::wire;

// One packet's payload: more than 1 KiB and within a 1500-byte link's MTU with UET, UDP and IP headers.
constexpr size_t kPacketPayload = 1200;

class ScriptedOversize : public Scripted {
 protected:
  // Posts a receive of `posted` bytes and sends one packet of kPacketPayload bytes (the standard header, which
  // every target reads: the other formats have cases of their own).
  void SendLargePacket(size_t posted) {
    UET_START_TARGET(FI_MSG);
    ASSERT_EQ(target.post_recv(1, posted), 0) << target.error();
    message = Bytes(kPacketPayload, 0x77);
    ASSERT_NO_FATAL_FAILURE(Send(SesHeader::standard, w::ses_request_opcode::UET_SEND, message, {}, &sent));
    const auto rsp = ResponseTo(sent);
    ASSERT_TRUE(rsp);
    rc = *rsp->get(w::Field::uet_ses_rsp_return_code);
    modified_length = rsp->get(w::Field::uet_ses_rsp_modified_length).value_or(0);
  }
  // An error return code: the refused message must not be in the receive, which takes the next message.
  void ExpectNothingDelivered() {
    const std::vector<uint8_t> next = Bytes(32, 0x33);
    SentRequest after;
    ASSERT_NO_FATAL_FAILURE(Send(SesHeader::standard, w::ses_request_opcode::UET_SEND, next, {}, &after));
    ExpectReturnCode(after, w::ses_return_code::RC_OK);
    observing(Side::target, "api: the target's receive");
    const RecvResult r = target.completion(1, kArrivalMs);
    ASSERT_EQ(r.state, RecvResult::completed) << "after the refusal (" << RcName(rc) << ") the next message did not "
                                                 "reach the posted receive " << target.error();
    EXPECT_TRUE(r.bytes == next) << "the posted receive holds " << Shown(r.bytes) << ", not the message after the one "
                                 << "the target refused with " << RcName(rc) << " (" << Shown(next) << ")";
  }
  // RC_OK: the message reached the receive, whole or truncated to what it holds (an FI_ETRUNC completion),
  // and modified_length says how many bytes were placed.
  void ExpectDelivered(size_t posted) {
    observing(Side::target, "api: the target's receive");
    const RecvResult r = target.completion(1, kArrivalMs);
    ASSERT_NE(r.state, RecvResult::none) << "the target answered RC_OK (modified_length " << modified_length
                                         << ") and its posted receive of " << posted << " bytes got nothing within "
                                         << kArrivalMs << " ms " << target.error();
    const size_t placed = std::min(posted, message.size());
    if (r.state == RecvResult::failed) {
      ASSERT_EQ(r.err, FI_ETRUNC) << "the receive failed (prov_errno " << r.prov_errno << ") although the target "
                                     "answered RC_OK";
      EXPECT_LT(posted, message.size()) << "a receive large enough for the message was truncated";
    }
    const std::vector<uint8_t> expected(message.begin(), message.begin() + static_cast<long>(placed));
    EXPECT_TRUE(r.bytes == expected) << "the receive holds " << Shown(r.bytes) << ", not the message's first " << placed
                                     << " (" << Shown(expected) << ")";
    observing(Side::target, "wire: the target's SES response");
    EXPECT_EQ(modified_length, r.bytes.size()) << "RC_OK's modified_length is not what the receive got";
  }
  void ExpectDeliveredOrRefused(size_t posted) {
    ASSERT_NO_FATAL_FAILURE(SendLargePacket(posted));
    if (IsSkipped()) return;
    note("answer", RcName(rc) + ", modified_length " + std::to_string(modified_length));
    if (rc == w::ses_return_code::RC_OK) {
      ExpectDelivered(posted);
    } else {
      ExpectNothingDelivered();
    }
  }

  SentRequest sent;
  std::vector<uint8_t> message;
  uint64_t rc = 0, modified_length = 0;
};

TEST_P(ScriptedOversize, PacketLargerThanTheReceiveIsTruncatedOrRefused) {
  covers({"2.2.5.4.1-b"});
  ExpectDeliveredOrRefused(256);
}

TEST_P(ScriptedOversize, FullPacketIsDeliveredIntactOrRefused) {
  covers({"2.2.5.4.1-b"});
  ExpectDeliveredOrRefused(4096);
}

UET_INSTANTIATE_SCRIPTED_RDM(ScriptedOversize);

}  // namespace
}  // namespace uet::cases
