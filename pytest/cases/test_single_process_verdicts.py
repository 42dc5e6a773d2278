"""The single-process cases (uet-cases-av, -ep, -completion, -mr: two endpoints of one domain) give honest
verdicts: softuet passes everything it claims, libfabric's tcp;ofi_rxm and udp pass the generic fi_*
checks and are "not applicable" for the UET ones, with the reason; and a fault knob of softuet that breaks
what a case checks makes that case fail within its deadline (no hang)."""
import pathlib

import pytest

from harness.run_cases import run_manifest

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "cases" / "manifests"
AREAS = ["av", "ep", "completion", "mr"]
PORTS = (48420, 48421)  # this side's and the target's UET UDP port (the binaries open one domain at a time)


def results_of(build_dir, out, manifest, areas=AREAS, extra_env=None):
    return run_manifest(MANIFESTS / manifest, build_dir, out, areas=areas, extra_env=extra_env, ports=PORTS)


# the only reasons an RDM case may be "not applicable" to softuet (DGRAM has no fi_rma, so any)
SOFTUET_NOT_APPLICABLE = (
    "no scalable endpoints",
    "the manifest lists no predefined service names",  # Table 2-12 is MISSING; softuet predefines none
)


def short(case):
    return case.split(".")[1].split("/")[0]


def test_softuet_passes_what_it_claims(build_dir, tmp_path):
    found = results_of(build_dir, tmp_path, "softuet.yaml")
    assert len(found) >= 55
    bad = [r for r in found if r.verdict not in ("pass", "not_applicable")]
    assert not bad, bad
    for r in found:
        assert r.statements, f"{r.case} names no catalogue statement"
        if r.verdict == "not_applicable":
            assert r.case.endswith("/dgram") or any(why in r.reason for why in SOFTUET_NOT_APPLICABLE), r


@pytest.mark.parametrize("manifest", ["tcp_rxm.yaml", "udp.yaml"])
def test_non_uet_providers_pass_generic_checks_and_skip_uet_ones(build_dir, tmp_path, manifest):
    found = results_of(build_dir, tmp_path, manifest)
    assert [r for r in found if r.verdict in ("fail", "error", "timeout")] == []
    passed = {short(r.case) for r in found if r.verdict == "pass"}
    assert {"LookupReturnsTheInsertedAddress", "EveryCqFormatReportsASendAndItsReceive",
            "EverySendOfABurstCompletesAndArrives", "EventQueuesCarryEvents",
            "InjectLeavesNoCompletionAndItsBufferFree"} <= passed
    # tcp;ofi_rxm counts; udp opens no counter (not applicable, said so)
    assert ("CountersCountCompletions" in passed) == (manifest == "tcp_rxm.yaml")
    if manifest == "udp.yaml":  # DGRAM only: nothing of the RDM-only MR cases applies
        assert all(r.verdict == "not_applicable" for r in found if r.case.startswith("Mr"))
    for r in found:
        if short(r.case) in {"AddressesOfAnotherFormatAreRefused", "MaxRmaSizeStaysWithinItsRange",
                             "FailedOperationsGiveErrorEntries", "UserKeysPassWhole", "ByteCountersCountBytes"}:
            assert r.verdict == "not_applicable", r
            assert r.reason.startswith("not applicable:"), r


@pytest.mark.parametrize("knob,area,case", [
    ("no_ack", "completion", "Claimed/Completion.EverySendOfABurstCompletesAndArrives/rdm"),
    ("psn_reuse", "completion", "Claimed/Completion.EverySendOfABurstCompletesAndArrives/rdm"),
    ("err_not_mapped", "completion", "Claimed/Completion.FailedOperationsGiveErrorEntries/rdm"),
    ("prov_errno_not_rc", "completion", "Claimed/Completion.FailedOperationsGiveErrorEntries/rdm"),
    ("mr_bounds_unchecked", "completion", "Claimed/Completion.FailedOperationsGiveErrorEntries/rdm"),
    ("getname_no_caps", "ep", "Claimed/Ep.AddressIsAssignedAtOpenAndComplete/rdm"),
    ("key_bits_dropped", "mr", "Mr.UserKeysPassWhole"),
    ("cntr_on_idempotent_mr", "mr", "Mr.CompletionCounterBindsOnlyWhereAllowed"),
])
def test_a_fault_knob_fails_the_case_that_checks_its_rule(build_dir, tmp_path, knob, area, case):
    found = {r.case: r for r in results_of(build_dir, tmp_path, "softuet.yaml", [area], {"SOFTUET_FAULTS": knob})}
    assert case in found, sorted(found)
    assert found[case].verdict == "fail", found[case]
