"""UDP port 4793 in Wire.IpHeaderFollowsTheAddressesAndTrafficClass (2.2.10.1-a, choice uet-udp-port): a provider
that binds a UET port of its own
(personality own-port, manifest `wire: {udp_port: auto}`) fails it, blamed on the side whose port it is, with
the port it used; where the suite gives each side its port ({port}), no provider chose one and the port is not
held against it."""
import json
import os
import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.wire import evidence, wire_oracle  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a pair's sides run in network namespaces (root)")

CASE = "Claimed/Wire.IpHeaderFollowsTheAddressesAndTrafficClass/rdm"
SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
OWN_PORT = REPO / "cases" / "manifests" / "personalities" / "own-port.yaml"


@pytest.fixture(scope="session")
def run(cell_run):
    """run(initiator, target=None) -> {case: Result} of the IP header check's instances, run once per session."""
    return lambda initiator, target=None: cell_run(initiator, target, areas=["wire"],
                                                   case_filter=CASE.replace("/rdm", "/*")).by_case()


class TestUdpPort4793:
    def test_a_provider_that_binds_its_own_port_fails_blamed_on_the_target(self, run):
        got = run(OWN_PORT)[CASE]
        assert (got.verdict, got.blamed_side, got.statements) == ("fail", "target", ["2.2.10.1-a"]), got.message
        assert "requests go to the target's UDP port " in got.message and ", not UET's 4793 " in got.message
        assert "the target's ACKs go to the initiator's UDP port " in got.message
        assert "uet-udp-port" in got.choices

    def test_ports_the_suite_gave_are_not_the_providers_choice(self, run):
        got = run(SOFTUET)[CASE]
        assert got.verdict == "pass", got.message
        assert "uet-udp-port" not in got.choices

    def test_only_the_side_that_chose_is_blamed(self, run):
        got = run(SOFTUET, target=OWN_PORT)[CASE]
        assert (got.verdict, got.blamed_side) == ("fail", "target"), got.message
        assert "the target's ACKs go to" not in got.message


PDS_CASE = "Claimed/Wire.PdsHeaderCarriesThePdcOfItsDeliveryMode/rdm"
MESSAGE_ID_CASE = "Claimed/Wire.NumberedRequestsCarryANonzeroMessageId/rdm"
TARGET_SENDS_CASE = "Claimed/DeliveryTrafficClass.DefDataTcOverridesTheDefault/rdm"
NO_PORT_IN_ADDRESS = f"{OWN_PORT}#port_not_in_address"


@pytest.fixture
def run_kept(cell_run, build_dir, tmp_path):
    """run_kept(case, initiator, target=None, extra_env=None, area="wire") -> the case's (result, capture entry,
    decoded records) once the harness kept its capture: the session's run of it copied to tmp_path, decoded by
    both decoders, cross-checked and judged by the wire oracle (harness/wire/evidence.py), as ./uet run does."""
    def kept(case, initiator, target=None, extra_env=None, area="wire"):
        results = cell_run(initiator, target, areas=[area], case_filter=case, extra_env=extra_env).copy_to(tmp_path)
        errors = evidence.check_captures(results, build_dir / "bin" / "uet-decode", tmp_path)
        (r,) = [r for r in results if r.case == case]
        assert [e.reason for e in errors] == []
        (cap,) = r.evidence["captures"]
        records = [json.loads(line) for line in (tmp_path / cap["decoded"]).read_text().splitlines()]
        return r, cap, records
    return kept


def noted_port(result, side):
    """The UET port the case binary's note says it learned for `side` ("... UET port": "...: 39726 (...")."""
    return int(re.search(r": (\d+) \(the manifest says auto\)", result.notes[f"{side} UET port"]).group(1))


def statuses_by_port(records):
    """{udp.dstport: {status, ...}} of a kept decode."""
    out = {}
    for rec in records:
        out.setdefault((rec.get("fields") or {}).get("udp.dstport"), set()).add(rec["status"])
    return out


