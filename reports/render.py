"""results.json -> index.html and one page per cell, through the Jinja2 templates in reports/templates/.

The pages are self-contained (the stylesheet is inlined, no script, no web fonts) so a run folder can be
copied anywhere and read offline; links to captures and logs are relative to the run folder.
"""
import functools
import pathlib

import jinja2

from harness.inputs import catalogue as catalogue_mod
from harness.files import output_files
from reports import by_spec_version, causes_view, conformance_view, sections, view

TEMPLATES = pathlib.Path(__file__).resolve().parent / "templates"
NO_TEXT = "(not in the requirement catalogue)"


def environment():
    # StrictUndefined: a key the view forgot to provide fails the render instead of printing nothing.
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals["verdict_columns"] = [(v, view.VERDICT_LABELS[v]) for v in view.VERDICTS] + [("total", "total")]
    return env


@functools.cache
def catalogue_texts():
    """id -> text of every statement of the suite's catalogue, read by its one reader (harness/inputs/catalogue.py);
    {} when it cannot be read (the page then says so per statement rather than failing the whole report)."""
    try:
        return {s.id: s.text for s in catalogue_mod.load(None)}
    except catalogue_mod.CatalogueError:
        return {}


def statement_text_lookup(results):
    """A function id -> text: the run's coverage block when its statements carry text (it is what the run
    was checked against), else spec/catalogue.yaml, read only when first needed."""
    from_coverage = (results.get("coverage") or {}).get("statements") or {}

    def text(ident):
        entry = from_coverage.get(ident)
        if isinstance(entry, dict) and entry.get("text"):
            return entry["text"]
        return catalogue_texts().get(ident) or NO_TEXT
    return text


def write_spec_version_pages(env, results, info, run_dir) -> list[dict]:
    """One matrices page per spec version when the run covers several ([] and no page when it covers one)."""
    groups = by_spec_version.groups(results)
    if len(groups) == 1:
        return []
    pages = []
    for version, sub in groups:
        page = by_spec_version.page_of(version)
        output_files.write(run_dir / page, env.get_template("spec_version.html").render(
            root="", title="UET conformance run %s: spec %s" % (info["title"], version), info=info, version=version,
            interop=view.interop_matrix(sub), negotiation=view.negotiation_matrix(sub), failures_page="index.html"))
        pages.append({"version": version, "page": page,
                      "counts": view.counts_row(view.verdict_counts(sub.get("results", [])))})
    return pages


def render_conformance(env, info, statement, run_dir, causes=()):
    """conformance.html, the causes of the failures and the totals, and conformance/<sheet>.html, one sheet's
    statements each."""
    output_files.write(run_dir / conformance_view.PAGE, env.get_template("conformance.html").render(
        root="", title="UET conformance run %s: conformance statement" % info["title"], info=info,
        page=conformance_view.page(statement, run_dir), causes=list(causes)))
    template = env.get_template("conformance_sheet.html")
    for path, sheet in conformance_view.sheet_pages(statement, run_dir):
        output_files.write(run_dir / path, template.render(
            root=conformance_view.ROOT_FROM_SHEET, info=info, sheet=sheet,
            title="UET conformance run %s: conformance statement, %s %s %s" % (info["title"], sheet["side"], sheet["manifest"],
                                                          sheet["profile"])), base=run_dir)


def render_html(results: dict, run_dir: pathlib.Path, statement: dict | None = None) -> pathlib.Path:
    """Write run_dir/index.html, run_dir/cells/<cell>.html, run_dir/conformance.html and a page per sheet of
    the conformance statement in run_dir/conformance/ (`statement`, as the run just wrote it, else read back
    from the run folder); returns the index's path."""
    run_dir = pathlib.Path(run_dir)
    env = environment()
    text = statement_text_lookup(results)
    info = view.run_info(results)
    cells = view.cells(results)
    causes = causes_view.rows(results, text)
    spec_pages = write_spec_version_pages(env, results, info, run_dir)
    page = sections.Page(results=results, run_dir=run_dir, statement_text=text, causes=causes, spec_pages=spec_pages)
    index = env.get_template("index.html").render(
        root="", title="UET conformance run " + info["title"], info=info, cells=cells, failures_page="",
        **sections.index_variables(page))
    cell_template = env.get_template("cell.html")
    for cell in results.get("cells", []):
        page = view.cell_page(results, cell, run_dir, text)
        page["causes"] = causes_view.rows({"cells": [cell], "results": [r for r in results.get("results", [])
                                                                        if r.get("cell") == cell["id"]]}, text)
        output_files.write(run_dir / view.page_of(cell["id"]), cell_template.render(
            root="../", title="UET conformance run %s: %s" % (info["title"], cell["id"]), info=info, cell=page),
            base=run_dir)
    render_conformance(env, info, statement or conformance_view.statement_of(results, run_dir), run_dir, causes)
    out = run_dir / "index.html"
    output_files.write(out, index)  # last: until it replaces the placeholder (write_pending), the report is partial
    return out


def write_pending(run_dir: pathlib.Path, run_id: str) -> pathlib.Path:
    """run_dir/index.html saying the report is not written yet, so a run that cannot write its report (a full
    disk) still leaves a page that says so; render_html replaces it last."""
    out = pathlib.Path(run_dir) / "index.html"
    output_files.write(out, environment().get_template("pending.html").render(
        title="UET conformance run %s: report not written" % run_id))
    return out
