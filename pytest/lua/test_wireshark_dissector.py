"""Wireshark with the generated uet.lua (build/share/uet/uet.lua) shows every golden capture as uet-decode
decodes it: frame by frame, every uet.* field uet-decode emits is shown with the same value and nothing
else is, each field that rests on a choice of spec/wire.yaml carries that choice's id, and each
diagnostic of a UET header is an expert info; each packet of a UDP GSO run is a uetsuite tree of its own.
Runs on Debian 12's Wireshark 4.0."""
import functools
import json
import pathlib
import random
import struct

import pytest

from harness.wire.decode_compare import DecodeSettings, cross_check, golden_captures, load_expected
from tshark_record import shown_frames

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "captures" / "golden"
CAPTURES = golden_captures(GOLDEN)

# Frames the two cannot agree on by design: (capture, case of the golden corpus) -> why. Each must still
# differ, so a stale entry fails.
NO_UDP_PAYLOAD = "Wireshark's UDP dissector calls no subdissector for an empty payload, so the `truncated` " \
                 "diagnostic of header uet has no frame to appear in"
BOGUS_IP_VERSION = "Wireshark's IP dissector stops at an IP version that does not match the link or ethertype; " \
                   "uet-decode reports invalid_value and decodes on"
BY_DESIGN = {
    ("malformed.pcap", "empty UDP payload to 4793 (IPv4)"): NO_UDP_PAYLOAD,
    ("malformed.pcap", "empty UDP payload to 4793 (IPv6)"): NO_UDP_PAYLOAD,
    ("port4800.pcap", "empty UDP payload to port 4800"): NO_UDP_PAYLOAD,
    ("malformed.pcap", "ethertype IPv4, version nibble 6 (ihl 5): ip.version invalid, decoding goes on"):
        BOGUS_IP_VERSION,
    ("malformed.pcap", "ethertype IPv6 carrying version 4 bits"): BOGUS_IP_VERSION,
    ("encap_ipv4.pcap", "version nibble 6 (ihl 5) under LINKTYPE_IPV4: ip.version is not 4"): BOGUS_IP_VERSION,
}


def uet_part(record: dict) -> tuple[dict, dict, set]:
    fields = {k: v for k, v in record["fields"].items() if k.startswith("uet.")}
    uncertain = {k: v for k, v in record.get("uncertain", {}).items() if k.startswith("uet.")}
    diagnostics = {(d["kind"], d["header"], d.get("field")) for d in record.get("diagnostics", [])
                   if d["header"].startswith("uet")}
    return fields, uncertain, diagnostics


def differences(record: dict, shown) -> list[str]:
    fields, uncertain, diagnostics = uet_part(record)
    out = [f"{name}: uet-decode {fields.get(name, '<absent>')!r} != tshark {shown.fields.get(name, '<absent>')!r}"
           for name in sorted(set(fields) | set(shown.fields)) if fields.get(name) != shown.fields.get(name)]
    if uncertain != shown.uncertain:
        out.append(f"choices: uet-decode {uncertain} != tshark {shown.uncertain}")
    if record.get("confidence", {}) != shown.confidence:
        out.append(f"confidence: uet-decode {record.get('confidence')} != tshark {shown.confidence}")
    if shown.errors:
        out.append(f"errors in tshark's view: {shown.errors}")
    if missing := diagnostics - shown.diagnostics:
        out.append(f"diagnostics not shown as expert infos: {sorted(missing, key=str)}")
    if shown.repeated:
        out.append(f"fields shown twice: {shown.repeated}")
    if record["status"] != "non-uet" and fields and shown.payload_len != record["payload_len"]:
        out.append(f"payload_len: uet-decode {record['payload_len']} != tshark {shown.payload_len}")
    if record.get("gso", {}) != shown.gso:
        out.append(f"gso: uet-decode {record.get('gso')} != tshark {shown.gso}")
    segments = record.get("segments", [])
    if len(segments) != len(shown.segments):
        out.append(f"GSO segments: uet-decode {len(segments)} != tshark {len(shown.segments)}")
    for i, (seg, seen) in enumerate(zip(segments, shown.segments), 1):
        out += [f"segment {i}: {d}" for d in differences(seg, seen)]
    return out


