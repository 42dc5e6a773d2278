"""A realistic results.json (reports/RESULTS-FORMAT.md) with known values, and the run folder around it: each
result is the results model's (harness.results.results.Result), the file written by the run's writer.

Two manifests run as a 2×2 matrix (4 cells, 2 areas each); the results cover every verdict; one fail has
decoded frames and a capture; the negotiation block has all 7×7 profile-set pairs; the coverage block is a
small harness.results.coverage.compute() dict. The EXPECTED_* constants are what a correct report must show for it.
"""
import itertools
import pathlib

from harness.inputs import not_applicable
from harness.results.results import Result, counts, write_results_json

FULL = "softuet"            # claims all three profiles
BASE = "softuet-ai-base"    # claims ai_base only
SEED = 4242

# (initiator, target) -> [(area, case, verdict)]
CELL_RESULTS = {
    (FULL, FULL): [("authz", "Claimed/Authz.DirectJobIdIsOnTheWire/rdm", "pass"),
                   ("authz", "Claimed/Authz.IndirectJobId/rdm", "pass"),
                   ("mr", "Mr.KeyFormat/rdm", "pass")],
    (FULL, BASE): [("authz", "Claimed/Authz.DirectJobIdIsOnTheWire/rdm", "fail"),
                   ("authz", "Claimed/Authz.IndirectJobId/rdm", "pass"),
                   ("mr", "Mr.TaggedRendezvous/rdm", "not_applicable"),
                   ("mr", "Mr.TaggedEager/rdm", "not_applicable")],
    (BASE, FULL): [("authz", "Claimed/Authz.DirectJobIdIsOnTheWire/rdm", "warning"),
                   ("authz", "Claimed/Authz.IndirectJobId/rdm", "pass"),
                   ("mr", "Mr.KeyFormat/rdm", "timeout")],
    (BASE, BASE): [("authz", "Claimed/Authz.DirectJobIdIsOnTheWire/rdm", "error"),
                   ("mr", "Mr.KeyFormat/rdm", "pass"),
                   ("mr", "Mr.SmallRmaHeader/dgram", "not_applicable")],
}

EXPECTED_COUNTS = {"pass": 6, "fail": 1, "not_applicable": 3, "warning": 1, "error": 1, "timeout": 1, "flaky": 0,
                   "infra_error": 0, "total": 13}

# cell id -> {area: letter}
EXPECTED_CODES = {
    "softuet__softuet": {"authz": "P", "mr": "P"},
    "softuet__softuet-ai-base": {"authz": "F", "mr": "N"},
    "softuet-ai-base__softuet": {"authz": "W", "mr": "E"},
    "softuet-ai-base__softuet-ai-base": {"authz": "E", "mr": "P"},
}

# (side, profile) -> counts: FULL's three profiles each count FULL's cells on that side; ai_base counts all.
EXPECTED_BY_PROFILE = {
    ("initiator", "ai_base"): {"pass": 6, "fail": 1, "not_applicable": 3, "warning": 1, "error": 1, "timeout": 1, "flaky": 0,
                               "infra_error": 0, "total": 13},
    ("initiator", "ai_full"): {"pass": 4, "fail": 1, "not_applicable": 2, "warning": 0, "error": 0, "timeout": 0, "flaky": 0,
                               "infra_error": 0, "total": 7},
    ("initiator", "hpc"): {"pass": 4, "fail": 1, "not_applicable": 2, "warning": 0, "error": 0, "timeout": 0, "flaky": 0,
                           "infra_error": 0, "total": 7},
    ("target", "ai_base"): {"pass": 6, "fail": 1, "not_applicable": 3, "warning": 1, "error": 1, "timeout": 1, "flaky": 0,
                            "infra_error": 0, "total": 13},
    ("target", "ai_full"): {"pass": 4, "fail": 0, "not_applicable": 0, "warning": 1, "error": 0, "timeout": 1, "flaky": 0,
                            "infra_error": 0, "total": 6},
    ("target", "hpc"): {"pass": 4, "fail": 0, "not_applicable": 0, "warning": 1, "error": 0, "timeout": 1, "flaky": 0,
                        "infra_error": 0, "total": 6},
}

