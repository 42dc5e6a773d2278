"""scapy_uet.reassembly: the limit on datagrams held, and no exception whatever the fragments say."""
import random

from scapy.layers.inet import IP
from scapy.packet import Raw

from scapy_frames import IP_A, IP_B, MAC_A, MAC_B
from scapy.layers.l2 import Ether
from scapy_uet.pcapio import Frame
from scapy_uet.reassembly import Reassembler, decode_capture
from scapy_uet.record import decode_located


def piece(ident, start, data, more):
    return bytes(Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B, id=ident, proto=17, flags="MF" if more else 0,
                                                    frag=start // 8) / Raw(data))


def feed(reassembler, number, frame):
    record, ip_at, data_at = decode_located(frame, 1, len(frame), len(frame))
    return record, reassembler.add(number, frame, record, ip_at, data_at)


def test_the_limit_drops_the_datagram_held_longest():
    r = Reassembler(max_datagrams=2)
    for number, ident in enumerate((1, 2, 3), 1):
        feed(r, number, piece(ident, 0, bytes(64), True))
    assert len(r.held) == 2
    record, whole = feed(r, 4, piece(1, 64, bytes(8), False))   # datagram 1 was dropped
    assert whole is None and record["status"] == "fragment"
    _record, whole = feed(r, 5, piece(3, 64, bytes(8), False))
    assert whole is not None and whole[1] == [3, 5]


def test_any_fragments_decode_without_an_exception():
    rng = random.Random(5)
    frames = []
    for _ in range(400):
        start = rng.choice([0, 8, 16, 64, 65528, rng.randrange(0, 65536, 8)])
        data = bytes(rng.randrange(256) for _ in range(rng.choice([0, 3, 8, 16, 40])))
        frame = piece(rng.randrange(4), start, data, rng.random() < 0.6)
        frames.append(Frame(frame, 1, len(frame), len(frame), "0.000000"))
    records = list(decode_capture(frames))
    assert len(records) == 400
    assert not any(d["kind"] == "decoder_error" for rec in records for d in rec["diagnostics"])
    assert {rec["status"] for rec in records} >= {"fragment", "malformed"}
