"""fi_pingpong between the two sides of a namespace pair over softuet, with the traffic captured on side a
and decoded by uet-decode --strict: DGRAM is UUD + UET_DATAGRAM_SEND, RDM is RUD + UET_SEND answered by PDS
ACKs (the ACK of a message's completing packet carries the SES response)."""
import os

import pytest

from softuet_helpers import (decode_strict, header_format_problems, request_key, response_key, run_pingpong,
                             unconfirmed_keys)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

JOB_ID = 291
UET_PORT = 4793
PDS_RUD_REQ, PDS_ROD_REQ, PDS_UUD_REQ, PDS_ACK = 2, 3, 6, 7
UET_SEND, UET_DATAGRAM_SEND = 0x05, 0x07
NEXT_HDR_RESPONSE, UET_RESPONSE, RC_OK = 4, 0x01, 0x01


@pytest.fixture
def env(softuet_env):
    return dict(softuet_env, SOFTUET_JOB_ID=str(JOB_ID))


class TestPingpongDgram:
    def test_dgram_pingpong_is_uud_datagram_send(self, pair, env, tmp_path, cmd_uet_decode):
        pcap = tmp_path / "dgram.pcap"
        client_out, _ = run_pingpong(pair, env, "dgram", 64, 100, pcap)
        assert "=100" in client_out  # 100 sent, 100 acknowledged by the pong
        records = decode_strict(cmd_uet_decode, pcap)
        # 100 pings + 100 pongs of 64 bytes, plus the final "fin" exchange; never fewer than the data.
        data = [r for r in records if r["payload_len"] == 64]
        assert len(data) == 200
        for r in records:
            f = r["fields"]
            assert r["status"] == "uet" and r["diagnostics"] == [], r
            assert r["layers"][-2:] == ["uet.pds.uud", "uet.ses.std"], r
            assert f["uet.pds.type"] == PDS_UUD_REQ
            assert f["uet.ses.opcode"] == UET_DATAGRAM_SEND
            assert f["uet.ses.som"] == 1 and f["uet.ses.eom"] == 1
            assert f["uet.ses.job_id"] == JOB_ID
            assert f["uet.ses.message_id"] != 0
            assert f["uet.ses.resource_index"] >= 1  # RI 0 is reserved
            assert f["uet.ses.request_length"] == r["payload_len"]


def requests_of(records):
    return [r for r in records if r["fields"]["uet.pds.type"] in (PDS_RUD_REQ, PDS_ROD_REQ)]


def first_sends(records):
    """Requests as first sent (retx 0): each PSN of each PDC exactly once on a lossless wire."""
    return [r for r in requests_of(records) if r["fields"]["uet.pds.flags.retx"] == 0]


