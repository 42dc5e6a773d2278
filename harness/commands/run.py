"""./uet run: the conformance suite against a provider, a pair of providers or a matrix of them.

examples:
  ./uet run                                   the embedded default: softuet in namespace pairs, every
                                              profile set, and the golden-corpus decoder cross-check
  ./uet run --provider vendor.yaml            one provider against itself (a certification run)
  ./uet run --initiator a.yaml --target b.yaml    one interop cell (a plugfest)
  ./uet run --matrix a.yaml b.yaml c.yaml     every ordered pair, initiator x target (a nightly CI)
  ./uet run --provider softuet.yaml#hpc --only authz --only 2.2.4.4-a --seed 7
  ./uet run --libfabric /opt/vendor/libfabric --provider vendor.yaml    against a vendor's own libfabric

A manifest is FILE or FILE#VARIANT (./uet manifest check FILE names its problems); a bare name is looked
up in cases/manifests/. The run writes out/runs/<run-id>/ (results.json, junit.xml, summary.txt,
index.html, each cell's logs and manifests) and points out/runs/latest at it.

exit status: 0 every check passed or is not applicable; 1 a check failed, errored or timed out, or the
decoders disagreed; 2 bad usage (a bad manifest, an unloadable provider, no root, an unwritable report
folder, a --libfabric or manifest libfabric that is not a libfabric >= 2.0, that another user can change or
whose .pc has a flag the suite refuses, a manifest environment that sets a loader variable); 3 the suite is
not built or failed unexpectedly (one line names the log with the traceback); 4 nothing failed but the
infrastructure kept checks from running (infra_error: a namespace, container, node or agent lost before the
case could run, still after --infra-retries); 130 interrupted (the partial report is written).
"""
from __future__ import annotations

import argparse
import math
import os
import pathlib
import sys

from containers.choice import PLACEMENTS
from harness.commands import manifest_ref, trust_options

REPO = pathlib.Path(__file__).resolve().parents[2]
# A 32-bit seed: the seeds the run draws are in this range, so their repro commands hold.
SEED_MAX = (1 << 31) - 1
CASE_DEADLINE_MAX_S = 86400.0
CASE_DEADLINE_S = 90.0        # one case; the slowest passing case takes about 4 s
CELL_DEADLINE_S = 1800.0      # one cell; softuet's cells take 1 to 2 minutes
MAX_ATTEMPTS = 100            # --rerun-failures and --repeat (and --infra-retries)
INFRA_RETRIES = 1             # a cell lost to the infrastructure is set up again once by default
EXIT_INFRA = 4                # the run's only problems are infrastructure errors


def add_libfabric(p: argparse.ArgumentParser) -> None:
    """--libfabric, as ./uet run and ./uet certify take it."""
    p.add_argument("--libfabric", type=pathlib.Path, metavar="PREFIX",
                   help="run the sides against the libfabric installed at PREFIX (bin/fi_info or lib/libfabric.so, "
                        "lib/pkgconfig/libfabric.pc; 2.0 or newer): ./uet builds the case binaries against it in "
                        "build-libfabric/<version>-<hash>/ and runs them with its lib first in LD_LIBRARY_PATH; a "
                        "manifest's own libfabric: wins for its side; e.g. --libfabric /opt/vendor/libfabric")


