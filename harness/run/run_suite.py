"""./uet run's work: the cells of a run, their verdicts and the report (its options and help:
harness/commands/run.py)."""
from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import os
import pathlib
import random
import shlex
import signal
import sys
import threading
import time

import yaml

from containers.choice import placement_class
from harness.results import causes
from harness.run import attempts as attempts_mod
from harness.trends import ci_options
from harness.commands import run as run_options
from harness.commands import trust_options
from harness.commands.run import SEED_MAX  # noqa: F401 -- certify's seeds are the run's
from harness.trends import ci_summary
from harness.results import coverage as coverage_mod
from harness.files import input_files
from harness.files import output_files
from harness.inputs import catalogue as catalogue_mod
from harness.inputs import manifest as manifest_mod
from harness.run import negotiation as negotiation_mod
from harness.inputs import not_applicable as not_applicable_mod
from harness.wire import evidence as evidence_mod
from harness.inputs import libfabric_prefix
from harness.inputs import loader_environment
from harness.run import plan as plan_mod
from harness.inputs import run_info as run_info_mod
from harness.inputs import side_builds
from harness.wire import wire_oracle
from harness.inputs import spec_versions
from harness.results.conformance_statement import write as write_statement
from harness.wire.capture_cap import CAPTURE_CAP_BYTES
from harness.run.logcap import LOG_CAP_BYTES
from harness.run.progress import Progress
from harness.results.results import Result, counts, write_junit, write_results_json
from harness.results.verdicts import FAILING, UNDECIDED
from harness.run.run_cases import INITIATOR_PORT, Cell, CellRun, TraitsError, area_traits, case_binaries
from harness.files.untrusted import OutsideFolder, folder_inside, printable_tree
from reports.render import render_html, write_pending

REPO = pathlib.Path(__file__).resolve().parents[2]


class UsageError(Exception):
    """Bad input the user can fix: exit 2 with this message."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The options (harness/commands/run.py checks what needs only the standard library), then what needs the
    set-up's packages: the pair file, the spec version, the CI options' files."""
    args, p = run_options.parse(argv)
    if args.pair:
        try:
            read_pair_file(args)
        except UsageError as exc:
            p.error(str(exc))
        if args.target and not args.initiator:
            p.error("--target goes with --initiator (an interop cell); e.g. --initiator a.yaml --target b.yaml")
    if args.spec_version is None:
        args.spec_version = spec_versions.default()
    elif args.spec_version not in spec_versions.known():
        p.error(f"argument --spec-version: invalid choice: {args.spec_version!r} (choose from "
                f"{', '.join(map(repr, spec_versions.known()))})")
    ci_options.check(args, p)
    return args


def read_pair_file(args) -> None:
    """Fills the run's who and where from a pair description (cases/pairs/pair.schema.yaml); manifest
    paths in it are relative to the file."""
    try:
        doc, _ = input_files.load_yaml(args.pair, "pair file")
    except input_files.InputError as exc:
        raise UsageError(f"the pair file cannot be read: {exc}") from None
    schema = yaml.safe_load((REPO / "cases" / "pairs" / "pair.schema.yaml").read_text())
    problems = input_files.schema_problems(doc, schema, "")
    if problems:
        raise UsageError(f"the pair file {input_files.shown_path(args.pair)}: " + "; ".join(problems[:5])
                         + " (keys: provider | initiator and target | matrix, and placement)")

    def ref(r: str) -> str:
        path, _, variant = r.partition("#")
        full = pathlib.Path(path) if pathlib.Path(path).is_absolute() else args.pair.parent / path
        return str(full) + (f"#{variant}" if variant else "")
    args.provider = ref(doc["provider"]) if "provider" in doc else None
    args.initiator = ref(doc["initiator"]) if "initiator" in doc else None
    args.target = ref(doc["target"]) if "target" in doc else None
    args.matrix = [ref(r) for r in doc["matrix"]] if "matrix" in doc else None
    if args.placement and doc.get("placement") and args.placement != doc["placement"]:
        raise UsageError(f"--placement {args.placement} disagrees with the pair file's placement: {doc['placement']}")
    args.placement = args.placement or doc.get("placement")


def mode_and_refs(args) -> tuple[str, list[str]]:
    if args.provider:
        return "provider", [args.provider]
    if args.initiator:
        return "pair", [args.initiator, args.target]
    if args.matrix:
        return "matrix", list(dict.fromkeys(args.matrix))
    return "default", []


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


