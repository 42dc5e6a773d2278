"""The mutation run (the suite's self-test): every fault knob of softuet (fep/src/faults.def) must make at
least one check that passes without it fail with it (or, for a SHOULD, come out as a warning). A knob no
check catches is a missing case.

    /usr/bin/python3 -m harness.selftest.mutation [--knob NAME ...] [--build build] [--out out/report] [--jobs N] [--full]

First the baselines: the cells of CELLS run once without a knob, which records for each passing case the
statements it covers. The cells are the softuet variants against themselves (all profiles, AI Base + AI
Full, AI Base only: some rules exist only in one profile configuration, a wildcard tag is refused only by
a FEP without HPC) and a few pairs of different profile sets for the negotiation cases (what a FEP sends
to a peer of other profiles: a deferrable send to an HPC FEP, no RUDI to a FEP without HPC).

Then each knob names its statement (faults.def), and runs in stages, stopping at the first that catches it:

  1. targeted: only the cases that cover the knob's statement (a gtest filter of their names, only the
     binaries that hold them), in each cell where they pass, in CELLS order, up to the first cell that
     catches it; with them, the cases faults.def names beside the knob (each in the first cell where it
     passes), which pytest then checks failed;
  2. targeted wire: the suite's wire checks under packet loss (WIRE_CHECKS) that cover the statement
     (their `requirements` mark), up to the first that fails: they see what a case may not (a duplicate
     delivered twice under loss, RUDI, large sends between FEPs of chosen profiles);
  3. broad: every case of every area, cell by cell;
  4. broad wire: every wire check that passes without the knob.

Stages 3 and 4 are for a knob whose statement is named nowhere it shows (a check that names a
neighbouring statement catches it). --full runs instead the old cross product: every case of every cell
for every knob (the wire checks only for a knob no case catches), about 20 minutes on 2 cores.

Writes out/report/mutation.json (the score; per knob the checks that caught it, "cell: case" or "wire:
test", the stage, the errors, the seconds, how many cases and wire checks ran for it and every case verdict
with it on; and the baselines, cell by case) and prints one line per knob as it ends. pytest's verdict tests
(pytest/cases/test_mutation.py) read that file: each knob runs once.

A baseline case that fails is run again on its own with the same seed (harness/selftest/mutation_baseline.py): one
that then passes is flaky, one that fails again failed twice; mutation.json names both (baseline_flaky,
baseline_failed) and so does stderr. Only the knobs that need such a case wait for its rerun; a knob is
never tried against a case that failed twice (and the knob says so in its errors). One flake does not stop
the run: every other knob runs as usual.

Exit status 0 when every knob is caught and every baseline case passed the first time, 1 when a knob is not
caught or a baseline case was flaky or failed twice, 3 when the harness cannot run (no case binaries).

Knobs run --jobs at a time (default 2). As root every run of cases makes a namespace pair of its own
(softuet.yaml says peer_netns), so two knobs never share a UDP port; without root both sides of every run
share the host's ports and knobs run one at a time. The baselines of the cells all run at once (mostly
waiting: the machine stays idle), unless --jobs 1. The wire checks (nftables on a namespace pair of their
own, one pytest session) run one session at a time whatever --jobs says; their baseline runs beside the
case baselines.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
import typing
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

from harness.commands import selftest as selftest_options
from harness.results.results import inconclusive
from harness.results.verdicts import UNDECIDED, Verdict
from harness.selftest.mutation_baseline import Baseline, short_case  # noqa: F401 - short_case: pytest's tests import it here

if typing.TYPE_CHECKING:
    from harness.results.results import Result


def _run_cases():
    """harness.run.run_cases, imported when first needed: ./uet selftest checks its options with this module
    before it builds, and that check must answer at once (run_cases brings the manifest schema)."""
    from harness.run import run_cases
    return run_cases

REPO = pathlib.Path(__file__).resolve().parents[2]
SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
# The seed of every run of cases here (the counted loss's offset): a baseline case that failed runs again with
# the same one, so that a second failure is the same failure.
SEED = 0


@dataclasses.dataclass(frozen=True)
class MutationCell:
    """Where a knob is tried: an initiator variant of softuet and a target variant (None: itself)."""
    initiator: str
    target: str | None = None

    @property
    def label(self) -> str:
        return self.initiator if self.target is None else f"{self.initiator} to {self.target}"

    @property
    def dir(self) -> str:
        return "__".join(v.replace(".yaml", "").replace("#", "-") for v in filter(None, (self.initiator, self.target)))

    def areas(self, build: pathlib.Path) -> list[str]:
        """A pair of different profile sets runs the areas about such pairs (their traits' profile_pairs:
        negotiation); every area runs in a softuet variant against itself."""
        built = _run_cases().area_traits(build)
        return list(built) if self.target is None else [a for a, t in built.items() if t["profile_pairs"]]


# In this order: all three profiles; AI Full (with AI Base, which it builds on) without HPC; AI Base only;
# an AI Full FEP to an HPC FEP (they operate in AI Full: deferrable sends to a FEP without AI Full); a FEP
# with HPC and AI Full to an HPC FEP (they operate in HPC: no deferrable send); a FEP with HPC to one
# without (no RUDI, no rendezvous).
CELLS = [MutationCell("softuet.yaml"), MutationCell("softuet.yaml#ai_base+ai_full"), MutationCell("softuet.yaml#ai_base"),
         MutationCell("softuet.yaml#ai_base+ai_full", "softuet.yaml#hpc"), MutationCell("softuet.yaml", "softuet.yaml#hpc"),
         MutationCell("softuet.yaml", "softuet.yaml#ai_base+ai_full")]
# A verdict that shows the knob broke what the check checks: a failure, or a SHOULD no longer met.
CAUGHT = {Verdict.FAIL, Verdict.WARNING}
# Verdicts with a knob on that say the check could not run (never a catch): reported as errors.
BROKEN = UNDECIDED
# The wire checks that run the FEP over a lossy link (nftables drops), for what no case can observe.
WIRE_CHECKS = ["pytest/fep/test_reliability.py", "pytest/fep/test_rudi.py", "pytest/fep/test_rendezvous.py"]
WIRE_TIMEOUT_S = 900


knobs = selftest_options.knobs
named_checks = selftest_options.named_checks


def ref_of(variant: str) -> str:
    """The manifest reference of a variant label ("softuet.yaml#ai_base" -> an absolute path#variant)."""
    _, _, v = variant.partition("#")
    return f"{SOFTUET}#{v}" if v else str(SOFTUET)


@dataclasses.dataclass
class KnobResult:
    knob: str
    statement: str
    rule: str
    caught_by: list[str] = dataclasses.field(default_factory=list)  # "cell: case" or "wire: test"
    stage: str | None = None  # what caught it: targeted, targeted wire, broad, broad wire (or full)
    errors: list[str] = dataclasses.field(default_factory=list)     # checks that could not run with the knob on
    # cases the host starved with the knob on (an inconclusive error: neither caught nor broken), "cell: case"
    inconclusive: list[str] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    cases_run: int = 0        # case verdicts it took, over every cell and stage
    wire_checks_run: int = 0
    # every case verdict with the knob on ({"cell", "stage", "case", "verdict"}): what pytest's verdict tests
    # read instead of running the knob again
    verdicts: list[dict] = dataclasses.field(default_factory=list)
    # the failed baseline cases run again that this knob needed (it waited for their reruns if they were still
    # going), and those of them that failed twice (never tried with the knob), each "cell: case"
    waited_for: list[str] = dataclasses.field(default_factory=list)
    baseline_failed: list[str] = dataclasses.field(default_factory=list)

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)