class TestEachSidesPortIsUet:
    """Issue 35, item 5: frames to either side's UET port are UET, decoded under that side's port, in the case
    binary and in the kept decode both decoders cross-check: the initiator's `auto` port (the target's ACKs)
    and, in a pair, softuet's declared one, never the target's alone, never 4793 assumed."""

    def test_own_port_on_both_sides_keeps_the_acks_to_the_initiators_port_as_uet(self, run_kept, build_dir, tmp_path):
        r, cap, records = run_kept(PDS_CASE, OWN_PORT)
        assert r.verdict == "pass", r.message
        target, initiator = noted_port(r, "target"), noted_port(r, "initiator")
        assert target != initiator and statuses_by_port(records) == {target: {"uet"}, initiator: {"uet"}}
        assert (cap["port"], cap.get("initiator_port")) == (target, initiator)
        assert (cap["uet_frames"], cap["disagreements"]) == (cap["frames"], 0)
        frames = wire_oracle.frames_of(tmp_path / cap["capture"], cap["capture"], cap["port"], cap["initiator_port"],
                                       build_dir / "bin" / "uet-decode", None)
        assert {(f.sender, f.fields["udp.dstport"]) for f in frames} == {("initiator", target), ("target", initiator)}

    @pytest.mark.parametrize("own_port_side", ["target", "initiator"])
    def test_in_a_pair_softuets_declared_port_and_the_others_auto_port_are_both_uet(self, run_kept, own_port_side):
        initiator, target = (SOFTUET, OWN_PORT) if own_port_side == "target" else (OWN_PORT, SOFTUET)
        r, cap, records = run_kept(PDS_CASE, initiator, target=target)
        assert r.verdict == "pass", r.message
        learned = noted_port(r, own_port_side)
        declared = 4793 if own_port_side == "target" else 4794  # run_manifest's ports: (initiator, target)
        ports = (learned, declared) if own_port_side == "target" else (declared, learned)
        assert statuses_by_port(records) == {ports[0]: {"uet"}, ports[1]: {"uet"}}
        assert (cap["port"], cap.get("initiator_port")) == ports
        assert (cap["uet_frames"], cap["disagreements"]) == (cap["frames"], 0)

    def test_ports_no_address_names_are_learned_from_the_wire_for_both_sides(self, run_kept):
        r, cap, records = run_kept(PDS_CASE, NO_PORT_IN_ADDRESS)
        assert r.verdict == "pass", r.message
        for side in ("target", "initiator"):
            assert r.notes[f"{side} UET port"].startswith("learned from the wire: ")
        target, initiator = noted_port(r, "target"), noted_port(r, "initiator")
        assert statuses_by_port(records) == {target: {"uet"}, initiator: {"uet"}}
        assert (cap["port"], cap.get("initiator_port")) == (target, initiator)

    def test_a_port_whose_every_frame_is_malformed_is_learned_and_its_frames_judged(self, run_kept):
        # message_id 0 and JobID 0 in every request: no frame to the target is well-formed, yet each reads as
        # UET, so the target's port is learned from the first and every diagnostic reaches the verdict.
        r, cap, records = run_kept(MESSAGE_ID_CASE, NO_PORT_IN_ADDRESS,
                                   extra_env={"SOFTUET_FAULTS": "message_id_zero,job_and_ri_zero"})
        assert (r.verdict, r.blamed_side, r.statements) == ("fail", "initiator", ["2.2.10.4-a", "2.2.4.4-a"])
        target = noted_port(r, "target")
        assert r.notes["target UET port"].startswith("learned from the wire: ") and cap["port"] == target
        assert sorted(d["kind"] for d in r.evidence["diagnostics"]) == ["invalid_value", "job_id_zero"]
        assert all(d["frames"] == len(records) and d["first_frame"] == 1 for d in r.evidence["diagnostics"])
        assert statuses_by_port(records) == {target: {"malformed"}}

    def test_the_initiators_port_whose_every_frame_is_malformed_is_learned_and_its_frames_checked(self, run_kept):
        # The target sends to the initiator requests with JobID 0 (job_and_ri_zero) and DSCP 0 (wrong_dscp,
        # though it runs with UET_PROVIDER_DEF_DATA_TC=46): both faults are found only in frames to the
        # initiator's port, which no address names.
        r, cap, records = run_kept(TARGET_SENDS_CASE, NO_PORT_IN_ADDRESS, area="delivery",
                                   extra_env={"SOFTUET_FAULTS": "job_and_ri_zero,wrong_dscp"})
        assert (r.verdict, r.blamed_side, r.statements) == ("fail", "target", ["2.2.7-c", "2.2.4.4-a"]), r.message
        initiator = noted_port(r, "initiator")
        assert r.notes["initiator UET port"].startswith("learned from the wire: ") and cap.get("initiator_port") == initiator
        assert [(d["sender"], d["kind"], d["field"]) for d in r.evidence["diagnostics"]] == [
            ("target", "job_id_zero", "uet.ses.job_id")]
        assert "the target ran with UET_PROVIDER_DEF_DATA_TC=46" in r.message
        assert "malformed" in statuses_by_port(records)[initiator]
