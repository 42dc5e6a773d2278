"""The schemas of the run's own output formats: results.json (reports/results.schema.yaml) and the conformance
statement (reports/conformance-statement.schema.yaml). What the run's writers make follows them with no key
they do not declare (the real runs of pytest/harness/results/test_ci_run.py and test_conformance_run.py are held to
them too), and each format's one reader refuses a document that breaks its schema, naming the file and the
field: every command that reads a user's results.json exits 2."""
import datetime
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import synthetic_results as syn
from harness.files.input_files import InputError
from harness.results import conformance_statement
from harness.results import results as results_mod
from harness.results.results import Result

REPO = pathlib.Path(__file__).resolve().parents[2]
EXPECTATIONS = REPO / "cases" / "expectations" / "example.yaml"
NOT_RESULTS = "not a results.json (reports/RESULTS-FORMAT.md)"
CELL = "softuet"   # softuet alone: a manifest that claims profiles, so the statement has sheets


def checks():
    """One check of each verdict, with what each kind of result carries: evidence of every kind, the wire
    oracle's judgement, the attempts of a rerun, notes, a blamed side."""
    from harness.run import attempts
    from harness.wire import wire_oracle
    out = []
    for i, verdict in enumerate(results_mod.VERDICTS):
        r = Result(CELL, "msg", "uet-cases-msg", f"Msg.Case{i}/rdm", verdict, statements=["2.2.4.4-a"],
                   reason=f"{verdict} because", seconds=0.25, judged_by="case_binary", notes={"answer": "42"})
        out.append(r)
    fail = out[1]
    fail.reason, fail.detail, fail.blamed_side, fail.own_failures = None, "claimed but unsupported: hpc", "target", 1
    fail.expected, fail.seen, fail.message = "uet.ses.job_id == 0x123", "uet.ses.job_id == 0x124", "Expected equality"
    fail.evidence = {
        "capture": "captures/a.pcap", "decoded": "captures/a.json", "log": "logs/softuet/msg.log",
        "claimed_unsupported": "hpc",
        "captures": [{"capture": "captures/a.pcap", "decoded": "captures/a.json", "port": 4794, "initiator_port": 4793,
                      "frames": 40, "uet_frames": 38, "disagreements": 0,
                      "cut": {"cap_bytes": 100, "kept_bytes": 90, "kept_frames": 3, "frames_dropped": 2,
                              "bytes_dropped_unread": 10}}],
        "frames": [{"index": 3, "sender": "initiator", "summary": "uet.ses.job_id=0x124", "fields": {"uet.ses.job_id": 292}}],
        "diagnostics": [{"sender": "initiator", "kind": "invalid_value", "header": "uet.ses.std", "field": "uet.ses.message_id",
                         "offset": 60, "value": 0, "frame": "uet.ses.message_id=0x0", "first_frame": 3, "frames": 2,
                         "statements": ["2.2.10.4-a"]}],
        "refused": [{"side": "target", "call": "fi_av_insert", "rc": -22, "error": "Invalid argument"}]}
    fail.judged_by = "wire_oracle"
    fail.oracle = wire_oracle.Judgement("Msg.Case1", ["2.2.4.4-a"], "broken", checked=["the first SES request"], findings=[
        {"check": "the first SES request", "field": "uet.ses.job_id", "expected": "0x123", "captured": "0x124",
         "frame": 3, "capture": "captures/a.pcap", "should": False}]).as_dict()
    flaky = out[-1]
    flaky.attempts = [attempts.record(fail, 1, 7), attempts.record(out[0], 2, 8)]
    flaky.pass_rate = 0.5
    out[2].reason_code = "not-claimed-profile"
    return out


def ci_parts(baseline: dict | None):
    """What the nightly-CI options add (harness/trends/ci_summary.py): a rerun, the shipped expectations file
    and, given one, a baseline."""
    from harness.results import expectations as expectations_mod
    from harness.trends import ci_summary

    def add(doc):
        ci_summary.add(doc, attempts={"repeat": 1, "rerun_failures": 1,
                                      "passes": [{"attempt": 1, "seed": 7, "kind": "first", "checks": 7},
                                                 {"attempt": 2, "seed": 8, "kind": "rerun", "checks": 1}]},
                       expectations=expectations_mod.load(EXPECTATIONS), baseline=baseline, say=lambda line: None,
                       today=datetime.date(2026, 11, 28))
    return add


@pytest.fixture(scope="module")
def written(tmp_path_factory, make_run):
    """(a run folder of checks() with every part the run writes, a second one with the first as its baseline)."""
    from harness.inputs import manifest as manifest_mod
    from harness.run.run_cases import Cell
    runs = tmp_path_factory.mktemp("runs")
    softuet = manifest_mod.load(REPO / "cases" / "manifests" / "softuet.yaml")
    parts = dict(cells=[Cell(softuet, softuet, ["msg"])], versions={CELL: "1.0"},
                 decode={"captures": 1, "frames": 40, "disagreements": 0}, timings={CELL: {"wall": 1.5}},
                 logs_capped={CELL: {"msg.log": 10}}, placements={CELL: {"placement": "namespaces"}},
                 opt_ins=[{"option": "--allow-loader-environment",
                           "let_through": ["softuet.yaml: environment: LD_PRELOAD"]}])
    first = make_run(runs, "20261128-120000-s7", checks(), ci=ci_parts(None), **parts)
    second = make_run(runs, "20261128-130000-s8", checks(), ci=ci_parts(results_mod.read_results_json(first)[1]), **parts)
    return first, second


