"""A catalogue slice and a results.json with known values for the conformance statement, and what a correct
statement must say about them (the EXPECTED_* constants).

Two manifests: alpha claims ai_base and hpc, beta ai_base. Cell `alpha` is alpha alone (it plays both sides,
placement from run_info: namespaces); cell `alpha__beta` is alpha initiating towards beta in containers.
"""
import pathlib

import yaml

from harness.inputs import manifest
from harness.results.results import Result, counts, write_results_json

REPO = pathlib.Path(__file__).resolve().parents[2]

ALPHA, BETA = "alpha", "beta"
PAIR = "alpha__beta"
HOSTILE_REASON = '=HYPERLINK("http://x") <b>not applicable</b> & more'
NOT_CLAIMED = "profile-not-claimed"
REASONS = {NOT_CLAIMED: {"class": "not-claimed", "description": "the side does not claim the profile the check needs",
                         "allowed_in_submission": True}}
KERNEL = "inside the kernel driver: no API or wire trace"
UNSUPPORTED = "the AV JobID method"   # what beta claims and lacks (the fail's evidence.claimed_unsupported)


def _statement(ident, level, check="api", profiles=("ai_base", "ai_full", "hpc"), **extra):
    entry = {"id": ident, "level": level, "profiles": list(profiles), "actor": "provider",
             "clause": ident.rsplit("-", 1)[0], "text": "Statement %s says what it says." % ident, "check": check,
             "cases": []}
    entry.update(extra)
    return entry


STATEMENTS = [
    _statement("2.2.4.4-a", "MUST", "both"),                  # A: a pass (both sides), a fail blamed on the target
    _statement("2.2.4.4-b", "MUST", "both"),                  # B: pass
    _statement("2.2.4.4-c", "SHOULD", "wire"),                # C: a warning: a SHOULD not met
    _statement("2.2.5.1-a", "MUST"),                          # D: a warning: the case's MUSTs held
    _statement("2.2.5.1-b", "MUST", profiles=("hpc",)),       # E: an error and a pass
    _statement("2.2.5.1-c", "MUST NOT", condition="tagged messages (FI_TAGGED) supported"),  # F: not applicable
    _statement("2.2.5.1-d", "MUST", "not_observable", check_reason=KERNEL),                # G: no check can see it
    _statement("2.2.5.1-e", "SHOULD"),                        # H: observable, no check of the run
    _statement("2.2.5.1-f", "MAY", profiles=("ai_base",)),    # I: MAY, ai_base only
]
A, B, C, D, E, F, G, H, I = (s["id"] for s in STATEMENTS)


def catalogue_data():
    return {"format": 1, "statements": STATEMENTS}


def write_catalogue(path):
    pathlib.Path(path).write_text(yaml.safe_dump(catalogue_data(), sort_keys=False), encoding="utf-8")
    return path


def rid(cell, area, case):
    return "%s/%s/%s" % (cell, area, case)


CAPTURE = "cells/alpha/captures/authz/A.Pass-1.pcap"
DECODED = "cells/alpha/captures/authz/A.Pass-1.json"
LOG = "cells/alpha/authz.log"
FAIL_CAPTURE = "cells/alpha__beta/captures/authz/A.Fail-1.pcap"


def _result(cell, area, case, verdict, statements, **extra) -> Result:
    return Result(**dict(dict(cell=cell, area=area, binary="uet-cases-" + area, case=case, verdict=verdict,
                              statements=statements, seconds=0.1, evidence={"log": "cells/%s/%s.log" % (cell, area)},
                              repro="./uet run --only %s --seed 7" % case), **extra))


MODEL = [  # the results model's results; RESULTS: as results.json holds them
    _result(ALPHA, "authz", "A.Pass", "pass", [A, B],
            evidence={"captures": [{"capture": CAPTURE, "decoded": DECODED, "frames": 2}], "capture": CAPTURE,
                      "decoded": DECODED, "log": LOG}),
    _result(ALPHA, "mr", "E.Pass", "pass", [E]),
    _result(ALPHA, "mr", "E.Error", "error", [E], reason="the binary crashed: SIGSEGV"),
    _result(ALPHA, "mr", "F.NaCode", "not_applicable", [F], reason="not applicable: hpc is not claimed",
            reason_code=NOT_CLAIMED),
    _result(PAIR, "authz", "A.Fail", "fail", [A], detail="claimed but unsupported: " + UNSUPPORTED, blamed_side="target",
            choices=["profile-priority"], evidence={"capture": FAIL_CAPTURE, "decoded": None,
                                                    "claimed_unsupported": UNSUPPORTED,
                                                    "log": "cells/alpha__beta/authz.log"}),
    _result(PAIR, "authz", "C.Warn", "warning", [C, D], reason="SHOULD not met: no log line",
            choices=["profile-priority", "job-id-width"]),
    _result(PAIR, "mr", "F.NaText", "not_applicable", [F, "9.9.9-z"], reason=HOSTILE_REASON),
]
RESULTS = [r.as_dict() for r in MODEL]
R = {r["case"]: r["id"] for r in RESULTS}


