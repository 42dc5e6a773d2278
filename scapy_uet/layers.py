"""Scapy layers for Ultra Ethernet Transport (UEC 1.0): entropy header, TSS, PDS and SES.

Every ``fields_desc`` below is a hand transcription of the spec digest
(../shared/spec/uet-spec-digest.md, part I: I.1 encapsulation, I.5 PDS, I.6 TSS, I.7 SES),
deliberately NOT generated from spec/wire.yaml: the C++ decoder is generated from wire.yaml, and the
differential test between the two decoders finds transcription errors in either.
Value names (enums) and the UDP port come from wire.yaml (spec.py).
Where the digest says CONFLICT or MISSING, the layers follow the `choices` of wire.yaml; each such
place is marked "choice <id>" below.

All multi-byte fields are big-endian; bit fields are listed MSB first (digest I, conventions).

Record conventions used by scapy_uet.record (class attributes):
  uet_header   name of the header in the decode record (`layers`)
  uet_prefix   prefix of the record field names; uet_names overrides single names
  uet_noemit   Scapy fields not reported in the record
  fields named rsvd*  are reserved (must be zero; never reported)
"""

import contextlib

from scapy.config import conf
from scapy.fields import (BitEnumField, BitField, ByteEnumField, ByteField, ConditionalField,
                          IntField, SignedShortField, StrFixedLenField, ThreeBytesField,
                          XBitField, XByteField, XIntField, XLongField, XShortField,
                          X3BytesField)
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.packet import Packet, bind_bottom_up, bind_layers, bind_top_down, split_bottom_up

from . import spec

UDP_PORT = spec.UDP_PORT            # 4793, digest I.1
UET_IP_PROTO = spec.UET_IP_PROTO    # 253, choice uet-ip-proto

# Value tables (wire.yaml enums, vendor ranges expanded).
PDS_TYPES = spec.enum("pds_type")
PDS_NEXT_HDRS = spec.enum("pds_next_hdr")
PDS_ACK_REQ = spec.enum("pds_ack_req")
PDS_CC_TYPES = spec.enum("pds_cc_type")
PDS_CCX_TYPES = spec.enum("pds_ccx_type")
PDS_CTL_TYPES = spec.enum("pds_ctl_type")
PDS_NACK_CODES = spec.enum("pds_nack_code")
SES_REQ_OPCODES = spec.enum("ses_request_opcode")
SES_RSP_OPCODES = spec.enum("ses_response_opcode")
SES_VERSIONS = spec.enum("ses_version")
SES_LISTS = spec.enum("ses_list")
SES_RETURN_CODES = spec.enum("ses_return_code")
AMO_OPCODES = spec.enum("amo_opcode")
AMO_DATATYPES = spec.enum("amo_datatype")

# PDS packet types (digest I.5, Table 3-32)
TSS, RUD_REQ, ROD_REQ, RUDI_REQ, RUDI_RESP, UUD_REQ = 1, 2, 3, 4, 5, 6
ACK, ACK_CC, ACK_CCX, NACK, CP, NACK_CCX, RUD_CC_REQ, ROD_CC_REQ = 7, 8, 9, 10, 11, 12, 13, 14

# SES request opcodes (digest F.3, Table 3-17)
UET_NO_OP, UET_WRITE, UET_READ, UET_ATOMIC, UET_FETCHING_ATOMIC = 0x00, 0x01, 0x02, 0x03, 0x04
UET_SEND, UET_RENDEZVOUS_SEND, UET_DATAGRAM_SEND, UET_DEFERRABLE_SEND = 0x05, 0x06, 0x07, 0x08
UET_TAGGED_SEND, UET_RENDEZVOUS_TSEND, UET_DEFERRABLE_TSEND = 0x09, 0x0A, 0x0B
UET_DEFERRABLE_RTR, UET_TSEND_ATOMIC, UET_TSEND_FETCH_ATOMIC, UET_MSG_ERROR = 0x0C, 0x0D, 0x0E, 0x0F

ATOMIC_OPCODES = (UET_ATOMIC, UET_FETCHING_ATOMIC, UET_TSEND_ATOMIC, UET_TSEND_FETCH_ATOMIC)
RENDEZVOUS_OPCODES = (UET_RENDEZVOUS_SEND, UET_RENDEZVOUS_TSEND)
DEFERRABLE_OPCODES = (UET_DEFERRABLE_SEND, UET_DEFERRABLE_TSEND)
# choice ses-key-field-name: bytes 24-31 are a memory key for RMA/atomic, match bits otherwise.
MEMORY_KEY_OPCODES = (UET_WRITE, UET_READ, UET_ATOMIC, UET_FETCHING_ATOMIC)
# AMO opcodes that carry the compare-and-swap extension: CSWAP .. CSWAP_GT (choice cas-for-mswap:
# MSWAP, 0x13, takes the plain atomic extension).
CAS_AMO_OPCODES = tuple(range(0x0D, 0x13))


class _Decoding(object):
    """The spec version the layers dissect under (set by scapy_uet.record for one decode)."""
    version = spec.DEFAULT_VERSION


DECODING = _Decoding()


def holds(rule):
    """True while dissecting (or building) under a spec version where `rule` (wire.yaml
    spec_versions.rules) holds: which versions is data, what the rule does is transcribed here."""
    return spec.rule_holds(rule, DECODING.version)


