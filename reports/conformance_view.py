"""What the conformance statement pages show, from a statement dict (reports/CONFORMANCE-STATEMENT.md):
conformance.html the totals per side, manifest and profile, each row leading to that sheet's own page
(conformance/<side>-<manifest>-<profile>.html) with its statements grouped by status, the ones to act on
first. A page per sheet keeps each one small: on a default run all of them on one page made 9 MB."""
import pathlib

from harness.files.input_files import InputError
from harness.inputs import catalogue as catalogue_mod
from harness.results import conformance_statement as cs
from harness.results.conformance_terms import JUDGED_BY_LABELS, STATUS_LABELS, STATUSES
from harness.results.conformance_table import level_text
from harness.results.verdicts import LABELS as VERDICT_LABELS, rank
from reports.view import _link, safe_file_name

PAGE = "conformance.html"
ROOT_FROM_SHEET = "../"     # a sheet page is one folder down from the run folder
# Not met and inconclusive are what a certifier must act on; then what holds; then what was not judged.
STATUS_ORDER = ("not_met", "inconclusive", "met", "not_observed", "not_applicable")
EXCERPT = 180


def headline(must):
    """The one line a certifier reads first for a sheet: (css status, text), from its MUST totals."""
    if must["not_met"]:
        return "not_met", "%d MUST statement%s not met" % (must["not_met"], "" if must["not_met"] == 1 else "s")
    if must["inconclusive"]:
        return "inconclusive", "no MUST statement shown not met; %d inconclusive" % must["inconclusive"]
    return "met", "every MUST statement a check observed is met (%d met, %d not observed)" % (
        must["met"], must["not_observed"])


def statement_of(results, run_dir):
    """The run folder's conformance/statement.json when the run wrote one, else computed now from the
    suite's catalogue (a run folder from before the statement existed still gets its page)."""
    try:
        doc = cs.read_statement(run_dir)
    except InputError:  # of another format or broken: the page shows what the run's results say
        doc = None
    return doc if doc is not None else cs.compute(results, catalogue_mod.load(None), run_dir)


def _anchor(sheet):
    return "sheet-%s-%s-%s" % (sheet["side"], sheet["manifest"], sheet["profile"])


def _totals_row(totals):
    return [(s, STATUS_LABELS[s], totals[s]) for s in STATUSES] + [("total", "total", totals["total"])]


def _check(check, run_dir):
    ev = check["evidence"]
    return {"verdict": check["verdict"], "label": VERDICT_LABELS.get(check["verdict"], check["verdict"]),
            "cell": check["cell"], "placement": check["placement"] or "—",
            "case": "%s/%s" % (check["area"], check["case"]),
            "note": check["reason_code"] or check["detail"] or "",
            "judged_by": check.get("judged_by"), "judged_by_label": JUDGED_BY_LABELS.get(check.get("judged_by"), ""),
            "captures": [{"capture": _link(run_dir, c["capture"]), "decoded": _link(run_dir, c["decoded"])}
                         for c in ev["captures"]],
            "log": _link(run_dir, ev["log"])}


def _shown_check(ident, statement, run_dir, shown):
    """A check as shown, made once per render: a check sits under its statements on both sides and in every
    profile, and each time made it asks the file system whether each of its evidence files is there."""
    if ident not in shown:
        shown[ident] = _check(statement["checks"][ident], run_dir)
    return shown[ident]


def _row(row, statement, run_dir, shown):
    text = row["text"]
    return {"id": row["id"], "level": level_text(row), "status": row["status"],
            "status_label": STATUS_LABELS[row["status"]], "text": text,
            "excerpt": text if len(text) <= EXCERPT else text[:EXCERPT - 1].rstrip() + "…",
            "claim": row["claim"], "choices": ", ".join(row["choices"]) or "—",
            "why": row["not_observed_reason"] or "; ".join(row["not_applicable_reasons"]),
            "checks": sorted((_shown_check(i, statement, run_dir, shown) for i in row["checks"]),
                             key=lambda c: rank(c["verdict"]))}   # what decides it first: the worst


def sheet_paths(statement):
    """The page of each sheet, relative to the run folder, in sheet order. Odd names stay inside
    conformance/; two sheets whose safe names meet get a number rather than one page."""
    paths, taken = [], set()
    for s in statement["sheets"]:
        base = "%s/%s" % (cs.FOLDER, safe_file_name("%s-%s-%s" % (s["side"], s["manifest"], s["profile"])))
        path, n = base + ".html", 1
        while path in taken:
            n += 1
            path = "%s-%d.html" % (base, n)
        taken.add(path)
        paths.append(path)
    return paths


def _sheet_head(s, path, statement):
    manifest = statement["manifests"].get(s["manifest"], {})
    return {"anchor": _anchor(s), "page": path, "side": s["side"], "manifest": s["manifest"],
            "profile": s["profile"], "ref": manifest.get("ref") or "—", "provider": manifest.get("provider") or "—",
            "provider_version": manifest.get("provider_version") or "—",
            "headline": headline(s["totals"]["MUST"]), "must": _totals_row(s["totals"]["MUST"]),
            "should": _totals_row(s["totals"]["SHOULD"]), "other": _totals_row(s["totals"]["OTHER"])}


def page(statement, run_dir):
    """The totals page: the run, the downloads, a row per sheet."""
    run_dir = pathlib.Path(run_dir)
    cat = statement["catalogue"]
    return {"sheets": [_sheet_head(s, path, statement) for s, path in zip(statement["sheets"], sheet_paths(statement))],
            "statuses": [(s, STATUS_LABELS[s]) for s in STATUSES],
            "run": statement["run"], "catalogue": cat,
            "files": [_link(run_dir, "%s/statement.%s" % (cs.FOLDER, ext)) for ext in ("xlsx", "csv", "json")],
            "unknown": statement.get("unknown_statements") or []}


def sheet_pages(statement, run_dir):
    """(path relative to the run folder, what the sheet's page shows) for each sheet, one at a time so a big
    run never holds every sheet's rows at once."""
    run_dir = pathlib.Path(run_dir)
    shown = {}
    for s, path in zip(statement["sheets"], sheet_paths(statement)):
        rows = [_row(r, statement, run_dir, shown) for r in s["statements"]]
        groups = [{"status": st, "label": STATUS_LABELS[st], "rows": [r for r in rows if r["status"] == st]}
                  for st in STATUS_ORDER]
        yield path, dict(_sheet_head(s, path, statement), groups=[g for g in groups if g["rows"]])
