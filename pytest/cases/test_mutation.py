"""The mutation run (the suite's self-test), run once here, and the verdicts it proves.

harness.selftest.mutation runs the softuet cells without a knob (the baselines), then tries each knob of
fep/src/faults.def first on the checks that name its statement; every knob must be caught by a named check
among those. It writes every verdict it saw to mutation.json, and the tests of this file read that file
instead of running the same cells and knobs again. A baseline case that failed is run again with its seed:
flaky (it passed then) or failed twice, mutation.json names it, and only the tests that need it fail for it:
- TestMutationScore: every knob is caught, by the checks of its own statement;
- TestBaselines: softuet passes what it claims in each profile configuration (single- and two-process cases),
  each case the first time;
- TestKnobsFailTheirCase: the knob that breaks a rule fails the case that checks it (not an error, not a
  hang): the checks fep/src/faults.def names beside each knob, the one table of knob -> case.
"""
import json
import os
import subprocess
import sys

import pytest

from harness.selftest.mutation import knobs, named_checks, short_case as short

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="cases run in namespace pairs and capture: root")

SOFTUET, AI_FULL, AI_BASE = "softuet.yaml", "softuet.yaml#ai_base+ai_full", "softuet.yaml#ai_base"
SINGLE_AREAS = {"av", "ep", "completion", "mr"}
TWO_PROCESS_AREAS = {"msg", "tagged", "rma", "atomic", "authz", "rendezvous"}
# the only reasons a single-process RDM case may be "not applicable" to softuet (DGRAM has no fi_rma, so any)
SOFTUET_NOT_APPLICABLE = (
    "no scalable endpoints",
    "the manifest lists no predefined service names",  # Table 2-12 is MISSING; softuet predefines none
)

# knob -> the cases that must fail with it on: the one table, which the mutation run reads too
MUST_FAIL = {knob: set(cases) for knob, cases in named_checks().items()}


@pytest.fixture(scope="module")
def mutation(build_dir, tmp_path_factory):
    """(the report of one mutation run, its output): every test of this file reads it."""
    out = tmp_path_factory.mktemp("mutation")
    run = subprocess.run([sys.executable, "-m", "harness.selftest.mutation", "--build", str(build_dir), "--out", str(out)],
                         capture_output=True, text=True, timeout=1800)
    print(run.stdout)
    assert (out / "mutation.json").exists(), run.stdout[-2000:] + run.stderr[-3000:]
    return json.loads((out / "mutation.json").read_text()), run


class TestMutationScore:
    def test_every_fault_knob_is_caught_by_a_named_check(self, mutation):
        report, run = mutation
        assert report["knobs"] == len(knobs()), "every knob of faults.def ran"
        uncaught = {r["knob"]: r["baseline_failed"] for r in report["results"] if not r["caught_by"]}
        assert uncaught == {}, "knob: the baseline cases it needed that failed twice\n" + run.stdout[-3000:]
        for r in report["results"]:
            assert all(": " in c for c in r["caught_by"]), r  # "cell: case" or "wire: test"
            assert r["cases_run"] + r["wire_checks_run"] > 0, r
        # a flaky baseline fails the run (as a flaky check fails ./uet run) and its own test below, not this one
        clean = not report["baseline_flaky"] and not report["baseline_failed"]
        assert run.returncode == (0 if clean else 1), run.stderr[-2000:]

    def test_every_knob_is_caught_by_the_checks_of_its_own_statement(self, mutation):
        # never only by the broad fallbacks; a knob that needs them names a statement no check covers
        report, _ = mutation
        broad = [(r["knob"], r["stage"]) for r in report["results"] if r["stage"] not in ("targeted", "targeted wire")]
        assert broad == [], broad


