"""A shard's plan fingerprint (results.json run_info.shard): the SHA-256 of a canonical JSON of what decides
the whole plan and its cut, so that ./uet merge can refuse shards of different runs and name the part that
differs. The suite's commit and the hashes of its built files are harness/files/suite_identity.py's (what
./uet certify records too)."""
from __future__ import annotations

import hashlib
import json
import pathlib

from harness.files import suite_identity
from harness.inputs import libfabric_prefix

# The parts, in the order ./uet merge names them when they differ.
PARTS = ("suite", "binaries", "libfabric", "manifests", "seed", "count", "spec_version", "mode", "options", "weights")


def _tree_hashes(build: pathlib.Path) -> dict[str, str]:
    """The built files' hashes, named by their path in the tree (the tree's own place differs by machine)."""
    return suite_identity.hashes(suite_identity.built_files(build))


def _library_hash(prefix: pathlib.Path) -> str | None:
    found = libfabric_prefix.find_library(libfabric_prefix.library_folders(prefix))
    return suite_identity.file_sha256(found.resolve()) if found else None


def parts(plan, manifests: list, sides: dict, weights: dict[str, float]) -> dict:
    """What the fingerprint hashes: `plan` (run_plan.RunPlan), the whole plan's manifests and their sides
    (harness/inputs/side_builds.py), the units' weights."""
    binaries = {"suite": _tree_hashes(plan.build)}
    libfabric = {}
    for side in sides.values():
        if side.libfabric is None:
            libfabric["suite"] = _library_hash(libfabric_prefix.suite_prefix())
        else:  # named by version: a prefix's folder differs by machine, its bytes are what count
            binaries[f"libfabric {side.libfabric.version}"] = _tree_hashes(side.build)
            libfabric[side.libfabric.version] = _library_hash(side.libfabric.prefix)
    changed = suite_identity.changes()
    return {
        "suite": {"commit": suite_identity.commit(), "modified": bool(changed)},
        "binaries": binaries,
        "libfabric": libfabric,
        "manifests": [{"name": m.name, "provider": m.provider, "sha256": m.sha256} for m in manifests],
        "seed": plan.seed, "count": plan.shard[1], "spec_version": plan.spec_version, "mode": plan.mode,
        "options": {"only": list(plan.only), "placement": plan.placement, "same_host": plan.same_host,
                    "repeat": plan.repeat, "rerun_failures": plan.rerun_failures, "infra_retries": plan.infra_retries,
                    "involving": plan.involving,
                    "libfabric": plan.libfabric is not None},
        "weights": weights,
    }


def canonical(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def of(parts_: dict) -> str:
    return hashlib.sha256(canonical(parts_)).hexdigest()


def differing(a: dict, b: dict) -> list[str]:
    """The parts in which two shards' parts differ, in PARTS order (a part neither names is skipped)."""
    return [p for p in PARTS + tuple(sorted((a.keys() | b.keys()) - set(PARTS)))
            if canonical(a.get(p)) != canonical(b.get(p))]
