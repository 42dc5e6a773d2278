"""The plugfest results site: index.html, the implementation × implementation matrix (reports/plugfest_view.py),
rendered through reports/templates/plugfest/ (autoescaped, like every page). Static and self-contained
(inlined stylesheet, no script, no external resource); every link is relative to the site's folder, where
each package's evidence lies (evidence/<hash>/)."""
import datetime
import pathlib

from harness.files import output_files
from reports import plugfest_view
from reports.render import environment

PAGE = "index.html"


def render_site(packages: list[dict], out_dir: pathlib.Path, now: datetime.datetime) -> pathlib.Path:
    """Writes out_dir/index.html; returns its path."""
    html = environment().get_template("plugfest/index.html").render(
        title="UET plugfest results", site=plugfest_view.site(packages, now))
    output_files.write(pathlib.Path(out_dir) / PAGE, html)
    return pathlib.Path(out_dir) / PAGE