class TestEveryWriterKeepsToTheSchema:
    def test_the_runs_writer_with_every_part(self, written, closed_schema_problems):
        for folder in written:
            doc = json.loads((folder / "results.json").read_text())
            assert set(doc) == {"format", "run_info", "summary", "cells", "results", "coverage", "decode_crosscheck",
                                "wire_oracle", "attempts", "expectations"} | ({"comparison"} if folder == written[1] else set())
            assert closed_schema_problems(results_mod.schema(), doc) == []

    def test_the_statements_writer(self, written, closed_schema_problems):
        for folder in written:
            doc = json.loads((folder / "conformance" / "statement.json").read_text())
            assert doc["checks"] and doc["sheets"]
            assert closed_schema_problems(conformance_statement.schema(), doc) == []
            assert conformance_statement.read_statement(folder) == doc

    def test_a_key_the_schema_does_not_declare_is_found(self, written, closed_schema_problems):
        # what keeps the schema in step with the writers: a key added to a result without declaring it fails
        doc = json.loads((written[0] / "results.json").read_text())
        doc["results"][0]["new_field"] = 1
        doc["cells"][0]["counts"]["pass"] = "1"
        assert closed_schema_problems(results_mod.schema(), doc) == ["cells.0.counts.pass: '1' is not of type 'integer'",
                                                "results.0: Additional properties are not allowed ('new_field' was unexpected)"]

    def test_the_hand_made_report_fixture(self, tmp_path):
        # pytest/reports/synthetic_results.py, which the report tests render, is read by the one reader too
        syn.write_run(tmp_path)
        assert results_mod.read_results_json(tmp_path)[1]["summary"]["total"] == syn.EXPECTED_COUNTS["total"]


def broken(folder: pathlib.Path, to: pathlib.Path, change) -> pathlib.Path:
    """A copy of the run folder's results.json as `change` leaves it, in the run folder `to`."""
    doc = json.loads((folder / "results.json").read_text())
    change(doc)
    to.mkdir(parents=True)
    (to / "results.json").write_text(json.dumps(doc))
    return to


# (what breaks, the key and the problem the reader names)
BREAKS = [
    (lambda d: d["cells"][0].update(counts=[]), "cells.0.counts: a list where a mapping is wanted"),
    (lambda d: d["results"][1]["evidence"]["captures"].__setitem__(0, "a.pcap"),
     "results.1.evidence.captures.0: a string where a mapping is wanted"),
    (lambda d: d["results"][0].update(verdict="passed"),
     "results.0.verdict: not one of " + ", ".join(results_mod.VERDICTS)),
    (lambda d: d["run_info"].update(seed="7"), "run_info.seed: a string where an integer is wanted"),
    (lambda d: d["results"][0].pop("id"), "results.0: 'id' is a required property"),
]


class TestTheReaderRefusesWhatBreaksIt:
    @pytest.mark.parametrize("change,problem", BREAKS)
    def test_the_reader_names_the_file_and_the_field(self, written, tmp_path, change, problem):
        bad = broken(written[0], tmp_path / "bad", change)
        with pytest.raises(InputError) as err:
            results_mod.read_results_json(bad)
        assert str(err.value) == f"{bad / 'results.json'}: {problem}: {NOT_RESULTS}"

    @pytest.mark.parametrize("change,problem", BREAKS[:2])
    def test_the_report_command_exits_2(self, written, tmp_path, cmd_reports, change, problem):
        # Before: a list of counts rendered a page (exit 0); a capture entry that is a string failed on the
        # first key the page used ("does not follow ... (AttributeError: 'str' object has no attribute 'get')"),
        # naming no field.
        bad = broken(written[0], tmp_path / "bad", change)
        run = cmd_reports(bad)
        assert (run.returncode, run.stderr) == (2, f"reports: {bad / 'results.json'}: {problem}: {NOT_RESULTS}\n")
        assert not (bad / "index.html").exists()

    def test_compare_exits_2(self, written, tmp_path):
        # Before: compare answered (exit 0), the capture entry unread
        bad = broken(written[0], tmp_path / "bad", BREAKS[1][0])
        run = subprocess.run([sys.executable, "-m", "harness.trends.compare", str(written[0]), str(bad)], cwd=REPO,
                             env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=120)
        assert (run.returncode, run.stdout, run.stderr) == (
            2, "", f"uet compare: {bad / 'results.json'}: {BREAKS[1][1]}: {NOT_RESULTS} "
                   "(give a run folder or its results.json)\n")


class TestTheStatementsReader:
    def test_a_broken_statement_is_named_and_the_page_computes_its_own(self, written, tmp_path, cmd_reports):
        run = tmp_path / "run"
        shutil.copytree(written[0], run)
        path = run / "conformance" / "statement.json"
        doc = json.loads(path.read_text())
        doc["sheets"][0]["statements"][0]["status"] = "fine"
        path.write_text(json.dumps(doc))
        with pytest.raises(InputError) as err:
            conformance_statement.read_statement(run)
        assert str(err.value) == (f"{path}: sheets.0.statements.0.status: not one of met, not_met, inconclusive, "
                                  "not_observed, not_applicable: not a conformance statement "
                                  "(reports/CONFORMANCE-STATEMENT.md)")
        # as before: the report shows the statement the run's results give, not a broken file's
        assert cmd_reports(run).returncode == 0
        assert (run / "conformance.html").read_bytes() == (written[0] / "conformance.html").read_bytes()
