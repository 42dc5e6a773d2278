"""./uet compare on synthetic runs (each category, text, JSON, HTML, exit status) and the attempts of
--rerun-failures / --repeat (harness/run/attempts.py) on synthetic result sequences: flaky, deterministic fail,
pass rate, seeds."""
import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET

REPO = pathlib.Path(__file__).resolve().parents[3]
from harness.run import attempts  # noqa: E402
from harness.trends import compare
from harness.results.results import Result, write_results_json  # noqa: E402


def r(ident, verdict, seconds=1.0, reason=None, blamed=None):
    """A result as results.json holds it (the results model's)."""
    cell, area, case = ident.split("/", 2)
    return Result(cell, area, f"uet-cases-{area}", case, verdict, seconds=seconds, reason=reason,
                  blamed_side=blamed).as_dict()


OLD = {"run_info": {"run_id": "old-run", "seed": 1}, "results": [
    r("c/authz/A", "pass", 2.0), r("c/authz/B", "fail", 1.0, "bad job"), r("c/authz/C", "pass"),
    r("c/msg/D", "not_applicable", 0.5, "no dgram"), r("c/msg/E", "fail", 1.0, "x", "initiator"),
    r("c/msg/Gone", "pass", 1.0), r("c/msg/F", "warning", 1.0, "should")]}
NEW = {"run_info": {"run_id": "new-run", "seed": 2}, "results": [
    r("c/authz/A", "timeout", 5.0, "deadline 90 s"), r("c/authz/B", "pass", 1.0), r("c/authz/C", "pass"),
    r("c/msg/D", "not_applicable", 0.5, "no rdm"), r("c/msg/E", "fail", 1.0, "x", "target"),
    r("c/msg/New", "fail", 2.0, "new one"), r("c/msg/F", "flaky", 1.0, "should")]}


def cmd_compare(*args):
    return subprocess.run([sys.executable, "-m", "harness.trends.compare", *map(str, args)], cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=60)


def write_runs(tmp_path):
    (tmp_path / "old").mkdir()
    write_results_json(OLD, tmp_path / "old" / "results.json")
    write_results_json(NEW, tmp_path / "new.json")
    return tmp_path / "old", tmp_path / "new.json"


class TestCompare:
    def test_every_category(self):
        c = compare.compare(dict(OLD, _path="old"), dict(NEW, _path="new"))
        assert [(x["id"], x["old"], x["new"]) for x in c["regressions"]] == [("c/authz/A", "pass", "timeout"),
                                                                             ("c/msg/F", "warning", "flaky")]
        assert [(x["id"], x["old"], x["new"]) for x in c["fixes"]] == [("c/authz/B", "fail", "pass")]
        assert c["changed"] == []
        assert c["new_checks"] == [{"id": "c/msg/New", "verdict": "fail", "why": "new one"}]
        assert c["removed_checks"] == [{"id": "c/msg/Gone", "verdict": "pass", "why": None}]
        assert c["reasons"] == [{"id": "c/msg/D", "verdict": "not_applicable", "old": "no dgram", "new": "no rdm"}]
        assert c["blame"] == [{"id": "c/msg/E", "verdict": "fail", "old": "initiator", "new": "target"}]
        assert c["areas"] == [{"area": "authz", "old_seconds": 4.0, "new_seconds": 7.0, "delta_seconds": 3.0},
                              {"area": "msg", "old_seconds": 3.5, "new_seconds": 4.5, "delta_seconds": 1.0}]
        assert c["counts"] == {"regressions": 2, "fixes": 1, "infra_errors": 0, "changed": 0, "new_checks": 1,
                               "removed_checks": 1, "reasons": 1, "blame": 1}
        assert c["exit_status"] == 1

    def test_a_verdict_change_that_is_neither(self):
        c = compare.compare({"results": [r("c/a/X", "fail")]}, {"results": [r("c/a/X", "error")]})
        assert ([(x["old"], x["new"]) for x in c["changed"]], c["exit_status"]) == ([("fail", "error")], 0)

    def test_text_json_html_and_exit_status(self, tmp_path):
        old, new = write_runs(tmp_path)
        text = cmd_compare(old, new, "--html", tmp_path / "c.html")
        assert text.returncode == 1, text.stderr
        assert "regressions (held before, failing now) (2):\n  c/authz/A: pass -> timeout: deadline 90 s\n" in text.stdout
        assert text.stdout.splitlines()[-1] == ("uet compare: 2 regressions, 1 fixes, 0 infra errors, 0 changed, 1 new checks, "
                                                "1 removed checks, 1 reasons, 1 blame")
        as_json = json.loads(cmd_compare(old, new, "--json").stdout)
        assert as_json["counts"]["regressions"] == 2 and as_json["old"]["run_id"] == "old-run"
        page = ET.fromstring((tmp_path / "c.html").read_text().replace("<!DOCTYPE html>", ""))
        tables = {t.get("data-category"): [tr.get("data-result-id") for tr in t.iter("tr") if tr.get("data-result-id")]
                  for t in page.iter("table") if t.get("data-category")}
        assert tables == {"regressions": ["c/authz/A", "c/msg/F"], "fixes": ["c/authz/B"], "new_checks": ["c/msg/New"],
                          "removed_checks": ["c/msg/Gone"], "reasons": ["c/msg/D"], "blame": ["c/msg/E"]}

    def test_same_run_exits_0_and_html_escapes(self, tmp_path):
        evil = {"results": [r("c/a/<script>x</script>", "pass")]}
        (tmp_path / "r.json").write_text(json.dumps(evil))
        run = cmd_compare(tmp_path / "r.json", tmp_path / "r.json", "--html", tmp_path / "c.html")
        assert run.returncode == 0
        assert "<script>" not in (tmp_path / "c.html").read_text()

    def test_bad_input_names_the_path(self, tmp_path):
        (tmp_path / "x.json").write_text('{"results": [{"verdict": "pass"}]}')
        assert (cmd_compare(tmp_path / "missing", tmp_path / "x.json").returncode,
                cmd_compare(tmp_path / "x.json", tmp_path / "x.json").stderr.strip()) == (
            2, f"uet compare: {tmp_path / 'x.json'}: results.0: 'id' is a required property: not a results.json "
               "(reports/RESULTS-FORMAT.md) (give a run folder or its results.json)")


