"""decode_record (codec/DECODE-OUTPUT.md): encapsulations, diagnostics, bounds, status,
uncertain map, the command line, and robustness against random and mutated frames."""

import json
import os
import random
import subprocess
import sys

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, CookedLinux, CookedLinuxV2, Dot1Q, Ether
from scapy.packet import Padding, Raw

from scapy_frames import (GOLDEN, IP6_A, IP_A, IP_B, MAC_A, MAC_B, ROOT, decode, diag_set,
                      eth_ip6_udp, eth_ip_udp)
from scapy_uet import (UET_ENTROPY, UET_PDS_ACK, UET_PDS_ACK_CC, UET_PDS_RUD_ROD_REQ,
                       UET_PDS_UUD, UET_SES_ATOMIC, UET_SES_RESPONSE_DATA, UET_SES_STD,
                       UET_TSS, bind_uet_port, unbind_uet_port)
from scapy_uet.pcapio import read_frames, write_pcap, write_pcapng_ns
from scapy_uet.record import _strict_decode, decode_record

UET_REQ = UET_PDS_RUD_ROD_REQ(psn=1) / UET_SES_STD(message_id=1)
RECORD_KEYS = ["caplen", "len", "status", "layers", "fields", "payload_len", "diagnostics", "uncertain",
               "confidence"]


