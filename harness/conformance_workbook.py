"""The conformance statement as an .xlsx workbook (python3-openpyxl): a summary sheet of totals, then one
sheet per side, manifest and profile with a row per statement, as labs keep their checklists: the header row
frozen, an autofilter, widths that fit, the status cell coloured."""
import openpyxl
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from harness.conformance_statement import LEVEL_GROUPS, STATUSES, STATUS_LABELS
from harness.conformance_table import COLUMNS, rows_of

# Fills Excel's own conditional formats use, so a printed sheet reads the way labs expect.
STATUS_FILLS = {"met": "C6EFCE", "not met": "FFC7CE", "inconclusive": "E4DFEC", "not observed": "FFEB9C",
                "not applicable": "EDEDED"}
WIDTHS = {"side": 10, "manifest": 18, "profile": 9, "statement": 15, "level": 11, "clause": 11, "actor": 12,
          "text": 60, "condition": 22, "claim": 30, "status": 15, "verdicts": 18, "checks": 70, "evidence": 60,
          "not observed because": 40, "not applicable because": 50, "choices": 24}
SHEET_NAME_MAX = 31          # Excel's limit
SUMMARY_COLUMNS = ("sheet", "side", "manifest", "profile") + tuple(
    "%s %s" % (group, STATUS_LABELS[s]) for group in ("MUST", "SHOULD") for s in STATUSES) + ("MUST total",
                                                                                             "SHOULD total")


def sheet_names(statement):
    """A short unique name per sheet: '<side> <profile>' when one manifest ran, else numbered by manifest
    (the summary sheet says which manifest each is)."""
    manifests = list(dict.fromkeys(s["manifest"] for s in statement["sheets"]))
    names = []
    for s in statement["sheets"]:
        name = "%s %s" % (s["side"], s["profile"])
        if len(manifests) > 1:
            name = "%d %s" % (manifests.index(s["manifest"]) + 1, name)
        names.append(name[:SHEET_NAME_MAX])
    return names


def _put(ws, row, col, value):
    cell = ws.cell(row=row, column=col, value=value)
    if isinstance(value, str) and value.startswith("="):
        cell.data_type = "s"       # text a binary printed, never a formula
    return cell


def _table(ws, header, rows, widths):
    bold = Font(bold=True)
    for col, name in enumerate(header, 1):
        _put(ws, 1, col, name).font = bold
        ws.column_dimensions[get_column_letter(col)].width = widths.get(name, 14)
    n = 1
    for n, cells in enumerate(rows, 2):
        for col, value in enumerate(cells, 1):
            _put(ws, n, col, value).alignment = Alignment(vertical="top", wrap_text=True)
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = "A1:%s%d" % (get_column_letter(len(header)), max(n, 1))


def _colour(ws, column_name, header):
    col = header.index(column_name) + 1
    for row in range(2, ws.max_row + 1):
        cell = ws.cell(row=row, column=col)
        if cell.value in STATUS_FILLS:
            cell.fill = PatternFill("solid", fgColor=STATUS_FILLS[cell.value])


def write_xlsx(statement, path):
    wb = openpyxl.Workbook()
    summary = wb.active
    summary.title = "summary"
    names = sheet_names(statement)
    rows = []
    for name, s in zip(names, statement["sheets"]):
        t = s["totals"]
        rows.append([name, s["side"], s["manifest"], s["profile"]]
                    + [t[group][status] for group in ("MUST", "SHOULD") for status in STATUSES]
                    + [t["MUST"]["total"], t["SHOULD"]["total"]])
    _table(summary, SUMMARY_COLUMNS, rows, {"sheet": 22, "manifest": 22})
    facts = [("run", statement["run"].get("run_id")), ("spec version", statement["run"].get("spec_version")),
             ("catalogue", statement["catalogue"]["path"]), ("catalogue sha256", statement["catalogue"]["sha256"]),
             ("as the run's", "yes" if statement["catalogue"]["matches_run"] else "no"),
             ("MUST levels", ", ".join(LEVEL_GROUPS["MUST"])), ("SHOULD levels", ", ".join(LEVEL_GROUPS["SHOULD"]))]
    for i, (key, value) in enumerate(facts, len(rows) + 3):
        _put(summary, i, 1, key).font = Font(bold=True)
        _put(summary, i, 2, value)
    for name, s in zip(names, statement["sheets"]):
        ws = wb.create_sheet(name)
        _table(ws, COLUMNS, rows_of(statement, s), WIDTHS)
        _colour(ws, "status", COLUMNS)
    wb.save(path)
