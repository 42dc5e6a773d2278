"""Issue 35, item 6: the verdict recorder's rules on cases that break the ways real ones do
(cases/test/verdict_probe.cpp, run with a cell plan from the harness's own writer, its lines read by the
harness's own reader). A not-applicable found inside a case decides it when it comes first; a failure that
comes first stands with its own message. A target's silence after the initiator's malformed request, and an
initiator's own call that says it does not do the operation, are the initiator's.

Issue 36: what a verdict line says, it says in fields, never in text to parse back: the not-applicable code and
why that UET_NOT_APPLICABLE handed over, the claim a side cannot keep, the list of statements."""
import json
import os
import subprocess

import pytest

from harness.run import cell_plan
from harness.results.results import result_of_line

CASE = "VerdictProbe."


@pytest.fixture(scope="module")
def probe_lines(build_dir, tmp_path_factory, resolved_side):
    """{case name: the verdict line that ended it} of one run of the probe."""
    binary = build_dir / "cases" / "test" / "uet_cases_verdict_probe"
    if not binary.exists():
        pytest.fail(f"{binary} is not built: run ./uet build")
    out = tmp_path_factory.mktemp("probe")
    # The probe opens no provider: the sides are read with the plan, and not used.
    plan = cell_plan.write(out / "probe.plan.json", cell_plan.make(
        cell="probe", area="probe", initiator_manifest=out / "unused.json", target_manifest=out / "unused.json",
        initiator_record=resolved_side(), target_record=resolved_side(port=4794),
        results=out / "probe.jsonl", captures=out / "captures"))
    env = {k: v for k, v in os.environ.items() if k != "UET_CASES_VERDICT_KEY_FD"}
    env[cell_plan.PLAN_VARIABLE] = str(plan)
    subprocess.run([str(binary)], env=env, capture_output=True, text=True, timeout=120)
    ended = [json.loads(line) for line in (out / "probe.jsonl").read_text().splitlines()]
    return {e["case"].removeprefix(CASE): e for e in ended if e["event"] == "end"}


@pytest.fixture(scope="module")
def probe(probe_lines):
    """{case name: Result} of one run of the probe, read by the harness's reader."""
    return {case: result_of_line(e, cell="probe", area="probe", binary="uet_cases_verdict_probe")
            for case, e in probe_lines.items()}


class TestNotApplicableInsideACase:
    def test_a_not_applicable_that_comes_first_decides_the_case(self, probe):
        r = probe["NotApplicableThenAFailure"]
        assert (r.verdict, r.reason_code, r.reason) == (
            "not_applicable", "not-claimed-feature", "not applicable: the probe's helper found the case not applicable")
        assert r.blamed_side is None

    def test_a_failure_that_comes_first_stands_with_its_own_message(self, probe):
        r = probe["AFailureThenNotApplicable"]
        assert (r.verdict, r.reason, r.reason_code) == ("fail", None, None)
        assert r.message.endswith("Failed\nthe failure itself"), r.message
        assert "not applicable" not in r.message


class TestTargetSilence:
    def test_after_the_initiators_malformed_request_it_is_the_initiators(self, probe):
        r = probe["TargetSilenceAfterAMalformedRequest"]
        assert (r.verdict, r.blamed_side) == ("fail", "initiator")
        assert r.blame_basis == ("wire: the initiator sent a malformed frame (job_id_zero in uet.ses.std): what the "
                                 "target did not get is the initiator's")

    def test_after_a_well_formed_request_it_is_the_targets(self, probe):
        r = probe["TargetSilenceAfterAWellFormedRequest"]
        assert (r.verdict, r.blamed_side, r.blame_basis) == ("fail", "target", "api: what the target observed or did")


class TestOwnUnsupportedCall:
    def test_is_blamed_on_the_initiator_whatever_the_case_looked_at_before(self, probe):
        r = probe["TheInitiatorsOwnUnsupportedCall"]
        assert (r.verdict, r.blamed_side) == ("fail", "initiator")
        assert r.blame_basis == "api: the initiator's own call returned -95 (Operation not supported)"


class TestFieldsNotText:
    def test_a_skip_that_only_reads_not_applicable_is_an_error(self, probe):
        r = probe["ASkipThatOnlyReadsNotApplicable"]
        assert (r.verdict, r.reason_code, r.reason) == (
            "error", None, "skipped without a reason code: not applicable [not-claimed-feature]: written by hand")

    def test_the_last_not_applicable_before_a_failure_decides(self, probe):
        r = probe["TheLastNotApplicableBeforeAFailureDecides"]
        assert (r.verdict, r.reason_code, r.reason) == (
            "not_applicable", "no-such-combination", "not applicable: the second helper's, [x]: with brackets")

    def test_a_claim_it_cannot_keep_is_a_field_the_first_mark_standing(self, probe_lines, probe):
        line = probe_lines["AClaimItCannotKeep"]
        assert (line["verdict"], line["claimed_unsupported"], line["detail"]) == (
            "fail", "the probe's claimed feature", "claimed but unsupported: the probe's claimed feature")
        r = probe["AClaimItCannotKeep"]
        assert r.evidence["claimed_unsupported"] == "the probe's claimed feature"
        assert r.detail == "claimed but unsupported: the probe's claimed feature"

    def test_the_statements_are_a_list(self, probe_lines, probe):
        line = probe_lines["AClaimItCannotKeep"]
        assert (line["statements"], "requirements" in line) == (["2.2.4.1-s", "2.2.4.4-a"], False)
        assert probe["AClaimItCannotKeep"].statements == ["2.2.4.1-s", "2.2.4.4-a"]
        assert probe["TargetSilenceAfterAWellFormedRequest"].statements == []