@contextlib.contextmanager
def spec_version(version):
    """Dissect and build by `version` (a key of wire.yaml spec_versions) inside the block."""
    if version not in spec.VERSIONS:
        raise ValueError("unknown spec version %r (known: %s)" % (version, ", ".join(spec.VERSIONS)))
    before, DECODING.version = DECODING.version, version
    try:
        yield
    finally:
        DECODING.version = before


class _UETPacket(Packet):
    """Common base of every UET layer (not a layer itself)."""
    uet_header = None
    uet_prefix = ""
    uet_names = {}
    uet_noemit = ()
    uet_size = 0
    # Fields that make up the PDS 7-bit `flags` (b6..b0), for the record's uet.pds.flags.
    uet_flag_fields = ()

    @classmethod
    def uet_node_bounds(cls, data):
        """Cumulative byte ends of the pieces of this header that decode on their own."""
        return [cls.uet_size]

    def uet_emit(self, name):
        return True

    # Values a field must not hold (invalid_value), and the one value some fields must hold.
    uet_invalid = {}
    uet_require = {}
    # Fields whose value table has values valid only in some spec versions: field -> enum name.
    uet_enum_versions = {}

    def uet_is_invalid(self, name, value):
        if name in self.uet_require:
            return value != self.uet_require[name]
        return value in self.uet_invalid.get(name, ())

    def uet_choice_diagnostic(self, name, value):
        """(diagnostic kind, choice id) when `value` of field `name` is ruled out by a choice of wire.yaml
        rather than by the spec, else None."""
        return None

    def uet_record_name(self, name):
        return self.uet_names.get(name, self.uet_prefix + name)

    def guess_payload_class(self, payload):
        return conf.raw_layer


# =============================================================================================
# I.1 Entropy header (UET directly over IP, choice uet-ip-proto): entropy:16, reserved:16


class UET_ENTROPY(_UETPacket):
    name = "UET entropy header"
    uet_header = "uet.entropy"
    uet_size = 4
    uet_names = {"entropy": "uet.entropy"}
    fields_desc = [
        XShortField("entropy", 0),
        XShortField("rsvd", 0),
    ]

    def guess_payload_class(self, payload):
        return UET


# =============================================================================================
# I.6 TSS header, choice tss-layout (variant B, S-REFPROV):
#   word 0: type[31:27]=1 | sp[26] | bit 25 | an[24] | sdi[23:0]
#   ssi (32) only when sp = 1
#   epoch[63:48] | tsc[47:0]
# Choice tss-coverage: what follows is ciphertext + ICV, not decoded.


class UET_TSS(_UETPacket):
    name = "UET TSS (security) header"
    uet_header = "uet.tss"
    uet_prefix = "uet.tss."
    uet_size = 12
    fields_desc = [
        BitField("type", TSS, 5),
        BitField("sp", 0, 1),
        BitField("rsvd_b25", 0, 1),
        BitField("an", 0, 1),
        XBitField("sdi", 0, 24),
        ConditionalField(XIntField("ssi", 0), lambda p: p.sp == 1),
        XShortField("epoch", 0),
        XBitField("tsc", 0, 48),
    ]

    @classmethod
    def uet_node_bounds(cls, data):
        sp = (data[0] >> 2) & 1 if data else 0
        return [4, 8, 16] if sp else [4, 12]


# =============================================================================================
# I.5 PDS headers. Prologue (first 16 bits): type[15:11] | next_hdr[10:7] | flags[6:0].


def _ses_class(next_hdr):
    return {1: UET_SES_SMALL, 2: UET_SES_MEDIUM, 3: UET_SES_STD, 4: UET_SES_RESPONSE,
            5: UET_SES_RESPONSE_DATA, 6: UET_SES_RESPONSE_DATA_SMALL}.get(next_hdr, conf.raw_layer)


class _PDSPacket(_UETPacket):
    """PDS base: fills `type` and `next_hdr` in when left to None."""
    uet_prefix = "uet.pds."
    uet_noemit = ("type",)
    uet_names = {"retx": "uet.pds.flags.retx", "ar": "uet.pds.flags.ar",
                 "syn": "uet.pds.flags.syn", "m": "uet.pds.flags.m", "p": "uet.pds.flags.p",
                 "req": "uet.pds.flags.req", "nt": "uet.pds.flags.nt",
                 "isrod": "uet.pds.flags.isrod"}
    uet_default_type = None
    uet_ext_types = {}   # extension class -> packet type

    def uet_flags(self):
        value = 0
        for name, width in self.uet_flag_fields:
            value = (value << width) | (self.getfieldval(name) or 0)
        return value

    def _auto_type(self):
        pay = self.payload
        for ext, value in self.uet_ext_types.items():
            if isinstance(pay, ext):
                return value
        return self.uet_default_type

    def _auto_next_hdr(self):
        pay = self.payload
        while isinstance(pay, (UET_PDS_REQ_CC, UET_PDS_ACK_CC, UET_PDS_ACK_CCX, UET_PDS_NACK_CCX)):
            pay = pay.payload
        return getattr(pay, "uet_next_hdr_code", 0) or 0

    def post_build(self, pkt, pay):
        word = (pkt[0] << 8) | pkt[1]
        if self.type is None:
            word = (word & 0x07FF) | ((self._auto_type() & 0x1F) << 11)
        if "next_hdr" in self.fieldtype and self.next_hdr is None:
            word = (word & 0xF87F) | ((self._auto_next_hdr() & 0xF) << 7)
        return bytes([word >> 8, word & 0xFF]) + pkt[2:] + pay

    def guess_payload_class(self, payload):
        return _ses_class(self.next_hdr)


