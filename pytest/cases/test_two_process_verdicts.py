"""The two-process cases (msg, tagged, RMA, atomics, JobID/authorization) give honest verdicts: everything
softuet claims passes in every profile configuration; against libfabric's tcp;ofi_rxm and udp the UET
cases are not applicable with the reason and the generic ones pass; and with a softuet fault knob that
breaks a rule, the case checking that rule fails (not errors, not hangs)."""
import pathlib

import pytest
import yaml

from harness import run_cases

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "cases" / "manifests"
AREAS = ("msg", "tagged", "rma", "atomic", "authz", "rendezvous")

# knob -> (manifest, binary, the cases that must fail: "Suite.Name" prefixes, kind suffix dropped)
KNOBS = {
    "no_authorization": ("softuet", "authz", {"Authz.MrForOneJobIdRefusesAnother", "Authz.ReceiveBufferForOneJobIdTakesOnlyIt"}),
    "wrong_job_id": ("softuet", "authz", {"Authz.DirectJobIdIsOnTheWire"}),
    "prov_errno_not_rc": ("softuet", "rma", {"Rma.WriteBeyondTheMrFailsAndWritesNothing", "Rma.WriteWithAnUnknownKeyFails"}),
    "err_not_mapped": ("softuet", "authz", {"Authz.MrForOneJobIdRefusesAnother"}),
    "mr_bounds_unchecked": ("softuet", "rma", {"Rma.WriteBeyondTheMrFailsAndWritesNothing"}),
    "wildcard_in_ai_full": ("softuet-ai-full", "tagged", {"Tagged.WildcardReceiveIsRefusedWithAiFullOnly"}),
    "directed_recv_ignored": ("softuet", "tagged", {"Tagged.DirectedReceiveMatchesTheInitiator"}),
    "no_header_data": ("softuet", "msg", {"Msg.SenddataDeliversRemoteCqData"}),
    "tagged_as_send": ("softuet", "tagged", {"Tagged.ReceiveTakesOnlyItsTag"}),
    "wrong_match_bits": ("softuet", "tagged", {"Tagged.ReceiveTakesOnlyItsTag"}),
    "fallback_without_initiator": ("softuet", "authz", {"Fallback.EndpointNeedsUetProviderInitiatorId"}),
    "wrong_rma_opcode": ("softuet", "rma", {"Rma.WriteThenReadBack"}),
    "wrong_amo_opcode": ("softuet", "atomic", {"Atomic.BulkSumAddsEveryElement"}),
    "wrong_amo_datatype": ("softuet", "atomic", {"Atomic.BulkSumAddsEveryElement"}),
    "wrong_initiator": ("softuet", "msg", {"Msg.DirectedReceiveTakesOnlyItsInitiator"}),
    "eager_over_limit": ("softuet", "rendezvous", {"Rendezvous.LargeSendFromAReadableRegionGoesAsRendezvous",
                                                   "Rendezvous.LargeTaggedSendFromAReadableRegionGoesAsRendezvous"}),
    "restart_token_reuse": ("softuet-ai-full", "rendezvous", {"Rendezvous.LargeSendIsDeferrableAndRestartsWithItsTokens",
                                                              "Rendezvous.LargeTaggedSendIsDeferrableAndRestartsWithItsTokens"}),
}


def short(case):
    """'Claimed/Authz.MrForOneJobIdRefusesAnother/rdm' -> 'Authz.MrForOneJobIdRefusesAnother'."""
    suite, name = case.split(".", 1)
    return f"{suite.split('/')[-1]}.{name.split('/')[0]}"


def run_areas(manifest, build_dir, out, areas=AREAS):
    """Verdicts of the two-process binaries only (run_cases.run would also run the other areas)."""
    data = yaml.safe_load(manifest.read_text())
    env = run_cases.case_environment(data, manifest, build_dir)
    out.mkdir(parents=True, exist_ok=True)
    verdicts = []
    with run_cases.placement(data, None) as (run_side, placement_env):
        env.update(placement_env)
        for area in areas:
            binary = build_dir / "cases" / f"uet-cases-{area}"
            verdicts += run_cases.run_binary(binary, run_side, env, out / f"{binary.name}.{manifest.stem}.xml", 300)
    return verdicts