REASON_TAGGED = "not applicable: the target claims ai_base only; tagged messages need hpc"
REASON_SMALL_RMA = "not applicable: the small RMA header is optional (Table 2-15 MISSING)"
EXPECTED_NA_GROUPS = [(REASON_TAGGED, 2), (REASON_SMALL_RMA, 1)]
CODE_TAGGED, CODE_SMALL_RMA = "not-claimed-profile", "no-such-combination"
# The summary's breakdown: by class (spec/not-applicable-reasons.yaml's), then by code, with the descriptions.
EXPECTED_NA_SENTENCE = ("3 not applicable: 2 not claimed by a manifest (2 not-claimed-profile); 1 combinations that do "
                        "not exist or this run could not make (1 no-such-combination)")
EXPECTED_NA_CODES = [("not-claimed", CODE_TAGGED, 2), ("no-such-combination", CODE_SMALL_RMA, 1)]

FAIL_ID = "softuet__softuet-ai-base/authz/Claimed/Authz.DirectJobIdIsOnTheWire/rdm"
ERROR_ID = "softuet-ai-base__softuet-ai-base/authz/Claimed/Authz.DirectJobIdIsOnTheWire/rdm"
TIMEOUT_ID = "softuet-ai-base__softuet/mr/Mr.KeyFormat/rdm"
EXPECTED_FAILURE_IDS = [FAIL_ID, TIMEOUT_ID, ERROR_ID]       # in the results list's order
FAIL_CAPTURE = "captures/%s.pcap" % FAIL_ID
FAIL_DECODED = "captures/%s.json" % FAIL_ID
FAIL_LOG = "logs/softuet__softuet-ai-base/uet-cases-authz.log"
ERROR_LOG = "logs/softuet-ai-base__softuet-ai-base/uet-cases-authz.log"   # named but never written
# The fail's statements: one whose text the coverage block carries, one only the catalogue has, one unknown.
COVERAGE_TEXT = "Direct method (as the run's coverage block words it): ses.JobID comes from auth_key."
FAIL_STATEMENTS = ["2.2.4.4-b", "2.2.4.4-a", "9.9.9-z"]
UNSUPPORTED = "the direct JobID method"   # what the fail's initiator claims and lacks (evidence.claimed_unsupported)
HOSTILE = "<script>alert('x')</script> & \"quoted\""  # in the error's message: must come out as text

PROFILE_SETS = ["ai_base", "ai_full", "hpc", "ai_base+ai_full", "ai_base+hpc", "ai_full+hpc",
                "ai_base+ai_full+hpc"]
PRIORITY = ["hpc", "ai_full", "ai_base"]      # what the synthetic profile-priority choice chose
NEGOTIATION_FAIL = ("ai_full", "ai_base+ai_full")
NEGOTIATION_WARNING = ("hpc", "hpc")
EXPECTED_NEGOTIATION = {"cells": 49, "none": 12, "pass": 47, "fail": 1, "warning": 1}

COVERAGE = {
    "catalogue": "spec/catalogue.yaml", "junit_files": [],
    "total": 12, "observable": 8, "covered": 5, "covered_observable": 4,
    "by_level": {"MUST": {"total": 9, "observable": 7, "not_observable": 2, "covered": 4, "covered_observable": 4},
                 "SHOULD": {"total": 3, "observable": 1, "not_observable": 2, "covered": 1,
                            "covered_observable": 0}},
    "by_section": {"2.2.4": {"total": 7, "observable": 5, "not_observable": 2, "covered": 3, "covered_observable": 3},
                   "2.2.5": {"total": 5, "observable": 3, "not_observable": 2, "covered": 2,
                             "covered_observable": 1}},
    "uncovered_observable_musts": {
        "2.2.4": [{"id": "2.2.4.4-c", "level": "MUST", "level_unconfirmed": False, "check": "both",
                   "profiles": ["ai_base", "ai_full", "hpc"], "condition": None, "missing": [],
                   "text": "AV method: ses.JobID is the auth key associated with dest_addr."}],
        "2.2.5": [{"id": "2.2.5.1-c", "level": "MUST", "level_unconfirmed": True, "check": "api",
                   "profiles": ["hpc"], "condition": None, "missing": ["Table 2-10"],
                   "text": "The UET endpoint address has the components of Table 2-10."},
                  {"id": "2.2.5.1-d", "level": "MUST", "level_unconfirmed": False, "check": "api",
                   "profiles": ["ai_base", "ai_full", "hpc"], "condition": None, "missing": [],
                   "text": "Each service gets a unique resource index."}]},
    "statements": {
        "2.2.4.4-a": {"level": "MUST", "check": "both", "covered": True, "checks": []},
        "2.2.4.4-b": {"level": "MUST", "check": "both", "covered": True, "checks": [], "text": COVERAGE_TEXT},
    },
}
EXPECTED_COVERAGE_ROWS = {
    "level": [("MUST", "4", "7", "57%"), ("SHOULD", "0", "1", "0%")],
    "section": [("§2.2.4", "3", "5", "60%"), ("§2.2.5", "1", "3", "33%")],
}
EXPECTED_UNCOVERED = ["2.2.4.4-c", "2.2.5.1-c", "2.2.5.1-d"]

