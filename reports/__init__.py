"""The HTML report of a run, rendered from its results.json (the format: reports/RESULTS-FORMAT.md).

    python3 -m reports RUN_DIR      re-render RUN_DIR/index.html (and its cell pages) from RUN_DIR/results.json
"""
from reports.render import render_html

__all__ = ["render_html"]
