"""Cross-check of the two decoders on a capture: uet-decode (C++) against the Scapy layers, and both
against an expected decode when one is kept (the golden corpus).

Records follow codec/DECODE-OUTPUT.md; what is compared is listed there: status, layers, fields,
payload_len, uncertain, confidence, gso, reassembled_from, the set of (kind, header, field, choice) of the
diagnostics, and the same of each GSO segment's record (segments). Both decoders
follow the same DecodeSettings: one spec version (spec/wire.yaml spec_versions; None means its default) and one
TSS confidentiality offset (choice tss-coverage; 0 by default).
"""
from __future__ import annotations

import dataclasses
import json
import pathlib
import subprocess
import tempfile
import threading

from harness.inputs.spec_versions import wire_data

@dataclasses.dataclass(frozen=True)
class DecodeSettings:
    """The decoder options besides the UDP port under which a capture is decoded (and its expected decode kept)."""
    spec_version: str | None = None   # None: spec_versions.default
    tss_conf_offset: int = 0          # bytes of clear text after a TSS header

    @classmethod
    def of(cls, settings: "DecodeSettings | str | None") -> "DecodeSettings":
        """Settings from settings, a spec version's name, or None (the defaults)."""
        return settings if isinstance(settings, DecodeSettings) else cls(spec_version=settings)

    def label(self) -> str:
        """"" for the defaults, else what differs, as expected files name it: "1.0.3", "conf24", "1.0.3.conf24"."""
        from scapy_uet import spec

        parts = [self.spec_version] if self.spec_version and self.spec_version != spec.DEFAULT_VERSION else []
        return ".".join(parts + ([f"conf{self.tss_conf_offset}"] if self.tss_conf_offset else []))

    def uet_decode_args(self) -> list[str]:
        return ((["--spec-version", self.spec_version] if self.spec_version else [])
                + (["--tss-conf-offset", str(self.tss_conf_offset)] if self.tss_conf_offset else []))


COMPARED_KEYS = ("status", "layers", "fields", "payload_len", "uncertain", "confidence", "gso", "reassembled_from")


def comparable(record: dict) -> dict:
    out = {key: record.get(key) for key in COMPARED_KEYS}
    out["diagnostics"] = sorted({(d["kind"], d["header"], d.get("field"), d.get("choice"))
                                 for d in record.get("diagnostics", [])},
                                key=lambda t: tuple("" if x is None else str(x) for x in t))
    return out


def differences(left: dict, right: dict, left_name: str, right_name: str) -> list[str]:
    """Human-readable differences between two records, field by field, and between their GSO segments."""
    a, b = comparable(left), comparable(right)
    out = []
    for key in ("status", "layers", "payload_len", "diagnostics", "gso", "reassembled_from"):
        if a[key] != b[key]:
            out.append(f"{key}: {left_name} {a[key]!r} != {right_name} {b[key]!r}")
    for key in ("fields", "uncertain", "confidence"):
        fa, fb = a[key] or {}, b[key] or {}
        for name in sorted(set(fa) | set(fb)):
            if fa.get(name, "<absent>") != fb.get(name, "<absent>"):
                out.append(f"{key}[{name}]: {left_name} {fa.get(name, '<absent>')!r} != "
                           f"{right_name} {fb.get(name, '<absent>')!r}")
    sa, sb = left.get("segments") or [], right.get("segments") or []
    if len(sa) != len(sb):
        out.append(f"segments: {left_name} has {len(sa)}, {right_name} {len(sb)}")
    for i, (x, y) in enumerate(zip(sa, sb), 1):
        out += [f"segment {i}: {d}" for d in differences(x, y, left_name, right_name)]
    return out


class DecoderError(Exception):
    """A decoder could not decode the capture at all."""


def ports_of(port: "int | tuple[int, ...]") -> tuple[int, ...]:
    return (port,) if isinstance(port, int) else tuple(port)


def capture_ports(entry: dict) -> tuple[int, ...]:
    """The UET ports a case's capture is decoded under, from its entry in the result's evidence: the target's
    ("port") and the initiator's ("initiator_port", an `auto` port the case learned), each side's frames under
    its own; UET's UDP port (spec/wire.yaml constants) only when the entry names neither."""
    ports = []
    for key in ("port", "initiator_port"):
        try:
            value = int(entry.get(key) or 0)
        except (TypeError, ValueError):
            continue
        if 0 < value < 65536 and value not in ports:
            ports.append(value)
    return tuple(ports) or (int(wire_data()["constants"]["udp_port"]["value"]),)


def _uet_decode_argv(uet_decode: pathlib.Path, pcap: pathlib.Path, port: "int | tuple[int, ...]",
                     spec_version: "DecodeSettings | str | None") -> list[str]:
    """Each side's port of a pair given: uet-decode decodes each datagram under the one it goes to."""
    ports = [arg for p in ports_of(port) for arg in ("--port", str(p))]
    return [str(uet_decode), *ports, *DecodeSettings.of(spec_version).uet_decode_args(), str(pcap)]


