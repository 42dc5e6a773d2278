"""./uet manifest check|resolve|init: the options of the manifest commands (check and resolve:
harness/inputs/manifest.py; init: harness/inputs/manifest_init.py, whose docstring is init's help).

Standard library only: ./uet answers --help and bad usage before its set-up.
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys

from harness.commands import manifest_ref, trust_options

REPO = pathlib.Path(__file__).resolve().parents[2]
PROBE_TIMEOUT_S = 30.0   # the deadline a run gives fi_getinfo, and init's default
INIT_HELP = "./uet manifest init: a starter manifest for a provider, from what its libfabric's fi_info says about it."


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="./uet manifest", description="Validate provider manifests, or print what a case binary reads.")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate manifests; name every problem (exit 1 if any)")
    check.add_argument("refs", nargs="+", metavar="FILE[#VARIANT]")
    resolve = sub.add_parser("resolve", help="print (or write) the resolved record a case binary reads")
    resolve.add_argument("ref", metavar="FILE[#VARIANT]")
    resolve.add_argument("--port", type=int, default=4793, help="this side's UET UDP port ({port}, default 4793)")
    resolve.add_argument("--build", type=pathlib.Path, default=REPO / "build")
    resolve.add_argument("-o", "--output", type=pathlib.Path)
    # `init` is harness.inputs.manifest_init's own command (./uet manifest init): it probes providers, which this
    # library, loaded by everything, must not depend on.
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    return parser().parse_args(argv)


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value <= 3600):
        raise argparse.ArgumentTypeError(f"{text!r} is not a deadline: give seconds, more than 0 and at most 3600")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", required=True, metavar="NAME",
                        help="the libfabric provider to describe, as fi_getinfo names it (e.g. softuet, 'tcp;ofi_rxm')")
    parser.add_argument("--libfabric", type=pathlib.Path, metavar="PREFIX",
                        help="the libfabric installation to ask (PREFIX/bin/fi_info, PREFIX/lib/libfabric.so; default: "
                        "the suite's own, deps/libfabric). A provider outside it is found through FI_PROVIDER_PATH")
    parser.add_argument("-o", "--output", type=pathlib.Path, metavar="FILE",
                        help="write the manifest there (default: standard output); an existing FILE is refused")
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists")
    parser.add_argument("--timeout", type=_timeout, default=PROBE_TIMEOUT_S, metavar="S",
                        help=f"how long fi_info may take in all (default {PROBE_TIMEOUT_S:g} s)")
    trust_options.add(parser, loader=False)



def parse_init(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./uet manifest init", description=INIT_HELP)
    add_arguments(p)
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold, 2 when they do not, 1 when a manifest named is not there."""
    if argv[:1] == ["init"]:
        parse_init(argv[1:])
        return 0
    args = parse(argv)
    missing = [p for p in map(manifest_ref.unreadable, getattr(args, "refs", None) or [args.ref]) if p]
    for problem in missing:  # as the check words it: a manifest that cannot be read is an invalid one (exit 1)
        print(problem, file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
