"""Cross-check of the two decoders on a capture: uet-decode (C++) against the Scapy layers, and both
against an expected decode when one is kept (the golden corpus).

Records follow codec/DECODE-OUTPUT.md; what is compared is listed there: status, layers, fields,
payload_len, uncertain, confidence, and the set of (kind, header, field) of the diagnostics. Both decoders
follow one spec version (spec/wire.yaml spec_versions; None means its default).
"""
from __future__ import annotations

import dataclasses
import json
import pathlib
import subprocess

COMPARED_KEYS = ("status", "layers", "fields", "payload_len", "uncertain", "confidence")


def comparable(record: dict) -> dict:
    out = {key: record.get(key) for key in COMPARED_KEYS}
    out["diagnostics"] = sorted({(d["kind"], d["header"], d.get("field")) for d in record.get("diagnostics", [])},
                                key=lambda t: tuple("" if x is None else str(x) for x in t))
    return out


def differences(left: dict, right: dict, left_name: str, right_name: str) -> list[str]:
    """Human-readable differences between two records, field by field."""
    a, b = comparable(left), comparable(right)
    out = []
    for key in ("status", "layers", "payload_len", "diagnostics"):
        if a[key] != b[key]:
            out.append(f"{key}: {left_name} {a[key]!r} != {right_name} {b[key]!r}")
    for key in ("fields", "uncertain", "confidence"):
        fa, fb = a[key] or {}, b[key] or {}
        for name in sorted(set(fa) | set(fb)):
            if fa.get(name, "<absent>") != fb.get(name, "<absent>"):
                out.append(f"{key}[{name}]: {left_name} {fa.get(name, '<absent>')!r} != "
                           f"{right_name} {fb.get(name, '<absent>')!r}")
    return out


class DecoderError(Exception):
    """A decoder could not decode the capture at all."""


def decode_cpp(uet_decode: pathlib.Path, pcap: pathlib.Path, port: int = 4793, timeout: int = 600,
               spec_version: str | None = None) -> list[dict]:
    version = ["--spec-version", spec_version] if spec_version else []
    proc = subprocess.run([str(uet_decode), "--port", str(port), *version, str(pcap)], capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise DecoderError(f"uet-decode {pcap}: exit {proc.returncode}: {proc.stderr.strip()}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def decode_scapy(pcap: pathlib.Path, port: int = 4793, spec_version: str | None = None) -> list[dict]:
    from scapy_uet import spec  # imported late: Scapy takes a second to load
    from scapy_uet.pcapio import read_frames
    from scapy_uet.record import decode_record

    version = spec_version or spec.DEFAULT_VERSION
    return [decode_record(f.data, f.linktype, f.caplen, f.wirelen, udp_port=port, spec_version=version)
            for f in read_frames(str(pcap))]


@dataclasses.dataclass
class Disagreement:
    frame: int
    case: str
    between: str
    details: list[str]


@dataclasses.dataclass
class CrossCheck:
    capture: str
    frames: int
    counts: dict
    disagreements: list[Disagreement]

    @property
    def ok(self) -> bool:
        return not self.disagreements


def cross_check(pcap: pathlib.Path, uet_decode: pathlib.Path, port: int = 4793,
                expected: list[dict] | None = None, spec_version: str | None = None) -> CrossCheck:
    cpp = decode_cpp(uet_decode, pcap, port, spec_version=spec_version)
    scapy = decode_scapy(pcap, port, spec_version)
    problems: list[Disagreement] = []
    if len(cpp) != len(scapy):
        problems.append(Disagreement(0, "", "uet-decode/scapy", [f"frame count {len(cpp)} != {len(scapy)}"]))
    if expected is not None and len(expected) != len(cpp):
        problems.append(Disagreement(0, "", "uet-decode/expected", [f"frame count {len(cpp)} != {len(expected)}"]))
    counts = {"uet": 0, "malformed": 0, "non-uet": 0}
    for i, (c, s) in enumerate(zip(cpp, scapy)):
        counts[c["status"]] = counts.get(c["status"], 0) + 1
        case = expected[i].get("case", "") if expected and i < len(expected) else ""
        if diff := differences(c, s, "uet-decode", "scapy"):
            problems.append(Disagreement(i + 1, case, "uet-decode/scapy", diff))
        if expected and i < len(expected):
            if diff := differences(c, expected[i], "uet-decode", "expected"):
                problems.append(Disagreement(i + 1, case, "uet-decode/expected", diff))
            if diff := differences(s, expected[i], "scapy", "expected"):
                problems.append(Disagreement(i + 1, case, "scapy/expected", diff))
    return CrossCheck(str(pcap), len(cpp), counts, problems)


def golden_captures(folder: pathlib.Path) -> list[tuple[pathlib.Path, int, str | None]]:
    """(capture, UET port, spec version) for each capture listed in a corpus's manifest.json
    (captures/golden) and each spec version it keeps an expected decode for (None: the default only)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    return [(folder / entry["file"], int(entry.get("port", 4793)), version)
            for entry in manifest for version in entry.get("spec_versions") or [None]]


def expected_path(pcap: pathlib.Path, spec_version: str | None = None) -> pathlib.Path:
    """Where a capture's expected decode lies: <name>.expected.jsonl for the default spec version,
    <name>.<version>.expected.jsonl for another one."""
    from scapy_uet import spec

    base = pcap.name.rsplit(".", 1)[0]
    if spec_version and spec_version != spec.DEFAULT_VERSION:
        base += "." + spec_version
    return pcap.with_name(base + ".expected.jsonl")


def load_expected(pcap: pathlib.Path, spec_version: str | None = None) -> list[dict] | None:
    path = expected_path(pcap, spec_version)
    if not path.exists():
        return None
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
