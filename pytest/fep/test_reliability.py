"""RDM reliability (softuet milestone 2): fi_pingpong across a namespace pair whose two sides each drop 10 %
of the UET frames they send (nftables, containers/). fi_pingpong -c checks every payload; the capture on
side a proves the retransmission path ran and that no message was delivered twice."""
import collections
import os

import pytest

from harness.run.fabtests import run_pair
from softuet_helpers import decode_strict, fabtest, request_key, response_key, unconfirmed_keys

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

JOB_ID = 292
UET_PORT = 4793
LOSS_PERCENT = 10
PDS_RUD_REQ, PDS_ROD_REQ, PDS_ACK = 2, 3, 7
NEXT_HDR_RESPONSE, RC_OK = 4, 0x01


@pytest.fixture
def env(softuet_env):
    return dict(softuet_env, SOFTUET_JOB_ID=str(JOB_ID))


def lossy_pingpong(pair, env, tmp_path, cmd_uet_decode, size, iterations):
    pcap = tmp_path / f"loss-{size}.pcap"
    argv = [fabtest("fi_pingpong"), "-p", "softuet", "-e", "rdm", "-S", str(size), "-I", str(iterations), "-c"]
    with pair.capture("a", str(pcap), filter=f"udp port {UET_PORT}"):
        pair.impair("a", loss_percent=LOSS_PERCENT, udp_dport=UET_PORT)
        pair.impair("b", loss_percent=LOSS_PERCENT, udp_dport=UET_PORT)
        run = run_pair(pair, argv, env=env, timeout=120)
    assert run.ok, run.describe()
    assert f"={iterations}" in run.client_output, run.describe()
    return decode_strict(cmd_uet_decode, pcap)


def check_reliability(records, iterations, packets_per_message):
    requests = [r["fields"] for r in records if r["fields"]["uet.pds.type"] == PDS_RUD_REQ]
    acks = [r["fields"] for r in records if r["fields"]["uet.pds.type"] == PDS_ACK]
    assert len(requests) + len(acks) == len(records)  # RUD: requests and ACKs only, no NACK
    retx = [f for f in requests if f["uet.pds.flags.retx"] == 1]
    # With 10 % loss each way over >= 1000 packets, the odds of no retransmission are nil (0.9^1000).
    assert retx, "no retransmitted request in the capture"
    for f in retx:
        assert f["uet.pds.flags.ar"] == 1  # a retransmission asks for a prompt ACK
    # Seen from the wire: every message of each direction is answered by an SES response, and by more
    # than one only when copies of it arrived again (the target answers a retransmission with the
    # response it kept, since the first ACK may be the one that was lost), or when its initiator had not
    # confirmed the answer when the target closed (which restates it).
    responses = collections.Counter((f["ip.src"], response_key(f)) for f in acks
                                    if f["uet.pds.next_hdr"] == NEXT_HDR_RESPONSE)
    copies = collections.Counter((f["ip.dst"], request_key(f)) for f in requests)
    assert responses and set(responses) <= set(copies), set(responses) - set(copies)
    pdcs = collections.defaultdict(list)
    for f in requests:
        pdcs[(f["ip.dst"], f["uet.pds.spdcid"])].append(f)
    restated = {(target, key) for (target, _), pkts in pdcs.items() for key in unconfirmed_keys(pkts)}
    assert all(n <= copies[key] or key in restated for key, n in responses.items()), responses.most_common(3)
    for f in acks:
        if f["uet.pds.next_hdr"] == NEXT_HDR_RESPONSE:
            assert f["uet.ses.rsp.return_code"] == RC_OK and f["uet.ses.rsp.job_id"] == JOB_ID
    # Data messages of one direction: `iterations` pings (a -> b), each of `packets_per_message` packets.
    pings = {(f["ip.dst"], request_key(f)) for f in requests if f["uet.ses.request_length"] > 64}
    assert len(pings) >= iterations  # pings a sent that reached the wire, and pongs b's survivors
    print(f"frames={len(records)} requests={len(requests)} retransmitted={len(retx)} acks={len(acks)} "
          f"ses_responses={sum(responses.values())}")


class TestRdmUnderLoss:
    @pytest.mark.requirements("2.2.6-b")
    def test_single_packet_messages_survive_loss(self, pair, env, tmp_path, cmd_uet_decode):
        records = lossy_pingpong(pair, env, tmp_path, cmd_uet_decode, 1024, 500)
        check_reliability(records, 500, 1)

    @pytest.mark.requirements("2.2.6-b")
    def test_multi_packet_messages_survive_loss(self, pair, env, tmp_path, cmd_uet_decode):
        # 10000 bytes = 3 packets per message: reassembly with lost and retransmitted segments.
        records = lossy_pingpong(pair, env, tmp_path, cmd_uet_decode, 10000, 200)
        check_reliability(records, 200, 3)


class TestRodSelection:
    """fi_flood -v asks for message ordering (tx_attr->msg_order), which selects ROD (digest G.1)."""

    def flood(self, pair, env, tmp_path, cmd_uet_decode, loss=0):
        if loss:
            for side in ("a", "b"):
                pair.impair(side, loss_percent=loss, udp_dport=UET_PORT)
        pcap = tmp_path / "flood.pcap"
        with pair.capture("a", pcap):
            run = run_pair(pair, ["fi_flood", "-p", "softuet", "-v", "-I", "100"], env=env, timeout=120)
        assert run.ok, run.describe()
        return [r["fields"] for r in decode_strict(cmd_uet_decode, pcap)]

    @pytest.mark.requirements("2.2.6-c", "2.2.6-d")
    def test_msg_order_selects_rod(self, pair, env, tmp_path, cmd_uet_decode):
        fields = self.flood(pair, env, tmp_path, cmd_uet_decode)
        types = {f["uet.pds.type"] for f in fields}
        assert types == {PDS_ROD_REQ, PDS_ACK}, types

    @pytest.mark.requirements("2.2.6-c")
    def test_rod_delivers_under_loss(self, pair, env, tmp_path, cmd_uet_decode):
        fields = self.flood(pair, env, tmp_path, cmd_uet_decode, loss=LOSS_PERCENT)
        requests = [f for f in fields if f["uet.pds.type"] == PDS_ROD_REQ]
        assert requests and all(f["uet.pds.type"] in (PDS_ROD_REQ, PDS_ACK, 10) for f in fields)
        assert any(f["uet.pds.flags.retx"] for f in requests), "the loss made softuet retransmit"
