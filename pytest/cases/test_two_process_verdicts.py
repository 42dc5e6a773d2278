"""The two-process cases (msg, tagged, RMA, atomics, JobID/authorization) give honest verdicts: against
libfabric's tcp;ofi_rxm and udp the UET cases are not applicable with the reason and the generic ones pass.
What softuet passes in each profile configuration, and the knobs that fail these cases, come from the one
mutation run (pytest/cases/test_mutation.py)."""
import pathlib

import pytest

from harness.selftest.mutation import short_case as short

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "cases" / "manifests"
AREAS = ["msg", "tagged", "rma", "atomic", "authz", "rendezvous"]


@pytest.mark.parametrize("name", ["tcp_rxm", "udp"])
def test_uet_cases_are_not_applicable_to_other_providers(cell_run, name):
    results = cell_run(MANIFESTS / f"{name}.yaml", areas=AREAS).results()  # the two-process binaries only
    assert not [r for r in results if r.verdict in ("fail", "error", "timeout")]
    uet_only = {"Authz", "Fallback", "TaggedDgram", "RmaDgram", "Rendezvous"}
    for r in results:
        if short(r.case).split(".")[0] in uet_only:
            assert r.verdict == "not_applicable" and "does not claim UET" in r.reason, r
            assert f"(manifest {name})" in r.reason, r
        if r.verdict == "not_applicable":
            assert r.reason.startswith("not applicable: "), r
    passed = {short(r.case) for r in results if r.verdict == "pass"}
    assert "Msg.SendArrivesWholeInThePostedBuffer" in passed
    if name == "tcp_rxm":
        assert {"Tagged.ReceiveTakesOnlyItsTag", "Rma.WriteThenReadBack", "Atomic.CompareSwapSwapsOnlyOnEquality"} <= passed
