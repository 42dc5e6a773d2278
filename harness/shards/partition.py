"""The cut of a run into shards (./uet run --shard I/N): the plan's units, their weights, and which shard runs
which. A run of several cells is cut by cell (a cell is never split: its sides, loss and ports stay one); a
run of one cell by area of that cell. The cut is the same on every machine given the same units and weights:
the weights are the areas' declared traits (run_cases.area_traits "weight"), or a previous run's recorded
durations (--shard-weights RUN_DIR), and they go into the shard's fingerprint (harness/shards/fingerprint.py).
"""
from __future__ import annotations

import dataclasses
import pathlib

from harness.files import input_files
from harness.results.results import read_results_json

# A weight's digits: what a JSON float keeps exactly, so the fingerprint of the weights is the same everywhere.
WEIGHT_DIGITS = 3


class ShardError(Exception):
    """A cut that cannot be made (bad usage: exit 2 with this message)."""


def declared_weight(cell, traits: dict[str, dict]) -> float:
    """A cell's weight from its areas' declared traits: a cell's own set-up, then each area's."""
    return 1.0 + sum(traits[a]["weight"] for a in cell.areas)


@dataclasses.dataclass(frozen=True)
class Unit:
    name: str           # a cell's id, or cell/area when the run's one cell is cut by area
    place: int          # the cell's index in the whole plan (its ports when the sides share a network)
    area: str | None    # None: the whole cell


def units_of(cells: list) -> list[Unit]:
    """The plan's units, in plan order."""
    if len(cells) == 1:
        return [Unit(f"{cells[0].id}/{a}", 0, a) for a in cells[0].areas]
    return [Unit(c.id, i, None) for i, c in enumerate(cells)]


def recorded_durations(run: pathlib.Path) -> dict[str, float]:
    """{unit name: seconds} a previous run recorded (its results.json, read by the one reader): each cell's wall
    time and each of its binaries' (cells[].timing). ShardError naming the file when it cannot be read."""
    try:
        doc = read_results_json(run)[1]
    except input_files.InputError as exc:
        raise ShardError(f"--shard-weights {run}: {exc}") from None
    out = {}
    for cell in doc.get("cells") or []:
        timing = cell.get("timing") or {}
        if isinstance(timing.get("wall"), (int, float)):
            out[cell["id"]] = float(timing["wall"])
        for area, t in (timing.get("binaries") or {}).items():
            if isinstance(t, dict) and isinstance(t.get("wall"), (int, float)):
                out[f"{cell['id']}/{area}"] = float(t["wall"])
    return out


def weights(cells: list, traits: dict[str, dict], recorded: dict[str, float] | None = None) -> dict[str, float]:
    """{unit name: weight} in plan order. With `recorded` durations, a unit the record lacks (a new cell or
    area) gets its declared weight scaled as the recorded units' declared weights are to their durations."""
    declared = {}
    for u in units_of(cells):
        cell = cells[u.place]
        declared[u.name] = traits[u.area]["weight"] if u.area else declared_weight(cell, traits)
    if recorded:
        known = [n for n in declared if recorded.get(n, 0) > 0]
        scale = sum(recorded[n] for n in known) / sum(declared[n] for n in known) if known else 1.0
        declared = {n: recorded[n] if n in known else w * scale for n, w in declared.items()}
    # a unit weighs something: a zero would make where it lands depend on nothing but the order
    return {n: max(round(w, WEIGHT_DIGITS), 10 ** -WEIGHT_DIGITS) for n, w in declared.items()}


def cut(names: list[str], weight: dict[str, float], count: int) -> list[list[str]]:
    """Each shard's units (names, in plan order): the heaviest unit first goes to the least loaded shard (the
    lower-numbered one on a tie), so the shards' weights come out near equal. ShardError when there are fewer
    units than shards (a shard would run nothing)."""
    if count > len(names):
        raise ShardError(f"this run has {len(names)} unit(s) to share out (" + ", ".join(names[:8])
                         + (", ..." if len(names) > 8 else "") + f"), fewer than {count} shards: a shard would run "
                         f"nothing; give at most {len(names)} shards")
    place = {n: i for i, n in enumerate(names)}
    load = [0.0] * count
    shards: list[list[str]] = [[] for _ in range(count)]
    for name in sorted(names, key=lambda n: (-weight[n], place[n])):
        k = min(range(count), key=lambda j: (load[j], j))
        shards[k].append(name)
        load[k] += weight[name]
    return [sorted(s, key=place.__getitem__) for s in shards]


def cells_of_shard(cells: list, mine: list[str]) -> list[tuple[int, object]]:
    """(index in the whole plan, cell) of each cell this shard runs; a cell cut by area keeps only its areas."""
    units = [u for u in units_of(cells) if u.name in set(mine)]
    if len(cells) == 1:
        return [(0, dataclasses.replace(cells[0], areas=[u.area for u in units]))] if units else []
    return [(u.place, cells[u.place]) for u in units]
