"""./uet history's work: run folders indexed into the history database, and the trend site (its options and
help: harness/commands/history.py)."""
from __future__ import annotations

import pathlib
import sys

from harness.trends import history_index

from harness.files.untrusted import printable
from harness.commands import history as history_options
from reports.history_site import render_site

REPO = pathlib.Path(__file__).resolve().parents[2]


def shown(value) -> str:
    """A folder name or message as the terminal shows it: escapes written visibly (harness/files/untrusted.py)."""
    return printable(str(value))


def main(argv: list[str]) -> int:
    args = history_options.parse(argv)
    missing = [str(d) for d in args.dirs if not d.is_dir()]
    if missing:
        print(f"history: no such folder: {shown(', '.join(missing))}", file=sys.stderr)
        return 2
    db_path = args.db or args.out / "history.sqlite"
    try:
        db = history_index.open_index(db_path)
    except history_index.IndexRefused as exc:
        print(f"history: {exc}", file=sys.stderr)
        return 2
    tally = {"added": 0, "updated": 0, "unchanged": 0, "skipped": 0}
    for folder in (f for d in args.dirs for f in history_index.run_folders(d)):
        try:
            outcome = history_index.index_run(db, folder)   # one transaction per run
        except history_index.BrokenRun as exc:
            print(f"history: skipped {shown(folder)}: {exc}", file=sys.stderr)
            outcome = "skipped"
        tally[outcome] += 1
        if not args.quiet and outcome != "skipped":
            print(f"history: {outcome}: {shown(folder)}")
    runs = history_index.runs(db)
    db.close()
    try:
        index = render_site(runs, args.out)
    except OSError as exc:
        print(f"history: cannot write the site into {shown(args.out)}: {shown(exc)}", file=sys.stderr)
        return 2
    print("history: %d run(s) indexed (%s); site %s" % (
        len(runs), ", ".join(f"{n} {k}" for k, n in tally.items()), shown(index)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
