"""One flaky baseline case does not stop the mutation run (issue 33: one failure of a baseline case turned
into an error of every test of test_mutation.py).

A real flake: the mutation run goes with SOFTUET_FAULTS=fallback_without_initiator and SOFTUET_FAULTS_ONCE
in its environment, so the knob acts in the first process that opens a softuet domain and in no later one.
With --jobs 1 the baselines run one at a time, in the mutation run's order of cells, and a cell runs authz
before msg: that process is the target of the first case of the first cell's authz binary,
Fallback.EndpointNeedsUetProviderInitiatorId, which the knob fails (an endpoint opens without
UET_PROVIDER_INITIATOR_ID) once; run again with the seed, it passes. The build holds only the authz and msg
binaries, so the run is short, and two knobs run: one that needs the flaky case (fallback_without_initiator,
whose named check it is in fep/src/faults.def, first tried in the first cell where it passes) and one that does
not (no_header_data, caught by a msg case).

A case that fails twice: with SOFTUET_FAULTS=err_not_mapped in every process, Authz.MrForOneJobIdRefusesAnother
fails in every cell, its rerun too. The knob no_authorization needs it (fep/src/faults.def names it) and
names it, and is caught by the cases of its statement that still pass; no_header_data runs as usual. With
--jobs 2 the reruns go on beside the knobs."""
import json
import os
import subprocess
import sys

import pytest

from harness.selftest.mutation import named_checks, short_case

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="cases run in namespace pairs and capture: root")

FLAKY_KNOB, OTHER_KNOB = "fallback_without_initiator", "no_header_data"
BROKEN_BY, NEEDING_KNOB, BROKEN_CASE = "err_not_mapped", "no_authorization", "Authz.MrForOneJobIdRefusesAnother"
AREAS = ("authz", "msg")


def build_of(build_dir, folder, areas):
    """A build tree with only `areas`' case binaries: links to everything else of the real one."""
    folder.mkdir()
    for entry in build_dir.iterdir():
        if entry.name != "cases":
            (folder / entry.name).symlink_to(entry)
    (folder / "cases").mkdir()
    for area in areas:
        (folder / "cases" / f"uet-cases-{area}").symlink_to(build_dir / "cases" / f"uet-cases-{area}")
    return folder


def mutation_run(build_dir, tmp, jobs, knobs, **faults):
    """The mutation run of `knobs` on the authz and msg binaries, with `faults` in its environment:
    (its report, its knob results by name, the process)."""
    build = build_of(build_dir, tmp / "build", AREAS)
    run = subprocess.run([sys.executable, "-m", "harness.selftest.mutation", "--build", str(build), "--out", str(tmp / "out"),
                          "--jobs", str(jobs), *(a for k in knobs for a in ("--knob", k))],
                         env=dict(os.environ, **faults), capture_output=True, text=True, timeout=1800)
    assert (tmp / "out" / "mutation.json").exists(), run.stdout[-2000:] + run.stderr[-3000:]
    report = json.loads((tmp / "out" / "mutation.json").read_text())
    return report, {r["knob"]: r for r in report["results"]}, run