def parser(prog: str = "./uet run") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    who = p.add_mutually_exclusive_group()
    who.add_argument("--provider", metavar="MANIFEST", help="run the suite against this provider (both sides); "
                     "e.g. --provider cases/manifests/softuet.yaml#ai_full")
    who.add_argument("--initiator", metavar="MANIFEST", help="the initiator of one interop cell (with --target); "
                     "e.g. --initiator a.yaml --target b.yaml")
    who.add_argument("--matrix", nargs="+", metavar="MANIFEST", help="every ordered pair of these providers; "
                     "e.g. --matrix a.yaml b.yaml")
    who.add_argument("--pair", metavar="FILE", type=pathlib.Path,
                     help="a pair description (YAML: provider, initiator and target, or matrix; and placement); "
                          "e.g. --pair cases/pairs/softuet-ai-full-hpc-containers.yaml")
    p.add_argument("--target", metavar="MANIFEST", help="the target of the interop cell (with --initiator)")
    p.add_argument("--involving", metavar="MANIFEST", help="with --matrix: only the cells whose initiator or target "
                   "is this manifest, one of the matrix's (a vendor's CI: its provider against every other); e.g. "
                   "--matrix a.yaml b.yaml vendor.yaml --involving vendor.yaml")
    add_libfabric(p)
    p.add_argument("--only", action="append", default=[], metavar="PATTERN",
                   help="repeatable: an area (authz, msg, ...), a statement or clause (2.2.4.4-a, 2.2.6) or cases "
                        "(a gtest filter, e.g. 'Authz.*'); e.g. --only authz --only 2.2.6")
    # The case binaries wait 84 % of their time (./uet bench run-time): four cells overlap on 2 cores.
    p.add_argument("--jobs", type=int, default=4, help="cells run side by side (default 4); e.g. --jobs 2")
    p.add_argument("--seed", type=int, default=None, help=f"the run's seed, 0 to {SEED_MAX} (default: a new one, "
                   "printed); e.g. --seed 7")
    p.add_argument("--report", type=pathlib.Path, default=REPO / "out" / "runs",
                   help="the folder runs are written under (default out/runs); e.g. --report /tmp/runs")
    p.add_argument("--placement", choices=PLACEMENTS, default=None,
                   help="where the two sides of a cell run: namespaces (the default, as root), containers (podman, "
                        "each side its own container) or nodes (each side on a node of a Slurm allocation); "
                        "e.g. --placement containers")
    p.add_argument("--same-host", action="store_true",
                   help="run both sides on this host without namespaces (no root needed; wire checks then "
                        "fail for want of a capture)")
    p.add_argument("--no-decode-check", action="store_true", help="skip the golden-corpus decoder cross-check")
    p.add_argument("--case-deadline", type=float, default=CASE_DEADLINE_S,
                   help=f"seconds a case may take, more than 0 and at most {CASE_DEADLINE_MAX_S:.0f} (default "
                        f"{CASE_DEADLINE_S:.0f})")
    p.add_argument("--cell-deadline", type=float, default=CELL_DEADLINE_S,
                   help=f"seconds a cell may take, more than 0 and at most {CASE_DEADLINE_MAX_S:.0f} (default "
                        f"{CELL_DEADLINE_S:.0f}); past it the cell's remaining cases are errors 'not run: budget'")
    p.add_argument("--run-deadline", type=float, default=None,
                   help="seconds the whole run may take (default: no limit beyond the cells' own); past it every "
                        "case without a verdict is an error 'not run: budget'; e.g. --run-deadline 3600")
    # The versions are data (spec/wire.yaml spec_versions), read after the set-up: checked there.
    p.add_argument("--spec-version", default=None, metavar="VERSION",
                   help="the UEC spec version to check against: one of spec/wire.yaml's spec_versions (default: "
                        "its default, 1.0.1 today); e.g. --spec-version 1.0.3")
    trust_options.add(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    out.add_argument("--verbose", action="store_true", help="also print every case as it ends")
    add_ci_arguments(p)
    add_shard_arguments(p)
    p.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")),
                   help=argparse.SUPPRESS)
    p.add_argument("--corpus", type=pathlib.Path, default=REPO / "captures" / "golden", help=argparse.SUPPRESS)
    # ./uet asks this before it builds: bad usage (options, manifests) is answered without a build.
    p.add_argument("--check-usage", action="store_true", help=argparse.SUPPRESS)
    return p


def add_ci_arguments(p: argparse.ArgumentParser) -> None:
    """The options a nightly CI uses; harness/trends/ci_options.py reads the files they name."""
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
    ci.add_argument("--infra-retries", type=int, default=INFRA_RETRIES, metavar="N",
                    help=f"set a cell up again up to N times (default {INFRA_RETRIES}; 0: never) when the "
                         "infrastructure kept its cases from running (a namespace, container, Slurm allocation or "
                         "node agent lost before they ran: infra_error), with the same seed; e.g. --infra-retries 2")
    ci.add_argument("--baseline", type=pathlib.Path, metavar="RUN",
                    help="an earlier run (its folder or results.json) to compare with: the report gets a section of "
                         "regressions, fixes, new and removed checks (./uet compare); e.g. --baseline out/runs/latest")


def add_shard_arguments(p: argparse.ArgumentParser) -> None:
    """--shard and its weights (harness/shards/); ./uet merge joins the shards' run folders."""
    shards = p.add_argument_group("shards (several machines, one run: ./uet merge joins them)")
    shards.add_argument("--shard", metavar="I/N", help="run only shard I of N (1 <= I <= N): a deterministic part of "
                        "the plan, cut by cell (a run of one cell: by area), the same on every machine given the "
                        "same suite, manifests, options and --seed (give one: every shard needs the same); e.g. "
                        "--shard 2/3 --seed 7")
    shards.add_argument("--shard-weights", type=pathlib.Path, metavar="RUN",
                        help="balance the shards by the durations an earlier run recorded (its folder or "
                             "results.json) instead of the areas' declared weights; e.g. --shard-weights out/runs/latest")


