"""python3 -m reports RUN_DIR: re-render RUN_DIR/index.html from RUN_DIR/results.json.

Exit status: 0 rendered; 2 bad usage, or results.json missing, not valid JSON or not of the format (the
message names the file), or the report cannot be written.
"""
import argparse
import pathlib
import sys

import jinja2

from harness.results.conformance_statement import RunFolderError, read_results
from reports.render import render_html


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m reports",
                                     description="Render a run folder's index.html from its results.json.")
    parser.add_argument("run_dir", type=pathlib.Path, help="the run folder, e.g. out/runs/<run-id>")
    args = parser.parse_args(argv)
    source = args.run_dir / "results.json"
    try:
        results = read_results(args.run_dir)
    except RunFolderError as exc:
        print("reports: %s" % exc, file=sys.stderr)
        return 2
    try:
        index = render_html(results, args.run_dir)
    except (KeyError, TypeError, AttributeError, ValueError, jinja2.UndefinedError) as exc:
        # A results.json of another shape: say which file and what broke rather than a traceback.
        print("reports: %s: does not follow reports/RESULTS-FORMAT.md (%s: %s)" % (
            source, type(exc).__name__, exc), file=sys.stderr)
        return 2
    except OSError as exc:
        print("reports: cannot write the report into %s: %s" % (args.run_dir, exc), file=sys.stderr)
        return 2
    print(index)
    return 0


if __name__ == "__main__":
    sys.exit(main())
