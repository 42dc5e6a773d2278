// How a target acknowledges under a scripted sequence (2.2.6-b, RUD): a request sent again with the same PSN
// after its ACK (the initiator missed that ACK) is acknowledged again and delivered once. Two receives are
// posted and a second message follows the duplicate: the second receive must hold the second message, not a
// copy of the first. Knobs duplicate_delivery and no_ack break it.
#include "scripted_fixture.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {
namespace {

namespace w = uet::wire;

class ScriptedAck : public Scripted {};

TEST_P(ScriptedAck, ResentRequestIsAcknowledgedAgainAndDeliveredOnce) {
  covers({"2.2.6-b", "2.2.5.4.1-b"});
  UET_START_TARGET(FI_MSG);
  ASSERT_EQ(target.post_recv(1, 256), 0) << target.error();
  ASSERT_EQ(target.post_recv(2, 256), 0) << target.error();
  const std::vector<uint8_t> first = Bytes(64, 0xA1), second = Bytes(64, 0xB2);
  SentRequest a, b;
  ASSERT_NO_FATAL_FAILURE(Send(SesHeader::standard, w::ses_request_opcode::UET_SEND, first, {}, &a));
  std::string why;
  ASSERT_TRUE(peer.answer(a, 0, &why)) << "the request was not acknowledged: " << why;
  ASSERT_TRUE(peer.resend(a)) << peer.error();
  EXPECT_TRUE(peer.answer(a, 1, &why)) << "the request sent again with PSN " << psn_text(a.psn) << " (flags.retx) was not "
                                       << "acknowledged again: " << why;
  ASSERT_NO_FATAL_FAILURE(Send(SesHeader::standard, w::ses_request_opcode::UET_SEND, second, {}, &b));
  ExpectReturnCode(b, w::ses_return_code::RC_OK);
  observing(Side::target, "api: the target's receives");
  const RecvResult r1 = target.completion(1, kArrivalMs), r2 = target.completion(2, kArrivalMs);
  ASSERT_EQ(r1.state, RecvResult::completed) << "the first message did not arrive " << target.error();
  EXPECT_TRUE(r1.bytes == first) << "the first receive holds " << Shown(r1.bytes) << ", not the first message ("
                                 << Shown(first) << ")";
  ASSERT_EQ(r2.state, RecvResult::completed) << "the message after the duplicate did not arrive " << target.error();
  EXPECT_TRUE(r2.bytes != first) << "the request sent again with PSN " << psn_text(a.psn) << " was delivered a second time";
  EXPECT_TRUE(r2.bytes == second) << "the second receive holds " << Shown(r2.bytes) << ", not the message after the "
                                  << "duplicate (" << Shown(second) << ")";
}

UET_INSTANTIATE_SCRIPTED_RDM(ScriptedAck);

}  // namespace
}  // namespace uet::cases
