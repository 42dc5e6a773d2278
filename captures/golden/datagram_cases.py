"""Golden frames about whole datagrams rather than single headers, for make_golden.py:

  * fragments.pcap: IP fragments, reassembled across frames as uet-decode and the Scapy capture
    reader do (codec/DECODE-OUTPUT.md, "IP fragments");
  * trailing.pcap: bytes after a complete UET packet in one datagram that form no further packet (junk);
    several packets at a fixed stride, as UDP segmentation offload sends them, are gso_cases.py's.

make_golden.py passes golden_build as `g`: its frame builders (eth, ip4, v4, req, pay, ...) and captures.
"""

from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6ExtHdrFragment
from scapy.packet import Raw

from scapy_uet.layers import (UET_ATOMIC, UET_PDS_ACK, UET_PDS_CP, UET_PDS_RUD_ROD_REQ, UET_SES_ATOMIC,
                              UET_SES_RESPONSE, UET_SES_RESPONSE_DATA, UET_SES_STD, UET_SEND)

O, X = "fragment_overlap", "fragment_inconsistent"


def _send(g, message_id, length):
    """A RUD request with a standard SEND of `length` payload bytes: UDP payload 56 + length bytes."""
    return [g.req(), UET_SES_STD(opcode=UET_SEND, message_id=message_id, job_id=0x1234,
                                 request_length=length), g.pay(length, seed=message_id)]


def _udp_datagram(g, layers):
    """The bytes of UDP header + UET layers (checksums computed), what IP fragments carry."""
    pkt = g.udp()
    for layer in layers:
        pkt = pkt / layer
    return bytes(pkt)


