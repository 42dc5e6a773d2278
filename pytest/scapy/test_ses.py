"""SES layers (digest I.7, values F.3/F.5): build -> hex of the digest layout -> dissect ->
record."""

from scapy.packet import Raw

from scapy_frames import decode, diag_set, eth_ip_udp, hexb
from scapy_uet import (UET, UET_PDS_ACK, UET_PDS_RUD_ROD_REQ, UET_SES_ATOMIC, UET_SES_CAS,
                       UET_SES_DEFERRABLE, UET_SES_MEDIUM, UET_SES_RENDEZVOUS,
                       UET_SES_RESPONSE, UET_SES_RESPONSE_DATA, UET_SES_RESPONSE_DATA_SMALL,
                       UET_SES_RTR, UET_SES_SMALL, UET_SES_STD)

REQ = UET_PDS_RUD_ROD_REQ(psn=1)            # next_hdr filled in from the SES layer


def req_nh(next_hdr):
    """A RUD request announcing `next_hdr`, to carry raw SES bytes."""
    return UET_PDS_RUD_ROD_REQ(psn=1, next_hdr=next_hdr)

COMMON = dict(ri_generation=2, job_id=0xABCD, pid_on_fep=0x123, resource_index=0x456)
COMMON_HEX = "02 00abcd 0123 0456"


def ses_of(raw):
    """Dissect SES bytes behind a RUD request carrying the right next_hdr."""
    return UET(bytes(req_nh(3)) + raw).payload


class TestSesStandard:
    SOM1 = hexb("05 2f 0101" + COMMON_HEX + "0000000000001000 00000077 0102030405060708"
                "cafef00dcafef00d 00000100")

    def test_som1_build_bytes(self):
        pkt = UET_SES_STD(opcode=5, dc=1, rel=1, hd=1, eom=1, som=1, message_id=0x101,
                          buffer_offset=0x1000, initiator=0x77, match_bits=0x0102030405060708,
                          header_data=0xCAFEF00DCAFEF00D, request_length=0x100, **COMMON)
        assert bytes(pkt) == self.SOM1
        assert len(self.SOM1) == 44

    def test_som1_dissect(self):
        pkt = ses_of(self.SOM1)
        assert type(pkt) is UET_SES_STD
        assert (pkt.opcode, pkt.dc, pkt.ie, pkt.rel, pkt.hd, pkt.eom, pkt.som) == \
            (5, 1, 0, 1, 1, 1, 1)
        assert (pkt.job_id, pkt.pid_on_fep, pkt.resource_index) == (0xABCD, 0x123, 0x456)
        assert pkt.header_data == 0xCAFEF00DCAFEF00D

    def test_som1_record(self):
        f = decode(eth_ip_udp() / req_nh(3) / Raw(self.SOM1))["fields"]
        assert f["uet.ses.opcode"] == 5
        assert f["uet.ses.message_id"] == 0x101
        assert f["uet.ses.match_bits"] == 0x0102030405060708
        assert f["uet.ses.header_data"] == 0xCAFEF00DCAFEF00D
        assert f["uet.ses.request_length"] == 0x100
        assert "uet.ses.memory_key" not in f
        assert "uet.ses.payload_length" not in f

    def test_header_data_only_with_hd(self):
        f = decode(eth_ip_udp() / REQ / UET_SES_STD(hd=0, header_data=5))["fields"]
        assert "uet.ses.header_data" not in f

    def test_som0_build_and_payload_length_auto(self):
        pkt = UET_SES_STD(opcode=1, som=0, eom=1, message_id=4, memory_key=0x8000000000000001,
                          buffer_offset=0x10000, message_offset=0xFE0, request_length=0x1000,
                          **COMMON) / Raw(bytes(32))
        raw = hexb("01 02 0004" + COMMON_HEX + "0000000000010000 00000000 8000000000000001"
                   "00000020 00000fe0 00001000") + bytes(32)
        assert bytes(pkt) == raw
        rec = decode(eth_ip_udp() / REQ / pkt)
        f = rec["fields"]
        assert f["uet.ses.memory_key"] == 0x8000000000000001
        assert (f["uet.ses.payload_length"], f["uet.ses.message_offset"]) == (32, 0xFE0)
        assert "uet.ses.header_data" not in f
        assert rec["payload_len"] == 32
        assert rec["diagnostics"] == []

    def test_som0_reserved_bits(self):
        rec = decode(eth_ip_udp() / REQ / UET_SES_STD(som=0, rsvd_pl=1))
        assert diag_set(rec) == {("reserved_nonzero", "uet.ses.std", None)}

    def test_memory_key_for_rma_and_atomic_opcodes(self):
        for op in (1, 2, 3, 4):
            f = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=op, memory_key=0x42))["fields"]
            assert f["uet.ses.memory_key"] == 0x42
            assert "uet.ses.match_bits" not in f
        for op in (0, 5, 6, 7, 9, 0x0A, 0x0F):
            f = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=op, match_bits=0x42))["fields"]
            assert f["uet.ses.match_bits"] == 0x42

    def test_message_id_zero_is_invalid(self):
        rec = decode(eth_ip_udp() / REQ / UET_SES_STD(message_id=0))
        assert diag_set(rec) == {("invalid_value", "uet.ses.std", "uet.ses.message_id")}
        assert rec["fields"]["uet.ses.message_id"] == 0

    def test_job_id_zero_marks_a_request(self):
        """Choice job-id-zero-invalid: a request without a JobID is a diagnostic of its own that names the
        choice, in every request header; a response's JobID is not checked."""
        for ses in (UET_SES_STD(job_id=0), UET_SES_SMALL(job_id=0), UET_SES_MEDIUM(job_id=0)):
            rec = decode(eth_ip_udp() / REQ / ses)
            assert diag_set(rec) == {("job_id_zero", ses.uet_header, "uet.ses.job_id")}
            assert [d.get("choice") for d in rec["diagnostics"]] == ["job-id-zero-invalid"]
            assert rec["fields"]["uet.ses.job_id"] == 0
        assert decode(eth_ip_udp() / UET_PDS_ACK() / UET_SES_RESPONSE(job_id=0))["diagnostics"] == []

    def test_unknown_opcode_and_version(self):
        rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=0x20, version=1))
        assert diag_set(rec) == {("unknown_value", "uet.ses.std", "uet.ses.opcode"),
                                 ("unknown_value", "uet.ses.std", "uet.ses.version")}

    def test_vendor_and_extended_opcodes_are_valid(self):
        for op in (0x30, 0x3E, 0x3F):
            assert decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=op))["status"] == "uet"


