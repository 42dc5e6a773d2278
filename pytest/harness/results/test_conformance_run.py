"""The conformance statement of a real run: the broken-vendor example initiating towards a clean softuet, the
authz area only. The run writes conformance/ (the statement and a page per sheet) and conformance.html, and the
statement agrees with results.json: every failed check is under each of its statements, not met, on the side it
is blamed on and only there."""
import json
import os
import urllib.parse
import xml.etree.ElementTree as ET

import openpyxl
import pytest

from harness.inputs import catalogue
from harness.results import conformance_statement, results as results_mod

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="namespace pairs and captures need root")


@pytest.fixture(scope="module")
def run(broken_authz_pair):
    proc = broken_authz_pair
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    return (proc.folder, proc.results(), json.loads((proc.folder / "conformance" / "statement.json").read_text()))


def sheets_of(statement, side, manifest):
    return [s for s in statement["sheets"] if (s["side"], s["manifest"]) == (side, manifest)]


def test_a_sheet_per_side_and_claimed_profile(run):
    _, _, statement = run
    assert [(s["side"], s["manifest"], s["profile"]) for s in statement["sheets"]] == [
        ("initiator", "softuet-wrong-job-id", p) for p in ("ai_base", "ai_full", "hpc")] + [
        ("target", "softuet", p) for p in ("ai_base", "ai_full", "hpc")]


def test_every_failed_check_is_under_its_statements_on_the_blamed_side(run):
    _, results, statement = run
    cat = catalogue.load()
    cells = {c["id"]: c for c in results["cells"]}
    failed = [r for r in results["results"] if r["verdict"] == "fail"]
    assert failed
    seen = 0
    for r in failed:
        side = r["blamed_side"]
        other = "target" if side == "initiator" else "initiator"
        for ident in r["statements"]:
            for s in sheets_of(statement, side, cells[r["cell"]][side]):
                if s["profile"] not in cat.get(ident).profiles:
                    continue
                row = next(x for x in s["statements"] if x["id"] == ident)
                assert r["id"] in row["checks"] and row["status"] == "not_met", (ident, r["id"])
                seen += 1
            for s in sheets_of(statement, other, cells[r["cell"]][other]):
                assert all(r["id"] not in x["checks"] for x in s["statements"])
    assert seen >= len(failed)


def test_every_check_of_the_run_is_in_the_statement(run):
    _, results, statement = run
    assert sorted(statement["checks"]) == sorted(r["id"] for r in results["results"])
    named = {i for s in statement["sheets"] for row in s["statements"] for i in row["checks"]}
    assert named == {r["id"] for r in results["results"] if r["statements"]}


def test_totals_add_up_to_the_rows(run):
    _, _, statement = run
    for s in statement["sheets"]:
        assert s["totals"]["ALL"]["total"] == len(s["statements"])
        for status in ("met", "not_met", "not_applicable"):
            assert s["totals"]["ALL"][status] == sum(1 for r in s["statements"] if r["status"] == status)


def test_files_and_page(run):
    run_dir, results, statement = run
    wb = openpyxl.load_workbook(run_dir / "conformance" / "statement.xlsx", read_only=True)
    assert wb.sheetnames == ["summary"] + ["%d %s %s" % (n, side, p) for n, side in ((1, "initiator"), (2, "target"))
                                           for p in ("ai_base", "ai_full", "hpc")]
    csv_lines = (run_dir / "conformance" / "statement.csv").read_text().count("\n")
    assert csv_lines > sum(len(s["statements"]) for s in statement["sheets"])   # a header; cells may hold newlines
    page = ET.parse(run_dir / "conformance.html").getroot()
    sheet_pages = sorted((run_dir / "conformance").glob("*.html"))
    assert sorted(urllib.parse.unquote(a.get("href")) for a in page.iter("a") if a.get("href").endswith(".html")
                  and a.get("href").startswith("conformance/")) == [p.relative_to(run_dir).as_posix()
                                                                   for p in sheet_pages]
    assert [p.name for p in sheet_pages] == sorted("%s-%s-%s.html" % (s["side"], s["manifest"], s["profile"])
                                                   for s in statement["sheets"])
    not_met = {(p.name, tr.get("data-statement")) for p in sheet_pages
               for tr in ET.parse(p).getroot().iter("tr") if tr.get("data-status") == "not_met"}
    assert not_met == {("%s-%s-%s.html" % (s["side"], s["manifest"], s["profile"]), r["id"])
                       for s in statement["sheets"] for r in s["statements"] if r["status"] == "not_met"}
    for p in sheet_pages:     # the evidence of a sheet page, one folder down, still resolves
        for a in ET.parse(p).getroot().iter("a"):
            assert (p.parent / urllib.parse.unquote(a.get("href"))).resolve().is_file(), (p.name, a.get("href"))


def test_results_and_statement_keep_to_their_schemas(run, closed_schema_problems):
    # a pair run whose initiator fails its wire check: each key of results.json and of the statement declared in
    # reports/results.schema.yaml and reports/conformance-statement.schema.yaml, of the type they give
    assert closed_schema_problems(results_mod.schema(), run[1]) == []
    assert closed_schema_problems(conformance_statement.schema(), run[2]) == []