MANIFESTS = [
    {"ref": "cases/manifests/softuet.yaml", "name": FULL, "provider": "softuet", "provider_version": "0.3",
     "profiles": ["ai_base", "ai_full", "hpc"], "uet": True, "sha256": "a1b2c3d4e5f6" + "0" * 52,
     "spec_versions": ["1.0.1", "1.0.3"], "implements_checked_version": True,
     "libfabric": {"source": "named", "version": "2.2.0a1", "api": "2.2", "prefix": "/opt/vendor/libfabric",
                   "build": "/src/uet/build-libfabric/2.2.0a1-0123456789"}},
    # a run from before sides named their libfabric: the report shows it as unknown
    {"ref": "cases/manifests/softuet.yaml#ai-base", "name": BASE, "provider": "softuet", "provider_version": "0.3",
     "profiles": ["ai_base"], "uet": True, "sha256": "ffeeddccbbaa" + "1" * 52,
     "spec_versions": ["1.0.3"], "implements_checked_version": False},
]
CHOICES = [{"id": "profile-priority", "status": "MISSING", "confidence": "low",
            "chose": "hpc over ai_full over ai_base (Table 2-6 is missing)", "agree": [], "disagree": ["RP"],
            "evidence_note": "RP prefers AI Full", "contested": []},
           {"id": "job-id-width", "status": "rebuilt", "confidence": "high", "chose": "24 bits",
            "agree": ["RP", "X2"], "disagree": [], "evidence_note": "",
            "contested": [{"reading": "24 bits (kept)", "sources": ["RP", "X2"]},
                          {"reading": "32 bits", "sources": []}]}]


def cell_id(initiator, target):
    return "%s__%s" % (initiator, target)


def _result(initiator, target, area, case, verdict) -> Result:
    result = Result(cell_id(initiator, target), area, "uet-cases-" + area, case, verdict,
                    statements=["2.2.5.1-a"] if area == "mr" else ["2.2.4.4-b"], seconds=0.25,
                    evidence={"capture": None, "decoded": None, "frames": [], "log": None},
                    repro="./uet run --initiator %s --target %s --only '%s' --seed %d" % (
                        initiator, target, case.split("/")[-2] if "/" in case else case, SEED))
    if verdict == "not_applicable":
        result.reason = REASON_SMALL_RMA if "SmallRma" in case else REASON_TAGGED
        result.reason_code = CODE_SMALL_RMA if "SmallRma" in case else CODE_TAGGED
    elif verdict == "warning":
        result.reason = "SHOULD not met: the target did not log the mismatched JobID"
    elif verdict == "timeout":
        result.reason = "timeout: the case passed its 30 s deadline"
        result.message = "no completion after 30 s"
    elif verdict == "error":
        result.reason = "the binary crashed: SIGSEGV"
        result.message = HOSTILE
        result.evidence["log"] = ERROR_LOG
    elif verdict == "fail":
        result.detail, result.message = "claimed but unsupported: " + UNSUPPORTED, "ses.job_id on the wire is 0x5a5a01, not the auth_key 0x123"
        result.expected, result.seen = "uet.ses.job_id == 0x123 (the endpoint's auth_key)", "uet.ses.job_id == 0x5a5a01"
        result.statements, result.blamed_side, result.choices = list(FAIL_STATEMENTS), "initiator", ["profile-priority"]
        result.evidence = {
            "capture": FAIL_CAPTURE, "decoded": FAIL_DECODED, "log": FAIL_LOG, "claimed_unsupported": UNSUPPORTED,
            "frames": [{"index": 3, "sender": "initiator", "summary": "RUD_REQ psn=7 ses.std UET_SEND job_id=5921281",
                        "fields": {"uet.pds.psn": 7, "uet.ses.opcode": 5, "uet.ses.job_id": 0x5A5A01}},
                       {"index": 4, "sender": "target", "summary": "ACK psn=7",
                        "fields": {"uet.pds.type": 6, "uet.pds.ack_psn": 7}}],
            "diagnostics": [{"sender": "initiator", "kind": "invalid_value", "header": "uet.ses.std",
                             "field": "uet.ses.message_id", "offset": 60, "value": 0, "frame": "uet.ses.message_id=0x0",
                             "first_frame": 3, "frames": 212, "statements": ["2.2.10.4-a"]},
                            {"sender": "target", "kind": "inconsistent_length", "header": "udp", "field": "udp.length",
                             "offset": 38, "value": 9, "frame": "uet.pds.type=0x6", "statements": []}]}
    return result


