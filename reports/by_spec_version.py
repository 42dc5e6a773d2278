"""A run's results split by the UEC spec version they were checked against, so that each version gets its
own provider and negotiation matrices (a verdict against 1.0.1 and one against 1.0.3 are different facts).

Today a run checks against one version (run_info.spec_version, ./uet run --spec-version), so there is one
group and the index page shows the matrices itself. The grouping is keyed by version already: a cell may
carry its own `spec_version` (a run covering several versions), else the run's applies.
"""
from __future__ import annotations

import re

from reports import view


def version_of_cell(doc: dict, cell: dict) -> str:
    return str(cell.get("spec_version") or doc.get("run_info", {}).get("spec_version") or view.MISSING)


def page_of(version: str) -> str:
    """The version's matrices page, relative to the run folder; the replacement keeps any version string a
    plain file name."""
    return "spec-%s.html" % (re.sub(r"[^A-Za-z0-9_.-]", "_", version).lstrip(".") or "_")


def _version_key(version: str):
    parts = version.split(".")
    return (0, tuple(int(p) for p in parts)) if all(p.isdigit() for p in parts) else (1, version)


def groups(doc: dict) -> list[tuple[str, dict]]:
    """[(version, the run's document restricted to that version's cells, results and negotiation cells)],
    oldest version first; one entry when the run covers one version."""
    versions = {c.get("id"): version_of_cell(doc, c) for c in doc.get("cells", [])}
    run_version = version_of_cell(doc, {})
    found = sorted(set(versions.values()) or {run_version}, key=_version_key)
    if len(found) == 1:
        return [(found[0], doc)]
    out = []
    for version in found:
        results = [r for r in doc.get("results", []) if versions.get(r.get("cell"), run_version) == version]
        sub = dict(doc, cells=[c for c in doc.get("cells", []) if versions.get(c.get("id")) == version],
                   results=results)
        neg = doc.get("negotiation")
        if neg:
            ids = {r.get("id") for r in results}
            # a negotiation cell goes with the version of its results (none: the run's version)
            mine = [c for c in neg.get("cells", [])
                    if (set(c.get("results") or []) & ids) or (not c.get("results") and version == run_version)]
            sub["negotiation"] = dict(neg, cells=mine) if mine else None
        out.append((version, sub))
    return out
