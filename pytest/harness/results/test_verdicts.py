"""Issue 36, item 2: one Verdict enum (harness/results/verdicts.py) with each verdict's word, label, rank and whether
it fails a run, which every reader uses: no other module of the suite spells out a set, list or table of verdict
words, and the places that order verdicts (JUnit's kinds, the report's area letter, the order of a statement's
checks, the history chart's stack; a negotiation cell's verdict: pytest/harness/results/test_negotiation_matrix.py) agree
with the one rank."""
import ast
import pathlib
import xml.etree.ElementTree as ET

import pytest

from harness.results import verdicts
from harness.results.results import Result, write_junit
from harness.results.verdicts import BY_RANK, FAILING, LABELS, VERDICTS, Verdict, worst
from reports import conformance_view, history_view, view

REPO = pathlib.Path(__file__).resolve().parents[3]
# The suite's own code (the tests spell verdicts out: they hold exact expected values).
CODE = ("harness", "reports", "bench", "containers")
HOME = REPO / "harness" / "results" / "verdicts.py"


def word_collections(path: pathlib.Path):
    """(line, sorted verdict words) of every tuple, list, set or dict (its keys) literal holding two or more."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        elts = node.keys if isinstance(node, ast.Dict) else \
            node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else None
        words = {e.value for e in elts or () if isinstance(e, ast.Constant) and e.value in VERDICTS}
        if len(words) >= 2:
            yield node.lineno, sorted(words)


class TestOneVocabulary:
    def test_the_words_labels_and_failing_ones(self):
        assert VERDICTS == ("pass", "fail", "not_applicable", "warning", "error", "timeout", "flaky", "infra_error")
        assert LABELS["not_applicable"] == "not applicable"
        assert LABELS["infra_error"] == "infrastructure error"
        plain = [v for v in VERDICTS if v not in ("not_applicable", "infra_error")]
        assert [LABELS[v] for v in plain] == plain
        assert FAILING == ("fail", "error", "timeout", "flaky")
        assert all(type(v) is str for v in VERDICTS + FAILING + BY_RANK)   # a file gets the word, never the enum

    def test_no_other_module_lists_verdict_words(self):
        found = [(str(p.relative_to(REPO)), line, words) for folder in CODE for p in sorted((REPO / folder).rglob("*.py"))
                 if p != HOME for line, words in word_collections(p)]
        assert found == []

    def test_the_check_finds_a_list_of_words(self, tmp_path):
        module = tmp_path / "m.py"
        module.write_text('FAILED = ("fail", "flaky")\nORDER = {"error": 1, "timeout": 1}\nONE = ("fail", "x")\n')
        assert list(word_collections(module)) == [(1, ["fail", "flaky"]), (2, ["error", "timeout"])]


class TestOneOrder:
    def test_worst_first(self):
        assert BY_RANK == ("fail", "flaky", "error", "timeout", "infra_error", "warning", "pass", "not_applicable")

    @pytest.mark.parametrize("words,expected", [
        (["pass", "not_applicable"], "pass"), (["error", "flaky"], "flaky"), (["timeout", "error"], "error"),
        (["flaky", "fail"], "fail"), (["warning", "timeout"], "timeout"), (["not_applicable"], "not_applicable"),
        (["pass", "no such verdict"], "pass"), (["infra_error", "warning"], "infra_error"),
        (["infra_error", "error"], "error"), ([], None)])
    def test_the_worst_of_several(self, words, expected):
        assert worst(words) == expected

    def test_a_word_outside_the_taxonomy_ranks_with_no_conclusion(self):
        assert verdicts.rank("no such verdict") == Verdict.ERROR.rank

    @pytest.mark.parametrize("words,letter", [
        (["pass", "flaky"], "F"), (["fail", "error"], "F"), (["timeout", "warning"], "E"), (["pass", "oops"], "E"),
        (["infra_error", "pass"], "I"), (["infra_error", "timeout"], "E"), (["warning", "not_applicable"], "W"), (["pass", "not_applicable"], "P"), (["not_applicable"], "N"), ([], "N")])
    def test_the_report_s_area_letter_is_the_worst_rank(self, words, letter):
        assert view.area_code(words) == letter

    def test_the_history_stack_is_the_rank_from_the_baseline_up(self):
        assert history_view.STACK == BY_RANK

    def test_junit_kinds_are_the_ranks(self, tmp_path):
        results = [Result("c", "a", "b", v, v, reason="why") for v in VERDICTS]
        write_junit(results, tmp_path / "junit.xml")
        suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
        assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
            "tests": "8", "failures": "2", "errors": "3", "skipped": "1"}
        kinds = {tc.get("name"): [e.tag for e in tc if e.tag != "properties"] for tc in suite.iter("testcase")}
        assert kinds == {"pass": [], "fail": ["failure"], "not_applicable": ["skipped"], "warning": [],
                         "error": ["error"], "timeout": ["error"], "flaky": ["failure"], "infra_error": ["error"]}
        # Only an infrastructure error says its kind: a CI filter on type tells a lost placement from the provider's.
        types = {tc.get("name"): tc.find("error").get("type") for tc in suite.iter("testcase") if tc.find("error") is not None}
        assert types == {"error": None, "timeout": None, "infra_error": "infra_error"}

    def test_a_statement_s_checks_are_shown_worst_first(self, monkeypatch):
        monkeypatch.setattr(conformance_view, "_shown_check", lambda ident, statement, run_dir, shown: {"verdict": ident})
        row = {"id": "x", "level": "MUST", "level_unconfirmed": False, "status": "met", "text": "t", "claim": "c",
               "choices": [], "not_observed_reason": None, "not_applicable_reasons": [],
               "checks": ["not_applicable", "pass", "infra_error", "timeout", "flaky", "warning", "error", "fail"]}
        shown = conformance_view._row(row, {}, None, {})
        assert [c["verdict"] for c in shown["checks"]] == ["flaky", "fail", "timeout", "error", "infra_error", "warning",
                                                           "pass", "not_applicable"]
