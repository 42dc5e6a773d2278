"""Golden frames of secured UET packets whose first bytes after the TSS header are clear text, for
make_golden.py (tss_clear.pcap).

Choice tss-coverage of spec/wire.yaml: by default nothing after the TSS header is decoded (it is
ciphertext and a 16-byte ICV). A secure domain may leave a confidentiality offset of clear text after
it (the reference provider configures one per secure domain); given that offset, the decoders decode
those bytes from the PDS header on, never the ICV. The file keeps an expected decode with no offset
and one per offset in CONF_OFFSETS, where the same frames decode further or are cut short.

make_golden.py passes golden_build as `g`: its frame builders (eth, ip4, v4, v6, req, pay, ...).
"""

from scapy_uet.layers import (UET_ENTROPY, UET_PDS_ACK, UET_PDS_UUD, UET_SES_RENDEZVOUS, UET_SES_RESPONSE,
                              UET_SES_STD, UET_TSS, UET_DATAGRAM_SEND, UET_RENDEZVOUS_SEND, UET_SEND)

# 16 bytes of clear text cover a PDS request header (12) but not the SES standard header after it;
# 56 cover both (12 + 44).
CONF_OFFSETS = (16, 56)
ICV = 16
T = "truncated"
ENCAP_TSS = ["eth", "ip", "udp", "uet.tss"]
RUD = "uet.pds.rud_rod_req"


def tss_clear(g):
    c = g.Capture("tss_clear.pcap", 1, "secured packets whose PDS and SES headers are clear text after the TSS "
                  "header, decoded with no confidentiality offset and with offsets 16 and 56",
                  conf_offsets=CONF_OFFSETS)
    send = [g.req(), UET_SES_STD(opcode=UET_SEND, message_id=0x21, job_id=0x1234, request_length=64)]
    c.add("TSS SP=0 + RUD request + SEND + 64 ciphertext bytes + ICV",
          g.v4(UET_TSS(sp=0, sdi=0x42, epoch=1, tsc=0x99), *send, g.pay(64 + ICV)),
          layers=ENCAP_TSS, by_offset={16: dict(diags=[(T, "uet.ses.std", None)], layers=ENCAP_TSS + [RUD]),
                                        56: dict(layers=None)})
    c.add("TSS SP=1 + ACK + response (clear up to the offset, the rest ciphertext and ICV)",
          g.v6(UET_TSS(sp=1, an=1, sdi=0x77, ssi=5, epoch=2, tsc=3),
               UET_PDS_ACK(cack_psn=0x100, spdcid=1, dpdcid=2), UET_SES_RESPONSE(message_id=0x21), g.pay(40 + ICV)),
          layers=["eth", "ipv6", "udp", "uet.tss"],
          by_offset={16: dict(diags=[(T, "uet.ses.response", None)],
                              layers=["eth", "ipv6", "udp", "uet.tss", "uet.pds.ack"]),
                     56: dict(layers=None)})
    c.add("TSS + RUD request + rendezvous SEND: the extension header lies past offset 56",
          g.v4(UET_TSS(sdi=0x43, tsc=4), g.req(),
               UET_SES_STD(opcode=UET_RENDEZVOUS_SEND, message_id=0x22, job_id=0x1234, request_length=9000),
               UET_SES_RENDEZVOUS(eager_length=0, read_key=0x77), g.pay(ICV)),
          layers=ENCAP_TSS,
          by_offset={16: dict(diags=[(T, "uet.ses.std", None)], layers=ENCAP_TSS + [RUD]),
                     56: dict(diags=[(T, "uet.ses.rendezvous", None)], layers=ENCAP_TSS + [RUD, "uet.ses.std"])})
    c.add("IP protocol 253: entropy + TSS + UUD datagram (clear PDS and SES)",
          g.eth() / g.ip4(proto=253) / UET_ENTROPY(entropy=7) / UET_TSS(sdi=0x44, tsc=5) / UET_PDS_UUD() /
          UET_SES_STD(opcode=UET_DATAGRAM_SEND, message_id=1, job_id=0x1234, request_length=8) / g.pay(8 + ICV),
          layers=["eth", "ip", "uet.entropy", "uet.tss"],
          by_offset={16: dict(diags=[(T, "uet.ses.std", None)],
                              layers=["eth", "ip", "uet.entropy", "uet.tss", "uet.pds.uud"]),
                     56: dict(layers=None)})
    c.add("TSS followed by the ICV alone: no clear text whatever the offset",
          g.v4(UET_TSS(sdi=0x45, tsc=6), g.pay(ICV)),
          layers=ENCAP_TSS, by_offset={16: dict(diags=[(T, "uet.pds", None)]),
                                        56: dict(diags=[(T, "uet.pds", None)])})
    c.add("TSS + a 12-byte PDS header + ICV: the offset stops at the ICV, never decoding it",
          g.v4(UET_TSS(sdi=0x46, tsc=7), g.req(), g.pay(ICV)),
          layers=ENCAP_TSS, by_offset={16: dict(layers=None), 56: dict(layers=None)})
    return c