def _syn_overlay():
    """Bytes 10-11 of a RUD/ROD request or control packet: dpdcid, or when SYN=1
    use_rsv_pdc[15] | reserved[14:12] | psn_offset[11:0]."""
    return [
        ConditionalField(XShortField("dpdcid", 0), lambda p: p.syn == 0),
        ConditionalField(BitField("use_rsv_pdc", 0, 1), lambda p: p.syn == 1),
        ConditionalField(BitField("rsvd_syn", 0, 3), lambda p: p.syn == 1),
        ConditionalField(BitField("psn_offset", 0, 12), lambda p: p.syn == 1),
    ]


class UET_PDS_RUD_ROD_REQ(_PDSPacket):
    """RUD/ROD request, 12 bytes (types 2, 3; and the first 12 bytes of types 13, 14)."""
    name = "UET PDS RUD/ROD request"
    uet_header = "uet.pds.rud_rod_req"
    uet_size = 12
    uet_default_type = RUD_REQ
    uet_flag_fields = (("rsvd_f6", 1), ("rsvd_f5", 1), ("retx", 1), ("ar", 1), ("syn", 1),
                       ("rsvd_f10", 2))
    fields_desc = [
        BitEnumField("type", None, 5, PDS_TYPES),
        BitEnumField("next_hdr", None, 4, PDS_NEXT_HDRS),
        BitField("rsvd_f6", 0, 1),
        BitField("rsvd_f5", 0, 1),
        BitField("retx", 0, 1),
        BitField("ar", 0, 1),
        BitField("syn", 0, 1),
        BitField("rsvd_f10", 0, 2),
        SignedShortField("clear_psn_offset", 0),
        IntField("psn", 0),
        XShortField("spdcid", 0),
    ] + _syn_overlay()

    def guess_payload_class(self, payload):
        if self.type in (RUD_CC_REQ, ROD_CC_REQ):
            return UET_PDS_REQ_CC
        return _ses_class(self.next_hdr)


class UET_PDS_REQ_CC(_UETPacket):
    """Bytes 12-15 of RUD_CC/ROD_CC requests (types 13, 14): ccc_id(8) | credit_target(24)."""
    name = "UET PDS RUD/ROD CC extension"
    uet_header = "uet.pds.req_cc"
    uet_prefix = "uet.pds."
    uet_size = 4
    fields_desc = [
        ByteField("ccc_id", 0),
        ThreeBytesField("credit_target", 0),
    ]

    def guess_payload_class(self, payload):
        return _ses_class(getattr(self.underlayer, "next_hdr", None))


UET_PDS_RUD_ROD_REQ.uet_ext_types = {UET_PDS_REQ_CC: RUD_CC_REQ}


class UET_PDS_RUDI(_PDSPacket):
    """RUDI request/response, 8 bytes (types 4 and 5): prologue | reserved(16) | pkt_id(32)."""
    name = "UET PDS RUDI request/response"
    uet_header = "uet.pds.rudi"
    uet_size = 8
    uet_default_type = RUDI_REQ
    uet_flag_fields = (("rsvd_f6", 1), ("m", 1), ("retx", 1), ("rsvd_f30", 4))
    fields_desc = [
        BitEnumField("type", None, 5, PDS_TYPES),
        BitEnumField("next_hdr", None, 4, PDS_NEXT_HDRS),
        BitField("rsvd_f6", 0, 1),
        BitField("m", 0, 1),
        BitField("retx", 0, 1),
        BitField("rsvd_f30", 0, 4),
        XShortField("rsvd", 0),
        IntField("pkt_id", 0),
    ]


class UET_PDS_UUD(_PDSPacket):
    """UUD request, 4 bytes (type 6): prologue (all flags reserved) | reserved(16)."""
    name = "UET PDS UUD request"
    uet_header = "uet.pds.uud"
    uet_size = 4
    uet_default_type = UUD_REQ
    uet_flag_fields = (("rsvd_flags", 7),)
    fields_desc = [
        BitEnumField("type", None, 5, PDS_TYPES),
        BitEnumField("next_hdr", None, 4, PDS_NEXT_HDRS),
        BitField("rsvd_flags", 0, 7),
        XShortField("rsvd", 0),
    ]


class UET_PDS_ACK(_PDSPacket):
    """ACK, 12 bytes (type 7; and the first 12 bytes of ACK_CC 8 and ACK_CCX 9)."""
    name = "UET PDS ACK"
    uet_header = "uet.pds.ack"
    uet_size = 12
    uet_default_type = ACK
    uet_flag_fields = (("rsvd_f6", 1), ("m", 1), ("retx", 1), ("p", 1), ("req", 2),
                       ("rsvd_f0", 1))
    fields_desc = [
        BitEnumField("type", None, 5, PDS_TYPES),
        BitEnumField("next_hdr", None, 4, PDS_NEXT_HDRS),
        BitField("rsvd_f6", 0, 1),
        BitField("m", 0, 1),
        BitField("retx", 0, 1),
        BitField("p", 0, 1),
        BitEnumField("req", 0, 2, PDS_ACK_REQ),
        BitField("rsvd_f0", 0, 1),
        ConditionalField(SignedShortField("ack_psn_offset", 0), lambda p: p.p == 0),
        ConditionalField(XShortField("probe_opaque", 0), lambda p: p.p == 1),
        IntField("cack_psn", 0),
        XShortField("spdcid", 0),
        XShortField("dpdcid", 0),
    ]

    def guess_payload_class(self, payload):
        if self.type == ACK_CC:
            return UET_PDS_ACK_CC
        if self.type == ACK_CCX:
            return UET_PDS_ACK_CCX
        return _ses_class(self.next_hdr)


