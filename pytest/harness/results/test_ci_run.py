"""The nightly-CI options in real runs: softuet with the wrong_job_id fault knob (its manifest's SOFTUET_FAULTS)
fails its wire check; a rerun of that deterministic failure stays `fail`; the shipped expectations file
expects it, so the next run exits 0 and shows it as an expected fail, compared with the first as baseline."""
import os
import pathlib
import xml.etree.ElementTree as ET

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
BROKEN = REPO / "cases" / "manifests" / "examples" / "softuet-wrong-job-id.yaml"
EXAMPLE = REPO / "cases" / "expectations" / "example.yaml"
WIRE = "softuet-wrong-job-id/authz/Claimed/Authz.DirectJobIdIsOnTheWire/rdm"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="namespace pairs and captures need root (os.geteuid() != 0)")


@pytest.fixture(scope="module")
def runs(uet_run_here, tmp_path_factory):
    """Each run's (exit status, what it printed), results document and folder."""
    report = tmp_path_factory.mktemp("runs")

    def run(*args):
        status, outcome, said = uet_run_here("--provider", BROKEN, "--only", "Authz.DirectJobIdIsOnTheWire", "--seed",
                                             "5", "--report", report, "--quiet", *args)
        return (status, said), outcome.doc, outcome.run_dir
    first = run("--rerun-failures", "1")
    second = run("--expectations", EXAMPLE, "--baseline", first[2])
    return first, second


class TestRerunOfADeterministicFailure:
    def test_the_knob_fails_the_run_and_the_rerun_stays_fail(self, runs):
        ((status, said), doc, _), _ = runs
        assert status == 1, said[-2000:]
        wire = next(r for r in doc["results"] if r["id"] == WIRE)
        assert wire["verdict"] == "fail"
        assert [(a["attempt"], a["seed"], a["verdict"]) for a in wire["attempts"]] == [(1, 5, "fail"), (2, 5, "fail")]
        assert wire["pass_rate"] == 0.0
        assert doc["attempts"]["passes"] == [{"attempt": 1, "seed": 5, "kind": "first", "checks": 1},
                                             {"attempt": 2, "seed": 5, "kind": "rerun", "checks": 1}]
        assert "uet run: rerun 1 of 1, seed 5 (the run's again): 1 failing check(s) in 1 cell(s)" in said
        assert (doc["summary"]["fail"], doc["summary"]["flaky"], doc["summary"]["exit_status"]) == (1, 0, 1)

    def test_the_rerun_keeps_its_own_logs(self, runs):
        (_, _, folder), _ = runs
        assert (folder / "attempts" / "2" / "softuet-wrong-job-id" / "authz.log").is_file()


class TestExpectedFailure:
    def test_the_expected_failure_exits_0_and_keeps_its_verdict(self, runs):
        _, ((status, said), doc, _) = runs
        assert status == 0, said[-2000:]
        wire = next(r for r in doc["results"] if r["id"] == WIRE)
        assert (wire["verdict"], wire["expectation"]["status"], wire["expectation"]["entry"]) == ("fail", "expected_fail", 0)
        assert {k: doc["expectations"][k] for k in ("expected_fail", "unexpected_pass", "unexpected", "stale")} == {
            "expected_fail": 1, "unexpected_pass": 0, "unexpected": 0, "stale": []}
        assert (doc["summary"]["fail"], doc["summary"]["unexpected"], doc["summary"]["exit_status"]) == (1, 0, 0)
        assert f"    EXPECTED FAIL: {WIRE}: fail, expected fail (the wrong_job_id fault knob" in said

    def test_the_junit_says_the_failure_was_expected(self, runs):
        _, (_, _, folder) = runs
        case = next(tc for tc in ET.parse(folder / "junit.xml").getroot().iter("testcase")
                    if tc.get("name") == WIRE.split("/authz/", 1)[1])
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert (props["verdict"], props["expectation"]) == ("fail", "expected_fail")
        assert case.find("failure") is not None   # still a failure: the verdict is what the check did

    def test_the_baseline_comparison_finds_no_change(self, runs):
        _, (_, doc, _) = runs
        assert doc["comparison"]["counts"] == {"regressions": 0, "fixes": 0, "infra_errors": 0, "changed": 0,
                                               "new_checks": 0, "removed_checks": 0, "reasons": 0, "blame": 0}
        assert [a["area"] for a in doc["comparison"]["areas"]] == ["authz"]

    def test_the_report_shows_the_expected_fail(self, runs):
        _, (_, _, folder) = runs
        page = ET.parse(folder / "index.html").getroot()
        ci = next(s for s in page.iter("section") if s.get("id") == "ci")
        matched = [(tr.get("data-result-id"), tr.get("data-expectation")) for tr in ci.iter("tr") if tr.get("data-expectation")]
        assert matched == [(WIRE, "expected_fail")]
        failure = next(d for d in page.iter("div") if d.get("data-result-id") == WIRE)
        assert [td.get("data-expectation") for td in failure.iter("td") if td.get("data-expectation")] == ["expected_fail"]
        assert {h.get("data-category") for h in ci.iter("h4") if h.get("data-category")} == {
            "regressions", "fixes", "infra_errors", "changed", "new_checks", "removed_checks", "reasons", "blame"}
