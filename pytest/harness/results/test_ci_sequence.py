"""A nightly CI's five nights, in real runs of one check (Authz.DirectJobIdIsOnTheWire) of one provider manifest
named `nightly` (softuet, the fault knob wrong_job_id turned on some nights), with the expectations file the
CI keeps, ./uet compare against the night before and ./uet history over the five nights:

  1  clean                                    pass                   exit 0
  2  the knob on                              fail; a regression     exit 1 (run and compare)
  3  the knob on, the failure expected        expected_fail          exit 0
  4  the knob off, the expectation kept       unexpected_pass; a fix exit 1 (the entry must go)
  5  the knob on for one attempt only         flaky                  exit 1
     (SOFTUET_FAULTS_ONCE), --rerun-failures 1

The history indexes the five nights and its trend page links each to its report."""
import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[3]
CHECK = "Authz.DirectJobIdIsOnTheWire"
RESULT = f"nightly/authz/Claimed/{CHECK}/rdm"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="namespace pairs and captures need root (os.geteuid() != 0)")


def python(build_dir, module, *args):
    env = dict(os.environ, UET_BUILD=str(build_dir), PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def nights(cmd_uet_run, results_of, tmp_path_factory):
    """[(night, exit status, results.json, run folder)] of the five nights, and the tmp folder."""
    tmp = tmp_path_factory.mktemp("nightly")
    expectations = tmp / "expectations.yaml"
    expectations.write_text(yaml.safe_dump({"expectations": [{
        "match": RESULT, "expect": "fail", "reason": "the wrong_job_id knob: known since night 2",
        "link": "https://example.org/uet/issues/2", "owner": "nightly-ci", "expires": "2099-12-31"}]}))
    plan = [({}, []),
            ({"SOFTUET_FAULTS": "wrong_job_id"}, []),
            ({"SOFTUET_FAULTS": "wrong_job_id"}, ["--expectations", expectations]),
            ({}, ["--expectations", expectations]),
            ({"SOFTUET_FAULTS": "wrong_job_id", "SOFTUET_FAULTS_ONCE": str(tmp / "once")}, ["--rerun-failures", 1])]
    out = []
    for night, (environment, options) in enumerate(plan, start=1):
        manifest = tmp / f"night{night}" / "nightly.yaml"
        manifest.parent.mkdir()
        manifest.write_text(yaml.safe_dump({"extends": str(REPO / "cases" / "manifests" / "softuet.yaml"),
                                            "name": "nightly", "environment": environment}))
        run = cmd_uet_run("--provider", manifest, "--only", CHECK, "--seed", 100 + night, "--report", tmp / "runs",
                          "--quiet", *options)
        folder = (tmp / "runs" / "latest").resolve()
        out.append((night, run, results_of(folder), folder))
    return out, tmp


def result(doc):
    return next(r for r in doc["results"] if r["id"] == RESULT)


class TestEachNight:
    def test_night_1_passes(self, nights):
        (_, run, doc, _), *_ = nights[0]
        assert (run.returncode, result(doc)["verdict"]) == (0, "pass"), run.stdout[-2000:]

    def test_night_2_the_knob_fails_the_check(self, nights):
        _, run, doc, _ = nights[0][1]
        assert (run.returncode, result(doc)["verdict"], result(doc)["blamed_side"]) == (1, "fail", "initiator")

    def test_night_3_the_known_failure_is_expected(self, nights):
        _, run, doc, _ = nights[0][2]
        r = result(doc)
        assert (run.returncode, r["verdict"], r["expectation"]["status"]) == (0, "fail", "expected_fail"), run.stdout
        assert (doc["expectations"]["expected_fail"], doc["expectations"]["unexpected"]) == (1, 0)

    def test_night_4_the_fixed_check_is_an_unexpected_pass(self, nights):
        _, run, doc, _ = nights[0][3]
        r = result(doc)
        assert (run.returncode, r["verdict"], r["expectation"]["status"]) == (1, "pass", "unexpected_pass")
        assert (doc["expectations"]["unexpected_pass"], doc["summary"]["unexpected"]) == (1, 1)

    def test_night_5_a_failure_the_rerun_does_not_repeat_is_flaky(self, nights):
        _, run, doc, _ = nights[0][4]
        r = result(doc)
        assert (run.returncode, r["verdict"]) == (1, "flaky"), run.stdout[-2000:]
        assert [(a["attempt"], a["verdict"]) for a in r["attempts"]] == [(1, "fail"), (2, "pass")]
        assert (r["pass_rate"], doc["summary"]["flaky"]) == (0.5, 1)


class TestCompare:
    def compare(self, build_dir, nights, old, new):
        folders = {n: folder for n, _, _, folder in nights[0]}
        run = python(build_dir, "harness.trends.compare", folders[old], folders[new], "--json")
        return run.returncode, json.loads(run.stdout)

    def test_night_2_against_night_1_is_a_regression(self, build_dir, nights):
        rc, doc = self.compare(build_dir, nights, 1, 2)
        assert (rc, [(r["id"], r["old"], r["new"]) for r in doc["regressions"]]) == (1, [(RESULT, "pass", "fail")])

    def test_night_4_against_night_3_is_a_fix(self, build_dir, nights):
        rc, doc = self.compare(build_dir, nights, 3, 4)
        assert (rc, doc["regressions"], [(r["id"], r["old"], r["new"]) for r in doc["fixes"]]) == (
            0, [], [(RESULT, "fail", "pass")])


class TestHistory:
    @pytest.fixture(scope="class")
    def site(self, build_dir, nights):
        _, tmp = nights
        run = python(build_dir, "harness.trends.history", tmp / "runs", "--out", tmp / "history", "--quiet")
        assert run.returncode == 0, run.stderr
        return tmp / "history"

    def test_the_five_nights_are_indexed_with_their_verdicts(self, nights, site):
        db = sqlite3.connect(site / "history.sqlite")
        rows = db.execute("SELECT r.run_id, r.exit_status, x.verdict FROM runs r JOIN results x USING (run_id) "
                          "WHERE x.result_id = ? ORDER BY r.started, r.run_id", (RESULT,)).fetchall()
        assert [(rc, verdict) for _, rc, verdict in rows] == [(0, "pass"), (1, "fail"), (0, "fail"), (1, "pass"),
                                                              (1, "flaky")]
        assert [run_id for run_id, _, _ in rows] == [doc["run_info"]["run_id"] for _, _, doc, _ in nights[0]]

    def test_the_trend_page_links_every_night_to_its_report(self, nights, site):
        page = ET.parse(site / "index.html").getroot()
        links = {a.get("href") for a in page.iter("{http://www.w3.org/2000/svg}a")} | {
            a.get("href") for a in page.iter("a")}
        for _, _, doc, folder in nights[0]:
            assert any(h and h.endswith(f"{folder.name}/index.html") for h in links), folder.name
            assert (site / next(h for h in links if h and h.endswith(f"{folder.name}/index.html"))).resolve() == \
                (folder / "index.html").resolve()
