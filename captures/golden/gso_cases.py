"""Golden frames of UDP GSO super-datagrams, for make_golden.py (gso.pcap).

A sender with UDP segmentation offload hands the kernel one datagram holding several UET packets at a fixed
stride (the last may be shorter), and a capture on the sending host shows it as one frame. The decoders
decode such a frame packet by packet: the stride is the first packet's own length, and every later segment
must be one whole packet laid out as the first (codec/DECODE-OUTPUT.md, "GSO runs"). The packets after the
first are given as bytes: the frame is what the capture shows, one datagram.

make_golden.py passes golden_build as `g`: its frame builders (eth, ip4, v4, v6, pay, ...), Capture and
GsoIntent.
"""

from scapy.packet import Raw

from scapy_uet.layers import (UET_ENTROPY, UET_PDS_ACK, UET_PDS_CP, UET_PDS_NACK, UET_PDS_RUD_ROD_REQ,
                              UET_SES_RESPONSE_DATA, UET_SES_STD, UET_SEND)

TRAILING = "trailing_bytes"
# The first packet's own end: a SOM=0 packet ends where its payload_length says.
AFTER_SEND = (TRAILING, "uet.ses.std", "uet.ses.payload_length")


def _send(psn, length, said=None, **ses):
    """A RUD request with a SOM=0 standard UET_SEND of `length` payload bytes (12 + 44 + length bytes);
    `said`: a payload_length other than the length. Given, not derived: the bytes after it in the frame are
    not its payload."""
    return (UET_PDS_RUD_ROD_REQ(psn=psn, spdcid=0x11, dpdcid=0x22) /
            UET_SES_STD(opcode=UET_SEND, som=0, eom=0, message_id=0x31,
                        payload_length=length if said is None else said,
                        message_offset=(psn - 1) * 32, request_length=0x1000, **ses) /
            Raw(bytes((psn * 16 + i) & 0xFF for i in range(length))))


def _ack(psn):
    return UET_PDS_ACK(cack_psn=psn, spdcid=0x22, dpdcid=0x11)


def _datagram(g, first, *rest, v6=False):
    """Ethernet / IP / UDP around `first` (built with the layers, its fields checked) and the bytes of the
    packets after it."""
    pkt = (g.v6 if v6 else g.v4)(first)
    for later in rest:
        pkt = pkt / Raw(bytes(later))
    return pkt


def gso(g):
    c = g.Capture("gso.pcap", 1, "UDP GSO super-datagrams: several UET packets at a fixed stride in one datagram, "
                  "decoded packet by packet; runs that end early, and datagrams that hold no run")
    stride = len(_send(1, 32))
    second, shorter = _send(2, 32), _send(3, 20)
    c.add("GSO run of 3 SOM=0 SENDs at stride 88, the last 12 bytes shorter",
          _datagram(g, _send(1, 32), second, shorter), gso=g.GsoIntent(3, stride, [second, shorter]))
    c.add("GSO run of 2 ACKs at stride 12", _datagram(g, _ack(5), _ack(6)), gso=g.GsoIntent(2, 12, [_ack(6)]))
    acks = [_ack(7), _ack(8)]
    c.add("GSO run of 3 ACKs over IPv6", _datagram(g, _ack(6), *acks, v6=True), gso=g.GsoIntent(3, 12, acks))
    no_job = _send(2, 32, job_id=0)
    c.add("GSO run whose 2nd segment carries JobID 0: job_id_zero in that segment's record",
          _datagram(g, _send(1, 32), no_job, shorter), status="malformed",
          gso=g.GsoIntent(3, stride, [no_job, shorter], diags={1: [("job_id_zero", "uet.ses.std", "uet.ses.job_id")]}))
    c.add("a SOM=0 SEND then 88 bytes of garbage: no run, the garbage is trailing_bytes",
          _datagram(g, _send(1, 32), Raw(bytes(stride))), diags=[AFTER_SEND])
    c.add("GSO run of 2 SENDs, then 30 bytes that form no segment: trailing_bytes after the run",
          _datagram(g, _send(1, 32), second, Raw(b"\xff" * 30)), diags=[AFTER_SEND],
          gso=g.GsoIntent(2, stride, [second]))
    c.add("a last segment whose payload_length says 32 but holds 20: not a segment, trailing_bytes after the run",
          _datagram(g, _send(1, 32), second, _send(3, 20, said=32)), diags=[AFTER_SEND],
          gso=g.GsoIntent(2, stride, [second]))
    c.add("a NACK then a control packet of the same length (16 bytes): another layout, no run",
          _datagram(g, UET_PDS_NACK(nack_code=1, nack_psn=4), UET_PDS_CP(ctl_type=1, psn=3)),
          diags=[(TRAILING, "uet.pds.nack", None)])
    c.add("a response with data then a SEND of the same length: another layout, no run",
          _datagram(g, UET_PDS_ACK(cack_psn=9) / UET_SES_RESPONSE_DATA(message_id=4, payload_length=56) / g.pay(56),
                    _send(1, 32)),
          diags=[(TRAILING, "uet.ses.response_data", "uet.ses.rsp.payload_length")])
    c.add("two ACKs after the entropy header (UET over IP protocol 253): GSO is UDP's, no run",
          g.eth() / g.ip4() / UET_ENTROPY(entropy=3) / _ack(5) / Raw(bytes(_ack(6))),
          diags=[(TRAILING, "uet.pds.ack", None)])
    c.add("a SOM=1 SEND, whose payload has no length of its own, then another packet: all of it is payload",
          _datagram(g, UET_PDS_RUD_ROD_REQ(psn=1) / UET_SES_STD(message_id=0x32, request_length=64) / g.pay(32),
                    second))
    c.add("a single SOM=0 SEND: no run, decoded as ever", _datagram(g, _send(1, 32)))
    c.add("GSO run of 3 SENDs captured with a snaplen 10 bytes into the last segment's payload",
          _datagram(g, _send(1, 32), second, shorter), snap=14 + 20 + 8 + 2 * stride + 56 + 10,
          gso=g.GsoIntent(3, stride, [second, shorter]))
    return c