def _ack_cc_common():
    """ACK_CC / ACK_CCX bytes 13-23: mpr, sack_psn_offset (signed: choice
    sack-psn-offset-signed), sack_bitmap."""
    return [
        ByteField("mpr", 0),
        SignedShortField("sack_psn_offset", 0),
        XLongField("sack_bitmap", 0),
    ]


class UET_PDS_ACK_CC(_UETPacket):
    """ACK_CC bytes 12-31: cc_type | cc_flags, mpr, sack_psn_offset, sack_bitmap, ack_cc_state."""
    name = "UET PDS ACK_CC extension"
    uet_header = "uet.pds.ack_cc"
    uet_prefix = "uet.pds."
    uet_size = 20
    uet_names = {"service_time": "uet.pds.nscc.service_time",
                 "restore_cwnd": "uet.pds.nscc.restore_cwnd",
                 "rcv_cwnd_pend": "uet.pds.nscc.rcv_cwnd_pend",
                 "rcvd_bytes": "uet.pds.nscc.rcvd_bytes",
                 "credit": "uet.pds.credit.credit"}
    uet_noemit = ("cc_state",)
    fields_desc = [
        BitEnumField("cc_type", 0, 4, PDS_CC_TYPES),
        BitField("cc_flags", 0, 4),
    ] + _ack_cc_common() + [
        # NSCC state (cc_type 0): bytes 24-29
        ConditionalField(XShortField("service_time", 0), lambda p: p.cc_type == 0),
        ConditionalField(BitField("restore_cwnd", 0, 1), lambda p: p.cc_type == 0),
        ConditionalField(BitField("rcv_cwnd_pend", 0, 7), lambda p: p.cc_type == 0),
        ConditionalField(ThreeBytesField("rcvd_bytes", 0), lambda p: p.cc_type == 0),
        # Credit state (cc_type 1): bytes 24-29
        ConditionalField(ThreeBytesField("credit", 0), lambda p: p.cc_type == 1),
        ConditionalField(X3BytesField("rsvd_credit", 0), lambda p: p.cc_type == 1),
        # Any other cc_type: the 6 state bytes are kept but not interpreted
        ConditionalField(StrFixedLenField("cc_state", b"\0" * 6, 6),
                         lambda p: p.cc_type not in (0, 1)),
        XShortField("ooo_count", 0),
    ]

    def guess_payload_class(self, payload):
        return _ses_class(getattr(self.underlayer, "next_hdr", None))


class UET_PDS_ACK_CCX(_UETPacket):
    """ACK_CCX bytes 12-39: ccx_type | cc_flags (choice ack-ccx-type), mpr, sack_psn_offset,
    sack_bitmap, 16 bytes of CCX state (choice ccx-state-size)."""
    name = "UET PDS ACK_CCX extension"
    uet_header = "uet.pds.ack_ccx"
    uet_prefix = "uet.pds."
    uet_size = 28
    fields_desc = [
        BitEnumField("ccx_type", 0, 4, PDS_CCX_TYPES),
        BitField("cc_flags", 0, 4),
    ] + _ack_cc_common() + [
        StrFixedLenField("ccx_state", b"\0" * 16, 16),
    ]

    def guess_payload_class(self, payload):
        return _ses_class(getattr(self.underlayer, "next_hdr", None))


UET_PDS_ACK.uet_ext_types = {UET_PDS_ACK_CC: ACK_CC, UET_PDS_ACK_CCX: ACK_CCX}


class UET_PDS_NACK(_PDSPacket):
    """NACK, 16 bytes (type 10; and the first 16 bytes of NACK_CCX 12)."""
    name = "UET PDS NACK"
    uet_header = "uet.pds.nack"
    uet_size = 16
    uet_default_type = NACK
    uet_flag_fields = (("rsvd_f6", 1), ("m", 1), ("retx", 1), ("nt", 1), ("rsvd_f20", 3))
    uet_enum_versions = {"nack_code": "pds_nack_code"}   # TRIMMED_ACK is reserved from 1.0.3
    fields_desc = [
        BitEnumField("type", None, 5, PDS_TYPES),
        BitEnumField("next_hdr", None, 4, PDS_NEXT_HDRS),
        BitField("rsvd_f6", 0, 1),
        BitField("m", 0, 1),
        BitField("retx", 0, 1),
        BitField("nt", 0, 1),
        BitField("rsvd_f20", 0, 3),
        ByteEnumField("nack_code", 0x01, PDS_NACK_CODES),
        XByteField("vendor_code", 0),
        ConditionalField(IntField("nack_psn", 0), lambda p: p.nt == 0),
        ConditionalField(IntField("nack_pkt_id", 0), lambda p: p.nt == 1),
        XShortField("spdcid", 0),
        XShortField("dpdcid", 0),
        XIntField("nack_payload", 0),
    ]

    def guess_payload_class(self, payload):
        if self.type == NACK_CCX:
            return UET_PDS_NACK_CCX
        return _ses_class(self.next_hdr)


