"""Which build tree each side of a run takes its case binaries from, and with which libfabric it runs.

A side whose manifest names a libfabric (`libfabric: PREFIX`, or ./uet run --libfabric PREFIX for every manifest
that names none) runs case binaries built against that libfabric, in a tree of their own keyed by its version and
resolved prefix, build-libfabric/<version>-<hash>/, with its lib folder first in LD_LIBRARY_PATH; {build} in its
manifest names that tree. Every other side runs from the suite's own tree (build/). The harness's own tools (the
decoder, the suite's entity, the placement agent) always come from build/: they do not load libfabric.

A tree holds the target uet-run-side (the case binaries and the entity tools a manifest names through {build})
and softuet only when a manifest run against it loads its provider from {build}/lib: a provider must be built
against the headers of the libfabric that loads it (libfabric's structs grow with its minor version, and a
provider built against newer headers than its core writes past what the core allocated).
"""
from __future__ import annotations

import dataclasses
import pathlib

from harness.inputs import libfabric_prefix
from harness.inputs import manifest as manifest_mod
REPO = pathlib.Path(__file__).resolve().parents[2]
TREES = REPO / "build-libfabric"
SIDE_TARGET = "uet-run-side"
PROVIDER_TARGET = "softuet-fi"
RUN_TARGET, TOOLS_TARGET = "uet-run", "uet-tools"   # what build/ holds: everything, or only the harness's tools


@dataclasses.dataclass(frozen=True)
class Side:
    build: pathlib.Path                               # where its case binaries and {build} are
    libfabric: libfabric_prefix.Libfabric | None      # None: the suite's own (build/'s)

    @property
    def library_first(self) -> pathlib.Path | None:
        return self.libfabric.lib if self.libfabric else None


def tree_of(lf: libfabric_prefix.Libfabric) -> pathlib.Path:
    return TREES / lf.key


def loads_provider_from_build(m: manifest_mod.Manifest) -> bool:
    """The manifest's provider is one the suite builds (softuet): FI_PROVIDER_PATH names {build}."""
    return "{build}" in str((m.data.get("environment") or {}).get("FI_PROVIDER_PATH") or "")


def check_libfabric(m: manifest_mod.Manifest, trust_foreign: bool = False) -> libfabric_prefix.Libfabric | None:
    """The manifest's libfabric, checked, or None for the suite's own (named or not: build/ is built against
    it); PrefixError says which manifest named it."""
    if m.libfabric is None:
        return None
    try:
        lf = libfabric_prefix.check(m.libfabric, trust_foreign=trust_foreign)
    except libfabric_prefix.PrefixError as exc:
        raise libfabric_prefix.PrefixError(f"{m.ref}: libfabric: {exc}") from None
    return None if lf.prefix == libfabric_prefix.suite_prefix().resolve() else lf


def of_run(manifests: list[manifest_mod.Manifest], suite_build: pathlib.Path,
           trust_foreign: bool = False) -> dict[str, Side]:
    """{manifest name: its side}; PrefixError for a libfabric the suite cannot build against."""
    sides: dict[str, Side] = {}
    for m in manifests:
        lf = check_libfabric(m, trust_foreign)
        side = Side(tree_of(lf) if lf else pathlib.Path(suite_build).resolve(), lf)
        if sides.setdefault(m.name, side) != side:  # sides are known by name in the cell plan and the report
            raise manifest_mod.ManifestError([f"{m.ref}: two manifests named {m.name} run with different "
                                              "libfabrics: give one a `name:`"])
    return sides


@dataclasses.dataclass
class TreeToBuild:
    tree: pathlib.Path
    libfabric: libfabric_prefix.Libfabric
    targets: list[str]

    def line(self) -> str:
        """What ./uet reads to build it: tree, prefix, the .pc folder, targets; tab-separated."""
        return "\t".join([str(self.tree), str(self.libfabric.prefix), str(self.libfabric.pkgconfig),
                          " ".join(self.targets)])


def trees_to_build(manifests: list[manifest_mod.Manifest], trust_foreign: bool = False) -> list[TreeToBuild]:
    """Each tree the manifests' libfabrics need, once, with what it must hold."""
    out: dict[pathlib.Path, TreeToBuild] = {}
    for m in manifests:
        lf = check_libfabric(m, trust_foreign)
        if lf is None:
            continue
        tree = out.setdefault(tree_of(lf), TreeToBuild(tree_of(lf), lf, [SIDE_TARGET]))
        if loads_provider_from_build(m) and PROVIDER_TARGET not in tree.targets:
            tree.targets.append(PROVIDER_TARGET)
    return list(out.values())


def suite_target(manifests: list[manifest_mod.Manifest], trust_foreign: bool = False) -> str:
    """What the suite's own tree (build/) must hold for a run of `manifests`: uet-run, or uet-tools when every
    side runs with another libfabric. Then nothing of the run loads the suite's libfabric: the case binaries
    and softuet (a peer's provider from {build}) come from that libfabric's tree, and the harness's tools load
    none; so the suite's libfabric is neither set up nor built against."""
    if manifests and all(check_libfabric(m, trust_foreign) is not None for m in manifests):
        return TOOLS_TARGET
    return RUN_TARGET


def catalogue_tree(manifests: list[manifest_mod.Manifest], suite_build: pathlib.Path,
                   trust_foreign: bool = False) -> pathlib.Path:
    """Where the run finds which areas there are (their case binaries): build/, or, when it holds only the
    tools, the tree of the first side's libfabric (every tree builds the same cases)."""
    if suite_target(manifests, trust_foreign) == RUN_TARGET:
        return pathlib.Path(suite_build)
    return tree_of(check_libfabric(manifests[0], trust_foreign))


def mounts(sides: dict[str, Side]) -> list[tuple[str, str]]:
    """The folders a placement must show its sides besides build/ (read-only): each other tree and its libfabric."""
    out: list[tuple[str, str]] = []
    for side in sides.values():
        if side.libfabric:
            lf = side.libfabric
            folders = [side.build, lf.prefix] + ([] if lf.lib.is_relative_to(lf.prefix) else [lf.lib])
            out += [(str(f), "ro") for f in folders if (str(f), "ro") not in out]
    return out
