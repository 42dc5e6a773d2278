#!/usr/bin/python3
"""Decoder benchmark: uet-decode's frames per second against a bare libpcap read loop and the Scapy layers.

Builds a capture of --packets UET frames (default 1,000,000) by repeating every well-formed Ethernet frame
of the golden corpus (every header type and opcode), then, in this one run:
  - pcap-read-loop     reads every frame with libpcap and does nothing else (the practical limit);
  - uet-decode --count decodes every frame fully (all fields, all checks), printing only counts;
  - uet-decode --json  the same, writing every JSON record (to /dev/null);
  - the Scapy layers   decode_record() on a sample of --scapy-sample frames.
Each C++ figure is the best of --repeat runs. Prints the rates and the ratios the targets are stated in
(full decode >= 0.5 x the bare loop, >= 500 x Scapy), and writes them to out/bench/decode.json; each run
appends them to bench/records/decode.jsonl (bench/history.py), which --history prints (no build needed).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import struct
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import history  # noqa: E402  (bench/, this script's folder)

# The record's table: the ratios the targets are stated in, then the rates they are made of.
HISTORY_COLUMNS = [
    history.column("full/bare", "ratios", "full_vs_bare"),
    history.column("full/scapy", "ratios", "full_vs_scapy", fmt=".0f"),
    history.column("bare f/s", "rates_fps", "bare_libpcap_loop", fmt=",.0f"),
    history.column("full f/s", "rates_fps", "uet_decode_full", fmt=",.0f"),
    history.column("json f/s", "rates_fps", "uet_decode_json", fmt=",.0f"),
]
PCAP_HEADER = struct.Struct("<IHHiIII")
RECORD_HEADER = struct.Struct("<IIII")


def corpus_templates() -> list[bytes]:
    """Every Ethernet frame to port 4793 of the golden corpus whose expected decode is a clean UET frame."""
    sys.path.insert(0, str(REPO))
    from scapy_uet.pcapio import read_frames  # noqa: E402  (after the path is set)

    golden = REPO / "captures" / "golden"
    out = []
    for entry in json.loads((golden / "manifest.json").read_text()):
        pcap = golden / entry["file"]
        expected = pcap.with_name(pcap.name.rsplit(".", 1)[0] + ".expected.jsonl")
        records = [json.loads(line) for line in expected.read_text().splitlines() if line.strip()]
        for record, frame in zip(records, read_frames(str(pcap))):
            # A reassembled record is not its frame's decode: the frame itself is a fragment.
            if (frame.linktype == 1 and record["status"] == "uet" and frame.caplen == frame.wirelen
                    and "reassembled_from" not in record
                    and record["fields"].get("udp.dstport") == 4793):
                out.append(frame.data)
    if not out:
        raise SystemExit("decode_bench: no UET frames in captures/golden (see captures/golden/README.md)")
    return out


def write_capture(path: pathlib.Path, templates: list[bytes], packets: int) -> None:
    records = [RECORD_HEADER.pack(1700000000, 0, len(f), len(f)) + f for f in templates]
    with open(path, "wb") as fh:
        fh.write(PCAP_HEADER.pack(0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        full, rest = divmod(packets, len(records))
        block = b"".join(records)
        for _ in range(full):
            fh.write(block)
        fh.write(b"".join(records[:rest]))


def best_of(repeat: int, run) -> float:
    return min(run() for _ in range(repeat))


def timed(cmd: list[str], stdout=subprocess.DEVNULL) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"decode_bench: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed


def scapy_rate(templates: list[bytes], sample: int) -> float:
    sys.path.insert(0, str(REPO))
    from scapy_uet.record import decode_record  # noqa: E402  (after the path is set)

    frames = [templates[i % len(templates)] for i in range(sample)]
    start = time.perf_counter()
    for frame in frames:
        decode_record(frame, 1, len(frame), len(frame))
    return sample / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, default=REPO / "build", help="build tree with bin/uet-decode")
    parser.add_argument("--packets", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scapy-sample", type=int, default=3000)
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "bench")
    parser.add_argument("--history", action="store_true", help="print the record of earlier runs and exit")
    parser.add_argument("--no-record", action="store_true", help="do not append this run to bench/records/decode.jsonl")
    args = parser.parse_args()
    if args.history:
        return history.show("decode", HISTORY_COLUMNS, "Targets: full/bare >= 0.5, full/scapy >= 500.")
    if args.packets < 1 or args.repeat < 1 or args.scapy_sample < 1:
        parser.error("--packets, --repeat and --scapy-sample must be positive")
    decode_bin, loop_bin = args.build / "bin" / "uet-decode", args.build / "bin" / "pcap-read-loop"
    for tool in (decode_bin, loop_bin):
        if not tool.exists():
            parser.error(f"{tool} is not built (run ./uet build)")

    args.out.mkdir(parents=True, exist_ok=True)
    capture = args.out / "mixed.pcap"
    templates = corpus_templates()
    print(f"decode_bench: {args.packets} frames from {len(templates)} distinct UET frames of the golden corpus", flush=True)
    write_capture(capture, templates, args.packets)
    timed([str(loop_bin), str(capture)])  # warm the page cache once

    bare = best_of(args.repeat, lambda: timed([str(loop_bin), str(capture)]))
    count = best_of(args.repeat, lambda: timed([str(decode_bin), "--count", str(capture)]))
    json_out = best_of(args.repeat, lambda: timed([str(decode_bin), str(capture)]))
    print(f"decode_bench: Scapy on {args.scapy_sample} frames", flush=True)
    scapy = scapy_rate(templates, args.scapy_sample)

    n = args.packets
    rates = {"bare_libpcap_loop": n / bare, "uet_decode_full": n / count, "uet_decode_json": n / json_out,
             "scapy_layers": scapy}
    ratios = {"full_vs_bare": rates["uet_decode_full"] / rates["bare_libpcap_loop"],
              "full_vs_scapy": rates["uet_decode_full"] / scapy,
              "json_vs_bare": rates["uet_decode_json"] / rates["bare_libpcap_loop"],
              "json_vs_scapy": rates["uet_decode_json"] / scapy}
    targets = {"full_vs_bare": 0.5, "full_vs_scapy": 500.0}
    print(f"{'reader':<28}{'frames/s':>14}")
    for name, rate in rates.items():
        print(f"{name:<28}{rate:>14,.0f}")
    for name, ratio in ratios.items():
        target = targets.get(name)
        verdict = "" if target is None else (f"  target >= {target:g}: " + ("met" if ratio >= target else "MISSED"))
        print(f"ratio {name:<22}{ratio:>14.2f}{verdict}")
    result = {"packets": n, "distinct_frames": len(templates), "repeat": args.repeat, "scapy_sample": args.scapy_sample,
              "rates_fps": rates, "ratios": ratios, "targets": targets}
    (args.out / "decode.json").write_text(json.dumps(result, indent=2) + "\n")
    if not args.no_record:
        print(f"decode_bench: recorded in {history.append('decode', result).relative_to(REPO)}")
    capture.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