def free_space(folder: pathlib.Path) -> str:
    """'N bytes free on the file system mounted at M' of the file system that holds `folder`."""
    mount = pathlib.Path(folder).resolve()
    while mount != mount.parent and os.stat(mount.parent).st_dev == os.stat(mount).st_dev:
        mount = mount.parent
    fs = os.statvfs(folder)
    return f"{fs.f_bavail * fs.f_frsize} bytes free on the file system mounted at {mount}"


def libfabric_trees(args, manifests: list) -> list[side_builds.TreeToBuild]:
    """The trees the run's libfabrics need; PrefixError (bad usage) for one the suite cannot build against."""
    if args.libfabric is not None:
        try:
            libfabric_prefix.check(args.libfabric, trust_foreign=args.trust_foreign_libfabric)
        except libfabric_prefix.PrefixError as exc:
            raise libfabric_prefix.PrefixError(f"--libfabric {args.libfabric}: {exc}") from None
    return side_builds.trees_to_build([m.with_default_libfabric(args.libfabric) for m in manifests],
                                      args.trust_foreign_libfabric)


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


def preflight(cells: list[Cell], args, sides: dict[str, side_builds.Side]) -> dict[str, str]:
    """Checks before any case runs; the providers' versions as fi_info gives them."""
    manifests = {m.name: m for m in plan_mod.manifests_of(cells)}
    if not args.same_host and os.geteuid() != 0 and any(m.namespaces for m in manifests.values()):
        raise UsageError("each side runs in a network namespace of its own and the wire is captured, which needs "
                         "root: run as root (sudo ./uet run ...), or add --same-host to run both sides on this host "
                         "without namespaces (the wire checks then fail for want of a capture)")
    versions, problems = {}, []
    for m in manifests.values():
        status, said = run_info_mod.probe_provider(m, args.build, sides.get(m.name))
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


