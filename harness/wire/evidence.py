"""The captures a run's cases made: each kept in the run folder with its decode (`.json`, uet-decode's
records), every UET frame decoded by both decoders (uet-decode and the Scapy layers) and cross-checked.
A disagreement is a harness error in the report, beside the case whose capture showed it: a verdict
that rests on a frame the two decoders read differently cannot be trusted. Then the wire oracle
(harness/wire/wire_oracle.py) judges each result from its kept capture."""
from __future__ import annotations

import pathlib

from harness.wire import capture_cap, wire_oracle
from harness.wire.decode_compare import DecoderError, capture_ports, cross_check, decode_cpp_head, kept_line
from harness.results.results import Result


def check_captures(results: list[Result], uet_decode: pathlib.Path, run_dir: pathlib.Path,
                   spec_version: str | None = None, cap: int = capture_cap.CAPTURE_CAP_BYTES) -> list[Result]:
    """Cross-checks every capture of `results` (their evidence['captures']), decoded by `spec_version`;
    returns the harness errors. Each capture and its decode are held to `cap` bytes (harness/wire/capture_cap.py):
    a capture cut at the cap has a `cut` in its entry and a note in its result. Each result's evidence gets
    the capture and decode paths relative to the run folder."""
    from scapy_uet.pcapio import PcapError  # imported late: the package loads Scapy

    errors = []
    for r in results:
        kept = []
        for entry in r.evidence.get("captures", []):
            pcap = pathlib.Path(entry["file"])
            if not pcap.exists():
                continue
            uet_ports = capture_ports(entry)  # each side's frames decoded under that side's UET port
            decoded = pcap.with_suffix(".json")
            try:
                cuts = [capture_cap.cut(pcap, max_bytes=cap)]
                records, whole = decode_cpp_head(uet_decode, pcap, uet_ports, cap, spec_version=spec_version)
                if not whole:  # its decode would pass the cap: the capture keeps the frames whose decode fits
                    cuts.append(capture_cap.cut(pcap, max_frames=len(records)))
                decoded.write_text("".join(kept_line(rec) for rec in records))
                check = cross_check(pcap, uet_decode, uet_ports, spec_version=spec_version)
            except (DecoderError, PcapError, OSError) as exc:
                errors.append(Result(r.cell, r.area, r.binary, f"{r.case} (decoder cross-check)", "error",
                                     reason=f"a decoder could not read {pcap.name}: {exc}"))
                continue
            ports = {k: entry[k] for k in ("port", "initiator_port") if isinstance(entry.get(k), int) and entry[k]}
            kept.append({"capture": rel(pcap, run_dir), "decoded": rel(decoded, run_dir), **ports, "frames": check.frames,
                         "uet_frames": check.counts.get("uet", 0), "disagreements": len(check.disagreements)})
            cut = capture_cap.record(entry, [c for c in cuts if c], cap, pcap.stat().st_size, check.frames)
            if cut:
                kept[-1]["cut"] = cut
                r.notes[f"capture {pcap.name}"] = capture_cap.note(cut)
            for d in check.disagreements[:3]:
                errors.append(Result(r.cell, r.area, r.binary, f"{r.case} (decoder cross-check)", "error",
                                     reason=f"the decoders disagree on frame {d.frame} of {pcap.name} ({d.between}): "
                                            + "; ".join(d.details[:3]),
                                     evidence={"capture": rel(pcap, run_dir)}))
        if kept:
            r.evidence["captures"] = kept
            r.evidence["capture"] = kept[0]["capture"]
            r.evidence["decoded"] = kept[0]["decoded"]
        # the capture kept, the binary's word on a wire check is judged where its provider cannot reach
        wire_oracle.apply(r, uet_decode=uet_decode, run_dir=run_dir, spec_version=spec_version)
    return errors


def rel(path: pathlib.Path, root: pathlib.Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
