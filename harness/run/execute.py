"""A run carried out: execute(plan) checks what the plan names, runs its cells (and the attempts after the
first) and judges them, and returns the outcome: the results document and what the outputs need. It writes
only the run's working files in the run's folder (each cell's logs and captures, the page that says the
report is pending, the JUnit the coverage is read from); harness/run/outputs.py writes the report."""
from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
import os
import pathlib
import shlex
import signal
import sys
import threading
import time

from containers.choice import placement_class
from harness.commands import trust_options
from harness.commands.run import SEED_MAX
from harness.files import output_files
from harness.files.untrusted import OutsideFolder, folder_inside
from harness.inputs import libfabric_prefix
from harness.inputs import loader_environment
from harness.inputs import manifest as manifest_mod
from harness.inputs import run_info as run_info_mod
from harness.inputs import side_builds
from harness.inputs import spec_versions
from harness.results.results import Result, counts
from harness.results.verdicts import INFRA, UNDECIDED
from harness.run import attempts as attempts_mod
from harness.run import outputs
from harness.run import plan as plan_mod
from harness.run.progress import Progress
from harness.run.run_cases import INITIATOR_PORT, Cell, CellRun, TraitsError, area_traits, case_binaries
from harness.run.run_plan import RunPlan
from harness.shards import partition as partition_mod
from harness.shards import shard as shard_mod
from harness.trends import ci_summary
from harness.wire import evidence as evidence_mod
from reports.render import write_pending

class UsageError(Exception):
    """Bad input the user can fix: exit 2 with this message."""


class Refused(Exception):
    """The run did not start: what `uet run: ` says, and the exit status (2 bad usage, 3 the suite not built)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def bad_manifest(exc: manifest_mod.ManifestError) -> Refused:
    return Refused("bad manifest:\n  " + str(exc).replace("\n", "\n  "), 2)


def load_manifests(plan: RunPlan) -> list[manifest_mod.Manifest]:
    """The manifests the plan names (the default's when it names none), refused as bad usage before anything
    needs the build: a bad one, one that sets a loader variable without the opt-in."""
    try:
        loaded = [manifest_mod.load(ref) for ref in plan.refs or [plan_mod.DEFAULT_MANIFEST]]
    except manifest_mod.ManifestError as exc:
        raise bad_manifest(exc) from None
    if not plan.allow_loader_environment and (refused := loader_environment.problems(loaded)):
        raise Refused("bad manifest:\n  " + "\n  ".join(refused), 2)
    return loaded


def libfabric_trees(args, manifests: list) -> list[side_builds.TreeToBuild]:
    """The trees the run's libfabrics need; PrefixError (bad usage) for one the suite cannot build against.
    `args`: a plan, or certify's options (the same names)."""
    if args.libfabric is not None:
        try:
            libfabric_prefix.check(args.libfabric, trust_foreign=args.trust_foreign_libfabric)
        except libfabric_prefix.PrefixError as exc:
            raise libfabric_prefix.PrefixError(f"--libfabric {args.libfabric}: {exc}") from None
    return side_builds.trees_to_build([m.with_default_libfabric(args.libfabric) for m in manifests],
                                      args.trust_foreign_libfabric)


def trees_of(plan: RunPlan, loaded: list[manifest_mod.Manifest]) -> list[side_builds.TreeToBuild]:
    try:  # a libfabric the suite cannot build against is refused before any set-up
        return libfabric_trees(plan, loaded)
    except libfabric_prefix.PrefixError as exc:
        raise Refused(str(exc), 2) from None


def check_report_folder(folder: pathlib.Path) -> None:
    """Made where missing; refused when another user controls it or a folder on the way
    (harness/files/output_files.py), or when it cannot be written."""
    try:
        os.close(output_files.open_folder(folder))
        probe = folder / f".write-test-{os.getpid()}"
        output_files.write(probe, "", replace=False)
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"the report folder {folder} cannot be written: {exc.strerror or exc} "
                         "(choose another with --report DIR)") from None


