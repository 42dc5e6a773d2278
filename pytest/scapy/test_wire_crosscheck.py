"""Cross-check of the hand-written layers against spec/wire.yaml.

The layers are an independent transcription of the digest; wire_interp.py is a tiny
interpreter of wire.yaml's UET nodes. For random UET payloads both must give the same UET
headers and field values, and flag reserved bits in the same headers. (The C++ decoder is
generated from wire.yaml; this is a quick local version of the differential test.)
"""

import random

from scapy.packet import Raw

from scapy_frames import eth_ip_udp
from scapy_uet import spec
from scapy_uet.record import decode_record
from wire_interp import decode_uet

PDS_LEN = {2: 12, 3: 12, 13: 16, 14: 16, 4: 8, 5: 8, 6: 4, 7: 12, 8: 32, 9: 40, 10: 16,
           12: 32, 11: 16}


def random_payload(rnd):
    n = rnd.choice([rnd.randint(0, 120), 120, 200])
    d = bytearray(rnd.getrandbits(8) for _ in range(n))
    if n >= 2:
        t = rnd.choice(list(range(1, 15)) + [rnd.randint(0, 31)])
        nh = rnd.choice(list(range(7)) + [rnd.randint(0, 15)])
        d[0] = (t << 3) | (nh >> 1)
        d[1] = ((nh & 1) << 7) | (d[1] & 0x7F)
        off = PDS_LEN.get(t, 0)
        if off and n > off + 1 and rnd.random() < 0.8:
            d[off] = (d[off] & 0xC0) | rnd.choice(list(range(16)) + [rnd.randint(0, 63)])
            if n > off + 44 and rnd.random() < 0.5:
                d[off + 44] = rnd.choice(range(0x0D, 0x14))
    return bytes(d)


class TestWireCrossCheck:
    def test_fields_layers_and_reserved_agree(self):
        rnd = random.Random(1)
        head = eth_ip_udp()
        for _ in range(3000):
            payload = random_payload(rnd)
            frame = bytes(head / Raw(payload))
            rec = decode_record(frame, 1, len(frame), len(frame))
            layers, fields, reserved, _pos = decode_uet(payload)
            mine = {k: v for k, v in rec["fields"].items() if k.startswith("uet")}
            assert mine == fields, payload.hex()
            assert [h for h in rec["layers"] if h.startswith("uet")] == layers, payload.hex()
            got_reserved = {d["header"] for d in rec["diagnostics"]
                            if d["kind"] == "reserved_nonzero"}
            assert got_reserved == reserved, payload.hex()

    def test_record_field_names_match_wire_yaml(self):
        """Every field a layer can report has a wire.yaml name in the same header, and every
        UET field of wire.yaml is reported by some layer."""
        from scapy.fields import ConditionalField
        from scapy_uet.layers import ALL_LAYERS, UET_PDS_CP, _PDSPacket
        wire = spec.wire_field_names()
        ours = {}
        for cls in ALL_LAYERS:
            pkt = cls()
            names = ours.setdefault(cls.uet_header, set())
            for fld in cls.fields_desc:
                if isinstance(fld, ConditionalField):
                    fld = fld.fld
                if fld.name.startswith("rsvd") or fld.name in cls.uet_noemit:
                    continue
                names.add(pkt.uet_record_name(fld.name))
            if issubclass(cls, _PDSPacket):
                names.add("uet.pds.flags")
            if cls is UET_PDS_CP:
                names.add("uet.pds.neg.features")   # the PDS_NEG_ON_OFF mask, emitted whole beside its bits
        ours["uet.pds"] = {"uet.pds.type"}        # emitted by the dispatch on the first byte
        for header, names in ours.items():
            assert names == wire.get(header, set()), header
        assert {h for h in wire if h.startswith("uet")} == set(ours)
