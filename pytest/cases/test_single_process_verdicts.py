"""The single-process cases (uet-cases-av, -ep, -completion, -mr: two endpoints of one domain) give honest
verdicts: libfabric's tcp;ofi_rxm and udp pass the generic fi_* checks and are "not applicable" for the UET
ones, with the reason. What softuet passes, and the knobs that fail these cases, come from the one mutation
run (pytest/cases/test_mutation.py)."""
import pathlib

import pytest


REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "cases" / "manifests"
AREAS = ["av", "ep", "completion", "mr"]
PORTS = (48420, 48421)  # this side's and the target's UET UDP port (the binaries open one domain at a time)


def short(case):
    return case.split(".")[1].split("/")[0]


@pytest.mark.parametrize("manifest", ["tcp_rxm.yaml", "udp.yaml"])
def test_non_uet_providers_pass_generic_checks_and_skip_uet_ones(cell_run, manifest):
    found = cell_run(MANIFESTS / manifest, areas=AREAS, ports=PORTS).results()
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