class TestSesDeferrable:
    def test_deferrable_send_tokens_replace_buffer_offset(self):
        pkt = UET_SES_DEFERRABLE(opcode=8, message_id=1, initiator_restart_token=0x1008,
                                 target_restart_token=0, initiator=7, match_bits=0xABC,
                                 request_length=64, **COMMON)
        raw = hexb("08 03 0001" + COMMON_HEX + "00001008 00000000 00000007 0000000000000abc"
                   "0000000000000000 00000040")
        assert bytes(pkt) == raw
        back = ses_of(raw)
        assert type(back) is UET_SES_DEFERRABLE
        assert back.initiator_restart_token == 0x1008
        f = decode(eth_ip_udp() / req_nh(3) / Raw(raw))["fields"]
        assert f["uet.ses.initiator_restart_token"] == 0x1008
        assert f["uet.ses.target_restart_token"] == 0
        assert "uet.ses.buffer_offset" not in f

    def test_deferrable_tsend_som0(self):
        pkt = UET_SES_DEFERRABLE(opcode=0x0B, som=0, message_id=2, initiator_restart_token=1,
                                 target_restart_token=2, payload_length=0, message_offset=8)
        f = decode(eth_ip_udp() / REQ / pkt)["fields"]
        assert (f["uet.ses.initiator_restart_token"], f["uet.ses.target_restart_token"]) == (1, 2)
        assert f["uet.ses.message_offset"] == 8

    def test_ready_to_restart(self):
        pkt = UET_SES_RTR(message_id=0x10C, buffer_offset=0x800, initiator=0x77,
                          initiator_restart_token=0x100C, target_restart_token=0x2001,
                          header_data=0x1122334455667788, request_length=64, **COMMON)
        raw = hexb("0c 03 010c" + COMMON_HEX + "0000000000000800 00000077 0000100c 00002001"
                   "1122334455667788 00000040")
        assert bytes(pkt) == raw
        back = ses_of(raw)
        assert type(back) is UET_SES_RTR
        f = decode(eth_ip_udp() / req_nh(3) / Raw(raw))["fields"]
        assert f["uet.ses.buffer_offset"] == 0x800
        assert (f["uet.ses.initiator_restart_token"], f["uet.ses.target_restart_token"]) == \
            (0x100C, 0x2001)
        assert f["uet.ses.header_data"] == 0x1122334455667788
        assert "uet.ses.match_bits" not in f

    def test_std_class_dispatches_on_opcode(self):
        assert type(UET_SES_STD(bytes(UET_SES_DEFERRABLE()))) is UET_SES_DEFERRABLE
        assert type(UET_SES_STD(bytes(UET_SES_RTR()))) is UET_SES_RTR
        assert type(UET_SES_STD(bytes(UET_SES_STD(opcode=9)))) is UET_SES_STD


