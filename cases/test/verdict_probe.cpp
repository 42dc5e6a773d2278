// Cases that break the ways real cases do, so that pytest/cases/test_verdict_rules.py sees the rules of the
// verdict recorder (common/claims/verdict.cpp) on the lines the harness reads. No provider is opened: not an area
// (its name is not uet-cases-*), built and run by that test only.
#include <gtest/gtest.h>
#include <rdma/fi_errno.h>

#include "area_traits.hpp"
#include "conformance.hpp"
#include "endpoint.hpp"

// Not an area: it declares traits because the case binaries' main prints them.
UET_AREA_TRAITS(.processes = 1);

namespace uet::cases {
namespace {

// A helper's skip that its caller does not stop at.
void NotApplicableHere() { UET_NOT_APPLICABLE(reason::kNotClaimedFeature, "the probe's helper found the case not applicable"); }

TEST(VerdictProbe, NotApplicableThenAFailure) {
  NotApplicableHere();
  ADD_FAILURE() << "what ran after the case was found not applicable";
}

TEST(VerdictProbe, AFailureThenNotApplicable) {
  ADD_FAILURE() << "the failure itself";
  NotApplicableHere();
}

// The target reports it got nothing; the capture, drained as the case ends, holds the initiator's request
// with a diagnostic.
TEST(VerdictProbe, TargetSilenceAfterAMalformedRequest) {
  observing(Side::target, kTargetObservedBasis);
  ADD_FAILURE() << "the target got no message";
  evidence_diagnostic(Side::initiator, "job_id_zero", "uet.ses.std", "uet.ses.job_id", 61, 0, "a request", 1);
}

TEST(VerdictProbe, TargetSilenceAfterAWellFormedRequest) {
  observing(Side::target, kTargetObservedBasis);
  ADD_FAILURE() << "the target got no message";
}

// The case looked at the target last; then the initiator's own call says it does not do the operation.
TEST(VerdictProbe, TheInitiatorsOwnUnsupportedCall) {
  observing(Side::target, kTargetObservedBasis);
  Endpoint me;
  EXPECT_EQ(me.post([] { return ssize_t{-FI_EOPNOTSUPP}; }), 0);
}

// A skip that reads like UET_NOT_APPLICABLE's but is not one: it gave no code apart, so it is an error.
TEST(VerdictProbe, ASkipThatOnlyReadsNotApplicable) {
  GTEST_SKIP() << "not applicable [not-claimed-feature]: written by hand";
}

// Of the skips before a failure the last decides; one after the failure decides nothing.
TEST(VerdictProbe, TheLastNotApplicableBeforeAFailureDecides) {
  []() { UET_NOT_APPLICABLE(reason::kNotClaimedFeature, "the first helper's"); }();
  []() { UET_NOT_APPLICABLE(reason::kNoSuchCombination, "the second helper's, [x]: with brackets"); }();
  ADD_FAILURE() << "what ran after the case was found not applicable";
  []() { UET_NOT_APPLICABLE(reason::kNotClaimedProfile, "after the failure"); }();
}

// A claim the provider cannot keep, then the failure it causes; the statements the case checks.
TEST(VerdictProbe, AClaimItCannotKeep) {
  covers({"2.2.4.1-s", "2.2.4.4-a"});
  claimed_but_unsupported("the probe's claimed feature");
  claimed_but_unsupported("what follows from it");
  ADD_FAILURE() << "the endpoint does not open";
}

}  // namespace
}  // namespace uet::cases
