"""The history site: index.html (overview, providers, profiles, the run table) and cells.html, rendered from
the history index through the Jinja2 templates in reports/templates/history/ (autoescaped, like the report).

The pages are static and self-contained (inlined stylesheet, SVG plots, no script); every link to a run is
relative, so the folder can be published as it is, provided the run folders keep their place beside it.
"""
import pathlib

from harness.files import output_files
from reports import history_view
from reports.render import environment

PAGES = ("index.html", "cells.html")


def render_site(runs: list[dict], out_dir: pathlib.Path) -> pathlib.Path:
    """Write out_dir/index.html and out_dir/cells.html; returns the index's path."""
    out_dir = pathlib.Path(out_dir)
    env = environment()
    site = history_view.site(runs, out_dir)
    for page in PAGES:
        html = env.get_template("history/" + page).render(title="UET conformance history", site=site)
        output_files.write(out_dir / page, html)
    return out_dir / "index.html"
