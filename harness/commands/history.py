"""./uet history DIR...: index run folders into the history database and write the trend site.

    ./uet history                                   every run below out/runs; site in out/history/
    ./uet history --out site --db hist.sqlite a/ b/ run folders, or folders of runs, anywhere

Each DIR is a run folder (it holds results.json) or a folder of run folders. The index (SQLite, schema in
reports/HISTORY-INDEX.md) keeps every run indexed so far, so the site shows the history, not only the DIRs of
this call; indexing a run again changes nothing unless its results.json changed. A run folder that cannot be
read is named on stderr and skipped.

Exit status: 0 the site is written (also when a run folder was skipped: it is named); 2 bad usage (a DIR that
does not exist, a database of another schema or not a database, a site or database folder that cannot be
written or that another user controls); 3 it failed unexpectedly (one line names the log with the
traceback).
"""
from __future__ import annotations

import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./uet history", description="Index run folders and write the trend site.",
                                epilog="e.g. ./uet history out/runs; ./uet history --out /tmp/site /tmp/runs")
    p.add_argument("dirs", nargs="*", type=pathlib.Path, metavar="DIR", default=[REPO / "out" / "runs"],
                   help="a run folder (out/runs/<run-id>) or a folder of them (default out/runs)")
    p.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "history",
                   help="the site's folder (default out/history/)")
    p.add_argument("--db", type=pathlib.Path, default=None,
                   help="the SQLite index (default OUT/history.sqlite, published with the site)")
    p.add_argument("--quiet", action="store_true", help="print only skipped folders and the site's path")
    return p.parse_args(argv)



def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold and the folders are there, 2 (naming them) when not."""
    args = parse(argv)
    missing = [str(d) for d in args.dirs if not d.is_dir()]
    if missing:  # worded as harness/trends/history.py words it
        print(f"history: no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
