"""./uet compare --html FILE: the comparison of two runs (harness/compare.py) as a self-contained page."""
import pathlib

from reports import ci_view
from reports.render import environment


def render_compare(comparison: dict, path: pathlib.Path) -> pathlib.Path:
    page = environment().get_template("compare.html").render(
        title="UET runs compared", ci={"comparison": ci_view.comparison_part(comparison)})
    path = pathlib.Path(path)
    path.write_text(page, encoding="utf-8")
    return path
