"""The cut of a run into shards (./uet run --shard I/N): the plan's units, their weights, and which shard runs
which. A unit is an interop cell (two manifests) whole: its two providers' sides, loss and ports stay one;
or one area of a cell of one manifest against itself (a single-provider run's cells, the default run's
profile sets, a matrix's diagonal), as a single-provider run is cut: each area's binaries run apart from the
others', so a cell's areas in several shards give what the cell gives whole. The heavy cells of one
manifest are what a run's time is made of (the default run's seven take a minute each, its 42 negotiation
pairs seconds): whole, each would be the least a shard takes. The cut is the same on every machine given the
same units and weights: the weights are the areas' declared traits (run_cases.area_traits "weight"), or a
previous run's recorded durations (--shard-weights RUN_DIR), and they go into the shard's fingerprint
(harness/shards/fingerprint.py).
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
    name: str           # an interop cell's id, or cell/area of a cell of one manifest
    place: int          # the cell's index in the whole plan (its ports when the sides share a network)
    area: str | None    # None: the whole cell


def units_of(cells: list) -> list[Unit]:
    """The plan's units, in plan order."""
    out = []
    for i, c in enumerate(cells):
        out += [Unit(f"{c.id}/{a}", i, a) for a in c.areas] if c.solo else [Unit(c.id, i, None)]
    return out


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
    """{unit name: weight} in plan order: an area's declared weight, an interop cell's (declared_weight). With
    `recorded` durations, a unit the record lacks (a new cell or area) gets its declared weight scaled as the
    recorded units' declared weights are to their durations."""
    declared = {u.name: traits[u.area]["weight"] if u.area else declared_weight(cells[u.place], traits)
                for u in units_of(cells)}
    if recorded:
        known = [n for n in declared if recorded.get(n, 0) > 0]
        scale = sum(recorded[n] for n in known) / sum(declared[n] for n in known) if known else 1.0
        declared = {n: recorded[n] if n in known else w * scale for n, w in declared.items()}
    # a unit weighs something: a zero would make where it lands depend on nothing but the order
    return {n: max(round(w, WEIGHT_DIGITS), 10 ** -WEIGHT_DIGITS) for n, w in declared.items()}


def cut(names: list[str], weight: dict[str, float], count: int) -> list[list[str]]:
    """Each shard's units (names, in plan order). The heaviest unit first goes to the shard that holds the
    least of its cell so far, then the least loaded, then the lower-numbered: a cell's areas run one after
    another, so a cell spread evenly over the shards is no shard's long pole, and the shards' weights come out
    near equal. ShardError when there are fewer units than shards (a shard would run nothing)."""
    if count > len(names):
        raise ShardError(f"this run has {len(names)} unit(s) to share out (" + ", ".join(names[:8])
                         + (", ..." if len(names) > 8 else "") + f"), fewer than {count} shards: a shard would run "
                         f"nothing; give at most {len(names)} shards")
    place = {n: i for i, n in enumerate(names)}
    load = [0.0] * count
    of_cell: dict[tuple[str, int], float] = {}
    shards: list[list[str]] = [[] for _ in range(count)]
    for name in sorted(names, key=lambda n: (-weight[n], place[n])):
        cell = name.rpartition("/")[0] or name
        k = min(range(count), key=lambda j: (of_cell.get((cell, j), 0.0), load[j], j))
        shards[k].append(name)
        load[k] += weight[name]
        of_cell[cell, k] = of_cell.get((cell, k), 0.0) + weight[name]
    return [sorted(s, key=place.__getitem__) for s in shards]


def cells_of_shard(cells: list, mine: list[str]) -> list[tuple[int, object]]:
    """(index in the whole plan, cell) of each cell this shard runs (some of it), in plan order; a cell of one
    manifest keeps only the areas of the shard."""
    chosen = set(mine)
    out = []
    for i, c in enumerate(cells):
        units = [u for u in units_of([c]) if u.name in chosen]
        if units:
            out.append((i, dataclasses.replace(c, areas=[u.area for u in units]) if c.solo else c))
    return out
