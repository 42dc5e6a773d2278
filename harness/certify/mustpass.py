"""The mustpass of a certification: what a provider's claims oblige it to pass.

Its statements are the catalogue's observable MUST and MUST NOT statements that apply to a profile a side
claims; its plan is every cell and area `./uet run` makes of the manifests with nothing left out; its
checks are the results of the run that name each statement (a case names what it covers only as it runs,
so the catalogue alone cannot list them). A statement no check names is listed as uncovered: a gap of the
suite, which the coverage report shows, not of the provider.

./uet certify writes it (mustpass.json); ./uet verify derives the statements and the plan again from the
package's manifests and this checkout's catalogue and holds the package to them.
"""
from __future__ import annotations

from harness.inputs import catalogue as catalogue_mod
from harness.run import plan as plan_mod
from harness.inputs.manifest import Manifest

FORMAT = 1


def claimed_profiles(manifests: list[Manifest]) -> list[str]:
    return sorted({p for m in manifests for p in m.profiles})


def statements_by_profile(cat: catalogue_mod.Catalogue, profiles: list[str]) -> dict[str, list[str]]:
    return {p: [s.id for s in cat.by_profile(p) if s.observable and s.level in catalogue_mod.ABSOLUTE_LEVELS]
            for p in profiles}


def planned_cells(mode: str, refs: list[str], areas: dict[str, dict]) -> list[dict]:
    """The cells and areas of the full run (no --only) of these manifests, as ids; `areas` with their traits
    (harness/run/run_cases.py area_traits)."""
    return [{"id": c.id, "areas": sorted(c.areas)} for c in plan_mod.cells(mode, refs, dict(sorted(areas.items())), set())]


def derive(cat: catalogue_mod.Catalogue, mode: str, refs: list[str], manifests: list[Manifest], areas: dict[str, dict],
           only: list[str]) -> dict:
    """The mustpass before the run; `only` (a partial run, for the suite's own tests) makes it incomplete."""
    return {"format": FORMAT, "mode": mode,
            "claimed": {m.name: sorted(m.profiles) for m in manifests},
            "profiles": statements_by_profile(cat, claimed_profiles(manifests)),
            "cells": planned_cells(mode, refs, areas),
            "only": list(only), "complete": not only}


def checks_of(mustpass: dict, results: list[dict]) -> dict[str, list[str]]:
    """Each mustpass statement's checks: the ids of the results that name it."""
    wanted = {s for ids in mustpass["profiles"].values() for s in ids}
    out: dict[str, list[str]] = {s: [] for s in sorted(wanted)}
    for r in results:
        for s in r.get("statements") or []:
            if s in out:
                out[s].append(r["id"])
    return out


def with_checks(mustpass: dict, results: list[dict]) -> dict:
    checks = checks_of(mustpass, results)
    return dict(mustpass, checks={s: ids for s, ids in checks.items() if ids},
                uncovered=sorted(s for s, ids in checks.items() if not ids))
