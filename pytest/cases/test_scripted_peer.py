"""The scripted area (uet-cases-scripted): the target alone, played against by the suite's own scripted peer
(cases/common/sides/scripted_peer.hpp), no initiator provider. Against softuet every RDM case passes and every
DGRAM case that exists but does not apply is not applicable with its reason code and reason (a case about a
write or about what a target answers has no DGRAM instance); each target-side fault knob fails
exactly the cases of its rule, blamed on the target, with a message that says what the target did; an
initiator's fault knob changes nothing, and a cell whose initiator is not UET still checks a UET target, since no
initiator provider takes part."""
import os
import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.results.results import inconclusive  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a pair's sides run in network namespaces (root)")

SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
TCP_RXM = REPO / "cases" / "manifests" / "tcp_rxm.yaml"

HEADERS = "Claimed/ScriptedHeaders."
REFUSAL = "Claimed/ScriptedRefusal."
OVERSIZE = "Claimed/ScriptedOversize."
ACK = "Claimed/ScriptedAck."
SEND_STD = HEADERS + "TargetTakesASendInTheStandardHeader"
SEND_MEDIUM = HEADERS + "TargetTakesASendInTheSmallMessageHeader"
WRITE_MEDIUM = HEADERS + "TargetTakesAWriteInTheSmallRmaHeader"
WRITE_OPTIMIZED = HEADERS + "TargetTakesAWriteInTheOptimizedHeader"
BAD_JOB = REFUSAL + "RequestWithAnotherJobIdIsBadJobId"
BAD_PID = REFUSAL + "RequestForAnotherPidOnFepIsBadPid"
BAD_INDEX = REFUSAL + "RequestForAnotherResourceIndexIsBadIndex"
TRUNCATED = OVERSIZE + "PacketLargerThanTheReceiveIsTruncatedOrRefused"
FULL_PACKET = OVERSIZE + "FullPacketIsDeliveredIntactOrRefused"
RESENT = ACK + "ResentRequestIsAcknowledgedAgainAndDeliveredOnce"
CASES = [SEND_STD, SEND_MEDIUM, WRITE_MEDIUM, WRITE_OPTIMIZED, BAD_JOB, BAD_PID, BAD_INDEX, TRUNCATED, FULL_PACKET, RESENT]

# (reason_code, reason) of each DGRAM instance that is not applicable: a datagram takes the small-message header
# from spec 1.0.3 on, so under 1.0.1 that case exists and does not apply. The cases about writes (no fi_rma on
# DGRAM) and about what a target answers or acknowledges (UUD answers nothing) have no DGRAM instance at all.
DGRAM_REASONS = {
    SEND_MEDIUM: ("no-such-combination",
                  "not applicable: before spec 1.0.3 a datagram takes the standard header (choice small-message-criteria, "
                  "confidence medium) (!rdm() && !w::rule_holds(w::VersionRule::datagram_medium_header, "
                  "manifest().checked_spec_version))"),
}
RDM_ONLY = [WRITE_MEDIUM, WRITE_OPTIMIZED, BAD_JOB, BAD_PID, BAD_INDEX, TRUNCATED, FULL_PACKET, RESENT]
STATEMENTS = {
    SEND_STD: ["2.2.10.4-a", "2.2.5.4.1-b"], SEND_MEDIUM: ["2.2.10.4-a", "2.2.5.4.1-b"],
    WRITE_MEDIUM: ["2.2.10.4-a", "2.2.5.4.3-b"], WRITE_OPTIMIZED: ["2.2.10.4-a", "2.2.5.4.3-b"],
    BAD_JOB: ["2.2.4.3-a", "2.2.4.3.1-b"], BAD_PID: ["2.2.4.3-a"], BAD_INDEX: ["2.2.4.3-a"],
    TRUNCATED: ["2.2.5.4.1-b"], FULL_PACKET: ["2.2.5.4.1-b"], RESENT: ["2.2.6-b", "2.2.5.4.1-b"],
}

# What a case says when the scripted peer hears nothing back (the first request of a PDC has PSN 0x5c000000).
NO_ANSWER_TO_FIRST = "no answer to PSN 0x5c000000 on "
# Knob -> {case (RDM): words its failure message must hold}; every other RDM case passes with the knob on.
KNOB_FAILURES = {
    "standard_header_only": {
        SEND_MEDIUM: "a one-packet send in the small message / small RMA header (uet.ses.medium, next_hdr 2) did not "
                     "reach the posted receive",
        WRITE_MEDIUM: "no SES response RC_OK (0x1) to the request in the small message / small RMA header "
                      "(uet.ses.medium, next_hdr 2): " + NO_ANSWER_TO_FIRST,
        WRITE_OPTIMIZED: "no SES response RC_OK (0x1) to the request in the optimized non-matching header "
                         "(uet.ses.small, next_hdr 1): " + NO_ANSWER_TO_FIRST,
    },
    "truncated_request_acked": {
        TRUNCATED: "the target answered RC_OK (modified_length 1200) and its posted receive of 256 bytes got nothing "
                   "within 3000 ms",
        FULL_PACKET: "the target answered RC_OK (modified_length 1200) and its posted receive of 4096 bytes got nothing "
                     "within 3000 ms",
    },
    "endpoint_ignores_job_id": {
        BAD_JOB: "no SES response RC_BAD_JOB_ID (0x1b) to the request in the standard header (uet.ses.std, next_hdr 3): "
                 "the answers to PSN 0x5c000000 differ: uet.ses.rsp.return_code is 0x1, not 0x1b",
    },
    "refusal_always_bad_job_id": {
        BAD_PID: "no SES response RC_BAD_PID (0x1a) to the request in the standard header (uet.ses.std, next_hdr 3): "
                 "the answers to PSN 0x5c000000 differ: uet.ses.rsp.return_code is 0x1b, not 0x1a",
        BAD_INDEX: "no SES response RC_BAD_INDEX (0x19) to the request in the standard header (uet.ses.std, next_hdr 3): "
                   "the answers to PSN 0x5c000000 differ: uet.ses.rsp.return_code is 0x1b, not 0x19",
    },
    "duplicate_delivery": {
        RESENT: "the request sent again with PSN 0x5c000000 was delivered a second time",
    },
}


