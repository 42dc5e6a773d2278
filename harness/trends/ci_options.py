"""The files the options of ./uet run a nightly CI uses name (--expectations, --baseline; the options
themselves: harness/commands/run.py), read before anything runs (./uet asks with --check-usage before it
builds): a bad file is exit 2 naming what is wrong."""
from __future__ import annotations

import argparse

from harness.trends import compare as compare_mod
from harness.results import expectations as expectations_mod
def check(args: argparse.Namespace, p: argparse.ArgumentParser) -> None:
    """Loads the files the options name into args.expectations_doc and args.baseline_doc."""
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