class TestSesSmallMedium:
    def test_small_header(self):
        pkt = UET_SES_SMALL(opcode=1, request_length=64, buffer_offset=0x1000, **COMMON)
        raw = hexb("01 03 0040" + COMMON_HEX + "0000000000001000")
        assert bytes(pkt) == raw
        assert bytes(REQ / pkt)[:2] == hexb("1080")            # next_hdr 1
        f = decode(eth_ip_udp() / REQ / pkt)["fields"]
        assert f["uet.ses.request_length"] == 64
        assert f["uet.ses.buffer_offset"] == 0x1000
        assert "uet.ses.hd" not in f and "uet.ses.message_id" not in f

    def test_small_header_max_request_length(self):
        raw = bytes(UET_SES_SMALL(request_length=16383))
        assert raw[2:4] == hexb("3fff")
        f = decode(eth_ip_udp() / REQ / UET_SES_SMALL(request_length=16383))["fields"]
        assert f["uet.ses.request_length"] == 16383

    def test_small_header_hd_bit_is_reserved(self):
        rec = decode(eth_ip_udp() / req_nh(1) / Raw(hexb("01 07 0000" + COMMON_HEX) + bytes(8)))
        assert diag_set(rec) == {("reserved_nonzero", "uet.ses.small", None)}

    def test_medium_header_with_header_data(self):
        pkt = UET_SES_MEDIUM(opcode=5, hd=1, request_length=4, header_data=0xFFEEDDCCBBAA9988,
                             initiator=0x10, match_bits=0x1111, **COMMON)
        raw = hexb("05 07 0004" + COMMON_HEX + "ffeeddccbbaa9988 00000010 0000000000001111")
        assert bytes(pkt) == raw
        assert bytes(REQ / pkt)[:2] == hexb("1100")            # next_hdr 2
        f = decode(eth_ip_udp() / REQ / pkt)["fields"]
        assert f["uet.ses.header_data"] == 0xFFEEDDCCBBAA9988
        assert "uet.ses.buffer_offset" not in f
        assert f["uet.ses.match_bits"] == 0x1111

    def test_medium_header_small_rma(self):
        pkt = UET_SES_MEDIUM(opcode=1, request_length=4, buffer_offset=0x200,
                             memory_key=0xC000000000000FFF, initiator=0x10)
        f = decode(eth_ip_udp() / REQ / pkt)["fields"]
        assert f["uet.ses.buffer_offset"] == 0x200
        assert f["uet.ses.memory_key"] == 0xC000000000000FFF
        assert "uet.ses.header_data" not in f


