// The scripted area's fixture: the real target (a Target peer process: an endpoint of the kind under test
// with the direct JobID kScriptJob, or its indirect one, its receives, MRs and completions) and the suite's scripted peer
// (common/sides/scripted_peer.hpp) playing its initiator. Only the target's provider and claims matter: no
// initiator provider is opened, so what these cases find is the target's, whoever initiates in the cell.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scripted_peer.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {

// The JobID of the target endpoint (direct method), which the scripted requests carry unless a case says
// otherwise.
inline constexpr uint32_t kScriptJob = 0x5C5C01;

class Scripted : public ::testing::TestWithParam<Kind> {
 protected:
  bool rdm() const { return GetParam().ep_type == FI_EP_RDM; }

  // Starts the target with an endpoint of `caps` and opens the scripted peer toward it (RUD for an RDM
  // endpoint, UUD for a DGRAM one). Call through UET_START_TARGET.
  void StartTarget(uint64_t caps) {
    const Manifest& theirs = target_manifest();
    UET_NOT_APPLICABLE_IF(!theirs.uet, reason::kNotUetProvider, "the scripted peer speaks UET and the target, " << theirs.name << " ("
                                           << theirs.provider << "), does not claim UET");
    UET_REQUIRE_TARGET_CLAIMS_KIND();
    EndpointSpec spec;
    spec.type = GetParam().ep_type;
    spec.caps = caps;
    // The requests must carry the endpoint's JobID: the direct method gives it one the case knows; a target
    // without it is given the JobID its manifest's indirect_job_id_environment assigns; a target that claims
    // neither has the JobID its endpoint without an auth key has, none at all where it claims no method
    // (job_id_methods.hpp): the requests carry JobID 0. The rules checked here are not about how a JobID is
    // assigned (that is judged by kIndirectJudge).
    std::map<std::string, std::string> env;
    if (theirs.claims_job_method("direct")) {
      spec.method = JobMethod::direct;
      spec.job = job_ = kScriptJob;
    } else if (!theirs.claims_job_method("indirect")) {
      job_ = 0;
      note("JobID", "0: the target " + theirs.name + " claims no direct or indirect JobID method (job_id_methods), so "
                    "its endpoint has no JobID; that every UET provider has the indirect method is judged by " +
                    kIndirectJudge);
    } else {
      UET_NOT_APPLICABLE_IF(theirs.indirect_job_id_environment.empty() || !theirs.indirect_job_id, reason::kManifestLacksHook,
                            "the target " << theirs.name << " claims no direct JobID method and its manifest does "
                            "not say which JobID the indirect method assigns (indirect_job_id_environment, "
                            "indirect_job_id): the scripted requests cannot carry the endpoint's JobID");
      split_env(theirs.indirect_job_id_environment, &env, nullptr);
      job_ = *theirs.indirect_job_id;
      note("JobID", "the target's indirect JobID " + std::to_string(job_) + " (its manifest's indirect_job_id)");
    }
    observing(Side::target, "api: the target's endpoint");
    ASSERT_TRUE(target.start(spec, env)) << target.error();
    ASSERT_TRUE(peer.open(target.name(), job_, rdm() ? ScriptedDelivery::rud : ScriptedDelivery::uud))
        << peer.error();
  }
  void TearDown() override { expect_clean_end(target.finish(), target.error()); }
  uint32_t job_ = kScriptJob;  // the target endpoint's JobID, which the scripted requests carry

  // `len` bytes that differ from packet to packet (`seed`), so that a receive shows which request filled it.
  static std::vector<uint8_t> Bytes(size_t len, uint8_t seed) {
    std::vector<uint8_t> b(len);
    for (size_t i = 0; i < len; ++i) b[i] = static_cast<uint8_t>(seed + i * 7);
    return b;
  }
  // "64 bytes 11 18 1f 26 2d 34 3b 42...": what a buffer holds, short enough for a message.
  static std::string Shown(const std::vector<uint8_t>& b) {
    std::string out = std::to_string(b.size()) + " bytes";
    for (size_t i = 0; i < b.size() && i < 8; ++i) out += " " + to_hex(&b[i], 1);
    return out + (b.size() > 8 ? "..." : "");
  }
  // Sends a request (ScriptedPeer::send), failing the case when the peer cannot.
  void Send(SesHeader header, uint64_t opcode, std::span<const uint8_t> payload, const Partial& fields,
            SentRequest* sent) {
    auto r = peer.send(header, opcode, payload, fields);
    ASSERT_TRUE(r) << peer.error();
    *sent = std::move(*r);
  }
  // "RC_BAD_PID (0x1a)": a return code by its spec/wire.yaml name.
  static std::string RcName(uint64_t rc) {
    const char* name = wire::enum_name(wire::Enum::ses_return_code, rc);
    char code[24];
    std::snprintf(code, sizeof code, "0x%llx", static_cast<unsigned long long>(rc));
    return std::string(name ? name : "an unknown return code") + " (" + code + ")";
  }
  // The SES response to `request` with return code `rc` (RUD only), else a failure naming what came back.
  void ExpectReturnCode(const SentRequest& request, uint64_t rc) {
    std::string why;
    EXPECT_TRUE(peer.expect(request, {{wire::Field::uet_ses_rsp_return_code, rc}}, &why))
        << "no SES response " << RcName(rc) << " to the request in the " << ses_header_name(request.header) << ": "
        << why;
  }
  // The first SES response to `request`, whatever its return code; nullopt after a failure naming what came back.
  std::optional<WireFrame> ResponseTo(const SentRequest& request) {
    std::string why;
    auto r = peer.find(request, is_response, &why);
    EXPECT_TRUE(r) << "no SES response to the request in the " << ses_header_name(request.header) << ": " << why;
    return r;
  }

  Target target;
  ScriptedPeer peer;
};

}  // namespace uet::cases

#define UET_START_TARGET(caps)                       \
  ASSERT_NO_FATAL_FAILURE(StartTarget(caps)); \
  if (IsSkipped()) return

// Every kind (RDM and DGRAM), whatever the initiator's manifest claims: the cases ask the target's claims.
// A suite about what a target answers has only RDM: a UUD datagram is not answered (2.2.6-a).
#define UET_INSTANTIATE_SCRIPTED_RDM(suite) \
  INSTANTIATE_TEST_SUITE_P(Claimed, suite, ::testing::Values(::uet::cases::rdm_kind()), \
                           [](const auto& info) { return info.param.name; })

// Every kind (RDM and DGRAM), whatever the initiator's manifest claims: the cases ask the target's claims.
#define UET_INSTANTIATE_SCRIPTED(suite)                                                                       \
  INSTANTIATE_TEST_SUITE_P(Claimed, suite,                                                                    \
                           ::testing::Values(::uet::cases::Kind{FI_EP_RDM, "rdm"}, ::uet::cases::Kind{FI_EP_DGRAM, "dgram"}), \
                           [](const auto& info) { return info.param.name; })