class TestBaselines:
    def test_every_baseline_case_passed_the_first_time(self, mutation):
        report, _ = mutation
        again = [f"{x['cell']}: {x['case']}: {x['first_verdict']} ({(x['first_reason'] or '')[:300]}), run again with "
                 f"seed {report['seed']}: {x['rerun_verdict']}" for x in report["baseline_flaky"] + report["baseline_failed"]]
        assert again == []

    def test_softuet_passes_the_single_process_cases_it_claims(self, mutation):
        found = [r for r in mutation[0]["baselines"][SOFTUET] if r["area"] in SINGLE_AREAS]
        assert len(found) >= 55
        assert [r for r in found if r["verdict"] not in ("pass", "not_applicable")] == []
        for r in found:
            assert r["statements"], f"{r['case']} names no catalogue statement"
            if r["verdict"] == "not_applicable":
                assert r["case"].endswith("/dgram") or any(why in r["reason"] for why in SOFTUET_NOT_APPLICABLE), r

    @pytest.mark.parametrize("ref", [SOFTUET, AI_FULL, AI_BASE])
    def test_every_two_process_case_passes_in_each_profile_configuration(self, mutation, ref):
        results = [r for r in mutation[0]["baselines"][ref] if r["area"] in TWO_PROCESS_AREAS]
        assert [r for r in results if r["verdict"] not in ("pass", "not_applicable")] == []
        assert all(r["statements"] for r in results if r["verdict"] == "pass"), "every case names its statements"
        passed = {short(r["case"]) for r in results if r["verdict"] == "pass"}
        rendezvous = {c for c in passed if c.startswith("Rendezvous.")}
        assert ("Rendezvous.LargeSendFromAReadableRegionGoesAsRendezvous" in rendezvous) == (ref == SOFTUET)  # HPC
        assert ("Rendezvous.LargeSendIsDeferrableAndRestartsWithItsTokens" in rendezvous) == (ref != AI_BASE)
        assert {"Authz.MrForOneJobIdRefusesAnother", "Rma.WriteThenReadBack", "Atomic.BulkSumAddsEveryElement",
                "Msg.SendArrivesWholeInThePostedBuffer", "Fallback.EndpointNeedsUetProviderInitiatorId"} <= passed
        # the four answers to a request no endpoint takes (choice endpoint-jobid-mismatch), in every profile set
        assert len({c for c in passed if c.startswith("JobIdRefusal.")}) == 4
        tagged = {c for c in passed if c.startswith("Tagged.")}
        if ref == AI_BASE:
            assert not tagged, "AI Base alone has no fi_tagged"
        elif ref == AI_FULL:
            assert "Tagged.WildcardReceiveIsRefusedWithAiFullOnly" in tagged
            assert "Tagged.WildcardReceiveMatchesWithHpc" not in tagged
        else:
            assert "Tagged.WildcardReceiveMatchesWithHpc" in tagged


class TestKnobsFailTheirCase:
    def test_the_table_names_only_knobs_of_faults_def(self):
        assert set(MUST_FAIL) - {k[0] for k in knobs()} == set()

    @pytest.mark.parametrize("knob", sorted(MUST_FAIL))
    def test_the_case_checking_a_rule_fails_when_softuet_breaks_it(self, mutation, knob):
        result = next(r for r in mutation[0]["results"] if r["knob"] == knob)
        seen = result["verdicts"]
        # A case the host starved with the knob on is an inconclusive error (cases/common/claims/liveness.hpp): the knob
        # kept it from passing, which is what this asks; any other error or timeout is the run's fault.
        busy = set(result["inconclusive"])
        at = lambda v: f"{v['cell']}: {v['case']}"  # noqa: E731
        assert [v for v in seen if v["verdict"] in ("error", "timeout") and at(v) not in busy] == [], result["errors"]
        failed = {v["case"] for v in seen if v["verdict"] == "fail" or at(v) in busy}
        missing = {name for name in MUST_FAIL[knob] if name not in failed | {short(c) for c in failed}}
        ran = sorted({v["case"] for v in seen})
        assert missing == set(), (f"{knob} ({result['statement']}): not failed: {sorted(missing)}; ran {ran}; "
                                  f"baseline cases it needed that failed twice: {result['baseline_failed']}")