class TestEncapsulation:
    def test_ethernet_ipv4_udp_fields(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B, tos=0xBA, ttl=9,
                                                      id=0x1234, flags=2) /
                     UDP(sport=0xC001, dport=4793) / UET_REQ)
        f = rec["fields"]
        assert list(rec) == RECORD_KEYS
        assert (f["eth.dst"], f["eth.src"], f["eth.type"]) == (MAC_B, MAC_A, 0x0800)
        assert (f["ip.dsfield.dscp"], f["ip.dsfield.ecn"]) == (46, 2)
        assert (f["ip.ttl"], f["ip.id"], f["ip.flags"], f["ip.proto"]) == (9, 0x1234, 2, 17)
        assert (f["ip.src"], f["ip.dst"]) == (IP_A, IP_B)
        assert (f["udp.srcport"], f["udp.dstport"], f["udp.length"]) == (0xC001, 4793, 64)
        assert rec["layers"] == ["eth", "ip", "udp", "uet.pds.rud_rod_req", "uet.ses.std"]
        assert rec["status"] == "uet"

    def test_ipv6_text_is_rfc5952(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) /
                     IPv6(src="2001:0db8:0000:0000:0000:0000:0000:0001", dst="2001:db8:0:1::2",
                          tc=0xB9, fl=0xABCDE, hlim=7) / UDP(dport=4793) / UET_REQ)
        f = rec["fields"]
        assert (f["ipv6.src"], f["ipv6.dst"]) == (IP6_A, "2001:db8:0:1::2")
        assert (f["ipv6.tclass.dscp"], f["ipv6.tclass.ecn"], f["ipv6.flow"]) == (46, 1, 0xABCDE)
        assert (f["ipv6.nxt"], f["ipv6.hlim"], f["ipv6.plen"]) == (17, 7, 64)

    def test_vlan(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) / Dot1Q(prio=5, id=1, vlan=100) /
                     IP(src=IP_A, dst=IP_B) / UDP(dport=4793) / UET_REQ)
        f = rec["fields"]
        assert (f["vlan.priority"], f["vlan.dei"], f["vlan.id"], f["vlan.etype"]) == \
            (5, 1, 100, 0x0800)
        assert rec["layers"][:3] == ["eth", "vlan", "ip"]

    def test_linux_sll(self):
        pkt = CookedLinux(pkttype=4, lladdrtype=1, lladdrlen=6, src=b"\x02\0\0\0\0\x01\0\0") / \
            IP(src=IP_A, dst=IP_B) / UDP(dport=4793) / UET_REQ
        rec = decode(pkt, linktype=113)
        f = rec["fields"]
        assert rec["layers"][0] == "sll"
        assert (f["sll.pkttype"], f["sll.hatype"], f["sll.halen"], f["sll.etype"]) == \
            (4, 1, 6, 0x0800)
        assert f["sll.src"] == "0200000000010000"

    def test_linux_sll2(self):
        pkt = CookedLinuxV2(ifindex=3, lladdrtype=1, pkttype=0, lladdrlen=6,
                            src=b"\x02\0\0\0\0\x01\0\0") / IPv6(src=IP6_A, dst=IP6_A) / \
            UDP(dport=4793) / UET_REQ
        rec = decode(pkt, linktype=276)
        f = rec["fields"]
        assert rec["layers"][:2] == ["sll2", "ipv6"]
        assert (f["sll.etype"], f["sll.ifindex"], f["sll.reserved"]) == (0x86DD, 3, 0)

    @pytest.mark.parametrize("linktype", [101, 12, 228])
    def test_raw_ipv4(self, linktype):
        rec = decode(IP(src=IP_A, dst=IP_B) / UDP(dport=4793) / UET_REQ, linktype=linktype)
        assert rec["layers"][0] == "ip" and rec["status"] == "uet"

    @pytest.mark.parametrize("linktype", [101, 229])
    def test_raw_ipv6(self, linktype):
        rec = decode(IPv6(src=IP6_A, dst=IP6_A) / UDP(dport=4793) / UET_REQ, linktype=linktype)
        assert rec["layers"][0] == "ipv6" and rec["status"] == "uet"

    def test_ethernet_padding_is_trimmed(self):
        rec = decode(eth_ip_udp() / UET_PDS_UUD() / Padding(load=b"\xAA" * 14))
        assert rec["payload_len"] == 0
        assert rec["diagnostics"] == []

    def test_non_uet(self):
        arp = Ether(src=MAC_A, dst=MAC_B) / ARP(hwsrc=MAC_A, psrc=IP_A, hwdst=MAC_B, pdst=IP_B)
        rec = decode(arp)
        assert (rec["status"], rec["layers"], rec["payload_len"]) == ("non-uet", ["eth"], 28)
        tcp = Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B) / TCP(dport=4793)
        assert decode(tcp)["status"] == "non-uet"
        other = eth_ip_udp(dport=4791) / Raw(bytes(20))
        rec = decode(other)
        assert (rec["status"], rec["payload_len"]) == ("non-uet", 20)
        assert not any(k.startswith("uet") for k in rec["fields"])

    def test_other_udp_port(self):
        pkt = eth_ip_udp(dport=4800) / UET_REQ
        assert decode(pkt)["status"] == "non-uet"
        rec = decode(pkt, port=4800)
        assert rec["status"] == "uet" and rec["layers"][-1] == "uet.ses.std"
        assert decode(eth_ip_udp() / UET_REQ, port=4800)["status"] == "non-uet"

    def test_scapy_port_binding_helper(self):
        raw = bytes(eth_ip_udp(dport=4800) / UET_REQ)
        assert not Ether(raw).haslayer(UET_SES_STD)
        bind_uet_port(4800)
        try:
            assert Ether(raw).haslayer(UET_SES_STD)
        finally:
            unbind_uet_port(4800)
        assert not Ether(raw).haslayer(UET_SES_STD)

    def test_unknown_linktype_is_not_uet(self):
        rec = decode_record(b"\x00" * 20, 999, 20, 20)
        assert (rec["status"], rec["layers"], rec["payload_len"]) == ("non-uet", [], 20)