@pytest.fixture(scope="module")
def flaky_run(build_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flaky-baseline")
    got = mutation_run(build_dir, tmp, 1, (FLAKY_KNOB, OTHER_KNOB), SOFTUET_FAULTS=FLAKY_KNOB,
                       SOFTUET_FAULTS_ONCE=str(tmp / "once"))
    assert (tmp / "once").exists(), "no softuet domain took the knob's one turn"
    return got


@pytest.fixture(scope="module")
def broken_run(build_dir, tmp_path_factory):
    return mutation_run(build_dir, tmp_path_factory.mktemp("broken-baseline"), 2, (NEEDING_KNOB, OTHER_KNOB),
                        SOFTUET_FAULTS=BROKEN_BY)


class TestAFlakyBaselineCase:
    def test_is_named_as_flaky_with_both_verdicts(self, flaky_run):
        report, _, run = flaky_run
        flaky = report["baseline_flaky"]
        assert {short_case(x["case"]) for x in flaky} >= set(named_checks()[FLAKY_KNOB]), run.stderr[-3000:]
        cell = report["cells"][0]  # its authz binary's first target opened the first domain
        assert {(x["cell"], x["area"], x["first_verdict"], x["rerun_verdict"]) for x in flaky} == \
            {(cell, "authz", "fail", "pass")}
        assert report["baseline_failed"] == []
        for x in flaky:
            assert f"FLAKY in the baseline of {cell}: {x['case']} (fail: " in run.stderr

    def test_counts_as_passing_in_its_baseline_and_is_marked(self, flaky_run):
        report, _, _ = flaky_run
        names = {x["case"] for x in report["baseline_flaky"]}
        cases = {r["case"]: r for r in report["baselines"][report["baseline_flaky"][0]["cell"]]}
        assert {(c, cases[c]["verdict"], cases[c]["flaky"]) for c in names} == {(c, "pass", True) for c in names}
        assert not [r for r in cases.values() if r["flaky"] and r["case"] not in names]

    def test_the_knob_that_needs_it_takes_its_rerun_and_is_caught_by_it(self, flaky_run):
        report, knobs, _ = flaky_run
        r = knobs[FLAKY_KNOB]
        flaky = {f"{x['cell']}: {x['case']}" for x in report["baseline_flaky"]}
        needed = {c for c in flaky if short_case(c.split(": ", 1)[1]) in named_checks()[FLAKY_KNOB]}
        assert needed and needed <= set(r["waited_for"]) <= flaky
        assert needed & set(r["caught_by"]), r
        assert r["baseline_failed"] == []

    def test_a_knob_that_does_not_need_it_runs_as_usual(self, flaky_run):
        _, knobs, _ = flaky_run
        r = knobs[OTHER_KNOB]
        assert r["waited_for"] == [] and r["baseline_failed"] == []
        assert r["stage"] == "targeted" and r["errors"] == [], r
        failed = {short_case(v["case"]) for v in r["verdicts"] if v["verdict"] == "fail"}
        assert set(named_checks()[OTHER_KNOB]) <= failed

    def test_the_run_ends_with_every_knob_caught_and_exit_1_for_the_flake(self, flaky_run):
        report, _, run = flaky_run
        assert (report["caught"], report["knobs"]) == (2, 2)
        assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
        assert f"  flaky baseline case: {report['baseline_flaky'][0]['cell']}: " in run.stdout


class TestABaselineCaseThatFailsTwice:
    def test_is_named_in_every_cell_and_never_counted_as_passing(self, broken_run):
        report, _, run = broken_run
        failed = {(x["cell"], x["first_verdict"], x["rerun_verdict"]) for x in report["baseline_failed"]
                  if short_case(x["case"]) == BROKEN_CASE}
        assert failed == {(cell, "fail", "fail") for cell in report["cells"]}, run.stderr[-3000:]
        assert report["baseline_flaky"] == []
        for cell in report["cells"]:
            [case] = [r for r in report["baselines"][cell] if short_case(r["case"]) == BROKEN_CASE]
            assert (case["verdict"], case["flaky"]) == ("fail", False)
            assert f"the baseline of {cell}: {case['case']} failed twice (fail, then fail" in run.stderr

    def test_the_knob_that_needs_it_names_it_and_is_caught_by_what_still_passes(self, broken_run):
        report, knobs, _ = broken_run
        r = knobs[NEEDING_KNOB]
        broken = {f"{x['cell']}: {x['case']}" for x in report["baseline_failed"]}
        named = {f"{x['cell']}: {x['case']}" for x in report["baseline_failed"] if short_case(x["case"]) == BROKEN_CASE}
        assert named <= set(r["baseline_failed"]) <= broken
        assert all(any(name in e for e in r["errors"]) for name in r["baseline_failed"]), r["errors"]
        # Caught by a case that passed in the baseline. At which stage depends on which cases of its statement
        # are left: on a host that starves some of them (inconclusive twice, so broken too) the broad stage.
        assert r["caught_by"] and r["stage"] in ("targeted", "broad") and not set(r["caught_by"]) & broken, r

    def test_a_knob_that_does_not_need_it_runs_as_usual(self, broken_run):
        _, knobs, run = broken_run
        r = knobs[OTHER_KNOB]
        assert (r["waited_for"], r["baseline_failed"], r["errors"], r["stage"]) == ([], [], [], "targeted")
        assert set(named_checks()[OTHER_KNOB]) <= {short_case(v["case"]) for v in r["verdicts"] if v["verdict"] == "fail"}
        assert run.returncode == 1 and "  baseline case failed twice: " in run.stdout
