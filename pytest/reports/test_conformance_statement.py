"""The conformance statement (harness/results/conformance_statement.py): computed from a synthetic results.json and a
catalogue slice with known values, written as CSV and xlsx and read back, and rendered as conformance.html
and a page per sheet."""
import csv
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import openpyxl
import pytest

import synthetic_statement as syn
from harness.inputs import catalogue as catalogue_mod
from harness.results import conformance_statement as cs
from harness.results.conformance_table import COLUMNS
from reports import render_html

REPO = cs.catalogue_mod.REPO


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    return catalogue_mod.load(syn.write_catalogue(tmp_path_factory.mktemp("cat") / "catalogue.yaml"))


@pytest.fixture(scope="module")
def written(tmp_path_factory, cat):
    """The synthetic run folder with its statement written and its pages rendered: (run_dir, statement)."""
    run_dir = tmp_path_factory.mktemp("run")
    doc = syn.write_run(run_dir)
    statement = cs.write(doc, run_dir, cat, syn.REASONS)
    render_html(doc, run_dir)
    return run_dir, statement


def sheet(statement, side, manifest, profile):
    found = [s for s in statement["sheets"] if (s["side"], s["manifest"], s["profile"]) == (side, manifest, profile)]
    assert len(found) == 1
    return found[0]


def row(sheet_, ident):
    return next(r for r in sheet_["statements"] if r["id"] == ident)


class TestStatus:
    @pytest.mark.parametrize("level,verdicts,status", [
        ("MUST", ["pass", "fail"], "not_met"), ("MUST", ["warning"], "met"), ("SHOULD", ["warning", "pass"], "not_met"),
        ("MUST", ["pass", "timeout"], "inconclusive"), ("MUST", ["fail", "error"], "not_met"),
        ("MUST", ["not_applicable", "pass"], "met"), ("MUST NOT", ["not_applicable"], "not_applicable"),
        ("MUST", ["not_applicable", "bogus"], "inconclusive"), ("MAY", [], "not_observed")])
    def test_status_from_verdicts(self, level, verdicts, status):
        assert cs.status_of(level, verdicts) == status


