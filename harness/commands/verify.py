"""./uet verify PACKAGE: whether a submission package (./uet certify) is valid, offline, without a provider.

examples:
  ./uet verify out/submissions/softuet-hpc-20261127-8577eed291c3.tar.zst
  ./uet verify PACKAGE --report /tmp/verification

It judges each member of the archive before writing any of it (no path outside it, no links or devices),
refuses a package over a limit of harness/certify/package_limits.py (exit 2, naming it), then checks that
SHA256SUMS matches every member with none missing or extra, that the suite commit is in this checkout's
history and its tree was unmodified, the binaries' and spec data's hashes against this checkout's build
when this checkout is that commit (otherwise a caveat says they could not be re-checked), that the
mustpass ran in full for every claimed profile with no fail, error or timeout, that every not-applicable
result has a reason code spec/not-applicable-reasons.yaml allows in a submission, that both decoders
decode every capture again to the decode kept beside it, and that every evidence frame is in its capture.
One line per finding, then the verdict; the report: <report>/verification.json and .txt.

exit status: 0 a valid submission (caveats allowed); 1 an invalid one; 2 bad usage or an unreadable or
refused package; 3 it failed unexpectedly (one line names the log with the traceback).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./uet verify", description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("package", type=pathlib.Path, help="a .tar.zst that ./uet certify wrote")
    p.add_argument("--report", type=pathlib.Path, default=None,
                   help="folder for verification.json and verification.txt (default out/verifications/<package>)")
    p.add_argument("--reasons", type=pathlib.Path, default=None,
                   help="the not-applicable reason codes (default spec/not-applicable-reasons.yaml)")
    p.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")),
                   help=argparse.SUPPRESS)
    p.add_argument("--check-usage", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    caller = pathlib.Path(os.environ.get("UET_CALLER_DIR", os.getcwd()))  # ./uet runs from the repository
    args.package = caller / args.package
    args.report = caller / args.report if args.report else None
    return args



def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold and the package is there, 2 (with the reason) when not."""
    args = parse(argv)
    if not args.package.is_file():
        print(f"uet verify: no package at {args.package}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