class TestSesExtensions:
    def test_atomic_extension(self):
        pkt = UET_SES_STD(opcode=3, memory_key=0x20) / UET_SES_ATOMIC(
            atomic_opcode=0x0A, atomic_datatype=0x07, cacheable=1)
        assert bytes(pkt)[44:] == hexb("0a 07 01 00")
        assert bytes(UET_SES_ATOMIC(atomic_opcode=2, atomic_datatype=4, cpu_coherent=1)) == \
            hexb("02 04 02 00")
        rec = decode(eth_ip_udp() / REQ / pkt)
        f = rec["fields"]
        assert (f["uet.ses.atomic_opcode"], f["uet.ses.atomic_datatype"]) == (0x0A, 0x07)
        assert f["uet.ses.semantic_control.cacheable"] == 1
        assert f["uet.ses.semantic_control.cpu_coherent"] == 0
        assert rec["uncertain"]["uet.ses.semantic_control.cacheable"] == "amo-semantic-control"

    def test_atomic_extension_after_every_atomic_opcode(self):
        for op in (3, 4, 0x0D, 0x0E):
            rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=op) / UET_SES_ATOMIC())
            assert rec["layers"][-1] == "uet.ses.atomic"
        rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=5) / Raw(bytes(4)))
        assert rec["layers"][-1] == "uet.ses.std" and rec["payload_len"] == 4

    def test_atomic_extension_after_som0_and_small_header(self):
        rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=3, som=0) / UET_SES_ATOMIC() /
                     Raw(bytes(8)))
        assert rec["layers"][-1] == "uet.ses.atomic"
        assert rec["fields"]["uet.ses.payload_length"] == 8     # extension not counted
        rec = decode(eth_ip_udp() / REQ / UET_SES_SMALL(opcode=4) / UET_SES_ATOMIC())
        assert rec["layers"][-2:] == ["uet.ses.small", "uet.ses.atomic"]

    def test_cas_extension(self):
        pkt = UET_SES_ATOMIC(atomic_opcode=0x0D, atomic_datatype=0x07) / UET_SES_CAS(
            compare_value=bytes(range(16)), swap_value=bytes(range(16, 32)))
        raw = hexb("0d 07 00 00 000102030405060708090a0b0c0d0e0f"
                   "101112131415161718191a1b1c1d1e1f")
        assert bytes(pkt) == raw
        rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=4) / pkt)
        assert rec["layers"][-2:] == ["uet.ses.atomic", "uet.ses.cas"]
        assert rec["fields"]["uet.ses.compare_value"] == "000102030405060708090a0b0c0d0e0f"
        assert rec["fields"]["uet.ses.swap_value"] == "101112131415161718191a1b1c1d1e1f"

    def test_cas_only_for_the_cswap_family(self):
        # choice cas-for-mswap: MSWAP (0x13) takes the plain atomic extension.
        for amo in range(0x0D, 0x13):
            rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=4) /
                         UET_SES_ATOMIC(atomic_opcode=amo) / UET_SES_CAS())
            assert rec["layers"][-1] == "uet.ses.cas", amo
        for amo in (0x0C, 0x13, 0x14):
            rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=4) /
                         UET_SES_ATOMIC(atomic_opcode=amo) / Raw(bytes(8)))
            assert rec["layers"][-1] == "uet.ses.atomic", amo

    def test_rendezvous_extension(self):
        pkt = UET_SES_RENDEZVOUS(eager_length=8, ri_generation=1, pid_on_fep=0x321,
                                 resource_index=0x654, read_offset=0x1000, read_key=0x99)
        raw = hexb("00000008 01 321 654 0000000000001000 0000000000000099")
        assert bytes(pkt) == raw
        rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=6) / pkt)
        f = rec["fields"]
        assert (f["uet.ses.rdv.eager_length"], f["uet.ses.rdv.pid_on_fep"],
                f["uet.ses.rdv.resource_index"]) == (8, 0x321, 0x654)
        assert f["uet.ses.rdv.read_key"] == 0x99
        assert rec["uncertain"]["uet.ses.rdv.read_offset"] == "rendezvous-ext-layout"

    def test_rendezvous_extension_only_with_som(self):
        rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=0x0A, som=0) / Raw(bytes(24)))
        assert rec["layers"][-1] == "uet.ses.std"

    def test_unknown_amo_values(self):
        rec = decode(eth_ip_udp() / REQ / UET_SES_STD(opcode=3) /
                     UET_SES_ATOMIC(atomic_opcode=0x15, atomic_datatype=0x12))
        assert diag_set(rec) == {("unknown_value", "uet.ses.atomic", "uet.ses.atomic_opcode"),
                                 ("unknown_value", "uet.ses.atomic", "uet.ses.atomic_datatype")}