class TestCompute:
    def test_one_sheet_per_side_manifest_and_claimed_profile(self, written):
        _, statement = written
        assert [(s["side"], s["manifest"], s["profile"]) for s in statement["sheets"]] == list(syn.EXPECTED_TOTALS)

    def test_exact_totals(self, written):
        _, statement = written
        for key, expected in syn.EXPECTED_TOTALS.items():
            assert {g: sheet(statement, *key)["totals"][g] for g in expected} == expected, key

    def test_statements_of_the_profile_only(self, written):
        _, statement = written
        assert [r["id"] for r in sheet(statement, "target", syn.ALPHA, "hpc")["statements"]] == \
            [syn.A, syn.B, syn.C, syn.D, syn.E, syn.F, syn.G, syn.H]

    def test_status_per_statement(self, written):
        _, statement = written
        assert {r["id"]: r["status"] for r in sheet(statement, "target", syn.BETA, "ai_base")["statements"]} == \
            syn.EXPECTED_BETA_STATUS

    def test_checks_verdicts_claim_and_choices(self, written):
        _, statement = written
        a = row(sheet(statement, "target", syn.BETA, "ai_base"), syn.A)
        assert a["checks"] == [syn.R["A.Fail"]]
        assert a["verdicts"] == {"fail": 1}
        assert a["claim"] == "beta claims ai_base; claimed but unsupported"
        assert a["choices"] == ["profile-priority"]

    def test_a_fail_counts_on_the_blamed_side_only(self, written):
        _, statement = written
        a = row(sheet(statement, "initiator", syn.ALPHA, "ai_base"), syn.A)
        assert (a["checks"], a["status"], a["claim"]) == ([syn.R["A.Pass"]], "met", "alpha claims ai_base")
        assert row(sheet(statement, "target", syn.BETA, "ai_base"), syn.C)["choices"] == ["profile-priority",
                                                                                           "job-id-width"]

    def test_check_carries_cell_placement_and_evidence(self, written):
        _, statement = written
        single, pair = statement["checks"][syn.R["A.Pass"]], statement["checks"][syn.R["A.Fail"]]
        assert (single["cell"], single["placement"], pair["placement"]) == (syn.ALPHA, "containers,namespaces",
                                                                            "containers")
        assert single["evidence"] == {"captures": [{"capture": syn.CAPTURE, "decoded": syn.DECODED}], "log": syn.LOG}
        assert pair["evidence"] == {"captures": [{"capture": syn.FAIL_CAPTURE, "decoded": None}],
                                    "log": "cells/alpha__beta/authz.log"}

    def test_not_observed_reasons(self, written):
        _, statement = written
        s = sheet(statement, "target", syn.ALPHA, "ai_base")
        assert row(s, syn.G)["not_observed_reason"] == "not observable: " + syn.KERNEL
        assert row(s, syn.H)["not_observed_reason"] == "observable (api), but no check of this run names it"
        assert row(s, syn.A)["not_observed_reason"] is None

    def test_not_applicable_reason_code_then_reason_text(self, written):
        _, statement = written
        f = row(sheet(statement, "initiator", syn.ALPHA, "ai_base"), syn.F)
        assert f["not_applicable_reasons"] == [
            "profile-not-claimed: the side does not claim the profile the check needs", syn.HOSTILE_REASON]
        assert f["claim"] == "alpha claims ai_base; applies if: tagged messages (FI_TAGGED) supported"
        only_code = row(sheet(statement, "target", syn.ALPHA, "ai_base"), syn.F)
        assert only_code["claim"].endswith("; the feature it needs is not claimed")

    def test_run_manifests_choices_and_catalogue(self, written, cat):
        _, statement = written
        assert statement["format"] == 1
        assert statement["manifests"][syn.ALPHA]["job_id_methods"] == ["direct"]
        assert statement["manifests"][syn.BETA].get("job_id_methods") is None
        assert sorted(statement["choices"]) == ["job-id-width", "profile-priority"]
        assert statement["choices"]["job-id-width"]["contested"] is True
        assert statement["catalogue"]["matches_run"] is False and statement["catalogue"]["statements"] == 9
        assert statement["unknown_statements"] == ["9.9.9-z"]

    def test_by_default_the_codes_are_the_suites_declared_ones(self, cat):
        doc = syn.results_document()
        code = next(r for r in doc["results"] if r.get("reason_code"))
        code["reason_code"] = "not-claimed-profile"     # a code of spec/not-applicable-reasons.yaml
        statement = cs.compute(doc, cat)
        check = next(c for c in statement["checks"].values() if c["reason_code"] == "not-claimed-profile")
        assert check["reason_class"] == "not-claimed"


class TestCsv:
    def read(self, run_dir):
        with open(run_dir / "conformance" / "statement.csv", encoding="utf-8", newline="") as fh:
            return list(csv.reader(fh))

    def test_header_and_one_row_per_sheet_and_statement(self, written):
        run_dir, _ = written
        table = self.read(run_dir)
        assert tuple(table[0]) == COLUMNS
        assert len(table) == 1 + 8 + 8 + 8 + 8 + 8

    def test_exact_row(self, written):
        run_dir, _ = written
        a = next(r for r in self.read(run_dir) if r[:4] == ["target", syn.BETA, "ai_base", syn.A])
        assert a == ["target", "beta", "ai_base", syn.A, "MUST", "2.2.4.4", "provider",
                     "Statement 2.2.4.4-a says what it says.", "", "beta claims ai_base; claimed but unsupported",
                     "not met", "1 fail", "alpha__beta [containers] authz/A.Fail: fail",
                     syn.FAIL_CAPTURE + "\ncells/alpha__beta/authz.log", "", "", "profile-priority"]

    def test_a_formula_is_text(self, written):
        run_dir, _ = written
        f = next(r for r in self.read(run_dir) if r[:4] == ["target", syn.BETA, "ai_base", syn.F])
        assert f[COLUMNS.index("not applicable because")] == "'" + syn.HOSTILE_REASON


