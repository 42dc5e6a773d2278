"""PDS layers (digest I.5), entropy header (I.1) and TSS (I.6, choice tss-layout):
build -> bytes against a hand-written hex string of the digest layout -> dissect -> record."""

from scapy.packet import Raw

from scapy_frames import decode, diag_set, eth_ip_udp, hexb
from scapy_uet import (UET, UET_ENTROPY, UET_PDS_ACK, UET_PDS_ACK_CC, UET_PDS_ACK_CCX,
                       UET_PDS_CP, UET_PDS_NACK, UET_PDS_NACK_CCX, UET_PDS_REQ_CC,
                       UET_PDS_RUD_ROD_REQ, UET_PDS_RUDI, UET_PDS_UUD, UET_SES_RESPONSE,
                       UET_SES_STD, UET_TSS)


def uet_fields(rec):
    return {k: v for k, v in rec["fields"].items() if k.startswith("uet.")}


class TestPdsRequest:
    RUD = hexb("1198 fffe 01020304 0a0b 0c0d")

    def test_rud_build_bytes(self):
        pkt = UET_PDS_RUD_ROD_REQ(type=2, next_hdr=3, retx=1, ar=1, clear_psn_offset=-2,
                                  psn=0x01020304, spdcid=0x0A0B, dpdcid=0x0C0D)
        assert bytes(pkt) == self.RUD

    def test_rud_dissect(self):
        pkt = UET(self.RUD)
        assert isinstance(pkt, UET_PDS_RUD_ROD_REQ)
        assert (pkt.type, pkt.next_hdr, pkt.retx, pkt.ar, pkt.syn) == (2, 3, 1, 1, 0)
        assert pkt.clear_psn_offset == -2
        assert (pkt.psn, pkt.spdcid, pkt.dpdcid) == (0x01020304, 0x0A0B, 0x0C0D)

    def test_type_and_next_hdr_filled_from_following_layers(self):
        assert bytes(UET_PDS_RUD_ROD_REQ() / UET_SES_STD())[:2] == hexb("1180")
        assert bytes(UET_PDS_RUD_ROD_REQ())[:2] == hexb("1000")
        assert bytes(UET_PDS_RUD_ROD_REQ(type=3))[:2] == hexb("1800")
        cc = UET_PDS_RUD_ROD_REQ() / UET_PDS_REQ_CC() / UET_SES_STD()
        assert bytes(cc)[:2] == hexb("6980")   # type 13, next_hdr 3 (past the CC extension)

    def test_syn_overlay(self):
        pkt = UET_PDS_RUD_ROD_REQ(type=3, next_hdr=0, syn=1, use_rsv_pdc=1, psn_offset=0x123,
                                  psn=7, spdcid=1)
        raw = hexb("1804 0000 00000007 0001 8123")
        assert bytes(pkt) == raw
        back = UET(raw)
        assert (back.use_rsv_pdc, back.psn_offset) == (1, 0x123)
        rec = decode(eth_ip_udp() / pkt)
        assert rec["fields"]["uet.pds.use_rsv_pdc"] == 1
        assert rec["fields"]["uet.pds.psn_offset"] == 0x123
        assert "uet.pds.dpdcid" not in rec["fields"]
        assert rec["fields"]["uet.pds.flags"] == 0x04

    def test_rud_cc_request(self):
        pkt = UET_PDS_RUD_ROD_REQ(type=13, psn=11) / UET_PDS_REQ_CC(
            ccc_id=7, credit_target=0x010203)
        raw = hexb("6800 0000 0000000b 0000 0000 07 010203")
        assert bytes(pkt) == raw
        back = UET(raw)
        assert back[UET_PDS_REQ_CC].ccc_id == 7
        assert back[UET_PDS_REQ_CC].credit_target == 0x010203

    def test_record_names_and_layers(self):
        rec = decode(eth_ip_udp() / UET_PDS_RUD_ROD_REQ(type=14, psn=5) /
                     UET_PDS_REQ_CC(ccc_id=1, credit_target=2) / UET_SES_STD(message_id=9))
        assert rec["status"] == "uet"
        assert rec["layers"][3:] == ["uet.pds.rud_rod_req", "uet.pds.req_cc", "uet.ses.std"]
        f = rec["fields"]
        assert (f["uet.pds.type"], f["uet.pds.next_hdr"], f["uet.pds.psn"]) == (14, 3, 5)
        assert (f["uet.pds.ccc_id"], f["uet.pds.credit_target"]) == (1, 2)

    def test_rud_with_next_hdr_none(self):
        """Without a SES header the packet ends with the PDS header: what follows trails it."""
        assert decode(eth_ip_udp() / UET_PDS_RUD_ROD_REQ(next_hdr=0))["status"] == "uet"
        rec = decode(eth_ip_udp() / UET_PDS_RUD_ROD_REQ(next_hdr=0) / Raw(b"abc"))
        assert rec["layers"][-1] == "uet.pds.rud_rod_req"
        assert rec["payload_len"] == 0
        assert diag_set(rec) == {("trailing_bytes", "uet.pds.rud_rod_req", None)}
        assert rec["diagnostics"][0]["offset"] == 42 + 12

    def test_reserved_flag_bits(self):
        rec = decode(eth_ip_udp() / UET_PDS_RUD_ROD_REQ(rsvd_f5=1))
        assert diag_set(rec) == {("reserved_nonzero", "uet.pds.rud_rod_req", None)}
        assert rec["status"] == "malformed"
        assert rec["fields"]["uet.pds.flags"] == 0x20


