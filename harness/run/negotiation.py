"""The negotiation matrix of a run (results.json's `negotiation`): for every ordered pair of manifests whose
negotiation cases ran, the profile the pair operates in (as the cases computed it, uet/wire/profiles.hpp)
and the pair's verdict. Rows and columns are the manifests' profile sets when those are distinct (the
default run: softuet's seven profile sets), else the manifests' names."""
from __future__ import annotations

from harness.run.plan import manifests_of
from harness.results.results import Result, counts
from harness.results.verdicts import FAILING, Verdict, worst

AREA = "negotiation"
PRIORITY_CHOICE = "profile-priority"


def label(manifest) -> str:
    return "+".join(manifest.profiles) or "none"


def matrix(cells, results: list[Result]) -> dict | None:
    ran = [c for c in cells if AREA in c.areas]
    if not ran:
        return None
    manifests = manifests_of(ran)
    labels = [label(m) for m in manifests]
    by_profiles = len(set(labels)) == len(labels)
    name = {m.name: (label(m) if by_profiles else m.name) for m in manifests}
    out_cells = []
    for c in ran:
        mine = [r for r in results if r.cell == c.id and r.area == AREA]
        tally = counts(mine)
        verdict = worst(r.verdict for r in mine) or Verdict.NOT_APPLICABLE.value
        operating = next((r.notes.get("operating_profile") for r in mine if r.notes.get("operating_profile")), None)
        out_cells.append({"initiator": name[c.initiator.name], "target": name[c.target.name], "cell": c.id,
                          "common": None if operating in (None, "none") else operating, "verdict": verdict,
                          "counts": tally, "results": [r.id for r in mine]})
    return {"profile_sets": [name[m.name] for m in manifests], "by": "profiles" if by_profiles else "manifests",
            "priority_choice": PRIORITY_CHOICE, "cells": out_cells,
            "failing": sum(1 for c in out_cells if c["verdict"] in FAILING)}