class TestDiagnostics:
    def test_truncated_header_contributes_no_fields(self):
        raw = bytes(eth_ip_udp() / UET_REQ)
        rec = decode_record(raw[:-10], 1, len(raw) - 10, len(raw))
        assert diag_set(rec) == {("truncated", "uet.ses.std", None)}
        assert not any(k.startswith("uet.ses") for k in rec["fields"])
        assert "uet.ses.std" not in rec["layers"]
        assert rec["payload_len"] == 34           # bytes after the last decoded header
        assert rec["status"] == "malformed"

    def test_truncated_keeps_checks_of_complete_first_piece(self):
        raw = bytes(eth_ip_udp() / UET_PDS_RUD_ROD_REQ() / UET_SES_STD(opcode=0x11, rsvd_op=1))
        rec = decode_record(raw[:-20], 1, len(raw) - 20, len(raw))
        assert diag_set(rec) == {("truncated", "uet.ses.std", None),
                                 ("reserved_nonzero", "uet.ses.std", None),
                                 ("unknown_value", "uet.ses.std", "uet.ses.opcode")}

    def test_pds_type_emitted_from_one_byte(self):
        rec = decode(eth_ip_udp() / Raw(b"\x10"))
        assert rec["fields"]["uet.pds.type"] == 2
        assert diag_set(rec) == {("truncated", "uet.pds.rud_rod_req", None)}

    def test_empty_udp_payload_to_uet_port(self):
        rec = decode(eth_ip_udp())
        assert diag_set(rec) == {("truncated", "uet", None)}
        assert rec["layers"] == ["eth", "ip", "udp"]

    def test_short_ethernet(self):
        rec = decode_record(b"\x02" * 10, 1, 10, 10)
        assert diag_set(rec) == {("truncated", "eth", None)}
        assert (rec["layers"], rec["fields"], rec["payload_len"]) == ([], {}, 10)

    def test_bad_ihl_keeps_the_ip_fields_and_stops(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B, ihl=4) /
                     UDP(dport=4793) / UET_PDS_UUD())
        assert diag_set(rec) == {("invalid_value", "ip", "ip.ihl")}
        assert rec["layers"] == ["eth", "ip"]
        assert rec["fields"]["ip.ihl"] == 4 and "udp.dstport" not in rec["fields"]

    def test_ip_version_mismatch_goes_on(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B, type=0x0800) / IP(src=IP_A, dst=IP_B,
                                                                   version=6) /
                     UDP(dport=4793) / UET_PDS_UUD())
        assert diag_set(rec) == {("invalid_value", "ip", "ip.version")}
        assert rec["layers"][-1] == "uet.pds.uud"

    def test_ip_len_smaller_than_header_stops(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B, len=19) /
                     UDP(dport=4793) / UET_PDS_UUD())
        assert diag_set(rec) == {("inconsistent_length", "ip", "ip.len")}
        assert rec["layers"] == ["eth", "ip"]

    def test_ip_len_larger_than_frame(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B, len=200) /
                     UDP(dport=4793) / UET_PDS_UUD())
        assert diag_set(rec) == {("inconsistent_length", "ip", "ip.len")}
        assert rec["layers"][-1] == "uet.pds.uud"

    def test_bounds_larger_than_capture_is_not_a_diagnostic_when_snapped(self):
        pkt = eth_ip_udp() / UET_REQ / Raw(bytes(100))
        rec = decode(pkt, snap=len(bytes(pkt)) - 50)
        assert rec["diagnostics"] == [] and rec["status"] == "uet"
        assert rec["payload_len"] == 50

    def test_udp_length_trims(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B) /
                     UDP(dport=4793, len=8 + 4) / UET_PDS_UUD() / Raw(b"abcd"))
        assert rec["diagnostics"] == []
        assert rec["payload_len"] == 0

    def test_udp_length_smaller_than_header(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B) /
                     UDP(dport=4793, len=7) / UET_PDS_UUD())
        assert diag_set(rec) == {("inconsistent_length", "udp", "udp.length")}
        assert rec["layers"] == ["eth", "ip", "udp"]

    def test_ipv6_plen_larger_than_frame(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) / IPv6(src=IP6_A, dst=IP6_A, plen=1000) /
                     UDP(dport=4793) / UET_PDS_UUD())
        assert diag_set(rec) == {("inconsistent_length", "ipv6", "ipv6.plen")}

    def test_payload_length_counts_after_extension_headers(self):
        rec = decode(eth_ip_udp() / UET_PDS_RUD_ROD_REQ() /
                     UET_SES_STD(opcode=3, som=0, payload_length=12) / UET_SES_ATOMIC() /
                     Raw(bytes(8)))
        assert diag_set(rec) == {("inconsistent_length", "uet.ses.std",
                                  "uet.ses.payload_length")}
        assert rec["payload_len"] == 8

    def test_unknown_value_reported_once_per_field(self):
        rec = decode(eth_ip_udp() / UET_PDS_ACK(next_hdr=9) / UET_PDS_ACK_CC() / Raw(bytes(8)))
        kinds = [(d["kind"], d["field"]) for d in rec["diagnostics"]]
        assert kinds == [("unknown_value", "uet.pds.next_hdr")]

    def test_diagnostic_record_shape(self):
        rec = decode(eth_ip_udp() / UET_PDS_RUD_ROD_REQ(rsvd_f6=1))
        (d,) = rec["diagnostics"]
        assert set(d) == {"kind", "header", "field", "offset", "message"}
        assert d["offset"] == 14 + 20 + 8 + 1
        assert isinstance(d["message"], str) and d["message"]

    def test_entropy_reserved(self):
        rec = decode(Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B) /
                     UET_ENTROPY(rsvd=1) / UET_PDS_UUD())
        assert diag_set(rec) == {("reserved_nonzero", "uet.entropy", None)}


