"""Issue 35, item 3: target-side checks are not gated by a JobID the provider cannot give, and one rule decides
what a case needs of a side's JobID methods in every area (cases/common/claims/job_id_methods.hpp).

softuet with no JobID at all (personalities/no-job-id-at-all.yaml: job_id_methods: [], every request carries
JobID 0) is tested by the scripted peer with JobID 0 (its target checks have verdicts, and a missing refusal is
caught), the JobID statements fail once, by Authz.IndirectJobIdIsOnTheWire, and no result lacks a hook. With
the indirect method alone (no-job-id.yaml), the av and mr areas' auth-key cases are not applicable naming the
method, as the authz area's are, whatever fi_getinfo offers."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.results.results import inconclusive  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a pair's sides run in network namespaces (root)")

SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
PERSONALITIES = REPO / "cases" / "manifests" / "personalities"
NO_JOB_ID_AT_ALL = PERSONALITIES / "no-job-id-at-all.yaml"
INDIRECT_ONLY = PERSONALITIES / "no-job-id.yaml"
AREAS = ["scripted", "authz", "av", "mr"]
JUDGE = "Claimed/Authz.IndirectJobIdIsOnTheWire/rdm"
# The scripted peer's RDM cases (test_scripted_peer.py names what each checks).
SCRIPTED_RDM = [
    "Claimed/ScriptedHeaders.TargetTakesASendInTheStandardHeader/rdm",
    "Claimed/ScriptedHeaders.TargetTakesASendInTheSmallMessageHeader/rdm",
    "Claimed/ScriptedHeaders.TargetTakesAWriteInTheSmallRmaHeader/rdm",
    "Claimed/ScriptedHeaders.TargetTakesAWriteInTheOptimizedHeader/rdm",
    "Claimed/ScriptedRefusal.RequestWithAnotherJobIdIsBadJobId/rdm",
    "Claimed/ScriptedRefusal.RequestForAnotherPidOnFepIsBadPid/rdm",
    "Claimed/ScriptedRefusal.RequestForAnotherResourceIndexIsBadIndex/rdm",
    "Claimed/ScriptedOversize.PacketLargerThanTheReceiveIsTruncatedOrRefused/rdm",
    "Claimed/ScriptedOversize.FullPacketIsDeliveredIntactOrRefused/rdm",
    "Claimed/ScriptedAck.ResentRequestIsAcknowledgedAgainAndDeliveredOnce/rdm",
]
AV_METHOD_CASES = [f"Claimed/AvAuthKey.{name}/{kind}" for name in
                   ("InsertedAuthKeysLookUpAsInserted", "AddressInsertedWithAnAuthKey", "BadAuthKeyCallsAreRefused")
                   for kind in ("rdm", "dgram")] + ["Mr.RegattrWithAnAvAuthKey"]


class TestProviderWithoutJobId:
    def test_no_result_lacks_a_hook(self, cell_run):
        got = cell_run(NO_JOB_ID_AT_ALL, areas=AREAS).by_case()
        assert got, "the run gave no results"
        assert [(r.case, r.reason) for r in got.values() if r.reason_code == "manifest-lacks-hook"] == []

    def test_the_scripted_target_checks_run_with_job_id_zero(self, cell_run):
        got = cell_run(NO_JOB_ID_AT_ALL, areas=AREAS).by_case()
        assert {c: got[c].verdict for c in SCRIPTED_RDM} == {c: "pass" for c in SCRIPTED_RDM}, \
            [(c, got[c].reason or got[c].message) for c in SCRIPTED_RDM if got[c].verdict != "pass"]
        assert {got[c].notes.get("JobID", "")[:2] for c in SCRIPTED_RDM} == {"0:"}

    def test_the_job_id_statements_fail_once_by_name(self, cell_run):
        got = cell_run(NO_JOB_ID_AT_ALL, areas=AREAS).by_case()
        failed = [r for r in got.values() if r.verdict != "pass" and r.verdict != "not_applicable"]
        assert [r.case for r in failed] == [JUDGE], [(r.case, r.verdict, r.message) for r in failed]
        judge = got[JUDGE]
        assert {"2.2.4.4-a", "2.2.4.1-p"} <= set(judge.statements)
        assert judge.blamed_side == "target"
        assert judge.detail == "claimed but unsupported: the indirect JobID method, which every UET provider has (2.2.4.1-p)"
        assert "the target's request carries ses.job_id 0, no JobID" in judge.message

    def test_what_needs_a_job_id_is_not_applicable_naming_why(self, cell_run):
        got = cell_run(NO_JOB_ID_AT_ALL, areas=AREAS).by_case()
        buffer = got["Claimed/Authz.IndirectEndpointBufferTakesItsAssignedJobId/rdm"]
        assert (buffer.verdict, buffer.reason_code) == ("not_applicable", "not-claimed-job-id-method")
        assert buffer.reason == ("not applicable: the target no-job-id-at-all does not claim the indirect JobID method "
                                 "(job_id_methods), which this case needs; that every UET provider has it (2.2.4.1-p) "
                                 "is judged by Authz.IndirectJobIdIsOnTheWire")
        fallback = got["Fallback.FallbackJobIdIsOnTheWire"]
        assert (fallback.verdict, fallback.reason_code) == ("not_applicable", "not-claimed-job-id-method")
        assert fallback.reason.startswith("not applicable: the target no-job-id-at-all takes no JobID (job_id_methods: [])")

    # A knob of the target that breaks a target-side rule: the scripted peer catches it with JobID 0, blamed on it.
    @pytest.mark.parametrize("knob,case", [
        ("endpoint_ignores_job_id", "Claimed/ScriptedRefusal.RequestWithAnotherJobIdIsBadJobId/rdm"),
        ("truncated_request_acked", "Claimed/ScriptedOversize.PacketLargerThanTheReceiveIsTruncatedOrRefused/rdm"),
    ])
    def test_a_broken_target_rule_is_caught_with_job_id_zero(self, cell_run, knob, case):
        got = cell_run(NO_JOB_ID_AT_ALL, areas=["scripted"], knob=knob).by_case()
        # A target a knob keeps silent cannot be told from one the host kept from running: on a host that starved
        # the case it is an inconclusive error, held against nobody (cases/common/claims/liveness.hpp); never a pass.
        if inconclusive(got[case]):
            return
        assert (got[case].verdict, got[case].blamed_side) == ("fail", "target"), (got[case].reason, got[case].message)


class TestPairWithAndWithoutJobIds:
    def test_the_cell_says_once_why_no_request_is_taken(self, cell_run):
        """softuet (JobIDs) against a target without any: their endpoints share no JobID; every two-process case says
        so, none fails or is blamed."""
        got = cell_run(SOFTUET, NO_JOB_ID_AT_ALL, areas=["msg"]).by_case()
        assert got
        assert {(r.verdict, r.reason_code, r.reason) for r in got.values()} == {(
            "not_applicable", "not-claimed-job-id-method",
            "not applicable: the target no-job-id-at-all takes no JobID (job_id_methods: []) and the initiator softuet "
            "has JobIDs: their endpoints share none, so neither takes the other's requests (JobID 0 is judged by "
            "Authz.IndirectJobIdIsOnTheWire)")}


class TestIndirectOnly:
    def test_av_and_mr_auth_key_cases_are_not_applicable_naming_the_method(self, cell_run):
        got = cell_run(INDIRECT_ONLY, areas=["av", "mr"]).by_case()
        assert {c: (got[c].verdict, got[c].reason_code, got[c].reason) for c in AV_METHOD_CASES} == {
            c: ("not_applicable", "not-claimed-job-id-method",
                "not applicable: the provider no-job-id does not claim the av JobID method (job_id_methods), which "
                "this case needs") for c in AV_METHOD_CASES}

    def test_the_authz_cases_need_the_same_of_the_initiator(self, cell_run):
        """IndirectJobIdIsOnTheWire and the IndirectEndpointBuffer cases give the initiator a JobID of their choosing:
        both need the direct or the AV method of it, as every other authz case that does."""
        got = cell_run(INDIRECT_ONLY, areas=["authz"]).by_case()
        cases = [JUDGE, "Claimed/Authz.IndirectEndpointBufferTakesItsAssignedJobId/rdm",
                 "Claimed/Authz.IndirectEndpointBufferRefusesAnotherJobId/rdm"]
        assert {c: (got[c].verdict, got[c].reason) for c in cases} == {
            c: ("not_applicable", "not applicable: the initiator no-job-id claims neither the direct nor the av JobID "
                "method (job_id_methods), one of which this case needs to give it a JobID of its choosing")
            for c in cases}