@functools.lru_cache(maxsize=None)
def decoded(pcap: pathlib.Path, port: int, settings: DecodeSettings, uet_decode, tshark) -> tuple[list, list]:
    """(uet-decode records, tshark frames) of one capture, both decoded under the same settings (spec
    version, TSS confidentiality offset), given to uet.lua as preferences."""
    prefs = ((["-o", f"uetsuite.spec_version:{settings.spec_version}"] if settings.spec_version else [])
             + (["-o", f"uetsuite.tss_conf_offset:{settings.tss_conf_offset}"] if settings.tss_conf_offset else []))
    ud = uet_decode("--port", port, *settings.uet_decode_args(), pcap)
    assert ud.returncode == 0, ud.stderr
    ts = tshark("-o", f"uetsuite.udp_port:{port}", *prefs, "-r", pcap, "-T", "json")
    assert ts.returncode == 0, ts.stderr
    assert "Lua: Error" not in ts.stderr and "Lua: Error" not in ts.stdout, ts.stderr
    return [json.loads(line) for line in ud.stdout.splitlines() if line.strip()], shown_frames(ts.stdout)


@pytest.mark.parametrize("pcap,port,version", CAPTURES,
                         ids=[p.name + (f"-{v.label()}" if v.label() else "") for p, _, v in CAPTURES])
class TestWiresharkShowsWhatUetDecodeDecodes:
    def test_every_uet_field_value_choice_and_diagnostic(self, pcap, port, version, cmd_uet_decode, cmd_tshark):
        records, shown = decoded(pcap, port, version, cmd_uet_decode, cmd_tshark)
        assert len(shown) == len(records), f"tshark read {len(shown)} frames, uet-decode {len(records)}"
        cases = [r["case"] for r in load_expected(pcap, version)]
        report, compared = [], 0
        for record, frame, case in zip(records, shown, cases):
            key = (pcap.name, case)
            diff = differences(record, frame)
            if key in BY_DESIGN:
                assert diff, f"frame {key} is listed as differing by design ({BY_DESIGN[key]}) but agrees"
            elif diff:
                report.append(f"frame {record['frame']}: " + "; ".join(diff))
            else:
                compared += len(uet_part(record)[0])
        assert not report, "\n".join(report[:40])
        # Not vacuous: every capture of the corpus has UET frames.
        assert compared > 0, f"no uet.* field of {pcap.name} was compared"


def test_choices_are_marked(cmd_uet_decode, cmd_tshark):
    """Every field uet-decode decodes under an `uncertain:` choice carries the choice id in tshark's tree,
    and the corpus has such fields under several choices."""
    marked = {}
    for pcap, port, version in CAPTURES:
        records, shown = decoded(pcap, port, version, cmd_uet_decode, cmd_tshark)
        for record, frame in zip(records, shown):
            for name, choice in uet_part(record)[1].items():
                assert frame.uncertain.get(name) == choice, f"{pcap.name} frame {record['frame']}: {name} not marked"
                marked.setdefault(choice, set()).add(name)
    assert {"tss-layout", "rendezvous-ext-layout", "amo-semantic-control"} <= set(marked), marked


def test_loads_beside_a_builtin_uet_protocol(cmd_tshark, tmp_path):
    """Newer Wireshark registers a protocol "uet" with uet.* fields before any Lua script runs. With a stand-in
    for it loaded first (the name, and a field of ours under the same name and type), uet.lua still loads
    and dissects, and a filter on the shared name finds its items."""
    standin = tmp_path / "builtin_uet.lua"
    standin.write_text('local p = Proto("uet", "stand-in for a built-in UET dissector")\n'
                       'p.fields = { ProtoField.uint32("uet.pds.psn", "PSN") }\n')
    shown = cmd_tshark("-r", GOLDEN / "pds.pcap", "-Y", "uet.pds.psn == 100", "-T", "fields", "-e", "frame.protocols",
                       load_first=[standin])
    assert shown.returncode == 0 and "Lua: Error" not in shown.stderr, shown.stderr
    assert shown.stdout.split() == ["eth:ethertype:ip:udp:uetsuite"], shown.stdout


