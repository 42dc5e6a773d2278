// The one rule of every area for JobID methods (spec 2.2.4.1): what a case needs of a side against what the
// side's manifest claims (job_id_methods, resolved by harness/inputs/manifest.py's claimed_job_methods, which the wire
// oracle reads too).
//
// - An endpoint, domain or MR opened without an auth key needs no method: it has the JobID its provider gives by
//   default (the indirect method's), or none where the manifest claims no method at all (job_id_methods: []):
//   its requests carry JobID 0, and the scripted peer sends it JobID 0.
// - A case that needs method M of a side (an auth_key: direct; FI_AV_AUTH_KEY: av; the JobID the indirect method
//   assigns: indirect) runs when the side claims M. When it does not:
//     a profile it claims requires M (HPC: av, 2.2.4.1-s): the case runs, and fails as claimed but unsupported;
//     M is the indirect method, which every UET provider has (2.2.4.1-p): one case judges it (kIndirectJudge),
//       every other is not applicable, naming that case;
//     else: not applicable, naming the side and M.
// - A case that gives a side a JobID of its own choosing needs kChosen: the direct method where the side claims
//   it, else the AV method (chosen_job_method).
// - A side that claims no method at all is granted no JobID: the cases of its privileged entity and of the
//   fallback JobID are not applicable (UET_REQUIRE_TAKES_JOB_IDS).
// - A pair of which one side claims no method and the other has JobIDs shares no JobID: no request of one is
//   taken by the other, so its two-process cases are not applicable (UET_REQUIRE_SHARED_JOB_IDS), but for the judge.
// - JobID 0 in the requests of a side that claims no method (the decoder's job_id_zero) is what its manifest
//   declares: judged once, by kIndirectJudge, not again in every case that captures one (declared_no_job_id).
// Every not applicable here is [not-claimed-job-id-method].
#pragma once

#include <string>

#include "conformance.hpp"

namespace uet::cases {

// The case that judges the indirect method of a side that claims none (cases/transfer/authz_cases.cpp).
inline constexpr const char* kIndirectJudge = "Authz.IndirectJobIdIsOnTheWire";
// What a case asks for when it gives a side a JobID of its choosing (direct, else av).
inline constexpr const char* kChosen = "chosen";

// Empty when the running case may have JobID method `method` (indirect, direct, av, kChosen) of `side` (and,
// where only a claimed profile asks for it, its failure is marked claimed but unsupported); else why it cannot,
// naming `who` ("the target") and the method: the case is then not applicable.
std::string job_method_missing(const Manifest& side, const std::string& method, const std::string& who);
// The method that gives `side` a JobID the case chooses: "direct" where it claims it, else "av".
std::string chosen_job_method(const Manifest& side);
// True when `sender`'s manifest claims no JobID method: a JobID 0 (job_id_zero) in its frames is then noted
// instead of failing the running case; its frames' other diagnostics are judged as anyone's.
bool declared_no_job_id(Side sender);
// Empty when the two sides of a pair can have a JobID in common; else why not (one takes no JobID at all).
std::string no_shared_job_id(const Manifest& initiator, const Manifest& target);
// The method of a domain's or MR's auth_key_size: direct (3), av (FI_AV_AUTH_KEY), else empty (no auth key: none
// needed; any other size is the case's own bad input).
std::string auth_key_method(size_t auth_key_size);
// Empty when `side` takes JobIDs at all; else why the case (about granting it one) is not applicable.
std::string takes_no_job_id(const Manifest& side, const std::string& who);

}  // namespace uet::cases

#define UET_REQUIRE_JOB_METHOD(side, method, who)                                                              \
  if (const std::string uet_missing_ = ::uet::cases::job_method_missing(side, method, who); !uet_missing_.empty()) \
  UET_NOT_APPLICABLE(::uet::cases::reason::kNotClaimedJobIdMethod, uet_missing_)

// The provider under test (a single-process case) must have the method of a domain or MR of `auth_key_size`.
#define UET_REQUIRE_AUTH_KEY_METHOD(auth_key_size)                                                              \
  if (const std::string uet_method_ = ::uet::cases::auth_key_method(auth_key_size); !uet_method_.empty()) {     \
    UET_REQUIRE_JOB_METHOD(::uet::cases::manifest(), uet_method_, "the provider");                            \
  }

#define UET_REQUIRE_SHARED_JOB_IDS(initiator, target)                                                          \
  if (const std::string uet_apart_ = ::uet::cases::no_shared_job_id(initiator, target); !uet_apart_.empty())   \
  UET_NOT_APPLICABLE(::uet::cases::reason::kNotClaimedJobIdMethod, uet_apart_)

#define UET_REQUIRE_TAKES_JOB_IDS(side, who)                                                                    \
  if (const std::string uet_none_ = ::uet::cases::takes_no_job_id(side, who); !uet_none_.empty())              \
  UET_NOT_APPLICABLE(::uet::cases::reason::kNotClaimedJobIdMethod, uet_none_)
