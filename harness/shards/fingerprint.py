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
from harness.inputs import manifest as manifest_mod

# The parts, in the order ./uet merge names them when they differ.
PARTS = ("suite", "binaries", "libfabric", "manifests", "seed", "count", "spec_version", "mode", "options", "weights")

# Every field of a run's plan (harness/run/run_plan.py RunPlan) is in one of these, so that a new option is
# fingerprinted or said not to change what runs (pytest/harness/shards/test_shards.py holds them to the plan).
DECIDING_OPTIONS = ("only", "placement", "same_host", "repeat", "rerun_failures", "infra_retries", "involving",
                    "case_deadline", "cell_deadline", "run_deadline", "no_decode_check")
IN_OTHER_PARTS = ("mode", "refs", "seed", "spec_version", "shard", "shard_weights", "libfabric", "build")
# What a shard's machine may choose for itself: where it writes, how many cells at once (each cell keeps its
# ports and seed of the whole plan), what it prints, and how its CI reads the verdicts (not the verdicts).
NOT_DECIDING = ("command", "report", "jobs", "trust_foreign_libfabric", "allow_loader_environment",
                "expectations_doc", "baseline_doc", "corpus", "quiet", "verbose")


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
        "suite": {"commit": suite_identity.commit(), "modified": bool(changed), "changes": changes_digest(changed)},
        "binaries": binaries,
        "libfabric": libfabric,
        "manifests": [{"name": m.name, "provider": m.provider, "sha256": m.sha256} for m in manifests],
        "seed": plan.seed, "count": plan.shard[1], "spec_version": plan.spec_version, "mode": plan.mode,
        "options": options(plan),
        "weights": weights,
    }


def changes_digest(lines: list[str], repo: pathlib.Path = suite_identity.REPO) -> str | None:
    """A SHA-256 of the tree's uncommitted changes (suite_identity.changes' lines, each with the changed file's
    content), None without any: two clones with the same edits agree, two with different edits do not."""
    if not lines:
        return None
    entries = []
    for line in sorted(lines):
        path = repo / line[3:].split(" -> ")[-1].strip('"')
        content = suite_identity.file_sha256(path) if path.is_file() else "not a file"
        entries.append([line, content])
    return hashlib.sha256(canonical(entries)).hexdigest()


def options(plan) -> dict:
    """The run options that decide what runs, as they decide it: --involving by the name of its manifest (what
    keeps a cell), not as typed (vendor.yaml and ./vendor.yaml are one provider)."""
    out = {name: _plain(getattr(plan, name)) for name in DECIDING_OPTIONS}
    if plan.involving is not None:
        out["involving"] = manifest_mod.load(plan.involving).name
    return dict(out, libfabric=plan.libfabric is not None)


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def canonical(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def of(parts_: dict) -> str:
    return hashlib.sha256(canonical(parts_)).hexdigest()


def differing(a: dict, b: dict) -> list[str]:
    """The parts in which two shards' parts differ, in PARTS order (a part neither names is skipped)."""
    return [p for p in PARTS + tuple(sorted((a.keys() | b.keys()) - set(PARTS)))
            if canonical(a.get(p)) != canonical(b.get(p))]