class TestPdsRudiUud:
    def test_rudi_request(self):
        pkt = UET_PDS_RUDI(next_hdr=3, m=1, retx=1, pkt_id=0xDEADBEEF)
        raw = hexb("21b0 0000 deadbeef")
        assert bytes(pkt) == raw
        back = UET(raw)
        assert isinstance(back, UET_PDS_RUDI)
        assert (back.type, back.m, back.retx, back.pkt_id) == (4, 1, 1, 0xDEADBEEF)

    def test_rudi_response_record(self):
        rec = decode(eth_ip_udp() / UET_PDS_RUDI(type=5, pkt_id=3) /
                     UET_SES_RESPONSE(message_id=1))
        assert bytes(UET_PDS_RUDI(type=5, pkt_id=3) / UET_SES_RESPONSE())[:2] == hexb("2a00")
        assert rec["fields"]["uet.pds.type"] == 5
        assert rec["fields"]["uet.pds.pkt_id"] == 3
        assert rec["layers"][3:] == ["uet.pds.rudi", "uet.ses.response"]

    def test_uud(self):
        pkt = UET_PDS_UUD() / UET_SES_STD()
        assert bytes(pkt)[:4] == hexb("3180 0000")
        rec = decode(eth_ip_udp() / pkt)
        assert rec["fields"]["uet.pds.flags"] == 0
        assert "uet.pds.uud" in rec["layers"]

    def test_uud_flags_are_all_reserved(self):
        rec = decode(eth_ip_udp() / Raw(hexb("3001 0000")))
        assert diag_set(rec) == {("reserved_nonzero", "uet.pds.uud", None)}
        assert rec["fields"]["uet.pds.flags"] == 1