def decode_cpp(uet_decode: pathlib.Path, pcap: pathlib.Path, port: "int | tuple[int, ...]" = 4793, timeout: int = 600,
               spec_version: "DecodeSettings | str | None" = None) -> list[dict]:
    proc = subprocess.run(_uet_decode_argv(uet_decode, pcap, port, spec_version), capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise DecoderError(f"uet-decode {pcap}: exit {proc.returncode}: {proc.stderr.strip()}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def kept_line(record: dict) -> str:
    """A record as a decode kept beside its capture holds it: one JSON line."""
    return json.dumps(record) + "\n"


def decode_cpp_head(uet_decode: pathlib.Path, pcap: pathlib.Path, port: "int | tuple[int, ...]", max_bytes: int,
                    timeout: int = 600, spec_version: "DecodeSettings | str | None" = None) -> tuple[list[dict], bool]:
    """The first records of uet-decode's decode of `pcap` whose kept lines (kept_line) fit in `max_bytes`, and
    whether they are all of them. uet-decode is stopped at the first record past the budget: a capture of
    small frames decodes to many times its size, and the rest is never held in memory."""
    records, used, complete = [], 0, True
    with tempfile.TemporaryFile() as err, subprocess.Popen(
            _uet_decode_argv(uet_decode, pcap, port, spec_version), stdout=subprocess.PIPE, stderr=err,
            stdin=subprocess.DEVNULL, text=True) as proc:
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            for line in proc.stdout:
                if not line.strip():
                    continue
                record = json.loads(line)
                used += len(kept_line(record).encode())
                if used > max_bytes:
                    complete = False
                    proc.kill()
                    break
                records.append(record)
            proc.wait()
        finally:
            timer.cancel()
        if complete and proc.returncode != 0:
            err.seek(0)
            said = err.read(4096).decode(errors="replace").strip()
            raise DecoderError(f"uet-decode {pcap}: exit {proc.returncode}: {said}")
    return records, complete


def decode_scapy(pcap: pathlib.Path, port: "int | tuple[int, ...]" = 4793,
                 spec_version: "DecodeSettings | str | None" = None) -> list[dict]:
    port = port if len(ports_of(port)) > 1 else ports_of(port)[0]  # the Scapy layers take several ports at once
    from scapy_uet import spec  # imported late: Scapy takes a second to load
    from scapy_uet.pcapio import read_frames
    from scapy_uet.reassembly import decode_capture

    settings = DecodeSettings.of(spec_version)
    return list(decode_capture(read_frames(str(pcap)), port, settings.spec_version or spec.DEFAULT_VERSION,
                               settings.tss_conf_offset))


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


def cross_check(pcap: pathlib.Path, uet_decode: pathlib.Path, port: "int | tuple[int, ...]" = 4793,
                expected: list[dict] | None = None, spec_version: "DecodeSettings | str | None" = None) -> CrossCheck:
    cpp = decode_cpp(uet_decode, pcap, port, spec_version=spec_version)
    scapy = decode_scapy(pcap, port, spec_version)
    problems: list[Disagreement] = []
    if len(cpp) != len(scapy):
        problems.append(Disagreement(0, "", "uet-decode/scapy", [f"frame count {len(cpp)} != {len(scapy)}"]))
    if expected is not None and len(expected) != len(cpp):
        problems.append(Disagreement(0, "", "uet-decode/expected", [f"frame count {len(cpp)} != {len(expected)}"]))
    counts = {"uet": 0, "malformed": 0, "non-uet": 0, "fragment": 0}
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


def golden_captures(folder: pathlib.Path) -> list[tuple[pathlib.Path, int, DecodeSettings]]:
    """(capture, UET port, settings) for each capture listed in a corpus's manifest.json (captures/golden)
    and each way it keeps an expected decode for: each of its `spec_versions` (none listed: the default
    only), then each of its `tss_conf_offsets` under the default version."""
    manifest = json.loads((folder / "manifest.json").read_text())
    out = []
    for entry in manifest:
        settings = [DecodeSettings(v) for v in entry.get("spec_versions") or [None]]
        settings += [DecodeSettings(tss_conf_offset=int(n)) for n in entry.get("tss_conf_offsets") or []]
        out += [(folder / entry["file"], int(entry.get("port", 4793)), s) for s in settings]
    return out


def expected_path(pcap: pathlib.Path, spec_version: "DecodeSettings | str | None" = None) -> pathlib.Path:
    """Where a capture's expected decode lies: <name>.expected.jsonl under the default settings, else
    <name>.<label>.expected.jsonl (DecodeSettings.label: "1.0.3", "conf24")."""
    base = pcap.name.rsplit(".", 1)[0]
    label = DecodeSettings.of(spec_version).label()
    return pcap.with_name(base + (f".{label}" if label else "") + ".expected.jsonl")


def load_expected(pcap: pathlib.Path, spec_version: "DecodeSettings | str | None" = None) -> list[dict] | None:
    path = expected_path(pcap, spec_version)
    if not path.exists():
        return None
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