def make_run_dir(report: pathlib.Path, run_id: str) -> tuple[str, pathlib.Path]:
    """(run id, folder) of a new run: `run_id`, or run_id-2, -3, ... when a run of the same second and seed has
    it; mkdir decides, so two runs started together never share a folder."""
    for n in range(1, 1000):
        candidate = run_id if n == 1 else f"{run_id}-{n}"
        try:
            (report / candidate).mkdir()
            return candidate, report / candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"{report / run_id}: 999 runs of this second and seed already")


def opt_ins(args, manifests: list) -> list[dict]:
    """Each trust option given and what it let through (run_info.opt_ins): the parts of a libfabric another
    user can change, the loader variables a manifest sets."""
    out = []
    for option in trust_options.given(args):
        if option == trust_options.TRUST_FOREIGN_LIBFABRIC:
            prefixes = dict.fromkeys(p for p in [m.libfabric for m in manifests] if p is not None)
            let = [f"{p}: {part}" for p in prefixes for part in libfabric_prefix.check(p, trust_foreign=True).foreign]
        else:
            let = [s for m in manifests for s in loader_environment.settings(m)]
        out.append({"option": option, "let_through": let})
    return out


def unbuilt_sides(sides: dict[str, side_builds.Side], areas: list[str]) -> list[str]:
    """The trees of other libfabrics that lack a case binary the run needs (./uet run builds them first)."""
    return sorted({f"{side.build} (for {side.libfabric.describe()})" for side in sides.values()
                   if side.libfabric and any(a not in case_binaries(side.build) for a in areas)})


def preflight(cells: list[Cell], plan: RunPlan, sides: dict[str, side_builds.Side]) -> dict[str, str]:
    """Checks before any case runs; the providers' versions as fi_info gives them."""
    manifests = {m.name: m for m in plan_mod.manifests_of(cells)}
    if not plan.same_host and os.geteuid() != 0 and any(m.namespaces for m in manifests.values()):
        raise UsageError("each side runs in a network namespace of its own and the wire is captured, which needs "
                         "root: run as root (sudo ./uet run ...), or add --same-host to run both sides on this host "
                         "without namespaces (the wire checks then fail for want of a capture)")
    versions, problems = {}, []
    for m in manifests.values():
        status, said = run_info_mod.probe_provider(m, plan.build, sides.get(m.name))
        if status == "absent":
            problems.append(f"{m.ref}: provider '{m.provider}' cannot be loaded: fi_getinfo said: {said} "
                            f"(check its name and the environment the manifest gives, e.g. FI_PROVIDER_PATH)")
        if status == "broken":  # the provider's own failure: its cases run and each says what it did
            print(f"uet run: note: provider '{m.provider}' ({m.ref}) failed when probed: {said}; its cases run and "
                  "report it", file=sys.stderr)
            said = f"unknown ({said})"
        versions[m.name] = said
    if problems:
        raise UsageError("\n".join(problems))
    return versions


def shaping_options(args) -> list[str]:
    """The run's options that change what a case runs against or where: a repro command without them runs
    another thing (without --libfabric, the suite's own libfabric, or exit 2 on a manifest that needs it)."""
    out = ["--libfabric", str(pathlib.Path(args.libfabric).absolute())] if getattr(args, "libfabric", None) else []
    if getattr(args, "same_host", False):
        out.append("--same-host")
    elif getattr(args, "placement", None):
        out += ["--placement", args.placement]
    return out + trust_options.given(args)


def repro_command(cell: Cell, case: str, seed: int, spec_version: str, options: list[str] = ()) -> str:
    who = (f"--provider {shlex.quote(cell.initiator.ref)}" if cell.solo else
           f"--initiator {shlex.quote(cell.initiator.ref)} --target {shlex.quote(cell.target.ref)}")
    shaping = "".join(f" {shlex.quote(o)}" for o in options)
    version = "" if spec_version == spec_versions.default() else f" --spec-version {spec_version}"
    return f"./uet run {who}{shaping} --only {shlex.quote(case)} --seed {seed}{version}"