class TestPdsAck:
    def test_ack_probe_reply(self):
        pkt = UET_PDS_ACK(m=1, p=1, req=2, probe_opaque=0xBEEF, cack_psn=0x1000, spdcid=1,
                          dpdcid=2)
        raw = hexb("382c beef 00001000 0001 0002")
        assert bytes(pkt) == raw
        back = UET(raw)
        assert (back.m, back.p, back.req, back.probe_opaque) == (1, 1, 2, 0xBEEF)
        rec = decode(eth_ip_udp() / pkt)
        assert rec["fields"]["uet.pds.probe_opaque"] == 0xBEEF
        assert "uet.pds.ack_psn_offset" not in rec["fields"]
        assert rec["fields"]["uet.pds.flags.req"] == 2

    def test_ack_psn_offset_is_signed(self):
        raw = hexb("3800 ffff 00000010 0000 0000")
        assert bytes(UET_PDS_ACK(ack_psn_offset=-1, cack_psn=16)) == raw
        rec = decode(eth_ip_udp() / Raw(raw))
        assert rec["fields"]["uet.pds.ack_psn_offset"] == -1
        assert "uet.pds.probe_opaque" not in rec["fields"]

    def test_ack_with_response_next_hdr(self):
        pkt = UET_PDS_ACK() / UET_SES_RESPONSE()
        assert bytes(pkt)[:2] == hexb("3a00")
        rec = decode(eth_ip_udp() / pkt)
        assert rec["layers"][-2:] == ["uet.pds.ack", "uet.ses.response"]

    def test_ack_req_3_is_unknown(self):
        rec = decode(eth_ip_udp() / UET_PDS_ACK(req=3))
        assert diag_set(rec) == {("unknown_value", "uet.pds.ack", "uet.pds.flags.req")}

    def test_ack_cc_nscc(self):
        pkt = UET_PDS_ACK() / UET_PDS_ACK_CC(
            cc_type=0, cc_flags=5, mpr=0x40, sack_psn_offset=-2,
            sack_bitmap=0x0102030405060708, service_time=0x05DC, restore_cwnd=1,
            rcv_cwnd_pend=0x21, rcvd_bytes=0x123456, ooo_count=4)
        raw = hexb("4000 0000 00000000 0000 0000"
                   "05 40 fffe 0102030405060708 05dc a1 123456 0004")
        assert bytes(pkt) == raw
        cc = UET(raw)[UET_PDS_ACK_CC]
        assert (cc.service_time, cc.restore_cwnd, cc.rcv_cwnd_pend, cc.rcvd_bytes) == \
            (0x05DC, 1, 0x21, 0x123456)
        f = decode(eth_ip_udp() / pkt)["fields"]
        assert f["uet.pds.type"] == 8
        assert f["uet.pds.nscc.service_time"] == 0x05DC
        assert f["uet.pds.nscc.rcvd_bytes"] == 0x123456
        assert f["uet.pds.sack_psn_offset"] == -2
        assert "uet.pds.credit.credit" not in f

    def test_ack_cc_credit(self):
        pkt = UET_PDS_ACK() / UET_PDS_ACK_CC(cc_type=1, mpr=8, sack_psn_offset=16,
                                             sack_bitmap=1, credit=0xABCDEF, ooo_count=0x100)
        raw = hexb("4000 0000 00000000 0000 0000"
                   "10 08 0010 0000000000000001 abcdef 000000 0100")
        assert bytes(pkt) == raw
        f = decode(eth_ip_udp() / pkt)["fields"]
        assert f["uet.pds.credit.credit"] == 0xABCDEF
        assert f["uet.pds.ooo_count"] == 0x100
        assert "uet.pds.nscc.service_time" not in f

    def test_ack_cc_unknown_cc_type_keeps_ooo_count(self):
        rec = decode(eth_ip_udp() / UET_PDS_ACK() / UET_PDS_ACK_CC(cc_type=2, ooo_count=7))
        assert diag_set(rec) == {("unknown_value", "uet.pds.ack_cc", "uet.pds.cc_type")}
        assert rec["fields"]["uet.pds.ooo_count"] == 7
        assert not any(k.startswith(("uet.pds.nscc", "uet.pds.credit")) for k in rec["fields"])

    def test_ack_ccx(self):
        pkt = UET_PDS_ACK() / UET_PDS_ACK_CCX(ccx_type=14, cc_flags=1, mpr=2, sack_psn_offset=3,
                                              sack_bitmap=4, ccx_state=bytes(range(16)))
        raw = hexb("4800 0000 00000000 0000 0000 e1 02 0003 0000000000000004"
                   "000102030405060708090a0b0c0d0e0f")
        assert bytes(pkt) == raw
        rec = decode(eth_ip_udp() / pkt)
        assert rec["fields"]["uet.pds.ccx_state"] == "000102030405060708090a0b0c0d0e0f"
        assert rec["fields"]["uet.pds.ccx_type"] == 14
        assert rec["uncertain"]["uet.pds.ccx_state"] == "ccx-state-size"
        assert rec["uncertain"]["uet.pds.ccx_type"] == "ack-ccx-type"


