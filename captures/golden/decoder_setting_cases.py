"""Golden frames whose decode depends on a decoder setting, for make_golden.py: another UDP port
(port4800.pcap, --port) and the spec version (spec_versions.pcap, 1.0.1 and 1.0.3)."""

from golden_build import *  # noqa: F401,F403

def port_alt():
    c = Capture("port%d.pcap" % ALT_PORT, 1, "UET on UDP port %d: decode with --port %d"
                % (ALT_PORT, ALT_PORT), port=ALT_PORT)
    c.add("UET on UDP %d (IPv4)" % ALT_PORT,
          v4(req(), UET_SES_STD(message_id=1), pay(4), dport=ALT_PORT))
    c.add("UET on UDP %d (IPv6), ACK + response" % ALT_PORT,
          v6(UET_PDS_ACK(cack_psn=1), UET_SES_RESPONSE(message_id=1), dport=ALT_PORT))
    c.add("UET to UDP 4793 is not UET when the port is %d" % ALT_PORT,
          v4(req(), UET_SES_STD(message_id=1), pay(4)), status="non-uet",
          layers=["eth", "ip", "udp"])
    c.add("empty UDP payload to port %d" % ALT_PORT, eth() / ip4() / udp(dport=ALT_PORT),
          diags=[("truncated", "uet", None)])
    c.add("UET over IP protocol 253 does not depend on the port",
          eth() / ip4() / UET_ENTROPY(entropy=2) / UET_PDS_UUD())
    return c


def spec_versions():
    """Frames whose decode differs between spec 1.0.1 and 1.0.3 (spec_versions in wire.yaml)."""
    c = Capture("spec_versions.pcap", 1, "frames that decode differently by spec version 1.0.1 and 1.0.3: "
                "TRIMMED_ACK, the NEGOTIATION payload, message_id of UET_DATAGRAM_SEND, UET_MSG_ERROR in UUD",
                versions=["1.0.1", "1.0.3"])
    U, I, T = "unknown_value", "invalid_value", "truncated"
    c.add("NACK code 0x03 TRIMMED_ACK (reserved from 1.0.3)",
          v4(UET_PDS_NACK(nack_code=0x03, nack_psn=0x10, spdcid=0x11, dpdcid=0x22)),
          by_version={"1.0.3": dict(diags=[(U, "uet.pds.nack", "uet.pds.nack_code")])})
    negotiation = dict(ctl_type=9, psn=0x900, spdcid=0x33, dpdcid=0x44)
    # Read by 1.0.1, a control packet ends after its 4-byte payload: the other 4 bytes trail it.
    trails = {"1.0.1": dict(diags=[("trailing_bytes", "uet.pds.cp", None)])}
    c.add("NEGOTIATION with the 1.0.3 PDS_NEG_ON_OFF payload 01 02 00 00 00 00 00 01",
          v4(UET_PDS_CP(syn_retx_transfer=1, **negotiation)), build_version="1.0.3", by_version=trails)
    c.add("NEGOTIATION, SYN_RETX_TRANSFER off",
          v4(UET_PDS_CP(syn_retx_transfer=0, **negotiation)), build_version="1.0.3", by_version=trails)
    c.add("NEGOTIATION with neg_type 2 and neg_length 3",
          v4(UET_PDS_CP(neg_type=2, neg_length=3, **negotiation)), build_version="1.0.3",
          by_version=dict(trails, **{"1.0.3": dict(diags=[(I, "uet.pds.cp", "uet.pds.neg.type"),
                                                          (I, "uet.pds.cp", "uet.pds.neg.length")])}))
    c.add("NEGOTIATION with the generic 4-byte payload (16 bytes)",
          v4(UET_PDS_CP(cp_payload=0x0102, **negotiation)),
          by_version={"1.0.3": dict(diags=[(T, "uet.pds.cp", None)])})
    datagram = dict(opcode=UET_DATAGRAM_SEND, request_length=4, job_id=0x123)
    c.add("UET_DATAGRAM_SEND with message_id 0 (what 1.0.3 asks)",
          v4(UET_PDS_UUD(), UET_SES_STD(message_id=0, **datagram), pay(4)),
          diags=[(I, "uet.ses.std", "uet.ses.message_id")], by_version={"1.0.3": dict(diags=())})
    c.add("UET_DATAGRAM_SEND with message_id 5",
          v4(UET_PDS_UUD(), UET_SES_STD(message_id=5, **datagram), pay(4)),
          by_version={"1.0.3": dict(diags=[(I, "uet.ses.std", "uet.ses.message_id")])})
    c.add("UET_MSG_ERROR over UUD (not used in UUD from 1.0.3)",
          v4(UET_PDS_UUD(), UET_SES_STD(opcode=UET_MSG_ERROR, message_id=6, request_length=0)),
          by_version={"1.0.3": dict(diags=[(I, "uet.ses.std", "uet.ses.opcode")])})
    c.add("UET_MSG_ERROR over RUD (both versions)",
          v4(req(), UET_SES_STD(opcode=UET_MSG_ERROR, message_id=7, request_length=0)))
    c.add("UET_SEND with message_id 0 over RUD (invalid in both)",
          v4(req(), UET_SES_STD(opcode=UET_SEND, message_id=0, request_length=4), pay(4)),
          diags=[(I, "uet.ses.std", "uet.ses.message_id")])
    c.add("single-packet UET_DATAGRAM_SEND in the medium header (allowed from 1.0.3)",
          v4(UET_PDS_UUD(), UET_SES_MEDIUM(opcode=UET_DATAGRAM_SEND, request_length=4, job_id=0x123), pay(4)),
          diags=[(I, "uet.ses.medium", "uet.ses.opcode")], by_version={"1.0.3": dict(diags=())})
    return c