def decode_crosscheck(args, progress: Progress) -> dict:
    from harness.wire.decode_compare import DecoderError, cross_check, golden_captures, load_expected
    if not (args.corpus / "manifest.json").exists():
        return {"captures": 0, "frames": 0, "disagreements": 0, "error": f"no corpus at {args.corpus}"}
    entries = golden_captures(args.corpus)
    frames = bad = 0
    for pcap, port, version in entries:
        try:
            result = cross_check(pcap, args.build / "bin" / "uet-decode", port, load_expected(pcap, version), version)
        except DecoderError as err:
            return {"captures": len(entries), "frames": frames, "disagreements": bad, "error": str(err)}
        frames += result.frames
        bad += len(result.disagreements)
        for d in result.disagreements[:3]:
            progress.say(f"    DECODERS DISAGREE: {pcap.name} frame {d.frame} ({d.case}) {d.between}: {'; '.join(d.details[:2])}")
    progress.say(f"decoder cross-check: {len(entries)} golden captures, {frames} frames, {bad} disagreements")
    return {"captures": len(entries), "frames": frames, "disagreements": bad}


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    mode, refs = mode_and_refs(args)
    try:  # bad manifests are answered before anything needs the build
        loaded = [manifest_mod.load(ref) for ref in refs or [plan_mod.DEFAULT_MANIFEST]]
    except manifest_mod.ManifestError as exc:
        print("uet run: bad manifest:\n  " + str(exc).replace("\n", "\n  "), file=sys.stderr)
        return 2
    if not args.allow_loader_environment and (refused := loader_environment.problems(loaded)):
        print("uet run: bad manifest:\n  " + "\n  ".join(refused), file=sys.stderr)
        return 2
    try:  # and a libfabric the suite cannot build against, before any set-up
        trees = libfabric_trees(args, loaded)
    except libfabric_prefix.PrefixError as exc:
        print(f"uet run: {exc}", file=sys.stderr)
        return 2
    sided = [m.with_default_libfabric(args.libfabric) for m in loaded]
    if args.check_usage:  # ./uet builds the suite's own tree (what it needs of it), then these trees
        print(side_builds.suite_target(sided, args.trust_foreign_libfabric) + "\n"
              + "".join(t.line() + "\n" for t in trees), end="")
        return 0
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 1 << 31)
    catalogue = side_builds.catalogue_tree(sided, args.build, args.trust_foreign_libfabric)
    binaries = case_binaries(catalogue)
    if not binaries:
        print(f"uet run: no case binaries in {catalogue / 'cases'} (run ./uet build)", file=sys.stderr)
        return 3
    try:
        traits = area_traits(catalogue)
    except TraitsError as exc:
        print(f"uet run: {exc}", file=sys.stderr)
        return 3
    sel = plan_mod.selection(args.only, list(binaries))
    try:
        cells = plan_mod.cells(mode, refs, traits, sel.areas, libfabric=args.libfabric)
        if not cells:
            raise UsageError(f"--only {' '.join(args.only)} selects no area of this run")
        for c in cells:  # a cell's id names its folder, made and written as root
            folder_inside(args.report, c.id)
        check_report_folder(args.report)
        sides = side_builds.of_run(plan_mod.manifests_of(cells), args.build, args.trust_foreign_libfabric)
        unbuilt = unbuilt_sides(sides, sorted({a for c in cells for a in c.areas}))
        if unbuilt:
            print(f"uet run: no case binaries built in {', '.join(unbuilt)} (./uet run builds them)", file=sys.stderr)
            return 3
        versions = preflight(cells, args, sides)
        trusted = opt_ins(args, plan_mod.manifests_of(cells))
    except manifest_mod.ManifestError as exc:
        print("uet run: bad manifest:\n  " + str(exc).replace("\n", "\n  "), file=sys.stderr)
        return 2
    except (UsageError, OutsideFolder, libfabric_prefix.PrefixError) as exc:
        print(f"uet run: {exc}", file=sys.stderr)
        return 2

    started = datetime.datetime.now(datetime.timezone.utc)
    run_id, run_dir = make_run_dir(args.report, f"{started:%Y%m%d-%H%M%S}-s{seed}")
    write_pending(run_dir, run_id)
    command = "./uet run " + " ".join(shlex.quote(a) for a in argv)
    weights = {c.id: 1.0 + sum(traits[a]["weight"] for a in c.areas) for c in cells}
    progress = Progress(len(cells), weights, quiet=args.quiet, verbose=args.verbose)
    progress.say(f"uet run: {mode}, {len(cells)} cell(s), spec {args.spec_version}, seed {seed}, {args.jobs} at a time; "
                 f"writing {run_dir}")
    rounds = -(-len(cells) // args.jobs)
    bound = rounds * args.cell_deadline if args.run_deadline is None else min(args.run_deadline, rounds * args.cell_deadline)
    progress.say(f"uet run: budget: a case {args.case_deadline:.0f} s, a cell {args.cell_deadline:.0f} s, the run at most "
                 f"{bound / 60:.0f} min" + ("" if args.run_deadline is None else f" (--run-deadline {args.run_deadline:.0f} s)")
                 + "; what a budget cuts off is an error 'not run: budget'")
    run_ends_at = None if args.run_deadline is None else time.monotonic() + args.run_deadline
    for o in trusted:
        progress.say(f"uet run: note: {o['option']}: " + ("; ".join(o["let_through"]) or "nothing needed it")
                     + " (results.json records it: run_info.opt_ins)")
    for m in plan_mod.manifests_of(cells):
        if args.spec_version not in m.spec_versions:
            progress.say(f"uet run: note: {m.name} says it implements spec {', '.join(m.spec_versions)}; this run checks "
                         f"{args.spec_version} (the report marks it)")

    stop = threading.Event()

    def interrupted(signum, _frame) -> None:
        # SIGTERM (a CI's timeout, a service stop) ends the run as Ctrl-C does: partial report, clean-up, 130.
        if not stop.is_set():
            progress.say(f"uet run: interrupted ({signal.Signals(signum).name}); stopping the running cases, "
                         "writing the partial report")
        stop.set()
    previous = {sig: signal.signal(sig, interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    decode = {"captures": 0, "frames": 0, "disagreements": 0, "skipped": True}
    if mode == "default" and not args.no_decode_check:
        decode = decode_crosscheck(args, progress)

    lock = threading.Lock()
    placement = set()
    timings: dict[str, dict] = {}
    losses: dict[str, dict] = {}
    capped: dict[str, dict] = {}
    placements: dict[str, dict] = {}

    def run_cell(index: int, cell: Cell, attempt: int, cell_seed: int, case_filter: str, sink: list[Result],
                 prog: Progress) -> None:
        if stop.is_set():
            return
        t0 = time.monotonic()

        def on_result(r: Result) -> None:
            if not sel.keeps_statements(r.statements) and r.verdict not in UNDECIDED:
                return
            r.repro = repro_command(cell, r.case, cell_seed, args.spec_version, shaping_options(args))
            if r.area != "harness":
                r.evidence.setdefault("log", f"{place}/{cell.id}/{r.area}.log")
            r.blamed_manifest = blamed_manifest(cell, r.blamed_side)
            with lock:
                sink.append(r)
            prog.case(r)

        # Sides that share a network (same host, or nodes that may be one host): each cell gets ports of its own.
        shared = args.same_host or placement_class(args.placement or "namespaces").shares_network
        ports = (INITIATOR_PORT + 2 * index, INITIATOR_PORT + 2 * index + 1) if shared else (INITIATOR_PORT, INITIATOR_PORT + 1)
        # A later attempt keeps its logs and captures apart: the first attempt's evidence stays what it was.
        place = "cells" if attempt == 1 else f"attempts/{attempt}"
        folder = folder_inside(run_dir / place, cell.id)
        runner = CellRun(cell, args.build, folder, seed=cell_seed, case_filter=case_filter,
                         use_namespaces=False if args.same_host else None, on_result=on_result, stop=stop,
                         case_deadline=args.case_deadline, ports=ports, spec_version=args.spec_version,
                         placement=args.placement, cell_deadline=args.cell_deadline, run_ends_at=run_ends_at,
                         run_deadline=args.run_deadline, sides=sides)
        try:
            runner.run()
        except Exception as exc:  # a cell that cannot start (namespaces, a manifest's environment) is an error
            on_result(Result(cell.id, "harness", "-", f"{cell.id} (cell)", "error", reason=f"the cell could not run: {exc}"))
        for error in evidence_mod.check_captures(runner.results, args.build / "bin" / "uet-decode", run_dir,
                                                 args.spec_version):
            on_result(error)
        with lock:
            mine = [r for r in sink if r.cell == cell.id]
            if attempt == 1:
                placement.add(runner.placement or "none")
                losses[cell.id] = runner.loss
                capped[cell.id] = runner.logs_capped
                placements[cell.id] = runner.placement_detail or None
                timings[cell.id] = {"wall": round(time.monotonic() - t0, 2),
                                    "binaries": {a: {k: round(v, 2) for k, v in t.items()} for a, t in runner.timings.items()}}
        prog.cell(cell.id, counts(mine), time.monotonic() - t0)

    def run_pass(attempt: int, pass_seed: int, plan: list[tuple[int, Cell, str]], prog: Progress) -> list[Result]:
        """One attempt: each (index, cell, gtest filter) of `plan`, args.jobs at a time."""
        sink: list[Result] = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(run_cell, i, c, attempt, pass_seed, f, sink, prog) for i, c, f in plan]
            for f in futures:
                while not f.done():
                    concurrent.futures.wait([f], timeout=0.5)  # the main thread stays free for Ctrl-C
                f.result()
        return sink

    results = run_pass(1, seed, [(i, c, sel.gtest_filter) for i, c in enumerate(cells)], progress)
    attempts_info = attempts_mod.run_more(results, [(i, c, sel.gtest_filter) for i, c in enumerate(cells)], seed=seed, repeat=args.repeat, rerun=args.rerun_failures,
                                          seed_max=SEED_MAX, stop=stop, run_pass=run_pass,
                                          progress=lambda n: Progress(n, {}, quiet=args.quiet, verbose=args.verbose),
                                          say=progress.say)
    results = attempts_info.pop("results")
    if args.placement:
        placement_class(args.placement).after_run()
    for sig, handler in previous.items():
        signal.signal(sig, handler)
    if stop.is_set():
        results += not_run(cells, results, "not run: the run was interrupted before this area's cases had a verdict")

    try:
        doc = assemble(run_id=run_id, command=command, mode=mode, seed=seed, spec_version=args.spec_version,
                       started=started, cells=cells, results=results, versions=versions,
                       placement=",".join(sorted(placement)) or "none", partial=stop.is_set(), decode=decode,
                       run_dir=run_dir, timings=timings, losses=losses, placements=placements, logs_capped=capped,
                       sides=sides, opt_ins=trusted)
        ci_summary.add(doc, attempts=attempts_info, expectations=args.expectations_doc, baseline=args.baseline_doc,
                       say=progress.say)
        if args.expectations_doc is not None:  # the JUnit says what the expectations made of each verdict too
            made = {r["id"]: r.get("expectation") for r in doc["results"]}
            for r in results:
                r.expectation = made.get(r.id)
            write_junit(results, run_dir / "junit.xml", run_id=run_id)
        write_outputs(doc, run_dir, args.report)
    except OSError as exc:  # a full disk: say where, and what is left of the report
        written = sorted(p.name for p in run_dir.iterdir() if not p.name.startswith("."))
        print(f"uet run: the report could not be written: {exc.filename or run_dir}: {exc.strerror or exc} "
              f"({free_space(run_dir)}); the partial report is in {run_dir} ({', '.join(written)}; its index.html "
              "says the report is partial)", file=sys.stderr)
        return 3
    s = doc["summary"]
    for line in causes.console_lines(causes.rank(doc)):
        progress.say(line)
    progress.say(f"uet run: {s['pass']} pass, {s['fail']} fail, {s['not_applicable']} not applicable, {s['warning']} "
                 f"warning, {s['error']} error, {s['timeout']} timeout, {s['flaky']} flaky; coverage {doc['coverage']['covered_observable']} "
                 f"of {doc['coverage']['observable']} observable statements; decoders: {decode['disagreements']} "
                 f"disagreements; report {run_dir / 'index.html'}")
    if stop.is_set():
        return 130
    if sel.case_patterns and not results:
        print(f"uet run: --only {' '.join(args.only)} matched no check of this run", file=sys.stderr)
        return 2
    return s["exit_status"]


def assemble(*, run_id, command, mode, seed, spec_version, started, cells, results, versions, placement, partial, decode,
             run_dir, timings, losses, placements=None, logs_capped=None, sides=None, opt_ins=()) -> dict:
    finished = datetime.datetime.now(datetime.timezone.utc)
    manifests = plan_mod.manifests_of(cells)
    info = run_info_mod.collect(command=command, mode=mode, seed=seed, spec_version=spec_version, manifests=manifests,
                                provider_versions=versions, placement=placement, sides=sides)
    info.update(run_id=run_id, started=started.isoformat(timespec="seconds"),
                finished=finished.isoformat(timespec="seconds"),
                seconds=round((finished - started).total_seconds(), 1), partial=partial, log_cap_bytes=LOG_CAP_BYTES,
                capture_cap_bytes=CAPTURE_CAP_BYTES, opt_ins=list(opt_ins))
    summary = counts(results) | not_applicable_mod.breakdown(results)
    failing = sum(summary[v] for v in FAILING)
    summary["exit_status"] = 130 if partial else \
        1 if failing or decode.get("disagreements") or decode.get("error") else 0
    junit = run_dir / "junit.xml"
    write_junit(results, junit, run_id=run_id)
    coverage = coverage_mod.compute(catalogue_mod.load(None), [junit], found=coverage_mod.checks_of_results(results, junit))
    coverage["junit_files"] = ["junit.xml"]  # relative to the run folder
    cell_rows = []
    for c in cells:
        mine = [r for r in results if r.cell == c.id]
        cell_rows.append({"id": c.id, "initiator": c.initiator.name, "target": c.target.name,
                          "kind": "single" if c.solo else "pair", "areas": c.areas, "counts": counts(mine),
                          "seconds": round(sum(r.seconds for r in mine), 1), "page": f"cells/{c.id}.html",
                          "timing": timings.get(c.id), "loss": losses.get(c.id) or None,
                          "logs_capped": (logs_capped or {}).get(c.id) or None,
                          "placement": (placements or {}).get(c.id)})
    doc = {"format": 1, "run_info": info, "summary": summary, "cells": cell_rows,
           "results": [r.as_dict() for r in results], "coverage": coverage, "decode_crosscheck": decode}
    doc["wire_oracle"] = wire_oracle.summary(doc["results"])
    negotiation = negotiation_mod.matrix(cells, results)
    if negotiation:
        doc["negotiation"] = negotiation
    return doc


def not_run(cells: list[Cell], results: list[Result], reason: str) -> list[Result]:
    """An error for each area of a cell that has no verdict at all, so that a cut-short run counts what it
    did not run."""
    ran = {(r.cell, r.area) for r in results}
    return [Result(c.id, area, f"uet-cases-{area}", f"uet-cases-{area} (whole binary)", "error", reason=reason)
            for c in cells for area in c.areas if (c.id, area) not in ran]


def write_outputs(doc: dict, run_dir: pathlib.Path, report_root: pathlib.Path) -> None:
    doc = printable_tree(doc)  # the HTML too shows what binaries printed
    write_results_json(doc, run_dir / "results.json")  # first: the verdicts, whatever comes after
    latest = report_root / "latest"
    if latest.is_symlink() or not latest.exists():
        latest.unlink(missing_ok=True)
        latest.symlink_to(run_dir.name)
    output_files.write(run_dir / "summary.txt", coverage_mod.format_text(doc["coverage"]))
    render_html(doc, run_dir, statement=write_statement(doc, run_dir))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