class UET_PDS_NACK_CCX(_UETPacket):
    """NACK_CCX bytes 16-31 (choices ccx-state-size, nack-ccx-layout):
    nccx_type(4) | the CCX state's first 4 bits | its other 15 bytes."""
    name = "UET PDS NACK_CCX extension"
    uet_header = "uet.pds.nack_ccx"
    uet_prefix = "uet.pds."
    uet_size = 16
    fields_desc = [
        BitEnumField("nccx_type", 0, 4, PDS_CCX_TYPES),
        BitField("nccx_state_head", 0, 4),
        StrFixedLenField("nccx_state", b"\0" * 15, 15),
    ]

    def guess_payload_class(self, payload):
        return _ses_class(getattr(self.underlayer, "next_hdr", None))


UET_PDS_NACK.uet_ext_types = {UET_PDS_NACK_CCX: NACK_CCX}


def _negotiation(pkt):
    """From spec 1.0.3 a NEGOTIATION control packet carries the 8-byte PDS_NEG_ON_OFF payload in place
    of the 4-byte one (choice cp-negotiation-payload)."""
    return pkt.ctl_type == 9 and holds("negotiation_payload")


class UET_PDS_CP(_PDSPacket):
    """Control packet, 16 bytes (type 11), 20 for a NEGOTIATION from spec 1.0.3. The CP subtype
    (ctl_type) sits where next_hdr is; a control packet carries no SES header."""
    name = "UET PDS control packet"
    uet_header = "uet.pds.cp"
    uet_size = 16
    uet_names = dict(_PDSPacket.uet_names, neg_type="uet.pds.neg.type", neg_length="uet.pds.neg.length",
                     syn_retx_transfer="uet.pds.neg.syn_retx_transfer")
    uet_require = {"neg_type": 1, "neg_length": 2}

    @classmethod
    def uet_node_bounds(cls, data):
        ctl_type = ((data[0] & 0x07) << 1 | data[1] >> 7) if len(data) >= 2 else 0
        return [12, 20] if ctl_type == 9 and holds("negotiation_payload") else [12, 16]

    def uet_features(self):
        return (self.rsvd_features << 1) | self.syn_retx_transfer
    uet_default_type = CP
    uet_flag_fields = (("rsvd_f6", 1), ("isrod", 1), ("retx", 1), ("ar", 1), ("syn", 1),
                       ("rsvd_f10", 2))
    fields_desc = [
        BitEnumField("type", None, 5, PDS_TYPES),
        BitEnumField("ctl_type", 0, 4, PDS_CTL_TYPES),
        BitField("rsvd_f6", 0, 1),
        BitField("isrod", 0, 1),
        BitField("retx", 0, 1),
        BitField("ar", 0, 1),
        BitField("syn", 0, 1),
        BitField("rsvd_f10", 0, 2),
        ConditionalField(XShortField("probe_opaque", 0), lambda p: p.ctl_type == 6),
        ConditionalField(XShortField("rsvd_2", 0), lambda p: p.ctl_type != 6),
        IntField("psn", 0),
        XShortField("spdcid", 0),
    ] + _syn_overlay() + [
        ConditionalField(IntField("cp_payload", 0), lambda p: not _negotiation(p)),
        ConditionalField(ByteField("neg_type", 1), _negotiation),
        ConditionalField(ByteField("neg_length", 2), _negotiation),
        ConditionalField(XShortField("rsvd_neg", 0), _negotiation),
        ConditionalField(BitField("rsvd_features", 0, 31), _negotiation),
        ConditionalField(BitField("syn_retx_transfer", 0, 1), _negotiation),
    ]

    def guess_payload_class(self, payload):
        return conf.raw_layer


# =============================================================================================
# I.7 SES headers. Request bytes 0-1: rsvd[7:6] opcode[5:0] | ver[7:6] dc ie rel hd eom som.
# Bytes 4-11: ri_generation(8) job_id(24) | rsvd(4) pid_on_fep(12) | rsvd(4) resource_index(12).


class _SESPacket(_UETPacket):
    uet_prefix = "uet.ses."
    uet_next_hdr_code = None

    def uet_choice_diagnostic(self, name, value):
        # choice job-id-zero-invalid: a request carries a JobID, and 0 is none.
        if name == "job_id" and value == 0:
            return "job_id_zero", "job-id-zero-invalid"
        return None

    def guess_payload_class(self, payload):
        if self.opcode in ATOMIC_OPCODES:
            return UET_SES_ATOMIC
        return conf.raw_layer


def _ses_request_tail():
    # A request built without a JobID carries 1, as one without a message_id carries message_id 1: 0 would
    # make it a job_id_zero frame (choice job-id-zero-invalid).
    return [
        ByteField("ri_generation", 0),
        X3BytesField("job_id", 1),
        BitField("rsvd_pid", 0, 4),
        BitField("pid_on_fep", 0, 12),
        BitField("rsvd_ri", 0, 4),
        BitField("resource_index", 0, 12),
    ]


def _ext_len(pay):
    """Bytes of SES extension headers at the start of a built payload chain."""
    n = 0
    while isinstance(pay, (UET_SES_ATOMIC, UET_SES_CAS, UET_SES_RENDEZVOUS)):
        n += pay.uet_size
        pay = pay.payload
    return n


def _patch14(pkt, offset, value):
    """Store a 14-bit value in bits 13..0 of the big-endian 16-bit word at `offset`."""
    word = ((pkt[offset] << 8) | pkt[offset + 1]) & 0xC000 | (value & 0x3FFF)
    return pkt[:offset] + bytes([word >> 8, word & 0xFF]) + pkt[offset + 2:]


