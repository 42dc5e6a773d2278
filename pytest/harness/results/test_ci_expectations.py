"""Expectations (harness/results/expectations.py) on synthetic results: matching, staleness, expiry, quarantine, the
schema's errors naming the entry and field, and the exit status counting only the unexpected."""
import datetime
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
from harness.trends import ci_summary  # noqa: E402
from harness.results import expectations

TODAY = datetime.date(2026, 11, 27)
ENTRY = {"reason": "known", "link": "https://bugs.example.org/1", "owner": "team-a", "expires": "2027-01-31"}


def write(tmp_path, entries, name="exp.yaml"):
    import yaml
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"expectations": entries}))
    return path


def result(ident, verdict):
    cell, area, case = ident.split("/", 2)
    return {"id": ident, "cell": cell, "area": area, "case": case, "verdict": verdict}


def doc_of(results):
    return {"results": results, "summary": {"exit_status": 1}, "decode_crosscheck": {"disagreements": 0}}


class TestMatching:
    def test_each_status_from_the_first_live_entry(self, tmp_path):
        exp = expectations.load(write(tmp_path, [
            dict(ENTRY, match="c/authz/Authz.A/rdm", expect="fail"),
            dict(ENTRY, match="*Authz.B*", expect="fail"),
            dict(ENTRY, match="c/msg/*", expect="timeout"),
            dict(ENTRY, match="Flaky.*", expect="flaky"),
            dict(ENTRY, match="c/*", expect="error"),   # later than the entries above: only what they leave
        ]))
        results = [result("c/authz/Authz.A/rdm", "fail"), result("c/authz/Authz.B/rdm", "pass"),
                   result("c/msg/Msg.C/rdm", "fail"), result("c/tagged/Flaky.D", "pass"),
                   result("c/tagged/Flaky.E", "flaky"), result("c/rma/Rma.F", "error"),
                   result("c/rma/Rma.G", "not_applicable"), result("d/rma/Rma.H", "fail")]
        block = expectations.apply(exp, results, TODAY)
        assert [(r["id"], r["expectation"] and (r["expectation"]["entry"], r["expectation"]["status"])) for r in results] == [
            ("c/authz/Authz.A/rdm", (0, "expected_fail")), ("c/authz/Authz.B/rdm", (1, "unexpected_pass")),
            ("c/msg/Msg.C/rdm", (2, "unexpected_fail")), ("c/tagged/Flaky.D", (3, "expected_flaky")),
            ("c/tagged/Flaky.E", (3, "expected_flaky")), ("c/rma/Rma.F", (4, "expected_fail")),
            ("c/rma/Rma.G", None), ("d/rma/Rma.H", None)]
        assert {k: block[k] for k in ("expected_fail", "expected_flaky", "unexpected_pass", "unexpected_fail",
                                      "quarantined", "unexpected", "stale", "matched")} == {
            "expected_fail": 2, "expected_flaky": 2, "unexpected_pass": 1, "unexpected_fail": 1, "quarantined": 0,
            "unexpected": 3, "stale": [], "matched": {"0": 1, "1": 1, "2": 1, "3": 2, "4": 1}}
        assert [r["id"] for r in expectations.unexpected(results)] == [
            "c/authz/Authz.B/rdm", "c/msg/Msg.C/rdm", "d/rma/Rma.H"]

    def test_an_entry_that_matched_nothing_and_an_expired_one_are_stale(self, tmp_path):
        exp = expectations.load(write(tmp_path, [
            dict(ENTRY, match="c/authz/*", expect="fail", expires="2026-11-26"),   # the day before TODAY
            dict(ENTRY, match="nothing/*", expect="fail"),
            dict(ENTRY, match="c/authz/*", expect="fail", expires="2026-11-27"),   # TODAY: still holds
        ]))
        results = [result("c/authz/Authz.A/rdm", "fail")]
        block = expectations.apply(exp, results, TODAY)
        assert [(s["entry"], s["why"]) for s in block["stale"]] == [
            (0, "expired on 2026-11-26"), (1, "matched no result (not-applicable ones aside)")]
        assert results[0]["expectation"]["entry"] == 2

    def test_an_expired_entry_no_longer_excuses_its_failure(self, tmp_path):
        exp = expectations.load(write(tmp_path, [dict(ENTRY, match="*", expect="fail", expires="2026-01-01")]))
        doc = doc_of([result("c/authz/Authz.A/rdm", "fail")])
        ci_summary.add(doc, attempts={}, expectations=exp, baseline=None, say=lambda _: None, today=TODAY)
        assert doc["results"][0]["expectation"] is None
        assert (doc["summary"]["exit_status"], doc["summary"]["unexpected"]) == (1, 1)

    def test_quarantine_shows_the_check_and_never_fails_the_run(self, tmp_path):
        exp = expectations.load(write(tmp_path, [dict(ENTRY, match="*Authz.A*", expect="timeout", quarantine=True)]))
        doc = doc_of([result("c/authz/Authz.A/rdm", "fail"), result("c/authz/Authz.B/rdm", "pass")])
        said = []
        ci_summary.add(doc, attempts={}, expectations=exp, baseline=None, say=said.append, today=TODAY)
        e = doc["results"][0]["expectation"]
        assert (e["status"], e["quarantine"], doc["results"][0]["verdict"]) == ("unexpected_fail", True, "fail")
        assert (doc["summary"]["exit_status"], doc["expectations"]["quarantined"]) == (0, 1)
        assert said[1].startswith("    UNEXPECTED FAIL (quarantined): c/authz/Authz.A/rdm: fail, expected timeout")


