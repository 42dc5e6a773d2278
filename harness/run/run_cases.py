"""Run the conformance-case binaries for one cell: an initiator manifest and a target manifest, each
resolved for its own side (harness/inputs/manifest.py), in a namespace pair (both manifests say peer_netns and
we are root) or on the host. A cell of one manifest against itself is a provider's certification run.

    /usr/bin/python3 -m harness.run.run_cases --initiator FILE[#VARIANT] [--target FILE[#VARIANT]] [--out DIR]

Single-process binaries (discovery, av, ep, completion, mr, entity: their traits say so, area_traits) exercise
one provider: they run in a cell of a manifest against itself only. A binary that crashes or passes a case's
deadline makes the case it was running `error` (with the signal) or `timeout`, and the binary goes on with the
cases after it. A cell has a budget (its own deadline, and the run's): once it runs out, the running case and
every case not run are `error` "not run: budget", so a provider that hangs in every case still ends its cell.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import pathlib
import select
import signal
import subprocess
import sys
import threading
import time

from harness.run import cell_plan
from harness.results import run_delay
from harness.commands.run import CASE_DEADLINE_S, CELL_DEADLINE_S
from harness.inputs import manifest as manifest_mod
from harness.run import entity as entity_mod
from harness.inputs import side_builds
from harness.run.entity import EntityError, suite_entity
from containers.host import NamespaceError
from containers.choice import open_placement, placement_class
from containers.impair import counted_pattern
from containers.placement import InfraError, PlacementError
from harness.results.results import Result, counts, result_of_line
from harness.results.verdicts import Verdict
from harness.run.verdict_channel import MAX_BYTES as MAX_VERDICT_BYTES, VerdictChannel
from harness.run.logcap import LogCap
from harness.files.untrusted import folder_inside, printable

REPO = pathlib.Path(__file__).resolve().parents[2]
INITIATOR_PORT, TARGET_PORT = 4793, 4794


@dataclasses.dataclass
class Cell:
    initiator: manifest_mod.Manifest
    target: manifest_mod.Manifest
    areas: list[str]

    @property
    def id(self) -> str:
        return self.initiator.name if self.solo else f"{self.initiator.name}__{self.target.name}"

    @property
    def solo(self) -> bool:
        return self.initiator.ref == self.target.ref


def case_binaries(build: pathlib.Path) -> dict[str, pathlib.Path]:
    """{area: binary} of the built case binaries."""
    out = {}
    for p in sorted((build / "cases").glob("uet-cases-*")):
        if os.access(p, os.X_OK) and p.is_file():
            out[p.name.removeprefix("uet-cases-")] = p
    return out


class TraitsError(RuntimeError):
    """A built case binary that does not say its area's traits; the message names it."""


_traits_of: dict[tuple, dict] = {}  # by binary path, modification time and size: each build read once


def area_traits(build: pathlib.Path) -> dict[str, dict]:
    """{area: {processes, entity, loss_every, weight, profile_pairs}} of the built case binaries, as each declares
    them beside its cases (UET_AREA_TRAITS, cases/common/claims/area_traits.hpp says what each means) and prints them
    (--uet-traits, one JSON line). Raises TraitsError naming a binary that prints none or other keys."""
    out = {}
    for area, binary in case_binaries(build).items():
        st = binary.stat()
        key = (str(binary), st.st_mtime_ns, st.st_size)
        if key not in _traits_of:
            try:
                said = subprocess.run([str(binary), "--uet-traits"], capture_output=True, text=True, timeout=300)
                traits = json.loads(said.stdout) if said.returncode == 0 else None
            except (OSError, subprocess.TimeoutExpired, ValueError):
                traits = None
            kinds = {"processes": int, "entity": bool, "loss_every": int, "weight": float, "profile_pairs": bool}
            if not (isinstance(traits, dict) and traits.keys() == kinds.keys()
                    and all(type(traits[k]) is kind for k, kind in kinds.items())
                    and traits["processes"] in (1, 2) and traits["loss_every"] >= 0 and traits["weight"] > 0):
                raise TraitsError(f"{binary} does not say its area's traits (--uet-traits printed no JSON object of "
                                  f"{', '.join(kinds)}; each area declares UET_AREA_TRAITS): rebuild the suite")
            _traits_of[key] = traits
        out[area] = _traits_of[key]
    return out


