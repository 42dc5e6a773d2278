// A request whose {JobID, PIDonFEP, resource index} names no endpoint of the target is refused with the SES
// return code that says which part it could not find (spec/wire.yaml choice endpoint-jobid-mismatch), and
// writes nothing into the buffer the target posted: the scripted peer sends such a request, then one the
// endpoint takes, which must be what the buffer holds. An initiator provider never sends these (its
// requests address what its AV holds), so only a scripted peer reaches this target rule.
#include <functional>

#include "scripted_fixture.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {
namespace {

namespace w = uet::wire;

class ScriptedRefusal : public Scripted {
 protected:
  // A nonzero value of `bits` bits other than `v` (index and PIDonFEP 0 are not what a case means to name).
  static uint64_t Another(uint64_t v, unsigned bits) { return v % ((uint64_t{1} << bits) - 1) + 1; }
  // Sends a request with the fields `wrong` gives (from the target endpoint's address) over the endpoint's
  // addressing: it must be refused with `rc`, and the next request, addressed right, must be what the posted
  // receive holds.
  void ExpectRefusedWith(const std::function<Partial(const ScriptedPeer&)>& wrong, uint64_t rc) {
    UET_START_TARGET(FI_MSG);
    rests_on_choice("endpoint-jobid-mismatch");
    ASSERT_EQ(target.post_recv(1, 256), 0) << target.error();
    const std::vector<uint8_t> refused = Bytes(64, 0x11), taken = Bytes(64, 0x22);
    SentRequest bad, good;
    ASSERT_NO_FATAL_FAILURE(Send(SesHeader::standard, w::ses_request_opcode::UET_SEND, refused, wrong(peer), &bad));
    ExpectReturnCode(bad, rc);
    ASSERT_NO_FATAL_FAILURE(Send(SesHeader::standard, w::ses_request_opcode::UET_SEND, taken, {}, &good));
    ExpectReturnCode(good, w::ses_return_code::RC_OK);
    observing(Side::target, "api: the target's receive");
    const RecvResult r = target.completion(1, kArrivalMs);
    ASSERT_EQ(r.state, RecvResult::completed) << "the request addressed to the endpoint after the refused one did "
                                                 "not reach the posted receive " << target.error();
    EXPECT_TRUE(r.bytes != refused) << "the refused request was written into the posted receive";
    EXPECT_TRUE(r.bytes == taken) << "the posted receive holds " << Shown(r.bytes) << ", not the request the endpoint "
                                  << "takes (" << Shown(taken) << ")";
  }
};

// No endpoint of the target takes the JobID: RC_BAD_JOB_ID. Breaks with knob endpoint_ignores_job_id.
TEST_P(ScriptedRefusal, RequestWithAnotherJobIdIsBadJobId) {
  covers({"2.2.4.3-a", "2.2.4.3.1-b"});
  ExpectRefusedWith([this](const ScriptedPeer&) { return Partial{{w::Field::uet_ses_job_id, job_ ^ 0x010101}}; },
                    w::ses_return_code::RC_BAD_JOB_ID);
}

// The JobID is the endpoint's, the PIDonFEP not its process's: RC_BAD_PID. Breaks with knob
// refusal_always_bad_job_id.
TEST_P(ScriptedRefusal, RequestForAnotherPidOnFepIsBadPid) {
  covers({"2.2.4.3-a"});
  ExpectRefusedWith([](const ScriptedPeer& p) {
    return Partial{{w::Field::uet_ses_pid_on_fep, Another(p.target_pid_on_fep(), w::k_pid_on_fep_bits)}};
  }, w::ses_return_code::RC_BAD_PID);
}

// The JobID and PIDonFEP are the endpoint's, the resource index none of its endpoints': RC_BAD_INDEX. Breaks with knob refusal_always_bad_job_id.
TEST_P(ScriptedRefusal, RequestForAnotherResourceIndexIsBadIndex) {
  covers({"2.2.4.3-a"});
  ExpectRefusedWith([](const ScriptedPeer& p) {
    return Partial{{w::Field::uet_ses_resource_index, Another(p.target_resource_index(), w::k_resource_index_bits)}};
  }, w::ses_return_code::RC_BAD_INDEX);
}

UET_INSTANTIATE_SCRIPTED_RDM(ScriptedRefusal);

}  // namespace
}  // namespace uet::cases
