"""What one run of the suite does, fixed before it starts: the run's options as a frozen plan (built from
./uet run's parsed options: harness/run/run_suite.py parse_args), which harness/run/execute.py carries out.
certify and the tests make theirs from a command line too, so a plan means what that command means."""
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import random
import shlex

from harness.commands.run import SEED_MAX


@dataclasses.dataclass(frozen=True)
class RunPlan:
    mode: str                       # default, provider, pair, matrix (harness/run/plan.py)
    refs: tuple[str, ...]           # the manifests of the mode, as given
    seed: int                       # given, or drawn when the plan is made
    command: str                    # as the report shows it: ./uet run and the options as typed
    build: pathlib.Path
    report: pathlib.Path            # the folder of runs; the run's own is made in it when it starts
    spec_version: str
    only: tuple[str, ...]
    jobs: int
    placement: str | None
    same_host: bool
    libfabric: pathlib.Path | None
    trust_foreign_libfabric: bool
    allow_loader_environment: bool
    case_deadline: float
    cell_deadline: float
    run_deadline: float | None
    repeat: int
    rerun_failures: int
    infra_retries: int              # set-ups again of a cell the infrastructure kept from running
    expectations_doc: dict | None   # the files of --expectations and --baseline, read
    baseline_doc: dict | None
    no_decode_check: bool
    corpus: pathlib.Path
    quiet: bool
    verbose: bool
    involving: str | None = None    # --involving: only the matrix's cells whose initiator or target it is
    shard: tuple[int, int] | None = None        # --shard I/N (harness/shards/)
    shard_weights: pathlib.Path | None = None   # --shard-weights RUN: an earlier run's durations


def mode_and_refs(args) -> tuple[str, list[str]]:
    if args.provider:
        return "provider", [args.provider]
    if args.initiator:
        return "pair", [args.initiator, args.target]
    if args.matrix:
        return "matrix", list(dict.fromkeys(args.matrix))
    return "default", []


def from_args(args: argparse.Namespace, argv: list[str]) -> RunPlan:
    """The plan of ./uet run's parsed options `args` (`argv`, as typed, is what the report shows)."""
    mode, refs = mode_and_refs(args)
    return RunPlan(
        mode=mode, refs=tuple(refs),
        seed=args.seed if args.seed is not None else random.SystemRandom().randrange(1, SEED_MAX + 1),
        command="./uet run " + " ".join(shlex.quote(a) for a in argv), build=args.build, report=args.report,
        spec_version=args.spec_version, only=tuple(args.only), jobs=args.jobs, placement=args.placement,
        same_host=args.same_host, libfabric=args.libfabric, trust_foreign_libfabric=args.trust_foreign_libfabric,
        allow_loader_environment=args.allow_loader_environment, case_deadline=args.case_deadline,
        cell_deadline=args.cell_deadline, run_deadline=args.run_deadline, repeat=args.repeat,
        rerun_failures=args.rerun_failures, infra_retries=args.infra_retries, expectations_doc=args.expectations_doc,
        baseline_doc=args.baseline_doc, no_decode_check=args.no_decode_check, corpus=args.corpus, quiet=args.quiet,
        verbose=args.verbose, involving=args.involving, shard=args.shard, shard_weights=args.shard_weights)
