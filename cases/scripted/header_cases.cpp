// A target takes a request in every SES header format an initiator may use (2.2.10.4-a, Table 2-38), each
// built by the scripted peer, so a target that reads only some formats fails here whichever formats its
// usual initiators send: a send in the standard header and in the small message header, a write in the
// small RMA header and in the optimized non-matching header. Judged by what the target's receive or MR
// holds and by its SES response. Knob standard_header_only breaks all but the standard header.
#include <rdma/fi_domain.h>

#include "area_traits.hpp"
#include "scripted_fixture.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 2.5);

namespace uet::cases {
namespace {

namespace w = uet::wire;

class ScriptedHeaders : public Scripted {
 protected:
  // A one-packet send (a datagram on DGRAM) in `header` reaches a posted receive intact and, over RUD, is
  // answered RC_OK.
  void ExpectSendTaken(SesHeader header) {
    UET_START_TARGET(FI_MSG);
    ASSERT_EQ(target.post_recv(1, 256), 0) << target.error();
    const std::vector<uint8_t> data = Bytes(64, static_cast<uint8_t>(0x30 + static_cast<int>(header)));
    Partial fields;
    uint64_t opcode = w::ses_request_opcode::UET_SEND;
    if (!rdm()) {
      opcode = w::ses_request_opcode::UET_DATAGRAM_SEND;
      if (header == SesHeader::standard &&
          w::rule_holds(w::VersionRule::datagram_message_id_zero, manifest().checked_spec_version))
        fields.emplace_back(w::Field::uet_ses_message_id, 0);
    }
    SentRequest sent;
    ASSERT_NO_FATAL_FAILURE(Send(header, opcode, data, fields, &sent));
    observing(Side::target, "api: the target's receive");
    const RecvResult r = target.completion(1, kArrivalMs);
    ASSERT_EQ(r.state, RecvResult::completed) << "a one-packet " << (rdm() ? "send" : "datagram") << " in the "
                                              << ses_header_name(header) << " did not reach the posted receive "
                                              << target.error();
    EXPECT_TRUE(r.bytes == data) << "the receive holds " << Shown(r.bytes) << ", the request carried " << Shown(data);
    if (rdm()) ExpectReturnCode(sent, w::ses_return_code::RC_OK);
  }
  // A one-packet write of 64 bytes in `header` to an MR of the target lands at the offset it names.
  void ExpectWriteTaken(SesHeader header) {
    UET_NOT_APPLICABLE_IF(!rdm(), reason::kNoSuchCombination, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
    UET_START_TARGET(FI_MSG | FI_RMA);
    RemoteMr mr;
    const bool optimized = header == SesHeader::optimized;
    ASSERT_TRUE(target.register_mr(1, 256, 0, optimized ? "optimized+any" : "any", &mr)) << target.error();
    if (optimized) {
      UET_NOT_APPLICABLE_IF(!(mr.key & (uint64_t{1} << w::k_mr_key_optimized_bit)), reason::kNotObservable,
                            "the target's key is not OPTIMIZED (a SHOULD of 2.2.5.3.4.1-o, checked there)");
      const auto caps = layout_of(target_manifest()).get(target.name(), AddrField::caps);
      UET_NOT_APPLICABLE_IF(!(caps.value_or(0) & (1u << w::k_cap_optimized_header)), reason::kNotObservable,
                            "the target FEP does not take the optimized header (address capability bit 7)");
    }
    constexpr uint64_t kAt = 16;
    const std::vector<uint8_t> data = Bytes(64, optimized ? 0x51 : 0x52);
    // The optimized header names the MR by its RKEY in ses.resource_index (choice optimized-header-criteria).
    const Partial fields = optimized ? Partial{{w::Field::uet_ses_resource_index, mr.key & w::k_mr_key_optimized_rkey_mask},
                                               {w::Field::uet_ses_buffer_offset, mr.base + kAt}}
                                     : Partial{{w::Field::uet_ses_memory_key, mr.key},
                                               {w::Field::uet_ses_buffer_offset, mr.base + kAt}};
    if (optimized) rests_on_choice("optimized-header-criteria");
    SentRequest sent;
    ASSERT_NO_FATAL_FAILURE(Send(header, w::ses_request_opcode::UET_WRITE, data, fields, &sent));
    ExpectReturnCode(sent, w::ses_return_code::RC_OK);
    observing(Side::target, "api: the target's MR");
    const std::vector<uint8_t> landed = target.read_mr(1, kAt, data.size());
    EXPECT_TRUE(landed == data) << "a one-packet write in the " << ses_header_name(header) << " did not land at offset "
                                << kAt << " of the MR: it holds " << Shown(landed) << ", the request carried " << Shown(data);
  }
};

TEST_P(ScriptedHeaders, TargetTakesASendInTheStandardHeader) {
  covers({"2.2.10.4-a", "2.2.5.4.1-b"});
  ExpectSendTaken(SesHeader::standard);
}

TEST_P(ScriptedHeaders, TargetTakesASendInTheSmallMessageHeader) {
  covers({"2.2.10.4-a", "2.2.5.4.1-b"});
  UET_NOT_APPLICABLE_IF(!rdm() && !w::rule_holds(w::VersionRule::datagram_medium_header, manifest().checked_spec_version), reason::kNoSuchCombination,
                        "before spec 1.0.3 a datagram takes the standard header " << per_choice("small-message-criteria"));
  ExpectSendTaken(SesHeader::medium);
}

UET_RDM_ONLY(ScriptedHeaders, TargetTakesAWriteInTheSmallRmaHeader, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(ScriptedHeaders, TargetTakesAWriteInTheSmallRmaHeader) {
  covers({"2.2.10.4-a", "2.2.5.4.3-b"});
  ExpectWriteTaken(SesHeader::medium);
}

UET_RDM_ONLY(ScriptedHeaders, TargetTakesAWriteInTheOptimizedHeader, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(ScriptedHeaders, TargetTakesAWriteInTheOptimizedHeader) {
  covers({"2.2.10.4-a", "2.2.5.4.3-b"});
  ExpectWriteTaken(SesHeader::optimized);
}

UET_INSTANTIATE_SCRIPTED(ScriptedHeaders);

}  // namespace
}  // namespace uet::cases