def _ses_std_head(opcode):
    """Bytes 0-11 of the standard header (and of its deferrable / RTR forms)."""
    return [
        BitField("rsvd_op", 0, 2),
        BitEnumField("opcode", opcode, 6, SES_REQ_OPCODES),
        BitEnumField("version", 0, 2, SES_VERSIONS),
        BitField("dc", 0, 1),
        BitField("ie", 0, 1),
        BitField("rel", 0, 1),
        BitField("hd", 0, 1),
        BitField("eom", 1, 1),
        BitField("som", 1, 1),
        XShortField("message_id", 1),
    ] + _ses_request_tail()


def _ses_std_tail():
    """Bytes 20-43 of the standard header: initiator, memory key / match bits, then
    header_data (SOM=1) or reserved(18) payload_length(14) message_offset(32) (SOM=0),
    then request_length."""
    return [
        XIntField("initiator", 0),
        ConditionalField(XLongField("memory_key", 0), lambda p: p.opcode in MEMORY_KEY_OPCODES),
        ConditionalField(XLongField("match_bits", 0),
                         lambda p: p.opcode not in MEMORY_KEY_OPCODES),
        ConditionalField(XLongField("header_data", 0), lambda p: p.som == 1),
        ConditionalField(BitField("rsvd_pl", 0, 18), lambda p: p.som != 1),
        ConditionalField(BitField("payload_length", None, 14), lambda p: p.som != 1),
        ConditionalField(IntField("message_offset", 0), lambda p: p.som != 1),
        IntField("request_length", 0),
    ]


class _SESStd(_SESPacket):
    uet_header = "uet.ses.std"
    uet_size = 44
    uet_next_hdr_code = 3

    def uet_is_invalid(self, name, value):
        # message_id 0 is reserved; from spec 1.0.3 a UET_DATAGRAM_SEND carries 0, and UUD does not use
        # UET_MSG_ERROR (spec_versions in wire.yaml).
        if name == "message_id":
            if holds("datagram_message_id_zero") and self.opcode == UET_DATAGRAM_SEND:
                return value != 0
            return value == 0
        if name == "opcode" and holds("no_msg_error_in_uud"):
            return value == UET_MSG_ERROR and getattr(self.underlayer, "type", None) == UUD_REQ
        return False

    @classmethod
    def uet_node_bounds(cls, data):
        opcode = data[0] & 0x3F if data else 0
        return [12, 44] if opcode == UET_DEFERRABLE_RTR else [12, 20, 44]

    def uet_emit(self, name):
        if name == "header_data":
            return self.hd == 1
        return True

    def guess_payload_class(self, payload):
        if self.opcode in ATOMIC_OPCODES:             # choice atomic-ext-every-packet
            return UET_SES_ATOMIC
        if self.som == 1 and self.opcode in RENDEZVOUS_OPCODES:   # choice rendezvous-ext-som-only
            return UET_SES_RENDEZVOUS
        return conf.raw_layer

    def post_build(self, pkt, pay):
        if self.som != 1 and self.payload_length is None:
            pkt = _patch14(pkt, 34, len(pay) - _ext_len(self.payload))
        return pkt + pay


class UET_SES_STD(_SESStd):
    """Standard request header, 44 bytes (next_hdr 3), SOM=1 and SOM=0 forms.
    Dissecting opcodes 0x08/0x0B gives UET_SES_DEFERRABLE, opcode 0x0C UET_SES_RTR."""
    name = "UET SES standard request"
    fields_desc = _ses_std_head(UET_SEND) + [
        XLongField("buffer_offset", 0),
    ] + _ses_std_tail()

    @classmethod
    def dispatch_hook(cls, _pkt=None, *args, **kargs):
        if _pkt:
            opcode = _pkt[0] & 0x3F
            if opcode in DEFERRABLE_OPCODES:
                return UET_SES_DEFERRABLE
            if opcode == UET_DEFERRABLE_RTR:
                return UET_SES_RTR
        return cls


class UET_SES_DEFERRABLE(_SESStd):
    """Deferrable send (opcodes 0x08 UET_DEFERRABLE_SEND, 0x0B UET_DEFERRABLE_TSEND): the
    standard header with initiator_restart_token (bytes 12-15) and target_restart_token
    (bytes 16-19) in place of buffer_offset."""
    name = "UET SES deferrable send"
    fields_desc = _ses_std_head(UET_DEFERRABLE_SEND) + [
        XIntField("initiator_restart_token", 0),
        XIntField("target_restart_token", 0),
    ] + _ses_std_tail()


class UET_SES_RTR(_SESStd):
    """Ready-to-restart (opcode 0x0C UET_DEFERRABLE_RTR), 44 bytes: buffer_offset, initiator,
    initiator_restart_token (bytes 24-27), target_restart_token (28-31), header_data,
    request_length."""
    name = "UET SES ready-to-restart"
    fields_desc = _ses_std_head(UET_DEFERRABLE_RTR) + [
        XLongField("buffer_offset", 0),
        XIntField("initiator", 0),
        XIntField("initiator_restart_token", 0),
        XIntField("target_restart_token", 0),
        XLongField("header_data", 0),
        IntField("request_length", 0),
    ]

    def uet_emit(self, name):
        return True

    def guess_payload_class(self, payload):
        return conf.raw_layer

    def post_build(self, pkt, pay):
        return pkt + pay