def random_uet_frames(rng: random.Random, count: int) -> list[bytes]:
    """Ethernet/IPv4 frames to UDP port 4793, and to IP protocol 253 with an entropy header, whose UET bytes
    are random after a first byte that walks through every 5-bit type: most headers and values come up,
    complete, truncated, reserved bits set and unknown values."""
    frames = []
    for i in range(count):
        uet = bytes([(i % 32) << 3 | rng.randrange(8)]) + rng.randbytes(rng.randrange(100))
        over_udp = i % 4 != 3
        inner = (struct.pack("!HHHH", 0xC001, 4793, 8 + len(uet), 0) if over_udp else rng.randbytes(4)) + uet
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(inner), i, 0, 64, 17 if over_udp else 253, 0,
                         bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
        frames.append(bytes.fromhex("020000000002020000000001") + struct.pack("!H", 0x0800) + ip + inner)
    return frames


def random_gso_frames(rng: random.Random, count: int) -> list[bytes]:
    """Ethernet/IPv4/UDP frames holding a UET packet of the GSO corpus (gso.pcap) and then copies of it with a
    random byte or two changed, cut short or followed by random bytes: runs that hold, end early, or never
    start, segments with diagnostics of their own."""
    from scapy_uet.pcapio import read_frames

    firsts = []
    for frame in read_frames(str(GOLDEN / "gso.pcap")):
        udp_len = struct.unpack("!H", frame.data[38:40])[0]
        if frame.caplen == frame.wirelen and frame.data[23] == 17:
            firsts.append(frame.data[42:34 + udp_len])
    frames = []
    for i in range(count):
        datagram = rng.choice(firsts)
        packet = bytearray(datagram[:rng.randrange(12, len(datagram) + 1)])
        uet = bytearray()
        for _ in range(rng.randrange(1, 5)):
            copy = bytearray(packet)
            for _ in range(rng.randrange(3)):
                copy[rng.randrange(len(copy))] ^= 1 << rng.randrange(8)
            uet += copy
        uet += rng.randbytes(rng.choice([0, 0, rng.randrange(1, 40)]))
        udp = struct.pack("!HHHH", 0xC001, 4793, 8 + len(uet), 0) + bytes(uet)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i, 0, 64, 17, 0,
                         bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
        frames.append(bytes.fromhex("020000000002020000000001") + struct.pack("!H", 0x0800) + ip + udp)
    return frames


def test_gso_runs_are_decoded_alike_by_all_three_decoders(capture_file, cmd_uet_decode, cmd_tshark, build_dir):
    pcap = capture_file(random_gso_frames(random.Random(4794), 400))
    check = cross_check(pcap, build_dir / "bin" / "uet-decode")
    assert check.ok, "\n".join(f"frame {d.frame}: {d.details}" for d in check.disagreements[:20])
    records, shown = decoded(pcap, 4793, DecodeSettings(), cmd_uet_decode, cmd_tshark)
    assert len(shown) == len(records) == 400
    report = [f"frame {r['frame']}: " + "; ".join(d) for r, s in zip(records, shown) if (d := differences(r, s))]
    assert not report, "\n".join(report[:40])
    runs = [r for r in records if "gso" in r]
    assert len(runs) > 100, "the frames should hold many runs"
    assert any(r["diagnostics"] for r in runs), "some runs should end before their datagram does"
    assert any(s["diagnostics"] for r in runs for s in r["segments"]), "some segments should carry diagnostics"


def test_random_uet_bytes_are_shown_as_uet_decode_decodes_them(capture_file, cmd_uet_decode, cmd_tshark):
    pcap = capture_file(random_uet_frames(random.Random(4793), 640))
    records, shown = decoded(pcap, 4793, DecodeSettings(), cmd_uet_decode, cmd_tshark)
    assert len(shown) == len(records) == 640
    report = [f"frame {r['frame']}: " + "; ".join(d) for r, s in zip(records, shown) if (d := differences(r, s))]
    assert not report, "\n".join(report[:40])
    assert sum(bool(uet_part(r)[2]) for r in records) > 100, "the random frames should carry many diagnostics"
