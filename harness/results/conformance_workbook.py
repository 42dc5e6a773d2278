"""The conformance statement as an .xlsx workbook (python3-openpyxl): a summary sheet of totals, then one
sheet per side, manifest and profile with a row per statement, as labs keep their checklists: the header row
frozen, an autofilter, widths that fit, the status cell coloured."""
import io

import openpyxl
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font, NamedStyle, PatternFill
from openpyxl.utils import get_column_letter

from harness.files import output_files
from harness.results.conformance_terms import LEVEL_GROUPS, STATUSES, STATUS_LABELS
from harness.results.conformance_table import COLUMNS, rows_of

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
HEADING, BODY = "uet heading", "uet body"


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


def _status_style(label):
    return "uet status %s" % label


def _add_styles(wb):
    """Named styles, registered once. A cell given its font, alignment or fill as an object makes openpyxl
    build, hash and look that object up again for every cell: on a default run that was most of the time
    of the whole statement."""
    wb.add_named_style(NamedStyle(HEADING, font=Font(bold=True)))
    top = dict(vertical="top", wrap_text=True)
    wb.add_named_style(NamedStyle(BODY, alignment=Alignment(**top)))
    for label, colour in STATUS_FILLS.items():
        wb.add_named_style(NamedStyle(_status_style(label), alignment=Alignment(**top),
                                      fill=PatternFill("solid", fgColor=colour)))


def _cell(ws, value, style=None):
    cell = WriteOnlyCell(ws, value)
    if isinstance(value, str) and value.startswith("="):
        cell.data_type = "s"       # text a binary printed, never a formula
    if style:
        cell.style = style
    return cell


def _table(ws, header, rows, widths, coloured=None):
    """Header row, then the rows; the `coloured` column's cells take their status's fill. Write-only: column
    widths, the frozen pane and the filter are set before rows stream out, the filter's extent after."""
    for col, name in enumerate(header, 1):
        ws.column_dimensions[get_column_letter(col)].width = widths.get(name, 14)
    ws.freeze_panes = "A2"
    ws.append([_cell(ws, name, HEADING) for name in header])
    status_col = header.index(coloured) if coloured else None
    n = 1
    for n, cells in enumerate(rows, 2):
        ws.append([_cell(ws, value, _status_style(value) if col == status_col and value in STATUS_FILLS else BODY)
                   for col, value in enumerate(cells)])
    ws.auto_filter.ref = "A1:%s%d" % (get_column_letter(len(header)), n)


def write_xlsx(statement, path):
    wb = openpyxl.Workbook(write_only=True)
    _add_styles(wb)
    summary = wb.create_sheet("summary")
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
    summary.append([])
    for key, value in facts:
        summary.append([_cell(summary, key, HEADING), _cell(summary, value)])
    for name, s in zip(names, statement["sheets"]):
        _table(wb.create_sheet(name), COLUMNS, rows_of(statement, s), WIDTHS, coloured="status")
    body = io.BytesIO()
    wb.save(body)
    output_files.write(path, body.getvalue())