class TestUncertain:
    def test_plain_frame_has_no_uncertain_field(self):
        assert decode(eth_ip_udp() / UET_REQ)["uncertain"] == {}

    def test_uncertain_fields_are_emitted_fields(self):
        rec = decode(eth_ip_udp() / UET_TSS(sp=1) / Raw(bytes(20)))
        assert set(rec["uncertain"]) == {k for k in rec["fields"] if k.startswith("uet.tss")}

    def test_field_choice_beats_node_choice(self):
        from scapy_uet import UET_PDS_ACK_CCX
        rec = decode(eth_ip_udp() / UET_PDS_ACK() / UET_PDS_ACK_CCX())
        u = rec["uncertain"]
        assert u["uet.pds.sack_psn_offset"] == "sack-psn-offset-signed"
        assert u["uet.pds.mpr"] == "ccx-state-size"
        assert u["uet.pds.cc_flags"] == "ack-ccx-type"
        assert "uet.pds.cack_psn" not in u

    def test_response_data_payload_length(self):
        rec = decode(eth_ip_udp() / UET_PDS_ACK() / UET_SES_RESPONSE_DATA())
        assert rec["uncertain"] == {"uet.ses.rsp.payload_length": "response-data-payload-length"}


class TestCli:
    def run(self, *args):
        return subprocess.run([sys.executable, "-m", "scapy_uet"] + list(args), cwd=ROOT,
                              capture_output=True, text=True, timeout=120)

    def test_pcap_output(self, tmp_path):
        frames = [bytes(eth_ip_udp() / UET_REQ), bytes(eth_ip_udp(dport=53) / Raw(b"q"))]
        path = tmp_path / "t.pcap"
        write_pcap(str(path), 1, [(1700000000, 5, frames[0], len(frames[0])),
                                  (1700000001, 6, frames[1][:30], len(frames[1]))])
        res = self.run(str(path))
        assert res.returncode == 0, res.stderr
        lines = [json.loads(x) for x in res.stdout.splitlines()]
        assert [x["frame"] for x in lines] == [1, 2]
        assert lines[0]["ts"] == "1700000000.000005"
        assert list(lines[0])[:4] == ["frame", "ts", "caplen", "len"]
        assert (lines[1]["caplen"], lines[1]["len"]) == (30, len(frames[1]))
        assert lines[0]["status"] == "uet"

    def test_pcapng_nanoseconds_and_port(self, tmp_path):
        frame = bytes(eth_ip6_udp(dport=4800) / UET_REQ)
        path = tmp_path / "t.pcapng"
        write_pcapng_ns(str(path), 1, [(1700000000, 123456789, frame, len(frame))])
        res = self.run(str(path), "--port", "4800")
        assert res.returncode == 0, res.stderr
        rec = json.loads(res.stdout)
        assert rec["ts"] == "1700000000.123456789"
        assert rec["status"] == "uet"

    def test_tss_conf_offset_decodes_the_clear_text(self, tmp_path):
        frame = bytes(eth_ip_udp() / UET_TSS(sdi=5) / UET_REQ / Raw(bytes(16)))
        path = tmp_path / "t.pcap"
        write_pcap(str(path), 1, [(1700000000, 5, frame, len(frame))])
        plain = json.loads(self.run(str(path)).stdout)
        clear = json.loads(self.run(str(path), "--tss-conf-offset", "200").stdout)
        assert plain["layers"][-1] == "uet.tss" and plain["payload_len"] == len(bytes(UET_REQ)) + 16
        assert clear["layers"][-3:] == ["uet.tss", "uet.pds.rud_rod_req", "uet.ses.std"]
        assert clear["fields"]["uet.pds.psn"] == 1 and clear["payload_len"] == 16

    @pytest.mark.parametrize("args", [["--tss-conf-offset", "-1"], ["--tss-conf-offset", "x"],
                                      ["--spec-version", "1.0.2"]])
    def test_bad_options_are_usage_errors(self, tmp_path, args):
        path = tmp_path / "t.pcap"
        write_pcap(str(path), 1, [])
        res = self.run(str(path), *args)
        assert res.returncode == 2 and args[0] in res.stderr

    def test_missing_file(self, tmp_path):
        res = self.run(str(tmp_path / "nope.pcap"))
        assert res.returncode != 0
        assert "cannot read" in res.stderr and "nope.pcap" in res.stderr
        assert res.stdout == ""

    def test_not_a_capture(self, tmp_path):
        path = tmp_path / "x.pcap"
        path.write_bytes(b"hello world, not a pcap")
        res = self.run(str(path))
        assert res.returncode != 0
        assert "not a pcap or pcapng file" in res.stderr


