"""What a run does, from the command line: the cells (initiator manifest x target manifest, the areas each
runs) of the four modes of the front door, and what --only selects.

- default: softuet.yaml and each of its profile-set variants against itself (the reference FEP), and the
  negotiation matrix: the areas about pairs of profile sets (negotiation: its traits' profile_pairs) over
  every other ordered pair of those profile sets;
- provider: one manifest against itself (a certification run);
- pair: the initiator's and the target's single-process areas each against itself, and the
  two-process areas from the initiator to the target (an interop cell; an area's traits say its processes);
- matrix: every manifest against itself for the single-process areas, and every ordered pair
  (initiator x target, the diagonal included) for the two-process areas; --involving M keeps the cells
  whose initiator or target is M (a vendor's CI).
"""
from __future__ import annotations

import dataclasses
import pathlib
import re

from harness.inputs import manifest as manifest_mod
from harness.run.run_cases import Cell

DEFAULT_MANIFEST = "softuet.yaml"
STATEMENT_RE = re.compile(r"^§?\d+(\.\d+)+(-[a-z]+)?$")


@dataclasses.dataclass
class Selection:
    """--only patterns, sorted by what they name: areas, catalogue statements (an ID or a clause
    prefix: the run keeps the checks that cover one), or cases (a gtest filter)."""
    areas: set[str]
    statements: list[str]
    case_patterns: list[str]

    @property
    def gtest_filter(self) -> str:
        return ":".join(self.case_patterns) if self.case_patterns else "*"

    def keeps_statements(self, statements: list[str]) -> bool:
        if not self.statements:
            return True
        return any(s == p or s.startswith(p + ".") or s.startswith(p + "-") for p in self.statements for s in statements)


def selection(patterns: list[str], known_areas: list[str]) -> Selection:
    areas, statements, cases = set(), [], []
    for p in patterns:
        if p in known_areas:
            areas.add(p)
        elif STATEMENT_RE.match(p):
            statements.append(p.lstrip("§"))
        else:
            # A name as gtest prints it (Suite.Case) or a part of one matches its every kind
            # (Claimed/Suite.Case/rdm); a pattern with wildcards is taken as written.
            cases.append(p if any(ch in p for ch in "*?") else f"*{p}*")
    return Selection(areas, statements, cases)


def _areas(all_areas: dict[str, dict], single: bool, two: bool, chosen: set[str]) -> list[str]:
    out = [a for a, t in all_areas.items() if (single and t["processes"] == 1) or (two and t["processes"] == 2)]
    return [a for a in out if not chosen or a in chosen]


def cells(mode: str, refs: list[str], all_areas: dict[str, dict], chosen: set[str],
          libfabric: pathlib.Path | None = None) -> list[Cell]:
    """The cells of a run; raises ManifestError naming every bad manifest. `all_areas` are the built areas
    with their traits (harness/run/run_cases.py area_traits); `libfabric` (--libfabric) is the libfabric of
    every manifest that names none."""
    if mode == "default":
        base = manifest_mod.load(DEFAULT_MANIFEST)
        refs = [DEFAULT_MANIFEST] + [f"{DEFAULT_MANIFEST}#{v}" for v in base.variants()]
    manifests, problems = [], []
    for ref in refs:
        try:
            manifests.append(manifest_mod.load(ref).with_default_libfabric(libfabric))
        except manifest_mod.ManifestError as exc:
            problems += exc.problems
    if problems:
        raise manifest_mod.ManifestError(problems)
    names = [m.name for m in manifests]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes and mode != "pair":
        raise manifest_mod.ManifestError([f"two manifests are named {d}: give one a `name:`" for d in dupes])
    out: list[Cell] = []
    if mode in ("default", "provider"):
        for m in manifests:
            out.append(Cell(m, m, _areas(all_areas, True, True, chosen)))
    pairs = [a for a, t in all_areas.items() if t["profile_pairs"] and (not chosen or a in chosen)]
    if mode == "default" and pairs:
        out += [Cell(a, b, pairs) for a in manifests for b in manifests if a is not b]
    elif mode == "pair":
        init, target = manifests
        if init.ref == target.ref:
            return [Cell(init, init, _areas(all_areas, True, True, chosen))]
        out += [Cell(init, init, _areas(all_areas, True, False, chosen)),
                Cell(target, target, _areas(all_areas, True, False, chosen)),
                Cell(init, target, _areas(all_areas, False, True, chosen))]
    elif mode == "matrix":
        out += [Cell(m, m, _areas(all_areas, True, True, chosen)) for m in manifests]
        out += [Cell(a, b, _areas(all_areas, False, True, chosen)) for a in manifests for b in manifests if a is not b]
    return [c for c in out if c.areas]


def involving(cells: list[Cell], ref: str | None) -> list[Cell]:
    """--involving: the cells whose initiator or target is the manifest `ref`, known by its name (a matrix's
    names are unique); ManifestError when the matrix has no such manifest."""
    if ref is None:
        return cells
    name = manifest_mod.load(ref).name
    kept = [c for c in cells if name in (c.initiator.name, c.target.name)]
    if cells and not kept:  # no cell at all is --only's to name
        raise manifest_mod.ManifestError([f"--involving {ref}: its provider {name} is not one of the matrix's "
                                          f"({', '.join(m.name for m in manifests_of(cells))})"])
    return kept


def manifests_of(cells: list[Cell]) -> list[manifest_mod.Manifest]:
    """Each manifest the cells name, once, by name, in the order they first appear as initiator then target."""
    return list(({c.initiator.name: c.initiator for c in cells} | {c.target.name: c.target for c in cells}).values())