class TestPdsNack:
    def test_nack_rudi_form(self):
        pkt = UET_PDS_NACK(nt=1, m=1, retx=1, nack_code=0x07, vendor_code=0x5A,
                           nack_pkt_id=0xDEADBEEF)
        raw = hexb("5038 07 5a deadbeef 0000 0000 00000000")
        assert bytes(pkt) == raw
        rec = decode(eth_ip_udp() / pkt)
        assert rec["fields"]["uet.pds.nack_pkt_id"] == 0xDEADBEEF
        assert "uet.pds.nack_psn" not in rec["fields"]
        assert rec["fields"]["uet.pds.flags.nt"] == 1

    def test_nack_psn_form(self):
        raw = hexb("5000 0b 00 00000500 0021 0012 00000501")
        assert bytes(UET_PDS_NACK(nack_code=0x0B, nack_psn=0x500, spdcid=0x21, dpdcid=0x12,
                                  nack_payload=0x501)) == raw
        f = decode(eth_ip_udp() / Raw(raw))["fields"]
        assert (f["uet.pds.nack_code"], f["uet.pds.nack_psn"], f["uet.pds.nack_payload"]) == \
            (0x0B, 0x500, 0x501)

    def test_experimental_nack_codes_are_valid(self):
        for code in (0xFD, 0xFE, 0xFF):
            assert decode(eth_ip_udp() / UET_PDS_NACK(nack_code=code))["status"] == "uet"

    def test_unknown_nack_codes(self):
        for code in (0x00, 0x0C, 0x1B, 0xFC):
            rec = decode(eth_ip_udp() / UET_PDS_NACK(nack_code=code))
            assert diag_set(rec) == {("unknown_value", "uet.pds.nack", "uet.pds.nack_code")}

    def test_nack_ccx(self):
        pkt = UET_PDS_NACK(nack_code=1) / UET_PDS_NACK_CCX(nccx_type=3,
                                                           nccx_state=bytes(range(1, 16)))
        raw = hexb("6000 01 00 00000000 0000 0000 00000000 30 0102030405060708090a0b0c0d0e0f")
        assert bytes(pkt) == raw
        rec = decode(eth_ip_udp() / pkt)
        assert rec["fields"]["uet.pds.type"] == 12
        assert rec["fields"]["uet.pds.nccx_type"] == 3
        assert rec["uncertain"]["uet.pds.nccx_state"] == "nack-ccx-layout"


class TestPdsControl:
    def test_probe(self):
        pkt = UET_PDS_CP(ctl_type=6, isrod=1, ar=1, probe_opaque=0x1234, psn=0x706,
                         spdcid=0x33, dpdcid=0x44, cp_payload=0x10006)
        raw = hexb("5b28 1234 00000706 0033 0044 00010006")
        assert bytes(pkt) == raw
        back = UET(raw)
        assert isinstance(back, UET_PDS_CP)
        assert (back.ctl_type, back.probe_opaque, back.cp_payload) == (6, 0x1234, 0x10006)
        f = decode(eth_ip_udp() / pkt)["fields"]
        assert f["uet.pds.ctl_type"] == 6
        assert f["uet.pds.probe_opaque"] == 0x1234
        assert "uet.pds.next_hdr" not in f
        assert f["uet.pds.flags.isrod"] == 1

    def test_noop_with_syn_overlay(self):
        pkt = UET_PDS_CP(ctl_type=0, syn=1, use_rsv_pdc=1, psn_offset=0x321, psn=1)
        raw = hexb("5804 0000 00000001 0000 8321 00000000")
        assert bytes(pkt) == raw
        f = decode(eth_ip_udp() / pkt)["fields"]
        assert (f["uet.pds.use_rsv_pdc"], f["uet.pds.psn_offset"]) == (1, 0x321)
        assert "uet.pds.probe_opaque" not in f

    def test_every_ctl_type(self):
        for ctl in range(10):
            rec = decode(eth_ip_udp() / UET_PDS_CP(ctl_type=ctl, cp_payload=ctl))
            assert rec["status"] == "uet"
            assert rec["fields"]["uet.pds.ctl_type"] == ctl
            assert rec["fields"]["uet.pds.cp_payload"] == ctl

    def test_negotiation_payload_is_uncertain(self):
        rec = decode(eth_ip_udp() / UET_PDS_CP(ctl_type=9))
        assert rec["uncertain"] == {"uet.pds.cp_payload": "cp-negotiation-payload"}
        assert decode(eth_ip_udp() / UET_PDS_CP(ctl_type=8))["uncertain"] == {}

    def test_control_packet_has_no_ses_header(self):
        rec = decode(eth_ip_udp() / UET_PDS_CP(ctl_type=1) / Raw(bytes(44)))
        assert rec["layers"][-1] == "uet.pds.cp"
        assert rec["payload_len"] == 0
        assert diag_set(rec) == {("trailing_bytes", "uet.pds.cp", None)}

    def test_unknown_ctl_type(self):
        rec = decode(eth_ip_udp() / UET_PDS_CP(ctl_type=12))
        assert diag_set(rec) == {("unknown_value", "uet.pds.cp", "uet.pds.ctl_type")}