@dataclasses.dataclass
class WireBaseline:
    """The wire checks without a knob: {node id: verdict} and {node id: statements}."""
    verdicts: dict[str, str]
    statements: dict[str, list[str]]

    def passing(self, statement: str | None = None) -> list[str]:
        """The node ids that pass (`statement`: and cover it)."""
        return [t for t, v in self.verdicts.items()
                if v == "pass" and (statement is None or statement in self.statements.get(t, []))]


def node_id(classname: str, name: str) -> str:
    """A pytest node id from a JUnit testcase ('pytest.fep.test_rudi.TestRudiKnobs', 'test_x[a]')."""
    for path in WIRE_CHECKS:
        module = path.removesuffix(".py").replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            rest = classname[len(module):].lstrip(".")
            return "::".join([path, *(rest.split(".") if rest else []), name])
    return f"{classname}::{name}"


_live: set[subprocess.Popen] = set()   # pytest sessions of the wire checks under way
_live_lock = threading.Lock()


def stop(proc: subprocess.Popen) -> None:
    """Ends a pytest session of the wire checks and what it started (SIGTERM: its namespace pairs go)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    # The session may be stopped twice (a run ending while Ctrl-C stops everything): the second finds its
    # pipes closed by the first, which is no error.
    try:
        with contextlib.suppress(OSError, ValueError):
            proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError, ValueError):
            proc.communicate()


def stop_all() -> None:
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        stop(proc)


def wire_checks(build: pathlib.Path, xml: pathlib.Path, knob: str | None, tests: list[str] | None = None,
                first_fail: bool = False) -> tuple[dict[str, str], dict[str, list[str]]]:
    """({node id: "pass" | "fail" | "skip" | "error: <why>"}, {node id: statements}) of the wire checks
    (`tests`: these node ids only), with `knob` on (UET_MUTATION_FAULTS). An error (the check could not run)
    is never a catch. `first_fail`: stop at the first failure (-x; after an error, go on with the rest)."""
    env = dict(os.environ, UET_BUILD=str(build.resolve()), PYTHONPATH=str(REPO))
    env.pop("UET_MUTATION_FAULTS", None)
    if knob:
        env["UET_MUTATION_FAULTS"] = knob
    xml.parent.mkdir(parents=True, exist_ok=True)
    verdicts: dict[str, str] = {}
    statements: dict[str, list[str]] = {}
    remaining = list(tests or WIRE_CHECKS)
    for attempt in range(len(remaining) if first_fail else 1):
        part = xml.with_name(f"{xml.stem}.{attempt}.xml") if attempt else xml
        part.unlink(missing_ok=True)
        proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={part}",
                                 *(["-x"] if first_fail else []), *remaining], cwd=REPO, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        with _live_lock:
            _live.add(proc)
        try:
            proc.communicate(timeout=WIRE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            stop(proc)
            verdicts["pytest"] = f"error: the wire checks took more than {WIRE_TIMEOUT_S} s"
            break
        except (OSError, ValueError):  # stop_all() ended the session from another thread, its pipes with it
            verdicts["pytest"] = "error: the wire checks were stopped before their end"
            break
        finally:
            with _live_lock:
                _live.discard(proc)
        if not part.exists():
            verdicts["pytest"] = "error: the wire checks wrote no JUnit XML"
            break
        for tc in ET.parse(part).getroot().iter("testcase"):
            name = node_id(tc.get("classname") or "", tc.get("name") or "")
            error = tc.find("error")
            if error is not None:
                verdicts[name] = "error: " + (error.get("message") or "").strip()[:200]
            elif tc.find("failure") is not None:
                verdicts[name] = "fail"
            else:
                verdicts[name] = "skip" if tc.find("skipped") is not None else "pass"
            statements[name] = [s for p in tc.iter("property") if p.get("name") == "requirements"
                                for s in (p.get("value") or "").split(",") if s]
        left = [t for t in remaining if t not in verdicts]
        if "fail" in verdicts.values() or not left or len(left) == len(remaining):
            break
        remaining = left  # -x stopped at an error, not a failure: the rest may still catch it
    return verdicts, statements


class Mutation:
    """The knob runs against the baselines; `mutate` is safe to call from several threads."""

    def __init__(self, build: pathlib.Path, work: pathlib.Path, full: bool, named: dict[str, list[str]] | None = None):
        self.build, self.work, self.full = build, work, full
        self.named = named or {}  # knob -> the cases that must catch it (faults.def, beside the knob)
        self.baselines: dict[MutationCell, Baseline] = {}
        self.wire_lock = threading.Lock()  # one pytest session of the wire checks at a time
        self.wire_baseline: WireBaseline | None = None

    def run_wire_baseline(self) -> WireBaseline:
        """The wire checks without a knob, run once (the first caller runs them, the others wait)."""
        with self.wire_lock:
            if self.wire_baseline is None:
                verdicts, statements = wire_checks(self.build, self.work / "baseline" / "wire.xml", None)
                self.wire_baseline = WireBaseline(verdicts, statements)
            return self.wire_baseline

    def cases(self, r: KnobResult, cell: MutationCell, stage: str, cases: list[Result] | None, again: int = 2) -> None:
        """Runs `cases` (None: every case) of `cell` with the knob on; adds what caught it and what broke. Cases
        the host starved (inconclusive) run again, up to `again` times, before the stage counts as not caught."""
        base = self.baselines[cell]
        areas = sorted({c.area for c in cases}) if cases else cell.areas(self.build)
        case_filter = ":".join(sorted(c.case for c in cases)) if cases else "*"
        out = self.work / r.knob / (f"{stage.replace(' ', '-')}-{cell.dir}" + (f"-again{3 - again}" if again < 2 else ""))
        # The knob acts in every process: a SOFTUET_FAULTS_ONCE around the run must not turn it off.
        results = _run_cases().run_manifest(ref_of(cell.initiator), self.build, out, areas=areas, case_filter=case_filter,
                                         target=ref_of(cell.target) if cell.target else None, seed=SEED,
                                         extra_env={"SOFTUET_FAULTS": r.knob, "SOFTUET_FAULTS_ONCE": None})
        r.cases_run += len(results)
        r.verdicts += [{"cell": cell.label, "stage": stage, "case": v.case, "verdict": v.verdict} for v in results]
        for v in results:
            if inconclusive(v):
                r.inconclusive.append(f"{cell.label}: {v.case}")
            elif v.verdict in BROKEN:
                r.errors.append(f"{cell.label}: {v.case}: {v.verdict}: {(v.reason or '')[:200]}")
            elif v.verdict in CAUGHT and v.case in base.passing:
                r.caught_by.append(f"{cell.label}: {v.case}")
                r.stage = r.stage or stage
        starved = [base.passing[v.case] for v in results if inconclusive(v) and v.case in base.passing]
        if starved and again and not any(v.verdict in CAUGHT and v.case in base.passing for v in results):
            self.cases(r, cell, stage, starved, again - 1)

    def wire(self, r: KnobResult, stage: str, statement: str | None) -> None:
        """The wire checks that pass without the knob (`statement`: those that cover it) with the knob on,
        up to the first that fails."""
        base = self.run_wire_baseline()
        tests = base.passing(statement)
        if not tests:
            return
        with self.wire_lock:
            with_knob, _ = wire_checks(self.build, self.work / r.knob / f"{stage.replace(' ', '-')}.xml", r.knob,
                                       tests, first_fail=True)
        r.wire_checks_run += len(with_knob)
        r.caught_by += [f"wire: {t}" for t, v in with_knob.items() if v == "fail" and base.verdicts.get(t) == "pass"]
        r.errors += [f"wire: {t}: {v}" for t, v in with_knob.items() if v.startswith("error")]
        if r.caught_by:
            r.stage = r.stage or stage

    def settle(self, r: KnobResult, base: Baseline, statement: str | None, named: set[str],
               everything: bool = False) -> None:
        """Waits for the reruns of the cell's failed baseline cases that the knob needs; records them, and
        those that failed twice (the knob is not tried against them)."""
        r.waited_for += [f"{base.cell.label}: {c}" for c in base.wait(statement, named, everything)]
        broken = base.failed_twice if everything else base.failed_twice_needed(statement, named)
        for x in broken:
            name = f"{base.cell.label}: {x['case']}"
            if name not in r.baseline_failed:
                r.baseline_failed.append(name)
                r.errors.append(f"baseline: {name}: failed twice without the knob ({x['first_verdict']}, then "
                                f"{x['rerun_verdict']}: {(x['rerun_reason'] or '')[:200]}): not tried with the knob")

    def mutate(self, knob: tuple[str, str, str]) -> KnobResult:
        name, statement, rule = knob
        start = time.monotonic()
        r = KnobResult(name, statement, rule)
        named = set(self.named.get(name, ()))
        if self.full:
            for cell, base in self.baselines.items():
                self.settle(r, base, statement, named, everything=True)
                self.cases(r, cell, "full", None)
        else:
            # 1. the cases that name the statement, where they pass, up to the first cell that catches it; and
            # the cases faults.def names beside the knob, each in the first cell where it passes
            pending = set(named)
            for cell, base in self.baselines.items():
                self.settle(r, base, None if r.caught else statement, pending)
                chosen = {} if r.caught else {c.case: c for c in base.covering(statement)}
                for case in base.passing.values():
                    if pending & {case.case, short_case(case.case)}:
                        chosen[case.case] = case
                if chosen:
                    pending -= {n for c in chosen for n in (c, short_case(c))}
                    self.cases(r, cell, "targeted", list(chosen.values()))
            if not r.caught:  # 2. the wire checks that name it
                self.wire(r, "targeted wire", statement)
            for cell, base in self.baselines.items():  # 3. every case
                if not r.caught:
                    self.settle(r, base, statement, named, everything=True)
                    self.cases(r, cell, "broad", None)
        if not r.caught:  # 4. every wire check
            self.wire(r, "broad wire", None)
        if not r.caught:
            r.errors += [f"wire baseline: {t}: {v}" for t, v in self.run_wire_baseline().verdicts.items() if v != "pass"]
        r.seconds = round(time.monotonic() - start, 1)
        return r


def print_table(results: list[KnobResult]) -> None:
    """knob -> the checks that caught it (the first few; mutation.json has them all)."""
    width = max((len(r.knob) for r in results), default=4)
    print(f"\n{'knob':<{width}}  {'statement':<14} caught by")
    for r in results:
        shown = ", ".join(r.caught_by[:3]) + (f" (+{len(r.caught_by) - 3} more)" if len(r.caught_by) > 3 else "")
        print(f"{r.knob:<{width}}  {r.statement:<14} {shown or 'NOT CAUGHT'}")


def baselines(mutation: Mutation, cells: list[MutationCell], jobs: int) -> None:
    """Runs the cells without a knob into mutation.baselines (a binary that ran no case, as it could not
    start, stands for its whole area among the failures)."""
    build, work = mutation.build, mutation.work
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = list(pool.map(lambda c: _run_cases().run_manifest(
            ref_of(c.initiator), build, work / "baseline" / c.dir, areas=c.areas(build),
            target=ref_of(c.target) if c.target else None, seed=SEED), cells))
    for cell, results in zip(cells, runs):
        mutation.baselines[cell] = Baseline(cell, results, cell.areas(build))


def rerun_failures(mutation: Mutation, base: Baseline) -> None:
    """Runs a baseline's failed cases again with the seed, then says what became of each."""
    cell, work = base.cell, mutation.work / "baseline" / base.cell.dir

    def run(area: str, case_filter: str) -> list[Result]:
        return _run_cases().run_manifest(ref_of(cell.initiator), mutation.build, work / f"rerun-{area}", areas=[area],
                                         case_filter=case_filter, target=ref_of(cell.target) if cell.target else None,
                                         seed=SEED)

    print(f"mutation: the baseline of {cell.label}: {len(base.pending)} failed, run again with seed {SEED}: "
          f"{', '.join(sorted(base.pending))}", file=sys.stderr, flush=True)
    base.rerun(run)
    for x in base.flaky:
        print(f"mutation: FLAKY in the baseline of {cell.label}: {x['case']} ({x['first_verdict']}: "
              f"{(x['first_reason'] or '')[:200]}; then {x['rerun_verdict']} with seed {SEED})", file=sys.stderr, flush=True)
    for x in base.failed_twice:
        print(f"mutation: the baseline of {cell.label}: {x['case']} failed twice ({x['first_verdict']}, then "
              f"{x['rerun_verdict']}: {(x['rerun_reason'] or '')[:200]}; {work}): the knobs that need it are not "
              "tried against it", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    args = selftest_options.parse(argv)
    all_knobs = knobs()
    if args.check_usage:
        return 0
    chosen = [k for k in all_knobs if not args.knob or k[0] in args.knob]
    if not _run_cases().case_binaries(args.build):
        print(f"mutation: no case binaries in {args.build / 'cases'} (run ./uet build)", file=sys.stderr)
        return 3
    cells = [c for c in CELLS if c.areas(args.build)]
    from harness.inputs import manifest as manifest_mod
    try:
        isolated = os.geteuid() == 0 and all(manifest_mod.load(ref_of(v)).namespaces
                                             for c in cells for v in filter(None, (c.initiator, c.target)))
    except manifest_mod.ManifestError as exc:
        print(f"mutation: {exc}", file=sys.stderr)
        return 3
    jobs = max(1, args.jobs if isolated else 1)
    started = time.monotonic()
    mutation = Mutation(args.build, args.out / "mutation", args.full, named_checks())
    # The wire checks' baseline overlaps the case baselines (a run without one would wait for it later), unless
    # one at a time was asked for: then it follows them, and the case baselines run in CELLS' order alone.
    wire = threading.Thread(target=mutation.run_wire_baseline, daemon=True)
    if jobs > 1:
        wire.start()
    print(f"mutation: baselines of {len(cells)} cells ({', '.join(c.label for c in cells)}) and of the wire checks",
          flush=True)
    try:  # the baselines wait more than they compute: every cell at once, unless one at a time was asked for
        baselines(mutation, cells, len(cells) if jobs > 1 else 1)
    except BaseException:
        stop_all()
        raise
    if jobs == 1:
        wire.start()
    # The failed cases run again beside the knobs (only those that need them wait), unless runs share the
    # host's ports: then before them.
    reruns = [threading.Thread(target=rerun_failures, args=(mutation, b), daemon=True)
              for b in mutation.baselines.values() if b.pending]
    for t in reruns:
        t.start()
        if jobs == 1:
            t.join()
    print(f"mutation: case baselines done in {time.monotonic() - started:.0f} s "
          f"({', '.join(f'{c.label}: {len(b.passing)} passing' for c, b in mutation.baselines.items())})", flush=True)
    print_lock = threading.Lock()
    done = [0]

    def one(knob: tuple[str, str, str]) -> KnobResult:
        r = mutation.mutate(knob)
        with print_lock:
            done[0] += 1
            what = "NOT CAUGHT"
            if r.caught:
                what = f"caught by {r.caught_by[0]}" + (f" (+{len(r.caught_by) - 1})" if len(r.caught_by) > 1 else "")
            ran = f"{r.cases_run} cases" + (f", {r.wire_checks_run} wire checks" if r.wire_checks_run else "")
            print(f"[{done[0]}/{len(chosen)}] {r.knob:<28} {what}  ({r.stage or 'every stage'}: {ran}, {r.seconds} s)",
                  flush=True)
            for e in r.errors[:3]:
                print(f"    error: {e}", flush=True)
        return r

    print(f"mutation: {len(chosen)} knobs, {jobs} at a time{' (--full)' if args.full else ''}", flush=True)
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(one, chosen))  # in faults.def order
        for t in reruns:
            t.join()
    finally:
        stop_all()
    caught = sum(r.caught for r in results)
    flaky = [x for b in mutation.baselines.values() for x in b.flaky]
    failed = [x for b in mutation.baselines.values() for x in b.failed_twice]
    seconds = round(time.monotonic() - started, 1)
    report = {"score": f"{caught}/{len(results)}", "caught": caught, "knobs": len(results),
              "mode": "full" if args.full else "targeted", "cells": [c.label for c in cells], "seconds": seconds,
              "seed": SEED,
              # baseline cases that failed, then passed when run again with the seed; and those that failed twice
              "baseline_flaky": flaky, "baseline_failed": failed,
              "results": [dict(dataclasses.asdict(r), caught=r.caught) for r in results],
              # each cell without a knob, case by case: pytest's verdict tests read these instead of running
              # the same cells again
              "baselines": {c.label: [{"area": v.area, "case": v.case, "verdict": v.verdict, "reason": v.reason,
                                       "statements": v.statements,
                                       "flaky": any(x["case"] == v.case for x in b.flaky)} for v in b.results]
                            for c, b in mutation.baselines.items()}}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mutation.json").write_text(json.dumps(report, indent=2) + "\n")
    print_table(results)
    print(f"mutation score: {caught}/{len(results)} knobs caught ({seconds:.0f} s)")
    for r in results:
        if not r.caught:
            also = f"; it needed baseline cases that failed twice: {', '.join(r.baseline_failed)}" if r.baseline_failed else ""
            print(f"  not caught: {r.knob} ({r.statement}: {r.rule}) -- a missing case{also}")
    for x in flaky:
        print(f"  flaky baseline case: {x['cell']}: {x['case']} ({x['first_verdict']}, then {x['rerun_verdict']})")
    for x in failed:
        print(f"  baseline case failed twice: {x['cell']}: {x['case']} ({x['first_verdict']}, then {x['rerun_verdict']})")
    return 0 if caught == len(results) and not flaky and not failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
