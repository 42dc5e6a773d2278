"""./uet compare --html FILE: the comparison of two runs (harness/trends/compare.py) as a self-contained page."""
import pathlib

from harness.files import output_files
from reports import ci_view
from reports.render import environment


def render_compare(comparison: dict, path: pathlib.Path) -> pathlib.Path:
    page = environment().get_template("compare.html").render(
        title="UET runs compared", ci={"comparison": ci_view.comparison_part(comparison)})
    path = pathlib.Path(path)
    output_files.write(path, page)
    return path