def blamed_manifest(cell: Cell, side: str | None) -> str | None:
    if not side:
        return None
    return (cell.initiator if side == "initiator" else cell.target).name


def decode_crosscheck(plan: RunPlan, progress: Progress) -> dict:
    from harness.wire.decode_compare import DecoderError, cross_check, golden_captures, load_expected
    if not (plan.corpus / "manifest.json").exists():
        return {"captures": 0, "frames": 0, "disagreements": 0, "error": f"no corpus at {plan.corpus}"}
    entries = golden_captures(plan.corpus)
    frames = bad = 0
    for pcap, port, version in entries:
        try:
            result = cross_check(pcap, plan.build / "bin" / "uet-decode", port, load_expected(pcap, version), version)
        except DecoderError as err:
            return {"captures": len(entries), "frames": frames, "disagreements": bad, "error": str(err)}
        frames += result.frames
        bad += len(result.disagreements)
        for d in result.disagreements[:3]:
            progress.say(f"    DECODERS DISAGREE: {pcap.name} frame {d.frame} ({d.case}) {d.between}: {'; '.join(d.details[:2])}")
    progress.say(f"decoder cross-check: {len(entries)} golden captures, {frames} frames, {bad} disagreements")
    return {"captures": len(entries), "frames": frames, "disagreements": bad}


def not_run(cells: list[Cell], results: list[Result], reason: str) -> list[Result]:
    """An error for each area of a cell that has no verdict at all, so that a cut-short run counts what it
    did not run."""
    ran = {(r.cell, r.area) for r in results}
    return [Result(c.id, area, f"uet-cases-{area}", f"uet-cases-{area} (whole binary)", "error", reason=reason)
            for c in cells for area in c.areas if (c.id, area) not in ran]


def order_in(cells: list[Cell]):
    """The sort key of a result among the run's: its cell's place in `cells`, then its area's in the cell (what
    is neither, a cell's own error, after them); a stable sort keeps an area's cases in the order they ran."""
    place = {c.id: (i, c.areas) for i, c in enumerate(cells)}

    def key(r: Result) -> tuple[int, int]:
        i, areas = place.get(r.cell, (len(cells), []))
        return i, areas.index(r.area) if r.area in areas else len(areas)
    return key


@dataclasses.dataclass
class _Ready:
    """What the checks before the run found: the cells it runs, each cell's index in the whole plan (its ports:
    a shard's cell keeps the whole plan's), the areas' traits, the selection, each side's tree, the providers'
    versions, the trust options and what they let through, and the shard (run_info.shard) when it is one."""
    cells: list[Cell]
    places: list[int]
    traits: dict[str, dict]
    selection: plan_mod.Selection
    sides: dict[str, side_builds.Side]
    versions: dict[str, str]
    opt_ins: list[dict]
    shard: dict | None