class TestWorkbook:
    @pytest.fixture(scope="class")
    def wb(self, written):
        run_dir, _ = written
        return openpyxl.load_workbook(run_dir / "conformance" / "statement.xlsx")

    def test_sheets(self, wb):
        assert wb.sheetnames == ["summary", "1 initiator ai_base", "1 initiator hpc", "1 target ai_base",
                                 "1 target hpc", "2 target ai_base"]

    def test_summary_totals(self, wb):
        ws = wb["summary"]
        header = [c.value for c in ws[1]]
        last = dict(zip(header, [c.value for c in ws[6]]))
        assert (last["sheet"], last["manifest"], last["MUST met"], last["MUST not met"], last["MUST not observed"],
                last["SHOULD not met"], last["MUST total"], last["SHOULD total"]) == (
            "2 target ai_base", "beta", 1, 1, 2, 1, 5, 2)
        assert ws.freeze_panes == "A2" and ws.auto_filter.ref == "A1:P6"

    def test_checklist_sheet_header_filter_and_widths(self, wb):
        ws = wb["2 target ai_base"]
        assert tuple(c.value for c in ws[1]) == COLUMNS
        assert ws.freeze_panes == "A2"
        assert ws.auto_filter.ref == "A1:Q9"
        assert ws.column_dimensions["H"].width == 60 and ws[1][0].font.bold

    def test_failed_statement_cell_is_red(self, wb):
        ws = wb["2 target ai_base"]
        status = COLUMNS.index("status")
        cells = {r[3].value: r[status] for r in ws.iter_rows(min_row=2)}
        assert cells[syn.A].value == "not met" and cells[syn.A].fill.fgColor.rgb == "00FFC7CE"
        assert cells[syn.D].value == "met" and cells[syn.D].fill.fgColor.rgb == "00C6EFCE"

    def test_a_formula_stays_text(self, wb):
        ws = wb["2 target ai_base"]
        cell = next(r for r in ws.iter_rows(min_row=2) if r[3].value == syn.F)[COLUMNS.index("not applicable because")]
        assert (cell.value, cell.data_type) == (syn.HOSTILE_REASON, "s")


def text(el):
    return " ".join("".join(el.itertext()).split())