class TestPdsDispatch:
    def test_unknown_pds_types(self):
        for ptype in (0, 15, 31):
            rec = decode(eth_ip_udp() / Raw(bytes([ptype << 3]) + bytes(15)))
            assert diag_set(rec) == {("unknown_value", "uet.pds", "uet.pds.type")}
            assert rec["fields"]["uet.pds.type"] == ptype
            assert rec["payload_len"] == 16

    def test_unknown_type_dissects_as_generic_prologue(self):
        pkt = UET(bytes([15 << 3, 0x80]))
        assert type(pkt) is UET
        assert (pkt.type, pkt.next_hdr) == (15, 1)

    def test_unknown_next_hdr_stops(self):
        rec = decode(eth_ip_udp() / UET_PDS_RUD_ROD_REQ(next_hdr=7) / Raw(bytes(44)))
        assert diag_set(rec) == {("unknown_value", "uet.pds.rud_rod_req", "uet.pds.next_hdr")}
        assert rec["layers"][-1] == "uet.pds.rud_rod_req"
        assert rec["payload_len"] == 44


class TestEntropyAndTss:
    def test_tss_with_ssi(self):
        pkt = UET_TSS(sp=1, an=1, sdi=0x123456, ssi=0xA5A5A5A5, epoch=3, tsc=0x10)
        raw = hexb("0d123456 a5a5a5a5 0003 000000000010")
        assert bytes(pkt) == raw
        back = UET(raw)
        assert isinstance(back, UET_TSS)
        assert (back.sp, back.an, back.sdi, back.ssi, back.epoch, back.tsc) == \
            (1, 1, 0x123456, 0xA5A5A5A5, 3, 0x10)

    def test_tss_without_ssi_and_payload_counts_as_ciphertext(self):
        pkt = UET_TSS(sdi=0x42, epoch=1, tsc=0xABCDEF) / Raw(bytes(48))
        assert bytes(pkt)[:12] == hexb("08000042 0001 000000abcdef")
        rec = decode(eth_ip_udp() / pkt)
        assert rec["layers"][-1] == "uet.tss"
        assert "uet.tss.ssi" not in rec["fields"]
        assert "uet.pds.type" not in rec["fields"]
        assert rec["payload_len"] == 48
        assert set(rec["uncertain"].values()) == {"tss-layout"}

    def test_tss_bit_25_reserved(self):
        rec = decode(eth_ip_udp() / UET_TSS(rsvd_b25=1))
        assert diag_set(rec) == {("reserved_nonzero", "uet.tss", None)}

    def test_entropy_header_over_ip_proto_253(self):
        from scapy.layers.inet import IP
        from scapy.layers.l2 import Ether
        pkt = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / \
            IP(src="198.18.0.1", dst="198.18.0.2") / UET_ENTROPY(entropy=0xBEEF) / UET_PDS_UUD()
        raw = bytes(pkt)
        assert raw[23] == 253                       # IP protocol filled in by bind_layers
        assert raw[34:42] == hexb("beef0000 3000 0000")
        back = Ether(raw)
        assert back[UET_ENTROPY].entropy == 0xBEEF
        assert isinstance(back[UET_ENTROPY].payload, UET_PDS_UUD)
        rec = decode(pkt)
        assert rec["layers"] == ["eth", "ip", "uet.entropy", "uet.pds.uud"]
        assert rec["fields"]["uet.entropy"] == 0xBEEF
        assert rec["uncertain"] == {"uet.entropy": "uet-ip-proto"}
        assert rec["status"] == "uet"