def _ready(plan: RunPlan) -> _Ready:
    """Everything checked before a case runs; Refused (with what to print and the exit status) otherwise."""
    loaded = load_manifests(plan)
    trees_of(plan, loaded)
    sided = [m.with_default_libfabric(plan.libfabric) for m in loaded]
    catalogue = side_builds.catalogue_tree(sided, plan.build, plan.trust_foreign_libfabric)
    binaries = case_binaries(catalogue)
    if not binaries:
        raise Refused(f"no case binaries in {catalogue / 'cases'} (run ./uet build)", 3)
    try:
        traits = area_traits(catalogue)
    except TraitsError as exc:
        raise Refused(str(exc), 3) from None
    sel = plan_mod.selection(list(plan.only), list(binaries))
    try:
        cells = plan_mod.cells(plan.mode, list(plan.refs), traits, sel.areas, libfabric=plan.libfabric)
        cells = plan_mod.involving(cells, plan.involving)
        if not cells:
            raise UsageError(f"--only {' '.join(plan.only)} selects no area of this run")
        for c in cells:  # a cell's id names its folder, made and written as root
            folder_inside(plan.report, c.id)
        check_report_folder(plan.report)
        sides = side_builds.of_run(plan_mod.manifests_of(cells), plan.build, plan.trust_foreign_libfabric)
        places, shard = list(range(len(cells))), None
        if plan.shard:  # the whole plan's cells, manifests and sides decide the cut and the fingerprint
            kept, shard = shard_mod.of_run(plan, cells, traits, plan_mod.manifests_of(cells), sides)
            places, cells = [i for i, _ in kept], [c for _, c in kept]
            sides = {name: sides[name] for name in (m.name for m in plan_mod.manifests_of(cells))}
        unbuilt = unbuilt_sides(sides, sorted({a for c in cells for a in c.areas}))
        if unbuilt:
            raise Refused(f"no case binaries built in {', '.join(unbuilt)} (./uet run builds them)", 3)
        versions = preflight(cells, plan, sides)
        trusted = opt_ins(plan, plan_mod.manifests_of(cells))
    except manifest_mod.ManifestError as exc:
        raise bad_manifest(exc) from None
    except (UsageError, OutsideFolder, libfabric_prefix.PrefixError, partition_mod.ShardError) as exc:
        raise Refused(str(exc), 2) from None
    return _Ready(cells, places, traits, sel, sides, versions, trusted, shard)


