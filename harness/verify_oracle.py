"""./uet verify's re-judging of a package's wire checks: every result whose case a rule of
spec/wire-oracle.yaml states is judged again from the package's capture by this checkout's uet-decode
(harness/wire_oracle.py), whatever results.json says. A pass (or a warning where a MUST is broken) that
the capture contradicts is a finding naming the case, the statements, the field, what belongs and what was
captured; so is a `judged_by: wire_oracle` the oracle does not bear out (a self-reported verdict dressed as
one the oracle re-derived)."""
from __future__ import annotations

import pathlib

from harness import wire_oracle
from harness.verify_checks import Finding


def oracle_findings(run: pathlib.Path, doc: dict, uet_decode: pathlib.Path) -> tuple[list[Finding], dict]:
    rules = wire_oracle.load()
    version = (doc.get("run_info") or {}).get("spec_version")
    out, stats = [], {"judged": 0, "contradicted": 0}
    for r in doc.get("results") or []:
        if not isinstance(r, dict):
            continue
        j = wire_oracle.judge_result(r, run, uet_decode, version if isinstance(version, str) else None,
                                     wire_oracle.read_small_json, rules)
        recorded = r.get("judged_by")
        if j is None:
            if recorded == "wire_oracle":
                out.append(Finding("oracle", f"{r.get('id')}: judged_by wire_oracle, but no rule of spec/wire-oracle.yaml "
                                             "states its case: the verdict is the case binary's own report"))
            continue
        if j.outcome != "not_judged":
            stats["judged"] += 1
        if text := wire_oracle.contradiction(str(r.get("verdict")), j):
            stats["contradicted"] += 1
            out.append(Finding("oracle", f"{r.get('id')}: {text}"))
        elif recorded == "wire_oracle" and wire_oracle.judged_by(str(r.get("verdict")), j) != recorded:
            # only a claim the oracle does not bear out: a checkout with more rules than the run's judges more
            out.append(Finding("oracle", f"{r.get('id')}: judged_by wire_oracle, but the oracle makes it "
                                         f"{wire_oracle.judged_by(str(r.get('verdict')), j)!r} ({j.outcome}"
                                         + (f": {j.why}" if j.why and j.outcome == "not_judged" else "") + ")"))
    return out, stats