class TestExitStatus:
    @pytest.mark.parametrize("verdict, expect, status", [("fail", "fail", 0), ("fail", "error", 1), ("pass", "fail", 1),
                                                         ("flaky", "flaky", 0), ("flaky", "fail", 1)])
    def test_only_the_unexpected_count(self, tmp_path, verdict, expect, status):
        exp = expectations.load(write(tmp_path, [dict(ENTRY, match="c/a/X.Y", expect=expect)]))
        doc = doc_of([result("c/a/X.Y", verdict), result("c/a/X.Z", "pass")])
        ci_summary.add(doc, attempts={}, expectations=exp, baseline=None, say=lambda _: None, today=TODAY)
        assert doc["summary"]["exit_status"] == status

    def test_decoder_disagreements_still_fail_the_run(self, tmp_path):
        exp = expectations.load(write(tmp_path, [dict(ENTRY, match="*", expect="fail")]))
        doc = dict(doc_of([result("c/a/X.Y", "fail")]), decode_crosscheck={"disagreements": 3})
        ci_summary.add(doc, attempts={}, expectations=exp, baseline=None, say=lambda _: None, today=TODAY)
        assert doc["summary"]["exit_status"] == 1

    def test_an_interrupted_run_stays_130(self, tmp_path):
        doc = dict(doc_of([]), summary={"exit_status": 130})
        ci_summary.add(doc, attempts={}, expectations=None, baseline=None, say=lambda _: None)
        assert doc["summary"]["exit_status"] == 130


class TestSchemaErrors:
    def problems(self, tmp_path, entries):
        with pytest.raises(expectations.ExpectationsError) as err:
            expectations.load(write(tmp_path, entries))
        return str(err.value).splitlines()

    def test_each_bad_entry_and_field_is_named(self, tmp_path):
        path = tmp_path / "exp.yaml"
        got = self.problems(tmp_path, [dict(ENTRY, match="ok", expect="fail"),
                                       dict(ENTRY, match="*Foo*", expect="broken"),
                                       {k: v for k, v in dict(ENTRY, match="*Bar*", expect="fail").items() if k != "owner"},
                                       dict(ENTRY, match="*Baz*", expect="fail", link="javascript:alert(1)", colour="red")])
        # The key and what is wrong, never the value (harness/files/input_files.py)
        assert got == [
            f"{path}: expectations.1.expect: not one of fail, error, timeout, flaky",
            f"{path}: expectations.2: 'owner' is a required property",
            f"{path}: expectations.3: unknown key: colour",
            f"{path}: expectations.3.link: does not match the pattern ^(https?|mailto):"]

    def test_a_date_that_does_not_exist(self, tmp_path):
        path = tmp_path / "exp.yaml"
        assert self.problems(tmp_path, [dict(ENTRY, match="x", expect="fail", expires="2027-02-30")]) == [
            f"{path}: expectations.0.expires: not a day of the calendar"]

    def test_an_unquoted_yaml_date_is_taken(self, tmp_path):
        path = tmp_path / "exp.yaml"
        path.write_text("expectations:\n- {match: x, expect: fail, reason: r, link: 'https://e.org', owner: o, "
                        "expires: 2027-01-31}\n")
        assert expectations.load(path).entries[0].expires == datetime.date(2027, 1, 31)

    def test_uet_run_refuses_a_bad_file_before_building(self, cmd_uet_run, tmp_path):
        path = write(tmp_path, [dict(ENTRY, match="x", expect="sometimes")])
        run = cmd_uet_run("--check-usage", "--expectations", path, timeout=60)
        assert run.returncode == 2
        assert f"{path}: expectations.0.expect: not one of fail, error, timeout, flaky" in run.stderr

    def test_the_shipped_example_is_valid(self):
        exp = expectations.load(REPO / "cases" / "expectations" / "example.yaml")
        assert [(e.match, e.expect, e.expires.isoformat()) for e in exp.entries] == [
            ("softuet-wrong-job-id/authz/*Authz.DirectJobIdIsOnTheWire*", "fail", "2099-12-31")]
