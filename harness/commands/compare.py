"""./uet compare OLD NEW: what changed between two runs (run folders or results.json files), check by check
on the stable result ids: regressions, fixes, other verdict changes, new and removed checks, changed reasons
and blame, and the time per area.

examples:
  ./uet compare out/runs/20261126-020000-s7 out/runs/latest
  ./uet compare last-night/results.json tonight/results.json --json
  ./uet compare OLD NEW --html compare.html

exit status: 0 no regression; 1 a regression (a check that passed now fails, errors, times out or is
flaky); 2 bad usage (a run folder without results.json, a file that is not a run's results); 3 it failed unexpectedly (one line names the log
with the traceback).
"""
from __future__ import annotations

import argparse
import pathlib
import sys


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./uet compare", description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old", type=pathlib.Path, help="the earlier run: its folder or results.json")
    p.add_argument("new", type=pathlib.Path, help="the later run: its folder or results.json")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON instead of text")
    p.add_argument("--html", type=pathlib.Path, metavar="FILE", help="also write it as an HTML page; e.g. --html c.html")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold and both runs are there, 2 (naming what is not) when not."""
    args = parse(argv)
    missing = [path for path in (args.old, args.new) if not path.exists()]
    for path in missing:  # worded as harness/trends/compare.py's reader words it
        print(f"uet compare: {path}: cannot read: No such file or directory (give a run folder or its "
              "results.json)", file=sys.stderr)
    return 2 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