@pytest.fixture(scope="session")
def scripted(cell_run):
    """scripted(knob=None, target=None, only="*", initiator=SOFTUET) -> {case name: Result} of the area's one
    run of the session with those."""
    return lambda knob=None, target=None, only="*", initiator=SOFTUET: cell_run(
        initiator, target, areas=["scripted"], knob=knob, case_filter=only).by_case()


def rdm(case):
    return case + "/rdm"


def dgram(case):
    return case + "/dgram"


class TestAgainstSoftuet:
    def test_every_rdm_case_passes(self, scripted):
        got = scripted()
        assert {rdm(c): got[rdm(c)].verdict for c in CASES} == {rdm(c): "pass" for c in CASES}, \
            [(r.case, r.message) for r in got.values() if r.verdict == "fail"]

    def test_a_datagram_in_the_standard_header_passes_and_the_other_dgram_cases_say_why_not(self, scripted):
        got = scripted()
        assert got[dgram(SEND_STD)].verdict == "pass", got[dgram(SEND_STD)].message
        assert {c: (got[dgram(c)].verdict, got[dgram(c)].reason_code, got[dgram(c)].reason) for c in DGRAM_REASONS} == \
            {c: ("not_applicable", *why) for c, why in DGRAM_REASONS.items()}

    def test_cases_about_writes_and_answers_have_no_dgram_instance(self, scripted):
        got = scripted()
        assert [dgram(c) for c in RDM_ONLY if dgram(c) in got] == []
        assert sorted(c for c in got if c.endswith("/dgram")) == sorted(dgram(c) for c in [SEND_STD, *DGRAM_REASONS])

    def test_each_case_names_its_statements(self, scripted):
        got = scripted()
        assert {c: got[rdm(c)].statements for c in CASES} == STATEMENTS

    def test_the_peer_plays_from_the_initiator_side_of_the_namespace_pair(self, scripted):
        note = scripted()[rdm(SEND_STD)].notes["scripted peer"]
        played = re.fullmatch(r"the suite played the initiator from ([\d.]+):(\d+) to ([\d.]+):4794 \(RUD\)", note)
        assert played, note
        assert played[1] != played[3] and int(played[2]) not in (4793, 4794), note


def judged(r) -> str:
    """What a case said of the target. A target a knob keeps silent cannot be told from one the host kept from
    running: on a host that starved the case past its extension the case is an inconclusive error instead of
    a fail (cases/common/claims/liveness.hpp). Either way the knob kept it from passing; a pass stays a pass."""
    return "fail" if inconclusive(r) else r.verdict


class TestFaultKnobs:
    @pytest.mark.parametrize("knob", sorted(KNOB_FAILURES))
    def test_a_knob_fails_exactly_the_cases_of_its_rule_saying_what_the_target_did(self, scripted, knob):
        got = scripted(knob, only="*/rdm")
        expected = KNOB_FAILURES[knob]
        assert {c: judged(got[rdm(c)]) for c in CASES} == {c: "fail" if c in expected else "pass" for c in CASES}
        for case, words in expected.items():
            r = got[rdm(case)]
            assert words in r.message, (case, r.message)
            assert r.blamed_side == ("target" if r.verdict == "fail" else None), (case, r.blamed_side, r.blame_basis)

    def test_a_target_that_never_acknowledges_fails_the_resent_request(self, scripted):
        r = scripted("no_ack", only=rdm(RESENT))[rdm(RESENT)]
        assert (judged(r), r.blamed_side) == ("fail", "target" if r.verdict == "fail" else None)
        assert "the request was not acknowledged: answer 1 did not come: " + NO_ANSWER_TO_FIRST in r.message, r.message


class TestIndependentOfTheInitiator:
    def test_an_initiator_s_fault_changes_no_verdict(self, scripted):
        # own_address_in_request breaks what softuet sends as an initiator (Wire.RequestsAddressTheTargetEndpoint
        # fails with it); the scripted peer sends the requests here, so every case passes all the same.
        got = scripted("own_address_in_request", only="*/rdm")
        assert {rdm(c): got[rdm(c)].verdict for c in CASES} == {rdm(c): "pass" for c in CASES}

    def test_a_cell_whose_initiator_does_not_speak_uet_still_checks_a_uet_target(self, scripted):
        # tcp;ofi_rxm initiating makes every two-process UET case not applicable ("no common wire protocol"); the
        # scripted cases use no initiator provider and judge the softuet target all the same.
        got = scripted(initiator=TCP_RXM, target=SOFTUET, only="*/rdm")
        assert {rdm(c): got[rdm(c)].verdict for c in CASES} == {rdm(c): "pass" for c in CASES}

    def test_a_target_that_does_not_speak_uet_is_not_applicable_naming_it(self, scripted):
        got = scripted(target=TCP_RXM, only="*/rdm")
        reason = ("not applicable: the scripted peer speaks UET and the target, tcp_rxm (tcp;ofi_rxm), does not claim "
                  "UET (!theirs.uet)")
        assert {rdm(c): (got[rdm(c)].verdict, got[rdm(c)].reason_code, got[rdm(c)].reason) for c in CASES} == \
            {rdm(c): ("not_applicable", "not-uet-provider", reason) for c in CASES}