class TestPage:
    """conformance.html holds the totals, each row leading to the sheet's own page in conformance/."""

    @pytest.fixture(scope="class")
    def page(self, written):
        run_dir, _ = written
        return ET.parse(run_dir / "conformance.html").getroot()   # well-formed markup, or a bug

    @pytest.fixture(scope="class")
    def sheet_page(self, written):
        run_dir, _ = written
        return lambda name: ET.parse(run_dir / "conformance" / ("%s.html" % name)).getroot()

    def section(self, page, ident):
        return next(el for el in page.iter("section") if el.get("id") == ident)

    def test_index_links_the_page(self, written):
        run_dir, _ = written
        index = ET.parse(run_dir / "index.html").getroot()
        assert "conformance.html" in [a.get("href") for a in index.iter("a")]

    def test_totals_table(self, page):
        rows = [[text(td) for td in tr] for tr in self.section(page, "totals").find(".//tbody")]
        assert rows[-1] == ["target", "beta", "ai_base", "1", "1", "0", "2", "1", "5", "0", "1", "0", "1", "0", "2"]
        assert len(rows) == 5

    def test_a_page_per_sheet_linked_from_the_totals(self, written, page):
        run_dir, _ = written
        links = [a.get("href") for tr in self.section(page, "totals").find(".//tbody") for a in tr.iter("a")]
        assert links == ["conformance/initiator-alpha-ai_base.html", "conformance/initiator-alpha-hpc.html",
                         "conformance/target-alpha-ai_base.html", "conformance/target-alpha-hpc.html",
                         "conformance/target-beta-ai_base.html"]
        assert sorted(p.name for p in (run_dir / "conformance").glob("*.html")) == sorted(
            link.split("/")[1] for link in links)
        assert not [s for s in page.iter("section") if s.get("class") == "sheet"]   # the totals page stays small

    def test_sheet_page_leads_back(self, sheet_page):
        nav = sheet_page("target-beta-ai_base").find(".//nav")
        assert [(a.get("href"), text(a)) for a in nav.iter("a")] == [
            ("../index.html", "run 20261127-2000-s7"), ("../conformance.html", "totals")]

    def test_statements_grouped_by_status(self, sheet_page):
        s = self.section(sheet_page("target-beta-ai_base"), "sheet-target-beta-ai_base")
        groups = [(tb.get("data-status"), [tr.get("data-statement") for tr in tb if tr.get("data-statement")])
                  for tb in s.iter("tbody")]
        assert groups == [("not_met", [syn.A, syn.C]), ("met", [syn.D]),
                          ("not_observed", [syn.B, syn.G, syn.H, syn.I]), ("not_applicable", [syn.F])]

    def test_exact_rows(self, sheet_page):
        s = self.section(sheet_page("target-beta-ai_base"), "sheet-target-beta-ai_base")
        trs = {tr.get("data-statement"): tr for tr in s.iter("tr") if tr.get("data-statement")}
        assert [text(td) for td in trs[syn.A]] == [
            syn.A, "MUST", "not met", "Statement 2.2.4.4-a says what it says.",
            "beta claims ai_base; claimed but unsupported",
            "fail authz/A.Fail in alpha__beta [containers] (claimed but unsupported: %s) capture (missing) log (missing)"
            % syn.UNSUPPORTED,
            "profile-priority"]
        assert [text(td) for td in trs[syn.G]][2:] == ["not observed", "Statement 2.2.5.1-d says what it says.",
                                                       "beta claims ai_base", "not observable: " + syn.KERNEL, "—"]
        assert text(trs[syn.F].findall("td")[5]).startswith(syn.HOSTILE_REASON)

    def test_evidence_links_and_downloads(self, page, sheet_page):
        s = self.section(sheet_page("target-alpha-ai_base"), "sheet-target-alpha-ai_base")
        links = {a.text: a.get("href") for tr in s.iter("tr") if tr.get("data-statement") == syn.A for a in tr.iter("a")}
        assert links == {"capture": "../" + syn.CAPTURE, "decode": "../" + syn.DECODED, "log": "../" + syn.LOG}
        downloads = [a.get("href") for a in page.iter("a") if a.get("href", "").startswith("conformance/statement")]
        assert downloads == ["conformance/statement.xlsx", "conformance/statement.csv", "conformance/statement.json"]

    @pytest.mark.parametrize("name,headline", [
        ("target-beta-ai_base", ("not_met", "1 MUST statement not met")),
        ("target-alpha-hpc", ("inconclusive", "no MUST statement shown not met; 1 inconclusive")),
        ("target-alpha-ai_base", ("met", "every MUST statement a check observed is met (2 met, 2 not observed)"))])
    def test_headline_from_the_must_totals(self, sheet_page, name, headline):
        p = next(el for el in self.section(sheet_page(name), "sheet-" + name).iter("p") if el.get("data-headline"))
        assert (p.get("data-headline"), text(p)) == headline

    def test_checks_that_decide_come_first(self, sheet_page):
        tr = next(tr for tr in self.section(sheet_page("target-alpha-hpc"), "sheet-target-alpha-hpc").iter("tr")
                  if tr.get("data-statement") == syn.E)
        assert [el.get("data-verdict") for el in tr.iter("span") if el.get("data-verdict")] == ["error", "pass"]

    def test_level_totals_per_sheet(self, sheet_page):
        s = self.section(sheet_page("initiator-alpha-hpc"), "sheet-initiator-alpha-hpc")
        must = next(el for el in s.iter("div") if el.get("data-level") == "MUST")
        assert {b.get("data-count"): int(b.text) for b in must.iter("b")} == dict(
            syn.EXPECTED_TOTALS[("initiator", syn.ALPHA, "hpc")]["MUST"])


class TestCommandLine:
    def run(self, *args):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-m", "harness.results.conformance_statement", *map(str, args)], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=120)

    def test_regenerates_a_run_folder(self, tmp_path, cat):
        syn.write_run(tmp_path)
        proc = self.run(tmp_path, "--catalogue", cat.path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-2:] == [
            "target beta ai_base: MUST 1 met, 1 not met, 0 inconclusive, 2 not observed, 1 not applicable",
            str(tmp_path / "conformance" / "statement.json")]
        assert sorted(p.name for p in (tmp_path / "conformance").iterdir()) == [
            "statement.csv", "statement.json", "statement.xlsx"]
        assert json.loads((tmp_path / "conformance" / "statement.json").read_text())["format"] == 1

    def test_missing_results_exits_2_naming_it(self, tmp_path):
        proc = self.run(tmp_path)
        assert proc.returncode == 2
        assert proc.stderr.strip() == "conformance_statement: %s: no such file (is %s a run folder?)" % (
            tmp_path / "results.json", tmp_path)

    def test_invalid_catalogue_exits_3(self, tmp_path):
        syn.write_run(tmp_path)
        (tmp_path / "cat.yaml").write_text("statements: 3\n")
        proc = self.run(tmp_path, "--catalogue", tmp_path / "cat.yaml")
        assert proc.returncode == 3 and "cat.yaml" in proc.stderr