def res(case, verdict):
    return Result("cell", "msg", "uet-cases-msg", case, verdict, reason=f"{verdict} reason")


class TestAttempts:
    def run_more(self, sequences, *, repeat=1, rerun=0):
        """Attempts whose verdicts come from `sequences` (case -> verdict per attempt): what a flaky or a
        deterministic case gives, without running a binary."""
        calls = []

        def run_pass(attempt, seed, plan, progress):
            calls.append((attempt, seed, [(i, c.areas, f) for i, c, f in plan]))
            cases = [case for _, _, f in plan for case in f.split(":")] if plan[0][2] != "*" else list(sequences)
            return [res(case, sequences[case][attempt - 1]) for case in cases]

        first = [res(case, seq[0]) for case, seq in sequences.items()]
        cell = dataclasses.make_dataclass("Cell", ["id", "areas"])("cell", ["msg", "tagged"])
        said = []
        info = attempts.run_more(first, [(0, cell, "*")], seed=7, repeat=repeat, rerun=rerun, seed_max=1 << 31,
                                 stop=threading.Event(), run_pass=run_pass, progress=lambda n: None, say=said.append)
        return info, calls, said

    def test_a_rerun_tells_flaky_from_a_deterministic_failure(self):
        info, calls, said = self.run_more({"Msg.Flaky": ["fail", "fail", "pass"], "Msg.Broken": ["fail"] * 3,
                                           "Msg.Fine": ["pass"] * 3}, rerun=2)
        seeds = attempts.seeds(7, 3, 1 << 31, again=True)
        assert seeds[:2] == [7, 7] and seeds[2] != 7
        assert calls == [(2, 7, [(0, ["msg"], "Msg.Flaky:Msg.Broken")]),
                         (3, seeds[2], [(0, ["msg"], "Msg.Flaky:Msg.Broken")])]
        got = {x.case: (x.verdict, [a["verdict"] for a in x.attempts or []], x.pass_rate) for x in info["results"]}
        assert got == {"Msg.Flaky": ("flaky", ["fail", "fail", "pass"], 0.333),
                       "Msg.Broken": ("fail", ["fail", "fail", "fail"], 0.0), "Msg.Fine": ("pass", [], None)}
        assert [(p["attempt"], p["kind"], p["seed"]) for p in info["passes"]] == [(1, "first", 7), (2, "rerun", 7),
                                                                                 (3, "rerun", seeds[2])]
        assert said[-1] == f"uet run: 3 attempts (seeds 7, 7, {seeds[2]}): 1 flaky\n    FLAKY: cell/msg/Msg.Flaky"

    def test_a_rerun_stops_once_a_case_passed(self):
        _, calls, _ = self.run_more({"Msg.Flaky": ["fail", "pass", "fail"], "Msg.Broken": ["timeout"] * 3}, rerun=2)
        assert [f for _, _, plan in calls for _, _, f in plan] == ["Msg.Flaky:Msg.Broken", "Msg.Broken"]

    def test_repeat_gives_each_check_its_pass_rate(self):
        info, calls, _ = self.run_more({"Msg.A": ["pass", "fail", "pass", "pass"], "Msg.B": ["pass"] * 4,
                                        "Msg.C": ["fail"] * 4, "Msg.N": ["not_applicable"] * 4}, repeat=4)
        assert [c[1] for c in calls] == attempts.seeds(7, 4, 1 << 31, again=False)[1:]
        assert {x.case: (x.verdict, x.pass_rate) for x in info["results"]} == {
            "Msg.A": ("flaky", 0.75), "Msg.B": ("pass", 1.0), "Msg.C": ("fail", 0.0), "Msg.N": ("not_applicable", None)}
        # the failing attempt's record is the one shown: its reason is the failure's
        assert next(x for x in info["results"] if x.case == "Msg.A").reason == "fail reason"

    def test_seeds_are_the_same_for_the_same_run_seed(self):
        assert attempts.seeds(42, 5, 1 << 31, again=True) == attempts.seeds(42, 5, 1 << 31, again=True)
        assert len(set(attempts.seeds(42, 5, 1 << 31, again=False))) == 5

    def test_harness_records_are_not_rerun(self):
        assert attempts.filters([Result("cell", "harness", "-", "cell (cell)", "error"),
                                 Result("cell", "msg", "b", "uet-cases-msg (verdict file)", "error"),
                                 Result("cell", "msg", "b", "Msg.X/rdm", "timeout")]) == {"cell": {"msg": ["Msg.X/rdm"]}}
