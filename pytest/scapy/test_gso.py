"""UDP GSO super-datagrams in the Scapy record (scapy_uet/gso.py, codec/DECODE-OUTPUT.md "GSO runs"): one
datagram holding several UET packets at the stride of the first, decoded packet by packet."""

from scapy.layers.l2 import Ether
from scapy.layers.inet import IP
from scapy.packet import Raw

from scapy_frames import decode, diag_set, eth_ip6_udp, eth_ip_udp
from scapy_uet import UET_ENTROPY, UET_PDS_ACK, UET_PDS_CP, UET_PDS_NACK, UET_PDS_RUD_ROD_REQ, UET_SES_STD


def send(psn, length, **ses):
    """A SOM=0 SEND of `length` payload bytes, payload_length given (the bytes after it are not its payload)."""
    ses.setdefault("payload_length", length)
    return bytes(UET_PDS_RUD_ROD_REQ(psn=psn) / UET_SES_STD(som=0, **ses) / Raw(bytes(range(length))))


def ack(psn):
    return bytes(UET_PDS_ACK(cack_psn=psn))


def datagram(*packets, head=eth_ip_udp):
    return head() / Raw(b"".join(packets))


UET_AT = len(eth_ip_udp())   # where the UDP payload begins


class TestRuns:
    def test_three_segments_the_last_shorter(self):
        packets = [send(1, 32), send(2, 32), send(3, 20)]
        stride = len(packets[0])
        rec = decode(datagram(*packets))
        assert rec["status"] == "uet" and rec["diagnostics"] == []
        assert rec["gso"] == {"segment": 0, "offset": UET_AT, "stride": stride, "count": 3}
        assert rec["fields"]["uet.pds.psn"] == 1 and rec["payload_len"] == 32
        for i, seg in enumerate(rec["segments"], 1):
            assert seg["gso"] == {"segment": i, "offset": UET_AT + i * stride, "stride": stride}
            assert seg["status"] == "uet"
            assert seg["layers"] == ["uet.pds.rud_rod_req", "uet.ses.std"]
            assert seg["fields"]["uet.pds.psn"] == i + 1
        assert [s["payload_len"] for s in rec["segments"]] == [32, 20]

    def test_segment_offsets_are_frame_relative(self):
        """A diagnostic of a later segment names its byte in the frame, not in the segment."""
        packets = [send(1, 16), send(2, 16, rsvd_pl=1)]
        rec = decode(datagram(*packets))
        [seg] = rec["segments"]
        assert rec["status"] == "malformed" and rec["diagnostics"] == []
        assert diag_set(seg) == {("reserved_nonzero", "uet.ses.std", None)}
        assert seg["diagnostics"][0]["offset"] >= seg["gso"]["offset"] > UET_AT

    def test_acks_over_ipv6(self):
        rec = decode(datagram(ack(1), ack(2), ack(3), head=eth_ip6_udp))
        assert rec["gso"]["count"] == 3 and rec["gso"]["stride"] == len(ack(1))
        assert [s["fields"]["uet.pds.cack_psn"] for s in rec["segments"]] == [2, 3]

    def test_bytes_after_the_run_stay_trailing(self):
        packets = [send(1, 32), send(2, 32)]
        junk = b"\xff" * 30
        rec = decode(datagram(*packets, junk))
        assert rec["gso"]["count"] == 2
        assert diag_set(rec) == {("trailing_bytes", "uet.ses.std", "uet.ses.payload_length")}
        assert rec["diagnostics"][0]["offset"] == UET_AT + 2 * len(packets[0])


class TestNoRun:
    def test_a_garbage_second_segment_is_trailing_bytes(self):
        first = send(1, 32)
        rec = decode(datagram(first, bytes(len(first))))
        assert "gso" not in rec and "segments" not in rec
        assert diag_set(rec) == {("trailing_bytes", "uet.ses.std", "uet.ses.payload_length")}
        assert rec["diagnostics"][0]["offset"] == UET_AT + len(first)

    def test_a_single_packet_is_unchanged(self):
        rec = decode(datagram(send(1, 32)))
        assert rec["status"] == "uet" and "gso" not in rec and rec["payload_len"] == 32

    def test_another_header_layout_of_the_same_length_is_no_segment(self):
        nack, cp = bytes(UET_PDS_NACK(nack_code=1)), bytes(UET_PDS_CP(ctl_type=1))
        assert len(nack) == len(cp)
        rec = decode(datagram(nack, cp))
        assert "gso" not in rec and diag_set(rec) == {("trailing_bytes", "uet.pds.nack", None)}

    def test_a_segment_its_lengths_do_not_fill_is_no_segment(self):
        first = send(1, 32)
        rec = decode(datagram(first, send(2, 20, payload_length=32)))
        assert "gso" not in rec and rec["status"] == "malformed"

    def test_uet_over_ip_has_no_gso(self):
        frame = Ether() / IP(proto=253) / UET_ENTROPY(entropy=1) / Raw(ack(1) + ack(2))
        rec = decode(frame)
        assert "gso" not in rec and diag_set(rec) == {("trailing_bytes", "uet.pds.ack", None)}

    def test_a_capture_cut_in_the_last_segment_keeps_the_run(self):
        packets = [send(1, 32), send(2, 32), send(3, 32)]
        frame = datagram(*packets)
        rec = decode(frame, snap=len(frame) - 10)
        assert rec["status"] == "uet" and rec["gso"]["count"] == 3
        assert rec["segments"][-1]["payload_len"] == 22