class UET_SES_SMALL(_SESPacket):
    """Small request ("optimized non-matching") header, 20 bytes (next_hdr 1)."""
    name = "UET SES small (optimized non-matching) request"
    uet_header = "uet.ses.small"
    uet_size = 20
    uet_next_hdr_code = 1
    fields_desc = [
        BitField("rsvd_op", 0, 2),
        BitEnumField("opcode", UET_WRITE, 6, SES_REQ_OPCODES),
        BitEnumField("version", 0, 2, SES_VERSIONS),
        BitField("dc", 0, 1),
        BitField("ie", 0, 1),
        BitField("rel", 0, 1),
        BitField("rsvd_hd", 0, 1),
        BitField("eom", 1, 1),
        BitField("som", 1, 1),
        BitField("rsvd_len", 0, 2),
        BitField("request_length", 0, 14),
    ] + _ses_request_tail() + [
        XLongField("buffer_offset", 0),
    ]


class UET_SES_MEDIUM(_SESPacket):
    """Medium request ("small message / small RMA") header, 32 bytes (next_hdr 2)."""
    name = "UET SES medium (small message / small RMA) request"
    uet_header = "uet.ses.medium"
    uet_size = 32
    uet_next_hdr_code = 2
    fields_desc = [
        BitField("rsvd_op", 0, 2),
        BitEnumField("opcode", UET_SEND, 6, SES_REQ_OPCODES),
        BitEnumField("version", 0, 2, SES_VERSIONS),
        BitField("dc", 0, 1),
        BitField("ie", 0, 1),
        BitField("rel", 0, 1),
        BitField("hd", 0, 1),
        BitField("eom", 1, 1),
        BitField("som", 1, 1),
        BitField("rsvd_len", 0, 2),
        BitField("request_length", 0, 14),
    ] + _ses_request_tail() + [
        ConditionalField(XLongField("header_data", 0), lambda p: p.hd == 1),
        ConditionalField(XLongField("buffer_offset", 0), lambda p: p.hd != 1),
        XIntField("initiator", 0),
        ConditionalField(XLongField("memory_key", 0), lambda p: p.opcode in MEMORY_KEY_OPCODES),
        ConditionalField(XLongField("match_bits", 0),
                         lambda p: p.opcode not in MEMORY_KEY_OPCODES),
    ]

    def uet_is_invalid(self, name, value):
        # A datagram in this header only where spec 1.0.3 allows it (choice small-message-criteria).
        if name == "opcode" and value == UET_DATAGRAM_SEND and not holds("datagram_medium_header"):
            return True
        return _SESPacket.uet_is_invalid(self, name, value)


class UET_SES_ATOMIC(_UETPacket):
    """Atomic extension header, 4 bytes: atomic_opcode, atomic_datatype, semantic control
    (choice amo-semantic-control: 0x01 cacheable, 0x02 CPU-coherent), reserved."""
    name = "UET SES atomic extension"
    uet_header = "uet.ses.atomic"
    uet_prefix = "uet.ses."
    uet_size = 4
    uet_names = {"cpu_coherent": "uet.ses.semantic_control.cpu_coherent",
                 "cacheable": "uet.ses.semantic_control.cacheable"}
    fields_desc = [
        ByteEnumField("atomic_opcode", 0x02, AMO_OPCODES),
        ByteEnumField("atomic_datatype", 0x07, AMO_DATATYPES),
        BitField("rsvd_sc", 0, 6),
        BitField("cpu_coherent", 0, 1),
        BitField("cacheable", 0, 1),
        XByteField("rsvd", 0),
    ]

    def guess_payload_class(self, payload):
        if self.atomic_opcode in CAS_AMO_OPCODES:
            return UET_SES_CAS
        return conf.raw_layer


class UET_SES_CAS(_UETPacket):
    """Compare-and-swap extension: compare_value(16 bytes), swap_value(16 bytes), after the
    atomic extension (together the 36-byte CAS extension header of the digest)."""
    name = "UET SES compare-and-swap extension"
    uet_header = "uet.ses.cas"
    uet_prefix = "uet.ses."
    uet_size = 32
    fields_desc = [
        StrFixedLenField("compare_value", b"\0" * 16, 16),
        StrFixedLenField("swap_value", b"\0" * 16, 16),
    ]


class UET_SES_RENDEZVOUS(_UETPacket):
    """Rendezvous extension header, choice rendezvous-ext-layout (24 bytes):
    eager_length(32) | ri_generation(8) pid_on_fep(12) resource_index(12) | read_offset(64) |
    read_key(64)."""
    name = "UET SES rendezvous extension"
    uet_header = "uet.ses.rendezvous"
    uet_prefix = "uet.ses.rdv."
    uet_size = 24
    fields_desc = [
        IntField("eager_length", 0),
        ByteField("ri_generation", 0),
        BitField("pid_on_fep", 0, 12),
        BitField("resource_index", 0, 12),
        XLongField("read_offset", 0),
        XLongField("read_key", 0),
    ]


class _SESResponse(_UETPacket):
    uet_prefix = "uet.ses.rsp."

    @staticmethod
    def _head(opcode):
        return [
            BitEnumField("list", 0, 2, SES_LISTS),
            BitEnumField("opcode", opcode, 6, SES_RSP_OPCODES),
            BitEnumField("version", 0, 2, SES_VERSIONS),
            BitEnumField("return_code", 0x01, 6, SES_RETURN_CODES),
        ]