def execute(plan: RunPlan) -> outputs.RunOutcome:
    """Runs `plan`: the checks before it (Refused when one fails), its cells, the attempts after the first;
    returns the outcome (outputs.write_outputs writes the report). OSError when a working file of the run
    cannot be written (outputs.NotWritten says so)."""
    ready = _ready(plan)
    cells, sel, sides = ready.cells, ready.selection, ready.sides
    seed = plan.seed
    started = datetime.datetime.now(datetime.timezone.utc)
    run_id, run_dir = make_run_dir(plan.report, f"{started:%Y%m%d-%H%M%S}-s{seed}")
    write_pending(run_dir, run_id)
    weights = {c.id: partition_mod.declared_weight(c, ready.traits) for c in cells}
    progress = Progress(len(cells), weights, quiet=plan.quiet, verbose=plan.verbose)
    progress.say(f"uet run: {plan.mode}, {len(cells)} cell(s), spec {plan.spec_version}, seed {seed}, {plan.jobs} at a time; "
                 f"writing {run_dir}")
    if ready.shard:
        units = ready.shard["units"]
        progress.say(f"uet run: shard {ready.shard['index']}/{ready.shard['count']}: {len(units)} of "
                     f"{len(ready.shard['all_units'])} units ({', '.join(units[:6])}{', ...' if len(units) > 6 else ''}; "
                     f"results.json run_info.shard lists them); fingerprint {ready.shard['fingerprint'][:16]}")
    rounds = -(-len(cells) // plan.jobs)
    bound = rounds * plan.cell_deadline if plan.run_deadline is None else min(plan.run_deadline, rounds * plan.cell_deadline)
    progress.say(f"uet run: budget: a case {plan.case_deadline:.0f} s, a cell {plan.cell_deadline:.0f} s, the run at most "
                 f"{bound / 60:.0f} min" + ("" if plan.run_deadline is None else f" (--run-deadline {plan.run_deadline:.0f} s)")
                 + "; what a budget cuts off is an error 'not run: budget'")
    run_ends_at = None if plan.run_deadline is None else time.monotonic() + plan.run_deadline
    for o in ready.opt_ins:
        progress.say(f"uet run: note: {o['option']}: " + ("; ".join(o["let_through"]) or "nothing needed it")
                     + " (results.json records it: run_info.opt_ins)")
    for m in plan_mod.manifests_of(cells):
        if plan.spec_version not in m.spec_versions:
            progress.say(f"uet run: note: {m.name} says it implements spec {', '.join(m.spec_versions)}; this run checks "
                         f"{plan.spec_version} (the report marks it)")

    stop = threading.Event()

    def interrupted(signum, _frame) -> None:
        # SIGTERM (a CI's timeout, a service stop) ends the run as Ctrl-C does: partial report, clean-up, 130.
        if not stop.is_set():
            progress.say(f"uet run: interrupted ({signal.Signals(signum).name}); stopping the running cases, "
                         "writing the partial report")
        stop.set()
    previous = {sig: signal.signal(sig, interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    decode = {"captures": 0, "frames": 0, "disagreements": 0, "skipped": True}
    # a sharded run checks the decoders once, in its first shard (./uet merge takes that shard's)
    if plan.mode == "default" and not plan.no_decode_check and (not ready.shard or ready.shard["index"] == 1):
        decode = decode_crosscheck(plan, progress)

    lock = threading.Lock()
    placement = set()
    timings: dict[str, dict] = {}
    losses: dict[str, dict] = {}
    capped: dict[str, dict] = {}
    placements: dict[str, dict] = {}
    shaping = shaping_options(plan)

    def run_cell(index: int, cell: Cell, attempt: int, cell_seed: int, case_filter: str, sink: list[Result],
                 prog: Progress) -> None:
        if stop.is_set():
            return
        t0 = time.monotonic()

        def on_result(r: Result) -> None:
            if not sel.keeps_statements(r.statements) and r.verdict not in UNDECIDED:
                return
            r.repro = repro_command(cell, r.case, cell_seed, plan.spec_version, shaping)
            if r.area != "harness":
                r.evidence.setdefault("log", f"{place}/{cell.id}/{r.area}.log")
            r.blamed_manifest = blamed_manifest(cell, r.blamed_side)
            with lock:
                sink.append(r)
            prog.case(r)

        # Sides that share a network (same host, or nodes that may be one host): each cell gets ports of its own.
        shared = plan.same_host or placement_class(plan.placement or "namespaces").shares_network
        ports = (INITIATOR_PORT + 2 * index, INITIATOR_PORT + 2 * index + 1) if shared else (INITIATOR_PORT, INITIATOR_PORT + 1)
        # A later attempt keeps its logs and captures apart: the first attempt's evidence stays what it was.
        place = "cells" if attempt == 1 else f"attempts/{attempt}"
        folder = folder_inside(run_dir / place, cell.id)
        runner = CellRun(cell, plan.build, folder, seed=cell_seed, case_filter=case_filter,
                         use_namespaces=False if plan.same_host else None, on_result=on_result, stop=stop,
                         case_deadline=plan.case_deadline, ports=ports, spec_version=plan.spec_version,
                         placement=plan.placement, cell_deadline=plan.cell_deadline, run_ends_at=run_ends_at,
                         run_deadline=plan.run_deadline, sides=sides)
        try:
            runner.run()
        except Exception as exc:  # a cell that cannot start (namespaces, a manifest's environment) is an error
            on_result(Result(cell.id, "harness", "-", f"{cell.id} (cell)", "error", reason=f"the cell could not run: {exc}"))
        for error in evidence_mod.check_captures(runner.results, plan.build / "bin" / "uet-decode", run_dir,
                                                 plan.spec_version):
            on_result(error)
        with lock:
            mine = [r for r in sink if r.cell == cell.id]
            if attempt == 1 and (runner.placement or not any(r.verdict in INFRA for r in mine)):  # a set-up lost
                placement.add(runner.placement or "none")  # to the infrastructure placed nothing
                losses[cell.id] = runner.loss
                capped[cell.id] = runner.logs_capped
                placements[cell.id] = runner.placement_detail or None
                timings[cell.id] = {"wall": round(time.monotonic() - t0, 2),
                                    "binaries": {a: {k: round(v, 2) for k, v in t.items()} for a, t in runner.timings.items()}}
        prog.cell(cell.id, counts(mine), time.monotonic() - t0)

    def run_pass(attempt: int, pass_seed: int, cells_filters: list[tuple[int, Cell, str]], prog: Progress) -> list[Result]:
        """One attempt: each (index, cell, gtest filter) of `cells_filters`, plan.jobs at a time."""
        sink: list[Result] = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=plan.jobs) as pool:
            futures = [pool.submit(run_cell, i, c, attempt, pass_seed, f, sink, prog) for i, c, f in cells_filters]
            for f in futures:
                while not f.done():
                    concurrent.futures.wait([f], timeout=0.5)  # the main thread stays free for Ctrl-C
                f.result()
        return sink

    infra_tries: dict[str, int] = {}

    def run_pass_again_if_lost(attempt: int, pass_seed: int, cells_filters: list, prog: Progress) -> list[Result]:
        """run_pass, then the cells the infrastructure kept from running once more (same attempt, same seed)."""
        sink, tries = attempts_mod.retry_infra(
            run_pass(attempt, pass_seed, cells_filters, prog), cells_filters, retries=plan.infra_retries, stop=stop,
            run_again=lambda again: run_pass(attempt, pass_seed, again, Progress(len(again), {}, quiet=plan.quiet,
                                                                                 verbose=plan.verbose)),
            say=progress.say)
        if attempt == 1:
            infra_tries.update(tries)
        return sink

    first = [(i, c, sel.gtest_filter) for i, c in zip(ready.places, cells)]
    results = run_pass_again_if_lost(1, seed, first, progress)
    attempts_info = attempts_mod.run_more(results, first, seed=seed, repeat=plan.repeat, rerun=plan.rerun_failures,
                                          seed_max=SEED_MAX, stop=stop, run_pass=run_pass_again_if_lost,
                                          progress=lambda n: Progress(n, {}, quiet=plan.quiet, verbose=plan.verbose),
                                          say=progress.say)
    results = attempts_info.pop("results")
    if plan.placement:
        placement_class(plan.placement).after_run()
    for sig, handler in previous.items():
        signal.signal(sig, handler)
    if stop.is_set():
        results += not_run(cells, results, "not run: the run was interrupted before this area's cases had a verdict")
    # Cells in the plan's order and each cell's areas in its order, not as the cells side by side ended: the same
    # plan and seed write the same report (results.json, the JUnit's suites, the statement's lists).
    results.sort(key=order_in(cells))

    try:
        doc = outputs.assemble(run_id=run_id, command=plan.command, mode=plan.mode, seed=seed,
                               spec_version=plan.spec_version, started=started, cells=cells, results=results,
                               versions=ready.versions, placement=",".join(sorted(placement)) or "none",
                               partial=stop.is_set(), decode=decode, run_dir=run_dir, timings=timings, losses=losses,
                               placements=placements, logs_capped=capped, sides=sides, opt_ins=ready.opt_ins,
                               infra=(plan.infra_retries, infra_tries), shard=ready.shard)
    except OSError as exc:
        raise outputs.NotWritten(exc, run_dir) from None
    ci_summary.add(doc, attempts=attempts_info, expectations=plan.expectations_doc, baseline=plan.baseline_doc,
                   say=progress.say)
    if plan.expectations_doc is not None:  # the JUnit says what the expectations made of each verdict too
        made = {r["id"]: r.get("expectation") for r in doc["results"]}
        for r in results:
            r.expectation = made.get(r.id)
    return outputs.RunOutcome(plan, run_id, run_dir, doc, results, interrupted=stop.is_set(),
                      matched_nothing=bool(sel.case_patterns) and not results)