def results_document():
    return {
        "format": 1,
        "run_info": {"run_id": "20261127-2000-s7", "command": "./uet run --matrix alpha.yaml beta.yaml --seed 7",
                     "mode": "matrix", "seed": 7, "spec_version": "1.0.1", "placement": "containers,namespaces",
                     "partial": False, "suite_commit": "abc1234",
                     "manifests": [{"ref": "alpha.yaml", "name": ALPHA, "provider": "alpha", "provider_version": "2.0",
                                    "profiles": ["ai_base", "hpc"], "uet": True, "sha256": "a" * 64},
                                   {"ref": "beta.yaml", "name": BETA, "provider": "beta", "provider_version": "1.1",
                                    "profiles": ["ai_base"], "uet": True, "sha256": "b" * 64}],
                     "spec_data": {"catalogue_sha256": "0" * 64},
                     "choices": [{"id": "profile-priority", "status": "MISSING", "confidence": "low", "chose": "hpc first",
                                  "contested": []},
                                 {"id": "job-id-width", "status": "rebuilt", "confidence": "high", "chose": "24 bits",
                                  "contested": [{"reading": "32 bits", "sources": []}]},
                                 {"id": "unused-choice", "status": "MISSING", "confidence": "low", "chose": "x"}]},
        "summary": dict(counts(MODEL), exit_status=1),
        "cells": [{"id": ALPHA, "initiator": ALPHA, "target": ALPHA, "kind": "single", "placement": None},
                  {"id": PAIR, "initiator": ALPHA, "target": BETA, "kind": "pair",
                   "placement": {"placement": "containers", "sides": {"a": "c-a", "b": "c-b"}}}],
        "results": RESULTS,
    }


def write_run(run_dir):
    """A run folder: results.json, the pass's capture, decode and log (not the fail's capture), and alpha's
    resolved manifest on the initiator side."""
    run_dir = pathlib.Path(run_dir)
    doc = results_document()
    for rel in (CAPTURE, DECODED, LOG):
        (run_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / rel).write_bytes(b"x")
    # alpha's side as a run resolves it (the cell's initiator.manifest.json), from a manifest of alpha's claims
    alpha = run_dir / "alpha.yaml"
    alpha.write_text(f"extends: {REPO / 'cases' / 'manifests' / 'softuet.yaml'}\nname: {ALPHA}\nendpoint_types: [rdm]\n"
                     "job_id_methods: [direct]\nprofiles: [ai_base, hpc]\nindirect_job_id: null\n"
                     "indirect_job_id_environment: null\nfallback_job_id_environment: null\n")
    manifest.write_resolved(manifest.load(alpha), run_dir / "cells" / ALPHA / "initiator.manifest.json",
                            build=REPO / "build", port=4793)
    write_results_json(doc, run_dir / "results.json")
    return doc


def totals(met=0, not_met=0, inconclusive=0, not_observed=0, not_applicable=0):
    return {"met": met, "not_met": not_met, "inconclusive": inconclusive, "not_observed": not_observed,
            "not_applicable": not_applicable,
            "total": met + not_met + inconclusive + not_observed + not_applicable}


# (side, manifest, profile) -> {group: totals}, in the statement's order of sheets.
EXPECTED_TOTALS = {
    ("initiator", ALPHA, "ai_base"): {"MUST": totals(met=3, not_observed=1, not_applicable=1),
                                      "SHOULD": totals(not_met=1, not_observed=1), "OTHER": totals(not_observed=1)},
    ("initiator", ALPHA, "hpc"): {"MUST": totals(met=3, inconclusive=1, not_observed=1, not_applicable=1),
                                  "SHOULD": totals(not_met=1, not_observed=1), "OTHER": totals()},
    ("target", ALPHA, "ai_base"): {"MUST": totals(met=2, not_observed=2, not_applicable=1),
                                   "SHOULD": totals(not_observed=2), "OTHER": totals(not_observed=1)},
    ("target", ALPHA, "hpc"): {"MUST": totals(met=2, inconclusive=1, not_observed=2, not_applicable=1),
                               "SHOULD": totals(not_observed=2), "OTHER": totals()},
    ("target", BETA, "ai_base"): {"MUST": totals(met=1, not_met=1, not_observed=2, not_applicable=1),
                                  "SHOULD": totals(not_met=1, not_observed=1), "OTHER": totals(not_observed=1)},
}
# target beta ai_base: statement -> status, in catalogue order
EXPECTED_BETA_STATUS = {A: "not_met", B: "not_observed", C: "not_met", D: "met", F: "not_applicable",
                        G: "not_observed", H: "not_observed", I: "not_observed"}
