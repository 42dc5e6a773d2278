"""The two-process cases (msg, tagged, RMA, atomics, JobID/authorization) give honest verdicts: everything
softuet claims passes in every profile configuration; against libfabric's tcp;ofi_rxm and udp the UET
cases are not applicable with the reason and the generic ones pass; and with a softuet fault knob that
breaks a rule, the case checking that rule fails (not errors, not hangs)."""
import pathlib

import pytest

from harness.run_cases import run_manifest

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "cases" / "manifests"
AREAS = ["msg", "tagged", "rma", "atomic", "authz", "rendezvous"]
# the softuet variants: every profile, AI Base + AI Full (no HPC), AI Base only
SOFTUET, AI_FULL, AI_BASE = "softuet.yaml", "softuet.yaml#ai_base+ai_full", "softuet.yaml#ai_base"

# knob -> (manifest, area, the cases that must fail: "Suite.Name" prefixes, kind suffix dropped)
KNOBS = {
    "no_authorization": (SOFTUET, "authz", {"Authz.MrForOneJobIdRefusesAnother", "Authz.ReceiveBufferForOneJobIdTakesOnlyIt"}),
    "wrong_job_id": (SOFTUET, "authz", {"Authz.DirectJobIdIsOnTheWire"}),
    "prov_errno_not_rc": (SOFTUET, "rma", {"Rma.WriteBeyondTheMrFailsAndWritesNothing", "Rma.WriteWithAnUnknownKeyFails"}),
    "err_not_mapped": (SOFTUET, "authz", {"Authz.MrForOneJobIdRefusesAnother"}),
    "mr_bounds_unchecked": (SOFTUET, "rma", {"Rma.WriteBeyondTheMrFailsAndWritesNothing"}),
    "wildcard_in_ai_full": (AI_FULL, "tagged", {"Tagged.WildcardReceiveIsRefusedWithAiFullOnly"}),
    "directed_recv_ignored": (SOFTUET, "tagged", {"Tagged.DirectedReceiveMatchesTheInitiator"}),
    "no_header_data": (SOFTUET, "msg", {"Msg.SenddataDeliversRemoteCqData"}),
    "tagged_as_send": (SOFTUET, "tagged", {"Tagged.ReceiveTakesOnlyItsTag"}),
    "wrong_match_bits": (SOFTUET, "tagged", {"Tagged.ReceiveTakesOnlyItsTag"}),
    "fallback_without_initiator": (SOFTUET, "authz", {"Fallback.EndpointNeedsUetProviderInitiatorId"}),
    "wrong_rma_opcode": (SOFTUET, "rma", {"Rma.WriteThenReadBack"}),
    "wrong_amo_opcode": (SOFTUET, "atomic", {"Atomic.BulkSumAddsEveryElement"}),
    "wrong_amo_datatype": (SOFTUET, "atomic", {"Atomic.BulkSumAddsEveryElement"}),
    "wrong_initiator": (SOFTUET, "msg", {"Msg.DirectedReceiveTakesOnlyItsInitiator"}),
    "eager_over_limit": (SOFTUET, "rendezvous", {"Rendezvous.LargeSendFromAReadableRegionGoesAsRendezvous",
                                                 "Rendezvous.LargeTaggedSendFromAReadableRegionGoesAsRendezvous"}),
    "restart_token_reuse": (AI_FULL, "rendezvous", {"Rendezvous.LargeSendIsDeferrableAndRestartsWithItsTokens",
                                                    "Rendezvous.LargeTaggedSendIsDeferrableAndRestartsWithItsTokens"}),
    "endpoint_ignores_job_id": (SOFTUET, "authz", {"JobIdRefusal.JobIdNoEndpointTakesIsBadJobId",
                                                   "JobIdRefusal.JobIdOfAnotherEndpointIsPermViolation"}),
    "refusal_always_bad_job_id": (SOFTUET, "authz", {"JobIdRefusal.JobIdOfAnotherEndpointIsPermViolation",
                                                     "JobIdRefusal.PidOutsideTheJobIdIsBadPid",
                                                     "JobIdRefusal.ResourceIndexOutsideTheJobIdIsBadIndex"}),
}


def short(case):
    """'Claimed/Authz.MrForOneJobIdRefusesAnother/rdm' -> 'Authz.MrForOneJobIdRefusesAnother'."""
    suite, name = case.split(".", 1)
    return f"{suite.split('/')[-1]}.{name.split('/')[0]}"


def run_areas(manifest, build_dir, out, areas=AREAS, extra_env=None):
    """Results of the two-process binaries only (a whole cell would also run the other areas)."""
    return run_manifest(manifest, build_dir, out, areas=list(areas), extra_env=extra_env)


@pytest.mark.parametrize("ref", [SOFTUET, AI_FULL, AI_BASE])
def test_every_case_passes_against_softuet(build_dir, tmp_path, ref):
    results = run_areas(MANIFESTS / ref, build_dir, tmp_path)
    bad = [r for r in results if r.verdict not in ("pass", "not_applicable")]
    assert not bad, bad
    assert all(r.statements for r in results if r.verdict == "pass"), "every case names the statements it checks"
    passed = {short(r.case) for r in results if r.verdict == "pass"}
    rendezvous = {c for c in passed if c.startswith("Rendezvous.")}
    assert ("Rendezvous.LargeSendFromAReadableRegionGoesAsRendezvous" in rendezvous) == (ref == SOFTUET)  # HPC
    assert ("Rendezvous.LargeSendIsDeferrableAndRestartsWithItsTokens" in rendezvous) == (ref != AI_BASE)
    assert {"Authz.MrForOneJobIdRefusesAnother", "Rma.WriteThenReadBack", "Atomic.BulkSumAddsEveryElement",
            "Msg.SendArrivesWholeInThePostedBuffer", "Fallback.EndpointNeedsUetProviderInitiatorId"} <= passed
    # the four answers to a request no endpoint takes (choice endpoint-jobid-mismatch), in every profile set
    assert len({c for c in passed if c.startswith("JobIdRefusal.")}) == 4
    tagged = {c for c in passed if c.startswith("Tagged.")}
    if ref == AI_BASE:
        assert not tagged, "AI Base alone has no fi_tagged"
    elif ref == AI_FULL:
        assert "Tagged.WildcardReceiveIsRefusedWithAiFullOnly" in tagged
        assert "Tagged.WildcardReceiveMatchesWithHpc" not in tagged
    else:
        assert "Tagged.WildcardReceiveMatchesWithHpc" in tagged


@pytest.mark.parametrize("name", ["tcp_rxm", "udp"])
def test_uet_cases_are_not_applicable_to_other_providers(build_dir, tmp_path, name):
    results = run_areas(MANIFESTS / f"{name}.yaml", build_dir, tmp_path)
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


@pytest.mark.parametrize("knob", sorted(KNOBS))
def test_the_case_checking_a_rule_fails_when_softuet_breaks_it(build_dir, tmp_path, knob):
    ref, area, must_fail = KNOBS[knob]
    # the knob on both sides (run_manifest puts extra_env into each side's environment)
    results = run_areas(MANIFESTS / ref, build_dir, tmp_path, areas=[area], extra_env={"SOFTUET_FAULTS": knob})
    assert not [r for r in results if r.verdict in ("error", "timeout")], results
    failed = {short(r.case) for r in results if r.verdict == "fail"}
    assert must_fail <= failed, f"{knob}: failed {sorted(failed)}"