class TestSesResponse:
    def test_response(self):
        pkt = UET_SES_RESPONSE(list=1, opcode=1, return_code=0x1C, message_id=0x30,
                               ri_generation=5, job_id=0x42, modified_length=64)
        raw = hexb("41 1c 0030 05 000042 00000040")
        assert bytes(pkt) == raw
        back = UET(bytes(UET_PDS_ACK() / pkt)).payload
        assert type(back) is UET_SES_RESPONSE
        f = decode(eth_ip_udp() / UET_PDS_ACK() / pkt)["fields"]
        assert (f["uet.ses.rsp.list"], f["uet.ses.rsp.opcode"], f["uet.ses.rsp.return_code"]) \
            == (1, 1, 0x1C)
        assert f["uet.ses.rsp.modified_length"] == 64

    def test_return_code_table(self):
        for rc in list(range(0x25)) + [0x30, 0x37, 0x3E]:
            rec = decode(eth_ip_udp() / UET_PDS_ACK() / UET_SES_RESPONSE(return_code=rc))
            assert rec["status"] == "uet", rc
        for rc in (0x25, 0x2F, 0x38, 0x3D, 0x3F):
            rec = decode(eth_ip_udp() / UET_PDS_ACK() / UET_SES_RESPONSE(return_code=rc))
            assert diag_set(rec) == {("unknown_value", "uet.ses.response",
                                      "uet.ses.rsp.return_code")}, rc

    def test_response_with_data(self):
        pkt = UET_SES_RESPONSE_DATA(return_code=1, message_id=0x41, job_id=0x42,
                                    read_request_message_id=0x40, modified_length=64) / \
            Raw(bytes(64))
        raw = hexb("02 01 0041 00 000042 0040 0040 00000040 00000000") + bytes(64)
        assert bytes(pkt) == raw
        assert bytes(UET_PDS_ACK() / pkt)[:2] == hexb("3a80")   # next_hdr 5
        rec = decode(eth_ip_udp() / UET_PDS_ACK() / pkt)
        assert rec["fields"]["uet.ses.rsp.payload_length"] == 64
        assert rec["fields"]["uet.ses.rsp.read_request_message_id"] == 0x40
        assert rec["payload_len"] == 64
        assert rec["uncertain"] == {"uet.ses.rsp.payload_length": "response-data-payload-length"}

    def test_response_with_small_data(self):
        pkt = UET_SES_RESPONSE_DATA_SMALL(return_code=1, job_id=0x42,
                                          original_request_psn=0x1000) / Raw(bytes(8))
        raw = hexb("02 01 0008 00 000042 00001000") + bytes(8)
        assert bytes(pkt) == raw
        assert bytes(UET_PDS_ACK() / pkt)[:2] == hexb("3b00")   # next_hdr 6
        rec = decode(eth_ip_udp() / UET_PDS_ACK() / pkt)
        assert rec["fields"]["uet.ses.rsp.original_request_psn"] == 0x1000
        assert rec["uncertain"]["uet.ses.rsp.job_id"] == "response-data-small-layout"

    def test_payload_length_against_the_bytes_that_follow(self):
        """More bytes than payload_length says trail the packet; fewer are a length inconsistency."""
        for said, kind, payload_len in ((7, "inconsistent_length", 5), (3, "trailing_bytes", 3)):
            rec = decode(eth_ip_udp() / UET_PDS_ACK() / UET_SES_RESPONSE_DATA(payload_length=said) /
                         Raw(bytes(5)))
            assert diag_set(rec) == {(kind, "uet.ses.response_data", "uet.ses.rsp.payload_length")}
            assert rec["payload_len"] == payload_len
        assert rec["diagnostics"][0]["offset"] == 42 + 12 + 20 + 3

    def test_vendor_response_opcodes_valid_and_unknown_ones(self):
        assert decode(eth_ip_udp() / UET_PDS_ACK() / UET_SES_RESPONSE(opcode=0x30))["status"] \
            == "uet"
        rec = decode(eth_ip_udp() / UET_PDS_ACK() / UET_SES_RESPONSE(opcode=0x04))
        assert diag_set(rec) == {("unknown_value", "uet.ses.response", "uet.ses.rsp.opcode")}