@pytest.mark.parametrize("name", ["softuet", "softuet-ai-full", "softuet-ai-base"])
def test_every_case_passes_against_softuet(build_dir, tmp_path, name):
    verdicts = run_areas(MANIFESTS / f"{name}.yaml", build_dir, tmp_path)
    bad = [v for v in verdicts if v.verdict not in ("pass", "not_applicable")]
    assert not bad, bad
    assert all(v.requirements for v in verdicts if v.verdict == "pass"), "every case names the statements it checks"
    passed = {short(v.case) for v in verdicts if v.verdict == "pass"}
    rendezvous = {c for c in passed if c.startswith("Rendezvous.")}
    assert ("Rendezvous.LargeSendFromAReadableRegionGoesAsRendezvous" in rendezvous) == (name == "softuet")  # HPC
    assert ("Rendezvous.LargeSendIsDeferrableAndRestartsWithItsTokens" in rendezvous) == (name != "softuet-ai-base")
    assert {"Authz.MrForOneJobIdRefusesAnother", "Rma.WriteThenReadBack", "Atomic.BulkSumAddsEveryElement",
            "Msg.SendArrivesWholeInThePostedBuffer", "Fallback.EndpointNeedsUetProviderInitiatorId"} <= passed
    tagged = {c for c in passed if c.startswith("Tagged.")}
    if name == "softuet-ai-base":
        assert not tagged, "AI Base alone has no fi_tagged"
    elif name == "softuet-ai-full":
        assert "Tagged.WildcardReceiveIsRefusedWithAiFullOnly" in tagged
        assert "Tagged.WildcardReceiveMatchesWithHpc" not in tagged
    else:
        assert "Tagged.WildcardReceiveMatchesWithHpc" in tagged


@pytest.mark.parametrize("name", ["tcp_rxm", "udp"])
def test_uet_cases_are_not_applicable_to_other_providers(build_dir, tmp_path, name):
    verdicts = run_areas(MANIFESTS / f"{name}.yaml", build_dir, tmp_path)
    assert not [v for v in verdicts if v.verdict in ("fail", "error")]
    uet_only = {"Authz", "Fallback", "TaggedDgram", "RmaDgram", "Rendezvous"}
    for v in verdicts:
        if short(v.case).split(".")[0] in uet_only:
            assert v.verdict == "not_applicable" and "does not claim UET" in v.detail, v
        if v.verdict == "not_applicable":
            assert v.detail.startswith("not applicable: "), v
    passed = {short(v.case) for v in verdicts if v.verdict == "pass"}
    assert "Msg.SendArrivesWholeInThePostedBuffer" in passed
    if name == "tcp_rxm":
        assert {"Tagged.ReceiveTakesOnlyItsTag", "Rma.WriteThenReadBack", "Atomic.CompareSwapSwapsOnlyOnEquality"} <= passed


@pytest.mark.parametrize("knob", sorted(KNOBS))
def test_the_case_checking_a_rule_fails_when_softuet_breaks_it(build_dir, tmp_path, knob):
    name, area, must_fail = KNOBS[knob]
    manifest = tmp_path / f"{name}.yaml"
    data = yaml.safe_load((MANIFESTS / f"{name}.yaml").read_text())
    data["environment"]["SOFTUET_FAULTS"] = knob  # both sides: the peer inherits it
    manifest.write_text(yaml.safe_dump(data))
    verdicts = run_areas(manifest, build_dir, tmp_path / "out", areas=(area,))
    assert not [v for v in verdicts if v.verdict == "error"], verdicts
    failed = {short(v.case) for v in verdicts if v.verdict == "fail"}
    assert must_fail <= failed, f"{knob}: failed {sorted(failed)}"
