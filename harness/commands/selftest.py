"""./uet selftest: the mutation run (harness/selftest/mutation.py): every fault knob of softuet must make a check fail.

Its options and the knob names, checked with the standard library before the set-up.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def _faults_def():
    sys.path.insert(0, str(REPO / "fep" / "tools"))
    import faults_md  # the one reader of the knob list
    return faults_md, faults_md.FAULTS_DEF.read_text()


def knobs() -> list[tuple[str, str, str]]:
    """[(name, statement, rule)] of fep/src/faults.def."""
    reader, text = _faults_def()
    return reader.knobs(text)


def named_checks() -> dict[str, list[str]]:
    """knob -> the cases that must fail with it on, as fep/src/faults.def names them beside the knob."""
    reader, text = _faults_def()
    return reader.named_checks(text)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="./uet selftest", description=__doc__.splitlines()[0])
    parser.add_argument("--knob", action="append", default=[], help="only this knob (repeatable)")
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")))
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "report")
    parser.add_argument("--jobs", type=int, default=2,
                        help="knobs at a time, when their runs are isolated in namespace pairs (default 2)")
    parser.add_argument("--full", action="store_true",
                        help="every case of every cell for every knob (the old cross product; about 20 min)")
    parser.add_argument("--check-usage", action="store_true", help=argparse.SUPPRESS)  # ./uet, before it builds
    args = parser.parse_args(argv)
    try:
        known = {k[0] for k in knobs()}
    except ValueError as exc:  # faults_md.FaultsDefError: the suite's own list is broken, not the options
        print(f"./uet selftest: {exc}", file=sys.stderr)
        sys.exit(3)
    unknown = sorted(set(args.knob) - known)
    if unknown:
        parser.error(f"no such knob: {', '.join(unknown)} (fep/src/faults.def lists them)")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold, 2 (with the reason) when they do not."""
    parse(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
