"""./uet verify's re-judging of a package's wire checks: every result whose case a rule of
spec/wire-oracle.yaml states is judged again from the package's capture by this checkout's uet-decode
(harness/wire/wire_oracle.py), whatever results.json says. A pass (or a warning where a MUST is broken) that
the capture contradicts is a finding naming the case, the statements, the field, what belongs and what was
captured; so is a `judged_by: wire_oracle` the oracle does not bear out (a self-reported verdict dressed as
one the oracle re-derived). The rules also read each cell's resolved manifests (cells/<cell>/<side>.manifest
.json): what they read there must be what the package's own manifests, whose hashes verify checks, resolve
to, else a sender could turn a rule off by editing them."""
from __future__ import annotations

import pathlib

from harness.wire import wire_oracle
from harness.inputs.manifest import ManifestError, read_resolved, resolved_path
from harness.certify.verify_checks import Finding


def plan_findings(run: pathlib.Path, doc: dict, manifests: list, build: pathlib.Path) -> list[Finding]:
    """Each cell's resolved manifests against the package's manifests, on the facts the rules read."""
    by_name = {m.name: m for m in manifests}
    facts = wire_oracle.plan_facts(wire_oracle.load())
    out = []
    cells = {str(c.get("id")) for c in doc.get("cells") or [] if isinstance(c, dict)}
    named = {resolved_path(run / "cells" / c, side) for c in cells for side in wire_oracle.SIDES}
    for path in sorted(named | set(run.rglob("*.manifest.json"))):
        where = path.relative_to(run)
        resolved = read_resolved(path)
        if not isinstance(resolved, dict):
            out.append(Finding("oracle", f"run/{where}: missing or not a resolved manifest, which the wire oracle reads"))
            continue
        m = by_name.get(resolved.get("name"))
        if m is None:
            out.append(Finding("oracle", f"run/{where}: names {resolved.get('name')!r}, no manifest of the package"))
            continue
        try:
            mine = m.resolve(build=build, port=int(resolved.get("port")),
                             spec_version=str(resolved.get("checked_spec_version") or "") or None)
        except (ManifestError, TypeError, ValueError, KeyError) as exc:
            out.append(Finding("oracle", f"run/{where}: the package's manifest {m.name} does not resolve ({exc})"))
            continue
        for key in facts:
            if wire_oracle.fact(resolved, key) != wire_oracle.fact(mine, key):
                out.append(Finding("oracle", f"run/{where}: {key} is {wire_oracle.fact(resolved, key)!r}, but the "
                                             f"package's manifest {m.name} gives {wire_oracle.fact(mine, key)!r}"))
    return out


def oracle_findings(run: pathlib.Path, doc: dict, uet_decode: pathlib.Path) -> tuple[list[Finding], dict]:
    rules = wire_oracle.load()
    version = (doc.get("run_info") or {}).get("spec_version")
    out, stats = [], {"judged": 0, "contradicted": 0}
    for r in doc.get("results") or []:
        if not isinstance(r, dict) or _capture_missing(run, r):
            continue  # a capture a result names and the package lacks is a [capture] finding already
        j = wire_oracle.judge_result(r, run, uet_decode, version if isinstance(version, str) else None, rules)
        recorded = r.get("judged_by")
        if j is None:
            if recorded == "wire_oracle":
                out.append(Finding("oracle", f"{r.get('id')}: judged_by wire_oracle, but no rule of spec/wire-oracle.yaml "
                                             "states its case: the verdict is the case binary's own report"))
            continue
        if j.outcome == "not_judged":
            continue  # why is a finding of its own: an undecodable capture, a cell's manifests, a failing verdict
        stats["judged"] += 1
        if text := wire_oracle.contradiction(str(r.get("verdict")), j):
            stats["contradicted"] += 1
            out.append(Finding("oracle", f"{r.get('id')}: {text}"))
        elif recorded == "wire_oracle" and wire_oracle.judged_by(str(r.get("verdict")), j) != recorded:
            # only a claim the oracle does not bear out: a checkout with more rules than the run's judges more
            out.append(Finding("oracle", f"{r.get('id')}: judged_by wire_oracle, but the oracle makes it "
                                         f"{wire_oracle.judged_by(str(r.get('verdict')), j)!r} (the rule {j.outcome})"))
    return out, stats


def _capture_missing(run: pathlib.Path, result: dict) -> bool:
    for cap in (result.get("evidence") or {}).get("captures") or []:
        named = cap.get("capture") if isinstance(cap, dict) else None
        path = (run / named).resolve() if isinstance(named, str) and named else None
        if path is None or not path.is_relative_to(run.resolve()) or not path.is_file():
            return True
    return False