class UET_SES_RESPONSE(_SESResponse):
    """Response header, 12 bytes (next_hdr 4)."""
    name = "UET SES response"
    uet_header = "uet.ses.response"
    uet_size = 12
    uet_next_hdr_code = 4
    fields_desc = _SESResponse._head(0x01) + [
        XShortField("message_id", 1),
        ByteField("ri_generation", 0),
        X3BytesField("job_id", 0),
        IntField("modified_length", 0),
    ]


class UET_SES_RESPONSE_DATA(_SESResponse):
    """Response with data, 20 bytes + payload (next_hdr 5); payload_length is 14 bits
    (choice response-data-payload-length)."""
    name = "UET SES response with data"
    uet_header = "uet.ses.response_data"
    uet_size = 20
    uet_next_hdr_code = 5
    fields_desc = _SESResponse._head(0x02) + [
        XShortField("message_id", 1),
        XByteField("rsvd4", 0),
        X3BytesField("job_id", 0),
        XShortField("read_request_message_id", 0),
        BitField("rsvd_pl", 0, 2),
        BitField("payload_length", None, 14),
        IntField("modified_length", 0),
        IntField("message_offset", 0),
    ]

    def post_build(self, pkt, pay):
        if self.payload_length is None:
            pkt = _patch14(pkt, 10, len(pay))
        return pkt + pay


class UET_SES_RESPONSE_DATA_SMALL(_SESResponse):
    """Response with small data, 12 bytes (next_hdr 6; choice response-data-small-layout)."""
    name = "UET SES response with small data"
    uet_header = "uet.ses.response_data_small"
    uet_size = 12
    uet_next_hdr_code = 6
    fields_desc = _SESResponse._head(0x02) + [
        BitField("rsvd_pl", 0, 2),
        BitField("payload_length", None, 14),
        XByteField("rsvd4", 0),
        X3BytesField("job_id", 0),
        IntField("original_request_psn", 0),
    ]

    def post_build(self, pkt, pay):
        if self.payload_length is None:
            pkt = _patch14(pkt, 2, len(pay))
        return pkt + pay


# =============================================================================================
# Entry point after UDP / the entropy header: the first 5 bits say TSS (1) or the PDS type.

PDS_CLASSES = {
    RUD_REQ: UET_PDS_RUD_ROD_REQ, ROD_REQ: UET_PDS_RUD_ROD_REQ,
    RUD_CC_REQ: UET_PDS_RUD_ROD_REQ, ROD_CC_REQ: UET_PDS_RUD_ROD_REQ,
    RUDI_REQ: UET_PDS_RUDI, RUDI_RESP: UET_PDS_RUDI,
    UUD_REQ: UET_PDS_UUD,
    ACK: UET_PDS_ACK, ACK_CC: UET_PDS_ACK, ACK_CCX: UET_PDS_ACK,
    NACK: UET_PDS_NACK, NACK_CCX: UET_PDS_NACK,
    CP: UET_PDS_CP,
}


class UET(_UETPacket):
    """Dispatcher: dissecting UET(data) returns the TSS or PDS layer named by the first 5 bits.
    A PDS type that no layer handles decodes as this generic prologue."""
    name = "UET (unknown PDS type)"
    uet_header = "uet.pds"
    uet_prefix = "uet.pds."
    uet_size = 2
    fields_desc = [
        BitEnumField("type", 0, 5, PDS_TYPES),
        BitEnumField("next_hdr", 0, 4, PDS_NEXT_HDRS),
        BitField("flags", 0, 7),
    ]

    @classmethod
    def dispatch_hook(cls, _pkt=None, *args, **kargs):
        if _pkt:
            first = _pkt[0] >> 3
            if first == TSS:
                return UET_TSS
            return PDS_CLASSES.get(first, cls)
        return cls

    @staticmethod
    def class_for(first_byte):
        first = first_byte >> 3
        if first == TSS:
            return UET_TSS
        return PDS_CLASSES.get(first)


UET_PDS_FIRST_LAYERS = (UET_TSS, UET_PDS_RUD_ROD_REQ, UET_PDS_RUDI, UET_PDS_UUD, UET_PDS_ACK,
                        UET_PDS_NACK, UET_PDS_CP)

ALL_LAYERS = (UET_ENTROPY, UET_TSS, UET_PDS_RUD_ROD_REQ, UET_PDS_REQ_CC, UET_PDS_RUDI,
              UET_PDS_UUD, UET_PDS_ACK, UET_PDS_ACK_CC, UET_PDS_ACK_CCX, UET_PDS_NACK,
              UET_PDS_NACK_CCX, UET_PDS_CP, UET_SES_STD, UET_SES_DEFERRABLE, UET_SES_RTR,
              UET_SES_SMALL, UET_SES_MEDIUM,
              UET_SES_ATOMIC, UET_SES_CAS, UET_SES_RENDEZVOUS, UET_SES_RESPONSE,
              UET_SES_RESPONSE_DATA, UET_SES_RESPONSE_DATA_SMALL)


# =============================================================================================
# Bindings


def bind_uet_port(port):
    """Decode (and build by default) UET on UDP destination port `port` as well."""
    bind_bottom_up(UDP, UET, dport=port)
    for cls in UET_PDS_FIRST_LAYERS:
        bind_top_down(UDP, cls, dport=port)


def unbind_uet_port(port):
    """Stop dissecting UDP destination port `port` as UET."""
    split_bottom_up(UDP, UET, dport=port)


bind_uet_port(UDP_PORT)
bind_layers(IP, UET_ENTROPY, proto=UET_IP_PROTO)
bind_layers(IPv6, UET_ENTROPY, nh=UET_IP_PROTO)