def _negotiation(fail_result_id):
    cells = []
    for i, t in itertools.product(PROFILE_SETS, repeat=2):
        shared = set(i.split("+")) & set(t.split("+"))
        common = next((p for p in PRIORITY if p in shared), None)
        verdict = {NEGOTIATION_FAIL: "fail", NEGOTIATION_WARNING: "warning"}.get((i, t), "pass")
        cells.append({"initiator": i, "target": t, "common": common, "verdict": verdict,
                      "counts": {verdict: 1}, "results": [fail_result_id] if verdict == "fail" else []})
    return {"profile_sets": list(PROFILE_SETS), "priority_choice": "profile-priority", "cells": cells}


def results_document(partial=False):
    results = [_result(i, t, *row) for (i, t), rows in CELL_RESULTS.items() for row in rows]
    cells = []
    for (i, t), rows in CELL_RESULTS.items():
        mine = counts(r for r in results if r.cell == cell_id(i, t))
        del mine["total"]
        cells.append({"id": cell_id(i, t), "initiator": i, "target": t, "kind": "cases", "counts": mine,
                      "seconds": 20.5, "page": "cells/%s.html" % cell_id(i, t)})
    return {
        "format": 1,
        "run_info": {
            "run_id": "20261125-0217-s4242", "command": "./uet run --matrix --seed 4242", "mode": "matrix",
            "seed": SEED, "spec_version": "1.0.1", "started": "2026-11-25T02:17:00Z",
            "finished": "2026-11-25T02:22:12Z", "seconds": 312.5, "partial": partial, "host": "ci-runner-3",
            "kernel": "Linux 6.1.0-27-amd64", "libfabric": "2.1.0", "suite_commit": "9d47e3f",
            "placement": "namespaces", "manifests": MANIFESTS,
            "spec_data": {"wire_yaml_sha256": "0123456789abcdef" * 4, "catalogue_sha256": "fedcba9876543210" * 4},
            "choices": CHOICES},
        "summary": dict(counts(results), **not_applicable.breakdown(results), exit_status=1),  # as the run counts
        "cells": cells,
        "results": [r.as_dict() for r in results],
        "negotiation": _negotiation(FAIL_ID),
        "coverage": COVERAGE,
        "decode_crosscheck": {"captures": 12, "frames": 900, "disagreements": 0},
    }


def write_run(run_dir, partial=False):
    """A run folder: results.json and the evidence files the fail names (not the error's log)."""
    run_dir = pathlib.Path(run_dir)
    doc = results_document(partial)
    for rel in (FAIL_CAPTURE, FAIL_DECODED, FAIL_LOG):
        path = run_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\xd4\xc3\xb2\xa1" if rel.endswith(".pcap") else b"{}\n")
    write_results_json(doc, run_dir / "results.json")
    return doc
