"""Issue 35, item 6: the verdict recorder's rules on cases that break the ways real ones do
(cases/test/verdict_probe.cpp, run with a cell plan from the harness's own writer, its lines read by the
harness's own reader). A not-applicable found inside a case decides it when it comes first; a failure that
comes first stands with its own message. A target's silence after the initiator's malformed request, and an
initiator's own call that says it does not do the operation, are the initiator's."""
import json
import os
import subprocess

import pytest

from harness.run import cell_plan
from harness.results.results import result_of_line

CASE = "VerdictProbe."


@pytest.fixture(scope="module")
def probe(build_dir, tmp_path_factory, resolved_side):
    """{case name: Result} of one run of the probe."""
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
    return {e["case"].removeprefix(CASE): result_of_line(e, cell="probe", area="probe", binary=binary.name)
            for e in ended if e["event"] == "end"}


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
