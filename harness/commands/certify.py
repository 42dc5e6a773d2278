"""./uet certify: the mustpass of a provider's claims, run, and sealed as a submission package.

examples:
  ./uet certify --provider cases/manifests/softuet.yaml#hpc
  ./uet certify --initiator a.yaml --target b.yaml --seed 7
  ./uet certify --provider vendor.yaml --lab "Example Lab"    # the lab a plugfest's results site names

It derives the mustpass (harness/certify/mustpass.py), runs the suite with nothing left out and a fixed seed
(printed), and writes out/submissions/<provider>-<date>-<suite commit>.tar.zst: the whole run folder, the
manifests, mustpass.json, suite.json (commit, changes, hashes of the binaries and spec data) and SHA256SUMS.
Its layout: reports/SUBMISSION-FORMAT.md. ./uet verify PACKAGE checks one offline.

exit status: 0 the package is written and every mustpass check passed or is not applicable; 1 it is written
and the run failed (a verifier will reject it); 2 bad usage; 3 the suite is not built, the run could not
finish, or it failed unexpectedly (one line names the log with the traceback).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys

from harness.commands import manifest_ref, trust_options
from harness.commands import run as run_options
from harness.commands.run import SEED_MAX

REPO = pathlib.Path(__file__).resolve().parents[2]
# A lab's name as the package carries it (mustpass.json "lab") and ./uet plugfest shows it: plain enough for a
# page, a terminal and a file name, whoever wrote it.
LAB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}")
LAB_RULE = "1 to 64 of letters, digits, space, '.', '_' and '-', starting with a letter or digit"


def lab_name(text: str) -> str:
    """argparse's type of a lab name."""
    if not LAB_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a lab name ({LAB_RULE})")
    return text


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./uet certify", description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--provider", metavar="MANIFEST", help="the provider to certify (both sides)")
    who.add_argument("--initiator", metavar="MANIFEST", help="the initiator of a pair (with --target)")
    p.add_argument("--target", metavar="MANIFEST", help="the target of the pair (with --initiator)")
    p.add_argument("--seed", type=int, default=None, help=f"the run's seed, 0 to {SEED_MAX} (default: a new one, printed)")
    p.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "submissions",
                   help="where the package is written (default out/submissions)")
    p.add_argument("--lab", type=lab_name, default=None,
                   help="the lab that ran it, recorded in the package (mustpass.json) for ./uet plugfest ingest")
    p.add_argument("--jobs", type=int, default=None, help="passed to ./uet run")
    run_options.add_libfabric(p)
    trust_options.add(p)
    # The suite's own tests make small packages; the mustpass then records what was left out and a
    # verifier rejects the package as incomplete.
    p.add_argument("--only", action="append", default=[], help=argparse.SUPPRESS)
    p.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")),
                   help=argparse.SUPPRESS)
    p.add_argument("--check-usage", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if bool(args.initiator) != bool(args.target):
        p.error("--initiator and --target go together (for one provider against itself use --provider)")
    if args.seed is not None and not 0 <= args.seed <= SEED_MAX:
        p.error(f"--seed {args.seed} is out of range: a seed is 0 to {SEED_MAX}")
    return args



def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold, 2 (with the reason) when they do not."""
    args = parse(argv)
    missing = [p for p in map(manifest_ref.unreadable, filter(None, (args.provider, args.initiator, args.target))) if p]
    for problem in missing:
        print(f"uet certify: {problem}", file=sys.stderr)
    return 2 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
