"""The single-process cases (uet-cases-av, -ep, -completion, -mr: two endpoints of one domain) give honest
verdicts: softuet passes everything it claims, libfabric's tcp;ofi_rxm and udp pass the generic fi_*
checks and are "not applicable" for the UET ones, with the reason; and a fault knob of softuet that breaks
what a case checks makes that case fail within its deadline (no hang)."""
import pathlib

import pytest
import yaml

from harness import run_cases

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "cases" / "manifests"
BINARIES = ["uet-cases-av", "uet-cases-ep", "uet-cases-completion", "uet-cases-mr"]
PORT = "48420"  # SOFTUET_UDP_PORT of these runs (the binaries open one domain at a time)


@pytest.fixture(autouse=True)
def own_port(monkeypatch):
    monkeypatch.setenv("UET_CASES_PORT", PORT)


def verdicts(build_dir, out, manifest, binaries=BINARIES, extra_env=None):
    path = MANIFESTS / manifest
    env = run_cases.case_environment(yaml.safe_load(path.read_text()), path, build_dir)
    env.update(extra_env or {})
    found = []
    for name in binaries:
        found += run_cases.run_binary(build_dir / "cases" / name, run_cases.subprocess.run, env,
                                      out / f"{name}.{path.stem}.xml", timeout=300)
    return found


# the only reasons an RDM case may be "not applicable" to softuet (DGRAM has no fi_rma, so any)
SOFTUET_NOT_APPLICABLE = (
    "no scalable endpoints",
    "the manifest lists no predefined service names",  # Table 2-12 is MISSING; softuet predefines none
)


def short(case):
    return case.split(".")[1].split("/")[0]


def test_softuet_passes_what_it_claims(build_dir, tmp_path):
    found = verdicts(build_dir, tmp_path, "softuet.yaml")
    assert len(found) >= 55
    bad = [v for v in found if v.verdict not in ("pass", "not_applicable")]
    assert not bad, bad
    for v in found:
        assert v.requirements, f"{v.case} names no catalogue statement"
        if v.verdict == "not_applicable":
            assert v.case.endswith("/dgram") or any(why in v.detail for why in SOFTUET_NOT_APPLICABLE), v


@pytest.mark.parametrize("manifest", ["tcp_rxm.yaml", "udp.yaml"])
def test_non_uet_providers_pass_generic_checks_and_skip_uet_ones(build_dir, tmp_path, manifest):
    found = verdicts(build_dir, tmp_path, manifest)
    assert [v for v in found if v.verdict in ("fail", "error")] == []
    passed = {short(v.case) for v in found if v.verdict == "pass"}
    assert {"LookupReturnsTheInsertedAddress", "EveryCqFormatReportsASendAndItsReceive",
            "EverySendOfABurstCompletesAndArrives", "EventQueuesCarryEvents",
            "InjectLeavesNoCompletionAndItsBufferFree"} <= passed
    # tcp;ofi_rxm counts; udp opens no counter (not applicable, said so)
    assert ("CountersCountCompletions" in passed) == (manifest == "tcp_rxm.yaml")
    if manifest == "udp.yaml":  # DGRAM only: nothing of the RDM-only MR cases applies
        assert all(v.verdict == "not_applicable" for v in found if v.case.startswith("Mr"))
    for v in found:
        if short(v.case) in {"AddressesOfAnotherFormatAreRefused", "MaxRmaSizeStaysWithinItsRange",
                             "FailedOperationsGiveErrorEntries", "UserKeysPassWhole", "ByteCountersCountBytes"}:
            assert v.verdict == "not_applicable", v
            assert "not applicable:" in v.detail


@pytest.mark.parametrize("knob,binary,case", [
    ("no_ack", "uet-cases-completion", "Claimed/Completion.EverySendOfABurstCompletesAndArrives/rdm"),
    ("psn_reuse", "uet-cases-completion", "Claimed/Completion.EverySendOfABurstCompletesAndArrives/rdm"),
    ("err_not_mapped", "uet-cases-completion", "Claimed/Completion.FailedOperationsGiveErrorEntries/rdm"),
    ("prov_errno_not_rc", "uet-cases-completion", "Claimed/Completion.FailedOperationsGiveErrorEntries/rdm"),
    ("mr_bounds_unchecked", "uet-cases-completion", "Claimed/Completion.FailedOperationsGiveErrorEntries/rdm"),
    ("getname_no_caps", "uet-cases-ep", "Claimed/Ep.AddressIsAssignedAtOpenAndComplete/rdm"),
    ("key_bits_dropped", "uet-cases-mr", "Mr.UserKeysPassWhole"),
    ("cntr_on_idempotent_mr", "uet-cases-mr", "Mr.CompletionCounterBindsOnlyWhereAllowed"),
])
def test_a_fault_knob_fails_the_case_that_checks_its_rule(build_dir, tmp_path, knob, binary, case):
    found = {v.case: v for v in verdicts(build_dir, tmp_path, "softuet.yaml", [binary], {"SOFTUET_FAULTS": knob})}
    assert case in found, sorted(found)
    assert found[case].verdict == "fail", found[case]
