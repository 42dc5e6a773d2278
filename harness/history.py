"""./uet history DIR...: index run folders into the history database and write the trend site.

    ./uet history                                   every run below out/runs; site in out/history/
    ./uet history --out site --db hist.sqlite a/ b/ run folders, or folders of runs, anywhere

Each DIR is a run folder (it holds results.json) or a folder of run folders. The index (SQLite, schema in
reports/HISTORY-INDEX.md) keeps every run indexed so far, so the site shows the history, not only the DIRs of
this call; indexing a run again changes nothing unless its results.json changed. A run folder that cannot be
read is named on stderr and skipped.

Exit status: 0 the site is written (also when a run folder was skipped: it is named); 2 bad usage (a DIR that
does not exist, a database of another schema or not a database, a site folder that cannot be written).
"""
from __future__ import annotations

import argparse
import pathlib
import sqlite3
import sys

from harness import history_index
from reports.history_site import render_site

REPO = pathlib.Path(__file__).resolve().parent.parent


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
    args = parse(argv)
    missing = [str(d) for d in args.dirs if not d.is_dir()]
    if missing:
        print(f"history: no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    db_path = args.db or args.out / "history.sqlite"
    try:
        db = history_index.connect(db_path)
    except history_index.SchemaMismatch as exc:
        print(f"history: {exc}", file=sys.stderr)
        return 2
    except (sqlite3.DatabaseError, OSError) as exc:
        print(f"history: {db_path}: not a history database: {exc}", file=sys.stderr)
        return 2
    tally = {"added": 0, "updated": 0, "unchanged": 0, "skipped": 0}
    for folder in (f for d in args.dirs for f in history_index.run_folders(d)):
        try:
            outcome = history_index.index_run(db, folder)   # one transaction per run
        except history_index.BrokenRun as exc:
            print(f"history: skipped {folder}: {exc}", file=sys.stderr)
            outcome = "skipped"
        tally[outcome] += 1
        if not args.quiet and outcome != "skipped":
            print(f"history: {outcome}: {folder}")
    runs = history_index.runs(db)
    db.close()
    try:
        index = render_site(runs, args.out)
    except OSError as exc:
        print(f"history: cannot write the site into {args.out}: {exc}", file=sys.stderr)
        return 2
    print("history: %d run(s) indexed (%s); site %s" % (
        len(runs), ", ".join(f"{n} {k}" for k, n in tally.items()), index))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
