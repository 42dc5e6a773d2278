"""The options of ./uet run a nightly CI uses: --expectations, --rerun-failures, --repeat, --baseline. Each is
checked before anything runs (./uet asks with --check-usage before it builds): a bad file is exit 2 naming
what is wrong."""
from __future__ import annotations

import argparse
import pathlib

from harness import compare as compare_mod
from harness import expectations as expectations_mod

MAX_ATTEMPTS = 100


def add_arguments(p: argparse.ArgumentParser) -> None:
    ci = p.add_argument_group("nightly CI")
    ci.add_argument("--expectations", type=pathlib.Path, metavar="FILE",
                    help="known failures (YAML, cases/expectations/expectations.schema.yaml): a failure an entry "
                         "expects does not fail the run; stale entries are reported; e.g. --expectations "
                         "cases/expectations/example.yaml")
    again = ci.add_mutually_exclusive_group()
    again.add_argument("--rerun-failures", type=int, default=0, metavar="N",
                       help="run each failing case up to N times more (the same seed first, then new ones): one that "
                            "then passes is flaky; e.g. --rerun-failures 2")
    again.add_argument("--repeat", type=int, default=1, metavar="N",
                       help="run everything N times (the run's seed, then new ones) and report each check's pass "
                            "rate; e.g. --repeat 5")
    ci.add_argument("--baseline", type=pathlib.Path, metavar="RUN",
                    help="an earlier run (its folder or results.json) to compare with: the report gets a section of "
                         "regressions, fixes, new and removed checks (./uet compare); e.g. --baseline out/runs/latest")


def check(args: argparse.Namespace, p: argparse.ArgumentParser) -> None:
    """Loads the files the options name into args.expectations_doc and args.baseline_doc."""
    if not 0 <= args.rerun_failures < MAX_ATTEMPTS:
        p.error(f"--rerun-failures {args.rerun_failures} is out of range: 0 to {MAX_ATTEMPTS - 1}")
    if not 1 <= args.repeat <= MAX_ATTEMPTS:
        p.error(f"--repeat {args.repeat} is out of range: 1 to {MAX_ATTEMPTS}")
    args.expectations_doc = args.baseline_doc = None
    if args.expectations:
        try:
            args.expectations_doc = expectations_mod.load(args.expectations)
        except expectations_mod.ExpectationsError as exc:
            p.error("bad expectations file:\n  " + str(exc).replace("\n", "\n  "))
    if args.baseline:
        try:
            args.baseline_doc = compare_mod.load_run(args.baseline)
        except compare_mod.RunError as exc:
            p.error(f"--baseline: {exc}")
