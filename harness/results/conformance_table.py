"""The conformance statement (harness/results/conformance_statement.py) as flat rows: one per side, manifest, profile
and statement, the shape of a lab's checklist. The CSV and the workbook both take their cells from here."""
import csv
import io

from harness.files import output_files
from harness.results.conformance_terms import STATUS_LABELS

COLUMNS = ("side", "manifest", "profile", "statement", "level", "clause", "actor", "text", "condition", "claim",
           "status", "verdicts", "checks", "evidence", "not observed because", "not applicable because",
           "choices")
# A spreadsheet runs a cell that starts with one of these as a formula; what a provider printed never should.
FORMULA_STARTS = ("=", "+", "@")


def check_line(check):
    """'cell [placement] area/case: verdict', one check in one cell; '(self-reported)' after a verdict that is
    the case binary's own word (judged_by case_binary)."""
    return "%s [%s] %s/%s: %s%s" % (check["cell"], check["placement"] or "-", check["area"], check["case"],
                                    check["verdict"], " (self-reported)" if check.get("judged_by") == "case_binary" else "")


def evidence_paths(checks):
    paths = []
    for c in checks:
        ev = c["evidence"]
        for p in [x for cap in ev["captures"] for x in (cap["capture"], cap["decoded"])] + [ev["log"]]:
            if p and p not in paths:
                paths.append(p)
    return paths


def verdicts_text(verdicts):
    return ", ".join("%d %s" % (n, v.replace("_", " ")) for v, n in verdicts.items())


def level_text(row):
    return row["level"] + (" (level?)" if row["level_unconfirmed"] else "")


def rows_of(statement, sheet):
    """The cells of every statement row of one sheet, in COLUMNS order."""
    for row in sheet["statements"]:
        checks = [statement["checks"][i] for i in row["checks"]]
        yield [sheet["side"], sheet["manifest"], sheet["profile"], row["id"], level_text(row), row["clause"],
               row["actor"], row["text"], row["condition"] or "", row["claim"], STATUS_LABELS[row["status"]],
               verdicts_text(row["verdicts"]), "\n".join(check_line(c) for c in checks),
               "\n".join(evidence_paths(checks)), row["not_observed_reason"] or "",
               "\n".join(row["not_applicable_reasons"]), ", ".join(row["choices"])]


def safe_cell(value):
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def write_csv(statement, path):
    fh = io.StringIO(newline="")
    out = csv.writer(fh)
    out.writerow(COLUMNS)
    for sheet in statement["sheets"]:
        for cells in rows_of(statement, sheet):
            out.writerow([safe_cell(c) for c in cells])
    output_files.write(path, fh.getvalue())