def areas_for(cell_solo: bool, build: pathlib.Path) -> list[str]:
    return [a for a, t in area_traits(build).items() if cell_solo or t["processes"] == 2]


def placement_name(cell: Cell, use_namespaces: bool | None, placement: str | None) -> str:
    """The placement a cell runs in: the one asked for, else namespaces when both manifests allow it and we
    are root, else same-host."""
    if placement:
        return placement
    if use_namespaces is None:
        use_namespaces = os.geteuid() == 0 and cell.initiator.namespaces and cell.target.namespaces
    return "namespaces" if use_namespaces else "same-host"


def lost_during(place, why: str) -> str:
    return f"the {place.name} placement lost a side during this case: {why}"


def lost_earlier(place, why: str) -> str:
    return f"not run: the {place.name} placement lost a side earlier in this cell ({why})"


class CellRun:
    """Runs the binaries of one cell; `on_result` is called for every case as it ends. `build` is the suite's
    tree (its own tools, and the case binaries of a side without a libfabric of its own); `sides` (the run's,
    by manifest name: harness/inputs/side_builds.py) says which tree and libfabric each side runs with."""

    def __init__(self, cell: Cell, build: pathlib.Path, out: pathlib.Path, *, seed: int = 0,
                 case_filter: str = "*", use_namespaces: bool | None = None, on_result=None,
                 stop: threading.Event | None = None, case_deadline: float = CASE_DEADLINE_S,
                 ports: tuple[int, int] = (INITIATOR_PORT, TARGET_PORT), spec_version: str | None = None,
                 placement: str | None = None, cell_deadline: float = CELL_DEADLINE_S,
                 run_ends_at: float | None = None, run_deadline: float | None = None,
                 sides: dict[str, side_builds.Side] | None = None):
        self.cell, self.build, self.out, self.seed = cell, pathlib.Path(build).resolve(), out, seed
        self.sides = sides or {}
        self.placement_name = placement_name(cell, use_namespaces, placement)
        self.spec_version = spec_version  # checked against; None: spec/wire.yaml's default
        self.case_filter = case_filter
        self.on_result = on_result or (lambda r: None)
        self.stop = stop or threading.Event()
        self.case_deadline, self.ports = case_deadline, ports
        # The budget: the cell's deadline from its start, or the run's end (time.monotonic()), whichever is first.
        self.cell_deadline, self.run_ends_at, self.run_deadline = cell_deadline, run_ends_at, run_deadline
        self._budget_at, self._budget_why = float("inf"), ""
        self.results: list[Result] = []
        self.placement = None          # the placement's name once it is up
        self.placement_detail: dict = {}
        self.timings: dict[str, dict[str, float]] = {}  # per area: wall and CPU seconds of its binary runs
        self.loss: dict[str, dict] = {}  # per area: the drop pattern applied
        self.logs_capped: dict[str, int] = {}  # per log file past the cap: the bytes dropped from it
        self._area = ""
        # Whether a case binary of this cell has started: until one has, no provider code ran in the placement,
        # and what the placement loses is the infrastructure's (containers/placement.py InfraError).
        self._provider_ran = False

    def _start_budget(self) -> None:
        self._budget_at = time.monotonic() + self.cell_deadline
        self._budget_why = f"the cell's deadline of {self.cell_deadline:.0f} s (--cell-deadline) ran out"
        if self.run_ends_at is not None and self.run_ends_at < self._budget_at:
            self._budget_at = self.run_ends_at
            self._budget_why = f"the run's deadline of {self.run_deadline or 0:.0f} s (--run-deadline) ran out"

    def budget_spent(self) -> str | None:
        """Why the cell may run nothing more, or None while its budget lasts."""
        return self._budget_why if time.monotonic() >= self._budget_at else None

    @property
    def _not_run_budget(self) -> str:
        return f"not run: budget ({self._budget_why})"

    def run(self) -> list[Result]:
        self.out.mkdir(parents=True, exist_ok=True)
        self._start_budget()
        wants_entity = self.cell.initiator.suite_entity and any(self._traits(a).get("entity") for a in self.cell.areas)
        try:
            with LogCap(self.out) as cap, suite_entity(self.build, self.out / "privileged-entity.log") if wants_entity \
                    else contextlib.nullcontext(None) as entity_socket:
                self.logs_capped = cap.dropped
                return self._run(entity_socket)
        except EntityError as err:
            for area in self.cell.areas:
                self._emit(Result(self.cell.id, area, f"uet-cases-{area}", f"uet-cases-{area} (whole binary)", "error",
                                  reason=f"the suite's privileged entity did not start: {err}"))
            return self.results

    def _traits(self, area: str) -> dict:
        """The area's traits as the initiator's binary declares them ({} without a binary: reported as it runs)."""
        return area_traits(self.side(self.cell.initiator).build).get(area, {})

    def side(self, m: manifest_mod.Manifest) -> side_builds.Side:
        return self.sides.get(m.name) or side_builds.Side(self.build, None)

    def case_binary(self, m: manifest_mod.Manifest, area: str) -> pathlib.Path:
        """The binary `m`'s side runs for `area`: from the tree built against its libfabric."""
        return self.side(m).build / "cases" / f"uet-cases-{area}"

    def _run(self, entity_socket: str | None) -> list[Result]:
        init_json = manifest_mod.resolved_path(self.out, "initiator")
        target_json = manifest_mod.resolved_path(self.out, "target")
        init_side, target_side = self.side(self.cell.initiator), self.side(self.cell.target)
        resolved = manifest_mod.write_resolved(self.cell.initiator, init_json, build=init_side.build, port=self.ports[0],
                                               spec_version=self.spec_version, entity_socket=entity_socket,
                                               library_first=init_side.library_first)
        target_resolved = manifest_mod.write_resolved(self.cell.target, target_json, build=target_side.build,
                                                      port=self.ports[1], spec_version=self.spec_version,
                                                      entity_socket=entity_socket,
                                                      library_first=target_side.library_first)
        # Each side's UET port as the loss rules match it: its manifest's, "any" UDP where the provider picks.
        self._uet_ports = tuple(_loss_port(r, port) for r, port in zip((resolved, target_resolved), self.ports))
        env = manifest_mod.environment_over(os.environ, resolved)
        env["UET_BUILD"] = str(self.build)
        self._manifests = (init_json, target_json)
        self._records = (resolved, target_resolved)
        # The same volumes for every cell of a run (the run's folder, every cell's entity), so that a placement
        # may keep its sides for the next cell.
        entity_root = entity_mod.entity_root()
        mounts = [(str(self.build), "ro"), (str(REPO), "ro"), (str(self.out.resolve().parent), "rw")] + \
            ([(entity_root, "rw")] if entity_root else [(str(pathlib.Path(entity_socket).parent), "rw")] if entity_socket else []) + \
            side_builds.mounts(self.sides)
        try:
            place = open_placement(self.placement_name, mounts=mounts, entity_socket=entity_socket,
                                   **self._host_interface())
            place.__enter__()
        except (PlacementError, NamespaceError) as err:
            verdict = Verdict.INFRA_ERROR if isinstance(err, InfraError) else Verdict.ERROR
            for area in self.cell.areas:
                self._emit(Result(self.cell.id, area, f"uet-cases-{area}", f"uet-cases-{area} (whole binary)", verdict.value,
                                  reason=f"the {self.placement_name} placement could not be made: {err}"))
            return self.results
        try:
            self.placement, self.placement_detail = place.name, place.describe()
            for area in self.cell.areas:
                if self.stop.is_set():
                    break
                binary = self.case_binary(self.cell.initiator, area)
                if not os.access(binary, os.X_OK):
                    self._emit(Result(self.cell.id, area, binary.name, f"{binary.name} (whole binary)", "error",
                                      reason=f"{binary} is missing or not executable (was the build changed during the run?)"))
                    continue
                if (why := place.lost()):
                    self._not_run(area, binary, self._with_plan(env, area, place), lost_earlier(place, why),
                                  verdict=Verdict.ERROR if self._provider_ran else Verdict.INFRA_ERROR)
                    continue
                if self.budget_spent():
                    self._not_run(area, binary, self._with_plan(env, area, place), self._not_run_budget)
                    continue
                with self._loss(area, place.pair) as loss:
                    self._run_binary(area, binary, place, env, loss)
        finally:
            place.__exit__(None, None, None)
        return self.results

    def _host_interface(self) -> dict:
        """A manifest whose provider must stay on its host's interface can be placed only where the side keeps
        its node's own network (nodes, same-host)."""
        wanted = {m.name: m.data["host_interface"] for m in (self.cell.initiator, self.cell.target)
                  if m.data.get("host_interface")}
        if not wanted:
            return {}
        placement = placement_class(self.placement_name)
        if not placement.keeps_host_network:
            name, interface = next(iter(wanted.items()))
            raise PlacementError(f"{name} must run on its host's interface {interface} (host_interface), which "
                                 f"cannot move into the {self.placement_name} placement's namespaces: use "
                                 "--placement nodes (or --same-host)")
        return {"host_interface": next(iter(wanted.values()))} if placement.takes_host_interface else {}

    @contextlib.contextmanager
    def _loss(self, area: str, pair):
        """The counted loss an area's checks need (its traits' loss_every), on both directions of the pair, chosen
        by the seed and recorded in self.loss so the report can print it and a rerun drops the same packets."""
        every = pair and self._traits(area).get("loss_every")
        if not every:
            yield None
            return
        offset = self.seed % every
        init_port, target_port = self._uet_ports
        pair.impair("a", udp_dport=target_port, every=every, offset=offset)
        pair.impair("b", udp_dport=init_port, every=every, offset=offset)
        text = f"{counted_pattern(every, offset)} (seed {self.seed}); nftables numgen inc on the {pair.impair_hook} hook"
        self.loss[area] = {"every": every, "offset": offset, "seed": self.seed, "pattern": text,
                           "rules": {"initiator": pair.impairment("a"), "target": pair.impairment("b")}}
        try:
            yield self.loss[area]
        finally:
            pair.clear_impairment("a")
            pair.clear_impairment("b")

    def _emit(self, result: Result) -> None:
        self.results.append(result)
        self.on_result(result)

    def _with_plan(self, env: dict, area: str, place, loss: dict | None = None) -> dict:
        """`env` naming the area's cell plan, written (a binary reads its manifests from it, even to list its
        cases: they are instantiated per claimed endpoint type)."""
        # The target runs its own tree's binary when its libfabric differs from the initiator's.
        target_binary = self.case_binary(self.cell.target, area)
        plan = cell_plan.write(self.out / f"{area}.plan.json", cell_plan.make(
            cell=self.cell.id, area=area, initiator_manifest=self._manifests[0], target_manifest=self._manifests[1],
            initiator_record=self._records[0], target_record=self._records[1],
            results=self.out / f"{area}.jsonl", captures=self.out / "captures" / area,
            target_place=place.target_place, control_listen=place.control_listen,
            target_log=self.out / f"{area}.target.log", loss=loss,
            target_binary=None if target_binary == self.case_binary(self.cell.initiator, area) else target_binary))
        return dict(env, **{cell_plan.PLAN_VARIABLE: str(plan)})

    def _run_binary(self, area: str, binary: pathlib.Path, place, env: dict, loss: dict | None) -> None:
        self._area = area
        lines = self.out / f"{area}.jsonl"
        captures = self.out / "captures" / area
        captures.mkdir(parents=True, exist_ok=True)
        log = self.out / f"{area}.log"
        lines.unlink(missing_ok=True)
        log.unlink(missing_ok=True)
        (self.out / f"{area}.target.log").unlink(missing_ok=True)
        env = self._with_plan(env, area, place, loss)
        while not self.stop.is_set():
            # Every case with a verdict (a crashed or timed-out one included) is not run again.
            done = [r.case for r in self.results if r.area == area]
            negative = ":".join(done)
            gfilter = self.case_filter
            if negative:
                gfilter += (":" if "-" in gfilter else "-") + negative
            # No --gtest_random_seed: without --gtest_shuffle it decides nothing, and shuffled, the security cases
            # depend on their order (a key update leaves the next case's secure domain unusable).
            argv = [str(binary), f"--gtest_filter={gfilter}"]
            with open(log, "a") as logf:
                logf.write(f"$ {' '.join(argv)}\n")
            # A key of this launch's own: lines of an earlier launch, or of anyone else, do not verify.
            channel = VerdictChannel(lines, done=frozenset(done))
            try:
                proc = place.start(argv, env, str(log), inputs=channel.inputs)
            except Exception as err:  # an agent that refused or is gone: the binary could not start at all
                lost = isinstance(err, InfraError) and not self._provider_ran
                self._emit(Result(self.cell.id, area, binary.name, f"{binary.name} (whole binary)",
                                  Verdict.INFRA_ERROR.value if lost else Verdict.ERROR.value,
                                  reason=f"could not start {binary.name} in the {place.name} placement: {err}"))
                return
            self._provider_ran = True
            try:
                why, trusted = self._watch(proc, channel, place)
            finally:
                proc.close()
            channel.read()
            lost = place.lost() if why in ("lost", "exited") else None
            for i, event in enumerate(channel.ended):
                result = result_of_line(event, cell=self.cell.id, area=area, binary=binary.name)
                # A teardown note after the loss is the loss too (the side's process was gone).
                torn = any(k.startswith("teardown") for k in result.notes)
                if lost and i >= trusted and (result.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.WARNING) or torn):
                    # Ended after the last moment both sides were known to serve: the placement, not the provider.
                    result.verdict, result.reason = "error", lost_during(place, lost)
                self._emit(result)
            for case in channel.unended:
                self._emit(Result(self.cell.id, area, binary.name, case, "error", message=tail(log),
                                  reason="its verdict never came: the next case started without it (a line of the "
                                         "verdict file was lost or dropped)"))
            if channel.rejected_count or channel.overflow:
                self._emit(Result(self.cell.id, area, binary.name, f"{binary.name} (verdict file)", "error",
                                  reason=(f"the verdict file grew past {MAX_VERDICT_BYTES >> 20} MiB: the binary was "
                                          "stopped; " if channel.overflow else "") + channel.describe_rejections()))
            if channel.running is None:
                if why == "budget":
                    self._not_run(area, binary, env, self._not_run_budget)
                elif proc.returncode not in (0, 1) and why not in ("stopped", "lost"):
                    # Outside any case (its start-up, its end): relaunching would end the same way, so every case
                    # without a verdict says why it has none.
                    status = "passed the case deadline" if why == "deadline" else f"exited {describe_status(proc.returncode)}"
                    self._emit(Result(self.cell.id, area, binary.name, f"{binary.name} (whole binary)", "error",
                                      reason=f"{binary.name} {status} outside any case", message=tail(log)))
                    self._not_run(area, binary, env, f"not run: {binary.name} {status} outside any case")
                elif why in (None, "exited"):
                    # A binary that ends well with cases left (a provider that calls exit(0)) left them unjudged.
                    self._not_run(area, binary, env, f"never run: {binary.name} exited "
                                  f"{describe_status(proc.returncode)} before this case started", whole_binary=False)
                return
            verdict, reason = ("timeout", f"no end within the case deadline of {self.case_deadline:.0f} s") \
                if why == "deadline" else ("error", f"the case binary died {describe_status(proc.returncode)}")
            if why == "deadline" and self._starved:  # the host's doing, not the provider's
                verdict, reason = "error", self._starved
            if why == "stopped":
                verdict, reason = "error", "interrupted (Ctrl-C or SIGTERM): the run was stopped during this case"
            if why == "overflow":
                verdict, reason = "error", f"stopped: the verdict file grew past {MAX_VERDICT_BYTES >> 20} MiB"
            if why == "budget":
                verdict, reason = "error", f"not run to its end: budget ({self._budget_why} during this case)"
            if lost or why == "lost":
                verdict, reason = "error", lost_during(place, lost or place.lost())
            self._emit(Result(self.cell.id, area, binary.name, channel.running, verdict, reason=reason, message=tail(log)))
            if why == "lost":
                self._not_run(area, binary, env, lost_earlier(place, lost or place.lost()))
            if why == "budget":
                self._not_run(area, binary, env, self._not_run_budget)
            if why in ("stopped", "lost", "budget"):
                return

    def _not_run(self, area: str, binary: pathlib.Path, env: dict, reason: str, whole_binary: bool = True,
                 verdict: Verdict = Verdict.ERROR) -> None:
        """An error for each case of `area` without a verdict yet, listed by the binary on this host (listing
        opens no fabric), so that a lost side leaves no case uncounted."""
        done = {r.case for r in self.results if r.area == area}
        try:
            listed = subprocess.run([str(binary), "--gtest_list_tests", f"--gtest_filter={self.case_filter}"], env=env,
                                    capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            listed = ""  # a binary that cannot even list its cases: the whole binary has the error
        suite, cases = "", []
        for line in listed.splitlines():
            if line and not line.startswith(" "):
                suite = line.strip()
            elif line.strip():
                cases.append(suite + line.split("#")[0].strip())
        missing = [c for c in cases if c not in done] or ([] if done or not whole_binary else [f"{binary.name} (whole binary)"])
        for case in missing:
            self._emit(Result(self.cell.id, area, binary.name, case, verdict.value, reason=reason))

    def _watch(self, proc, channel: VerdictChannel, place) -> tuple[str, int]:
        """Waits for the binary; kills it at a case's deadline, a stop, when the placement loses a side, or
        when its verdict file overflows. Returns why it ended, and how many cases had ended while both
        sides were last known to serve. A case's deadline is extended by the time the binary's threads waited
        for a CPU (harness/results/run_delay.py); self._starved says how long they waited when it passed."""
        started_case, t0, why = time.monotonic(), time.monotonic(), None
        trusted = ended = 0
        pgid = getattr(proc, "pid", None)  # a local process leads its own group; an agent's is not seen here
        at_start, extension, self._starved = run_delay.snapshot(pgid), 0.0, None
        while True:
            if proc.poll() is not None or proc.lost:
                timing = self.timings.setdefault(self._area, {"wall": 0.0, "cpu": 0.0})
                timing["wall"] += time.monotonic() - t0
                timing["cpu"] += proc.cpu_seconds
                return (why or ("lost" if proc.lost else "exited")), trusted
            if why is None:
                # Only a line the binary signed restarts the deadline: bytes anyone else writes do not.
                if channel.read():  # a case started or ended: its deadline starts again
                    started_case = time.monotonic()
                    ended = len(channel.ended)
                    at_start, extension = run_delay.snapshot(pgid), 0.0
                lost = place.lost()
                if not lost:
                    trusted = ended
                why = "stopped" if self.stop.is_set() else "lost" if lost else "overflow" if channel.overflow else (
                    "budget" if self.budget_spent() else None)
                if why is None and time.monotonic() - started_case > self.case_deadline + extension:
                    waited, whose = run_delay.worst_since(at_start, run_delay.snapshot(pgid))
                    if waited > extension and extension < self.case_deadline:
                        extension = min(waited, self.case_deadline)  # the time the host did not give it
                    else:
                        why = "deadline"
                        if waited - extension >= run_delay.BUSY_SHARE * self.case_deadline:  # not made good
                            self._starved = (f"{run_delay.INCONCLUSIVE}: no end within the case deadline of "
                                             f"{self.case_deadline:.0f} s (extended by {extension:.1f} s) while "
                                             f"{whose} of the case binary waited {waited:.1f} s for a CPU "
                                             f"(load average {run_delay.load_average()})")
                if why:
                    proc.kill()
            select.select([proc], [], [], 0.2)


def _loss_port(record: dict, suite_port: int) -> int | str:
    """The UDP port a side's UET goes to, for a loss rule: its manifest's, or "any" (every UDP datagram of the
    test link) where the provider binds a port of its own choosing."""
    port = (record.get("wire") or {}).get("udp_port")
    return "any" if port == "auto" else port if isinstance(port, int) else suite_port


def run_manifest(initiator: str | pathlib.Path, build: pathlib.Path, out: pathlib.Path, *, target=None,
                 areas: list[str] | None = None, extra_env: dict | None = None, case_filter: str = "*",
                 use_namespaces: bool | None = None, ports: tuple[int, int] = (INITIATOR_PORT, TARGET_PORT),
                 on_result=None, per_cell_folder: bool = False, placement: str | None = None,
                 seed: int = 0) -> list[Result]:
    """The results of one cell, for tests and the mutation run: `initiator` (and `target`, default the
    same) are manifest references; `areas` default to every area the cell runs; `extra_env` goes over both
    sides' environment (a fault knob); `seed` places the counted loss, so a rerun with the same seed drops
    what the first run dropped."""
    init = manifest_mod.load(initiator)
    tgt = manifest_mod.load(target) if target else init
    if extra_env:  # both sides: the target process inherits it unless its manifest sets the same keys
        init = dataclasses.replace(init, data=dict(init.data, environment={**(init.data.get("environment") or {}), **extra_env}))
        tgt = init if not target else dataclasses.replace(
            tgt, data=dict(tgt.data, environment={**(tgt.data.get("environment") or {}), **extra_env}))
    solo = init.ref == tgt.ref
    cell = Cell(init, tgt, areas or areas_for(solo, build))
    return CellRun(cell, build, folder_inside(out, cell.id) if per_cell_folder else out, case_filter=case_filter,
                   seed=seed, use_namespaces=use_namespaces, ports=ports, on_result=on_result, placement=placement).run()


def describe_status(rc: int | None) -> str:
    if rc is None:
        return "(still running)"
    if rc < 0:
        try:
            return f"of signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"of signal {-rc}"
    return f"with status {rc}"


def tail(path: pathlib.Path, n: int = 1500) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m harness.run.run_cases", description=__doc__.splitlines()[0])
    parser.add_argument("--initiator", required=True, metavar="FILE[#VARIANT]")
    parser.add_argument("--target", metavar="FILE[#VARIANT]", help="default: the initiator's manifest")
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")))
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "cases")
    parser.add_argument("--filter", default="*", help="a gtest filter of cases")
    args = parser.parse_args(argv)
    if not case_binaries(args.build):
        print(f"run_cases: no case binaries in {args.build / 'cases'} (run ./uet build)", file=sys.stderr)
        return 3

    def show(r: Result):
        print(printable(f"{r.verdict:<15}{r.case}" + (f"  -- {(r.reason or r.message or '').splitlines()[0]}" if r.verdict != "pass" and (r.reason or r.message) else "")))

    try:
        results = run_manifest(args.initiator, args.build, args.out, target=args.target, case_filter=args.filter,
                               on_result=show, per_cell_folder=True)
    except manifest_mod.ManifestError as exc:
        print(exc, file=sys.stderr)
        return 2
    c = counts(results)
    print(f"{results[0].cell if results else args.initiator}: " + ", ".join(f"{n} {k}" for k, n in c.items() if n and k != "total"))
    return 1 if c["fail"] or c["error"] or c["timeout"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
