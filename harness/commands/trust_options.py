"""The options that let a run use what the suite otherwise refuses to trust, for ./uet run, certify and manifest
init. What each let through is recorded (results.json's run_info.opt_ins; a certify package carries it and
./uet verify names it).

Standard library only: ./uet answers --help and bad usage before its set-up.
"""
from __future__ import annotations

import argparse

TRUST_FOREIGN_LIBFABRIC = "--trust-foreign-libfabric"     # harness/inputs/libfabric_trust.py
ALLOW_LOADER_ENVIRONMENT = "--allow-loader-environment"   # harness/inputs/loader_environment.py


def add(p: argparse.ArgumentParser, *, loader: bool = True) -> None:
    p.add_argument(TRUST_FOREIGN_LIBFABRIC, action="store_true",
                   help="as root, use a libfabric (--libfabric, a manifest's libfabric:) that another user can change "
                        "(owned by them, or writable by group or others): the suite refuses it otherwise, since root "
                        "runs, loads and builds with it; the results record it")
    if loader:
        p.add_argument(ALLOW_LOADER_ENVIRONMENT, action="store_true",
                       help="let a manifest's environment set the dynamic loader's variables (LD_PRELOAD, LD_AUDIT, "
                            "LD_LIBRARY_PATH, ...): code they name runs in the case binary before its main and can "
                            "take the verdict key; the results and a certify package record it, and ./uet verify "
                            "names it")


def given(args: argparse.Namespace) -> list[str]:
    """The options of these that `args` holds, as typed."""
    return [o for o in (TRUST_FOREIGN_LIBFABRIC, ALLOW_LOADER_ENVIRONMENT)
            if getattr(args, o.removeprefix("--").replace("-", "_"), False)]