class TestRobustness:
    LINKTYPES = [1, 101, 12, 228, 229, 113, 276, 0, 147]

    def check(self, frame, linktype, caplen, wirelen, port=4793):
        rec = _strict_decode(frame, linktype, caplen, wirelen, port)   # raises on a bug
        segments = rec.get("segments", [])
        assert list(rec) == RECORD_KEYS + (["gso", "segments"] if segments else [])
        assert (rec["status"] == "malformed") == any(r["diagnostics"] for r in [rec] + segments)
        for r in [rec] + segments:
            assert r["payload_len"] >= 0
            assert set(r["uncertain"]) <= set(r["fields"])
        json.dumps(rec)
        return rec

    def test_random_frames(self):
        rnd = random.Random(20261122)
        for _ in range(2500):
            n = rnd.choice([0, 1, 2, 13, 14, 15, 33, 42, rnd.randint(0, 200)])
            frame = bytes(rnd.getrandbits(8) for _ in range(n))
            lt = rnd.choice(self.LINKTYPES)
            wirelen = n if rnd.random() < 0.7 else n + rnd.randint(1, 100)
            self.check(frame, lt, n, wirelen)

    def test_random_uet_payloads(self):
        rnd = random.Random(7)
        head = eth_ip_udp()
        for _ in range(1500):
            n = rnd.randint(0, 120)
            body = bytearray(rnd.getrandbits(8) for _ in range(n))
            if body and rnd.random() < 0.8:
                body[0] = (rnd.randint(1, 14) << 3) | (body[0] & 7)
            frame = bytes(head / Raw(bytes(body)))
            self.check(frame, 1, len(frame), len(frame))

    def test_mutated_golden_frames(self):
        frames = []
        for name in sorted(os.listdir(GOLDEN)):
            if name.endswith((".pcap", ".pcapng")):
                frames.extend(read_frames(os.path.join(GOLDEN, name)))
        assert frames
        rnd = random.Random(42)
        for _ in range(2500):
            f = rnd.choice(frames)
            data = bytearray(f.data)
            op = rnd.random()
            if data and op < 0.5:
                for _ in range(rnd.randint(1, 4)):
                    data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
            elif data and op < 0.8:
                data = data[:rnd.randrange(len(data))]
            else:
                pos = rnd.randrange(len(data) + 1)
                data[pos:pos] = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 8)))
            data = bytes(data)
            self.check(data, f.linktype, len(data), rnd.choice([len(data), f.wirelen]),
                       rnd.choice([4793, 4800]))

    def test_public_entry_point_never_raises_on_odd_arguments(self):
        for args in ((b"", 1, 0, 0), (bytearray(b"\x45"), 101, 1, 1),
                     (memoryview(b"\x60" + bytes(50)), 229, 51, 51), (b"\0" * 8, 1, None, None)):
            rec = decode_record(*args)
            assert list(rec) == RECORD_KEYS