def _v4_piece(g, data, ident, start, length, last):
    return (g.eth() / g.ip4(id=ident, proto=17, flags=0 if last else "MF", frag=start // 8) /
            Raw(data[start:start + length]))


def _v6_piece(g, data, ident, start, length, last):
    return (g.eth() / g.ip6() / IPv6ExtHdrFragment(nh=17, id=ident, offset=start // 8, m=0 if last else 1) /
            Raw(data[start:start + length]))


def _pieces(g, piece, data, ident, cuts):
    """Fragments of `data` cut at `cuts` (ascending offsets after 0); the last one ends the datagram."""
    bounds = [0] + list(cuts) + [len(data)]
    return [piece(g, data, ident, a, b - a, i == len(bounds) - 2) for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]


def fragments(g):
    c = g.ReassembledCapture("fragments.pcap", 1, "IP fragments reassembled across frames: IPv4 in 2 and 3 "
                             "fragments in and out of order, interleaved datagrams, lone first and non-first "
                             "fragments, IPv6, an atomic IPv6 fragment, overlapping and inconsistent fragments")
    n = lambda: len(c.frames)  # noqa: E731  (number of the frame last added)

    two = _pieces(g, _v4_piece, _udp_datagram(g, _send(g, 1, 72)), 0x101, [64])
    c.add("IPv4 datagram in 2 fragments: first (MF, offset 0)", two[0], status="fragment")
    c.add("IPv4 datagram in 2 fragments: last, completes it", two[1], reassembled_from=[n(), n() + 1])

    three = _pieces(g, _v4_piece, _udp_datagram(g, _send(g, 2, 100)), 0x102, [48, 96])
    c.add("IPv4 datagram in 3 fragments, in order: 1/3", three[0], status="fragment")
    c.add("IPv4 datagram in 3 fragments, in order: 2/3", three[1], status="fragment")
    c.add("IPv4 datagram in 3 fragments, in order: 3/3 completes it", three[2],
          reassembled_from=[n() - 1, n(), n() + 1])

    shuffled = _pieces(g, _v4_piece, _udp_datagram(g, _send(g, 3, 100)), 0x103, [48, 96])
    first = n() + 1
    c.add("IPv4 datagram in 3 fragments, out of order: the last arrives first", shuffled[2], status="fragment")
    c.add("IPv4 datagram in 3 fragments, out of order: then the first", shuffled[0], status="fragment")
    c.add("IPv4 datagram in 3 fragments, out of order: the middle one completes it", shuffled[1],
          reassembled_from=[first + 1, first + 2, first])

    a = _pieces(g, _v4_piece, _udp_datagram(g, _send(g, 4, 40)), 0x104, [48])
    b = _pieces(g, _v4_piece, _udp_datagram(g, _send(g, 5, 40)), 0x105, [48])
    first = n() + 1
    c.add("two datagrams interleaved: first fragment of id 0x104", a[0], status="fragment")
    c.add("two datagrams interleaved: first fragment of id 0x105", b[0], status="fragment")
    c.add("two datagrams interleaved: last fragment of id 0x105 completes it", b[1],
          reassembled_from=[first + 1, first + 2])
    c.add("two datagrams interleaved: last fragment of id 0x104 completes it", a[1],
          reassembled_from=[first, first + 3])

    lone = _pieces(g, _v4_piece, _udp_datagram(g, _send(g, 6, 72)), 0x106, [64])
    c.add("a lone non-first fragment (offset 64, the rest never captured): its bytes are not UDP",
          lone[1], status="fragment")
    lone = _pieces(g, _v4_piece, _udp_datagram(g, _send(g, 7, 72)), 0x107, [64])
    c.add("a lone first fragment (MF): not decoded as UDP/UET on its own", lone[0], status="fragment")

    six = _pieces(g, _v6_piece, _udp_datagram(g, _send(g, 8, 100)), 0x10108, [96])
    c.add("IPv6 datagram in 2 fragments (Fragment header): first", six[0], status="fragment")
    c.add("IPv6 datagram in 2 fragments: last completes it (the Fragment header goes)", six[1],
          reassembled_from=[n(), n() + 1])
    c.add("IPv6 atomic fragment (offset 0, M 0, RFC 6946): decoded on",
          g.eth() / g.ip6() / IPv6ExtHdrFragment(nh=17, id=0x10109) / g.udp() /
          UET_PDS_ACK(cack_psn=9, spdcid=1, dpdcid=2),
          layers=["eth", "ipv6", "ipv6.fraghdr", "udp", "uet.pds.ack"])

    data = _udp_datagram(g, _send(g, 10, 100))
    first = n() + 1
    c.add("overlapping fragments: bytes 0-63", _v4_piece(g, data, 0x10A, 0, 64, False), status="fragment")
    c.add("overlapping fragments: bytes 32-95 overlap the first and are not used",
          _v4_piece(g, data, 0x10A, 32, 64, False), diags=[(O, "ip", None)])
    c.add("overlapping fragments: the rest completes the datagram from the first and this one",
          _v4_piece(g, data, 0x10A, 64, len(data) - 64, True), reassembled_from=[first, first + 2])

    data = _udp_datagram(g, _send(g, 11, 100))
    first = n() + 1
    c.add("inconsistent fragments: the last (bytes 96-)", _v4_piece(g, data, 0x10B, 96, len(data) - 96, True),
          status="fragment")
    c.add("inconsistent fragments: another last fragment, 8 bytes shorter, is not used",
          _v4_piece(g, data, 0x10B, 96, len(data) - 104, True), diags=[(X, "ip", None)])
    c.add("inconsistent fragments: a fragment with more to come but 20 bytes (not a multiple of 8)",
          _v4_piece(g, data, 0x10B, 0, 20, False), diags=[(X, "ip", None)])
    c.add("inconsistent fragments: bytes 0-95 complete the datagram", _v4_piece(g, data, 0x10B, 0, 96, False),
          reassembled_from=[first + 3, first])
    return c.finish()


def trailing(g):
    c = g.Capture("trailing.pcap", 1, "bytes after a complete UET packet that form no further packet: junk after "
                  "an ACK, a control packet or a response")
    T = "trailing_bytes"
    c.add("an ACK followed by 5 bytes of junk", g.v4(UET_PDS_ACK(cack_psn=7), g.pay(5)),
          diags=[(T, "uet.pds.ack", None)])
    c.add("an ACK, then Ethernet padding beyond the UDP length: not trailing",
          g.v4(UET_PDS_ACK(cack_psn=8)) / g.Padding(load=b"\xAA" * 6))
    c.add("a control packet (ACK_REQUEST) followed by 8 bytes", g.v4(UET_PDS_CP(ctl_type=1, psn=3), g.pay(8)),
          diags=[(T, "uet.pds.cp", None)])
    c.add("a response without data followed by 4 bytes",
          g.v4(UET_PDS_ACK(cack_psn=9), UET_SES_RESPONSE(message_id=3), g.pay(4)),
          diags=[(T, "uet.ses.response", None)])
    c.add("a response with 8 bytes of data followed by 12 more",
          g.v4(UET_PDS_ACK(cack_psn=10), UET_SES_RESPONSE_DATA(message_id=4, payload_length=8), g.pay(20)),
          diags=[(T, "uet.ses.response_data", "uet.ses.rsp.payload_length")])
    c.add("an atomic SOM=0 packet with payload_length 8 and 8 operand bytes: no trailing bytes",
          g.v4(g.req(), UET_SES_STD(opcode=UET_ATOMIC, som=0, message_id=5, payload_length=8), UET_SES_ATOMIC(),
               g.pay(8)))
    return c
