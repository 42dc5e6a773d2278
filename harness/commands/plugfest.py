"""./uet plugfest: a plugfest's results site, from the submission packages (./uet certify) of many labs.

    ./uet plugfest ingest PACKAGE... [--lab NAME]   verify each package, record it, render the site
    ./uet plugfest render                           render the site again from the history database

ingest runs ./uet verify's checks on each package and records only a valid one, with its provenance: the
lab (the package's own, from ./uet certify --lab; --lab names it for a package that carries none, and the
site says so), the suite commit, the builds of each side and the date it was certified. Sending the same
package again (the same bytes) changes nothing; a package of the same lab, suite commit and builds as one
recorded supersedes it when certified later (the earlier stays in the history, not counted). Packages are
kept in the history's SQLite database (default out/history/history.sqlite, schema reports/HISTORY-INDEX.md)
and their evidence in the site's folder (default out/plugfest/: index.html, evidence/<hash>/). The site is
static: open out/plugfest/index.html, or publish the folder as it is.

exit status: 0 every package accepted or de-duplicated, and the site written; 1 a package was refused as
invalid by verify's checks (named, with verify's findings; nothing of it recorded); 2 bad usage: a path that
is not a package or a package verify refuses to read (over a limit), a package without a lab and no --lab,
a database of another schema, a folder that cannot be written; 3 it failed unexpectedly. Each package is
judged on its own; the status is the worst of them.
"""
from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import sys

from harness.commands.certify import lab_name

REPO = pathlib.Path(__file__).resolve().parents[2]


def _when(text: str) -> datetime.datetime:
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time") from None
    return when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./uet plugfest", description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="action", required=True, metavar="ingest|render")
    ingest = sub.add_parser("ingest", help="verify and record packages, then render the site")
    ingest.add_argument("packages", nargs="+", type=pathlib.Path, metavar="PACKAGE", help="a .tar.zst of ./uet certify")
    ingest.add_argument("--lab", type=lab_name, default=None,
                        help="the lab of packages that name none (a package's own lab must agree)")
    render = sub.add_parser("render", help="render the site again from the database")
    for q in (ingest, render):
        q.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "plugfest",
                       help="the site's folder (default out/plugfest/)")
        q.add_argument("--db", type=pathlib.Path, default=REPO / "out" / "history" / "history.sqlite",
                       help="the history database (default out/history/history.sqlite)")
        q.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")),
                       help=argparse.SUPPRESS)
        # the time the pages give ages against (a test's fixed clock); default now
        q.add_argument("--now", type=_when, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    caller = pathlib.Path(os.environ.get("UET_CALLER_DIR", os.getcwd()))  # ./uet runs from the repository
    args.out, args.db = caller / args.out, caller / args.db
    args.packages = [caller / x for x in getattr(args, "packages", [])]
    return args


def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold, 2 (naming it) for a PACKAGE that is not a file."""
    args = parse(argv)
    missing = [str(x) for x in args.packages if not x.is_file()]
    for name in missing:  # worded as harness/plugfest/ingest.py words it
        print(f"uet plugfest: not a package: {name}: no such file", file=sys.stderr)
    return 2 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