class TestPingpongRdm:
    def test_rdm_pingpong_is_rud_send_with_acks(self, pair, env, tmp_path, cmd_uet_decode):
        pcap = tmp_path / "rdm.pcap"
        client_out, _ = run_pingpong(pair, env, "rdm", 64, 100, pcap)
        assert "=100" in client_out
        records = decode_strict(cmd_uet_decode, pcap)
        for r in records:
            assert r["status"] == "uet" and r["diagnostics"] == [], r
        requests = requests_of(records)
        acks = [r for r in records if r["fields"]["uet.pds.type"] == PDS_ACK]
        assert len(requests) + len(acks) == len(records)  # nothing else on the wire (no NACK: RUD)
        assert len([r for r in first_sends(records) if r["payload_len"] == 64]) == 200
        # 64-byte messages fit one packet: the small message header (choice small-message-criteria).
        assert header_format_problems(records) == []
        for r in requests:
            f = r["fields"]
            assert r["layers"][-2] == "uet.pds.rud_rod_req", r
            assert f["uet.pds.type"] == PDS_RUD_REQ  # no msg_order asked: RUD (digest G.1)
            assert f["uet.ses.opcode"] == UET_SEND
            assert f["uet.ses.job_id"] == JOB_ID
            assert f.get("uet.ses.message_id", 1) != 0
        by_pdc = {}
        for r in requests:
            f = r["fields"]
            by_pdc.setdefault((f["ip.src"], f["uet.pds.spdcid"]), []).append(f)
        assert len(by_pdc) == 2  # one PDC per direction
        for key, pkts in by_pdc.items():
            firsts = [f for f in pkts if f["uet.pds.flags.retx"] == 0]
            start = firsts[0]["uet.pds.psn"]
            # PSNs increase by one per packet (first sends), modulo 2^32.
            assert [(f["uet.pds.psn"] - start) % 2**32 for f in firsts] == list(range(len(firsts))), key
            # SYN only until the first ACK: a run of SYN packets at the start, none after it.
            syn = [f["uet.pds.flags.syn"] for f in pkts]
            n_syn = syn.index(0)
            assert n_syn >= 1 and syn[n_syn:] == [0] * (len(syn) - n_syn), (key, syn)
            for f in pkts[:n_syn]:
                assert (f["uet.pds.psn"] - f["uet.pds.psn_offset"]) % 2**32 == start  # SYN overlay: Start_PSN
        for r in acks:
            f = r["fields"]
            # The ACK names the PDC of the requests it answers (dpdcid = their spdcid), from their target.
            key = (f["ip.dst"], f["uet.pds.dpdcid"])
            assert key in by_pdc, f
            psns = {p["uet.pds.psn"] for p in by_pdc[key]}
            assert f["uet.pds.cack_psn"] in psns, f
            assert (f["uet.pds.cack_psn"] + f["uet.pds.ack_psn_offset"]) % 2**32 in psns, f
            if f["uet.pds.next_hdr"] == NEXT_HDR_RESPONSE:
                assert r["layers"][-1] == "uet.ses.response"
                assert f["uet.ses.rsp.opcode"] == UET_RESPONSE and f["uet.ses.rsp.return_code"] == RC_OK
                assert f["uet.ses.rsp.job_id"] == JOB_ID
            else:
                assert f["uet.pds.next_hdr"] == 0 and r["layers"][-1] == "uet.pds.ack", r
        # Every message is answered by an SES response (its completing packet's ACK), and the requests'
        # spdcid come back as the ACKs' dpdcid. A retransmitted request is answered again with the response
        # the target kept (the first ACK may have been lost), so a message has one response per copy
        # received, at most, but for the last answers, which the target restates when it closes.
        for (src, spdcid), pkts in by_pdc.items():
            copies = {}
            for f in pkts:
                copies[request_key(f)] = copies.get(request_key(f), 0) + 1
            rsp = {}
            for r in acks:
                f = r["fields"]
                if f["ip.dst"] == src and f["uet.pds.dpdcid"] == spdcid and f["uet.pds.next_hdr"] == NEXT_HDR_RESPONSE:
                    rsp[response_key(f)] = rsp.get(response_key(f), 0) + 1
            assert sorted(rsp) == sorted(copies), (src, spdcid)
            restated = unconfirmed_keys(pkts)
            assert all(rsp[m] <= copies[m] or m in restated for m in rsp), (src, spdcid, rsp, copies)
            # The last PSN of the PDC is acknowledged: every request was delivered.
            last = max(pkts, key=lambda f: (f["uet.pds.psn"] - pkts[0]["uet.pds.psn"]) % 2**32)["uet.pds.psn"]
            assert any(r["fields"]["uet.pds.cack_psn"] == last for r in acks
                       if r["fields"]["ip.dst"] == src and r["fields"]["uet.pds.dpdcid"] == spdcid)

    def test_rdm_segments_large_messages(self, pair, env, tmp_path, cmd_uet_decode):
        # 10000 bytes = 4096 + 4096 + 1808: SOM, middle, EOM packets of one message_id.
        pcap = tmp_path / "rdm-large.pcap"
        client_out, _ = run_pingpong(pair, env, "rdm", 10000, 10, pcap)
        assert "=10" in client_out
        records = decode_strict(cmd_uet_decode, pcap)
        data = [r for r in first_sends(records) if r["fields"]["uet.ses.request_length"] == 10000]
        assert len(data) == 2 * 10 * 3
        a_to_b = [r["fields"] for r in data if r["fields"]["ip.src"] == pair.a.ipv4]
        first = a_to_b[:3]
        assert [f["uet.ses.som"] for f in first] == [1, 0, 0]
        assert [f["uet.ses.eom"] for f in first] == [0, 0, 1]
        assert [f["uet.pds.flags.ar"] for f in first] == [0, 0, 1]  # the last packet asks for the ACK
        assert len({f["uet.ses.message_id"] for f in first}) == 1
        assert [f.get("uet.ses.message_offset") for f in first[1:]] == [4096, 8192]
        assert [f.get("uet.ses.payload_length") for f in first[1:]] == [4096, 1808]
        # The ACK of the packet that completes the message carries the SES response with the whole length
        # (again for each retransmitted copy that arrives later: the target answers duplicates with it).
        rsp = [r["fields"] for r in records if r["fields"]["uet.pds.type"] == PDS_ACK
               and r["fields"]["uet.pds.next_hdr"] == NEXT_HDR_RESPONSE
               and r["fields"].get("uet.ses.rsp.message_id") == first[0]["uet.ses.message_id"]
               and r["fields"]["ip.src"] == pair.b.ipv4]
        copies = [r for r in requests_of(records) if r["fields"]["ip.src"] == pair.a.ipv4
                  and r["fields"].get("uet.ses.message_id") == first[0]["uet.ses.message_id"]]
        assert 1 <= len(rsp) <= len(copies) - 2, (len(rsp), len(copies))
        assert {f["uet.ses.rsp.modified_length"] for f in rsp} == {10000}