def shard(text: str) -> tuple[int, int] | None:
    """(I, N) of --shard I/N; ValueError naming what is wrong (the standard library only: the front door's)."""
    index, slash, count = text.partition("/")
    if not (slash and index.isdigit() and count.isdigit()):
        raise ValueError(f"--shard {text}: give I/N, this shard's number and the number of shards, e.g. --shard 2/3")
    i, n = int(index), int(count)
    if n < 1:
        raise ValueError(f"--shard {text}: a run has at least 1 shard")
    if not 1 <= i <= n:
        raise ValueError(f"--shard {text}: the shard's number is 1 to {n}")
    return i, n


def parse(argv: list[str], prog: str = "./uet run") -> tuple[argparse.Namespace, argparse.ArgumentParser]:
    """The options, with every check that needs only the standard library; exits 2 naming what is wrong (as
    `prog`: another command that passes ./uet run's options on says so)."""
    p = parser(prog)
    args = p.parse_args(argv)
    if args.pair and args.target:
        p.error("--target goes with --initiator, not with --pair (the pair file names the target)")
    if args.target and not args.initiator and not args.pair:
        p.error("--target goes with --initiator (an interop cell); e.g. --initiator a.yaml --target b.yaml")
    if args.initiator and not args.target:
        p.error("--initiator needs --target (for one provider against itself use --provider)")
    if args.involving and not args.matrix:
        p.error("--involving goes with --matrix (it keeps the matrix's cells involving that manifest)")
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    if args.seed is not None and not 0 <= args.seed <= SEED_MAX:
        p.error(f"--seed {args.seed} is out of range: a seed is 0 to {SEED_MAX}")
    for option, value in (("--case-deadline", args.case_deadline), ("--cell-deadline", args.cell_deadline),
                          ("--run-deadline", args.run_deadline)):
        if value is not None and not (math.isfinite(value) and 0 < value <= CASE_DEADLINE_MAX_S):
            p.error(f"{option} {value} is not a deadline: give seconds, more than 0 and at most {CASE_DEADLINE_MAX_S:.0f}")
    if args.same_host and args.placement:
        p.error("--same-host and --placement exclude each other (--same-host is both sides on this host)")
    if not 0 <= args.rerun_failures < MAX_ATTEMPTS:
        p.error(f"--rerun-failures {args.rerun_failures} is out of range: 0 to {MAX_ATTEMPTS - 1}")
    if not 1 <= args.repeat <= MAX_ATTEMPTS:
        p.error(f"--repeat {args.repeat} is out of range: 1 to {MAX_ATTEMPTS}")
    if not 0 <= args.infra_retries < MAX_ATTEMPTS:
        p.error(f"--infra-retries {args.infra_retries} is out of range: 0 to {MAX_ATTEMPTS - 1}")
    if args.shard is not None:
        try:
            args.shard = shard(args.shard)
        except ValueError as exc:
            p.error(str(exc))
        if args.seed is None:  # a seed drawn on each machine would make each shard part of another run
            p.error(f"--shard needs --seed: every shard of a run runs with the same seed (e.g. --shard "
                    f"{args.shard[0]}/{args.shard[1]} --seed 7)")
    elif args.shard_weights is not None:
        p.error("--shard-weights goes with --shard I/N")
    return args, p


def unreadable_inputs(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """(manifests, other files) named that are not there at all; what they hold is checked after the set-up."""
    refs = [r for r in (args.provider, args.initiator, args.target, args.involving) if r] + list(args.matrix or [])
    files = [f"{option} {path}: no such file" for option, path in (("--pair", args.pair),
             ("--expectations", args.expectations), ("--shard-weights", args.shard_weights)) if path is not None and not path.exists()]
    return [p for p in map(manifest_ref.unreadable, refs) if p], files


def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold, 2 (with the reason) when they do not."""
    args, _ = parse(argv)
    manifests, files = unreadable_inputs(args)
    for problem in files:
        print(f"uet run: {problem}", file=sys.stderr)
    if manifests:  # worded as the check after the set-up words them
        print("uet run: bad manifest:\n  " + "\n  ".join(manifests), file=sys.stderr)
    return 2 if manifests or files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
