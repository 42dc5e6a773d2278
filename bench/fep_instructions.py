#!/usr/bin/python3
"""FEP instruction count: user-space instructions per 64-byte datagram round trip, softuet against udp.

bench/fep_bench.py times pingpongs between two namespaces, and its figures move by +-10 % from run to run on
a small shared machine. This benchmark counts instead: build/bin/dgram-roundtrip (two FI_EP_DGRAM endpoints
of one process, each round trip two fi_inject, two fi_cq_read that find the datagram, two fi_recv) runs
under valgrind's callgrind, which counts the instructions executed in user space (the provider, libfabric,
libc) and none of the kernel's. Each provider runs twice, with --trips and 2 x --trips round trips, and the
difference is divided by --trips, so start-up and tear-down cancel out. The figure is repeatable to the
instruction for one build. The ratio is udp / softuet: >= 1.0 means softuet does less work per round trip.
Results go to out/bench/fep_instructions.json.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
BASELINE = "udp"


def instructions(program: pathlib.Path, provider: str, trips: int, env: dict) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "callgrind.out"
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(program), provider,
                               str(trips)], env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"{provider}: dgram-roundtrip exited {proc.returncode}: {proc.stderr.strip()[-800:]}")
        totals = re.search(r"^summary:\s+(\d+)", out.read_text(), re.MULTILINE)
        if not totals:
            raise RuntimeError(f"{provider}: no instruction total in the callgrind output")
        return int(totals.group(1))


def per_trip(program: pathlib.Path, provider: str, trips: int, env: dict) -> float:
    return (instructions(program, provider, 2 * trips, env) - instructions(program, provider, trips, env)) / trips


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="softuet", help="provider under test (default softuet)")
    parser.add_argument("--build", type=pathlib.Path, default=REPO / "build")
    parser.add_argument("--trips", type=int, default=5000, help="round trips of the shorter run (default 5000)")
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "bench")
    args = parser.parse_args()
    program = args.build / "bin" / "dgram-roundtrip"
    if not program.exists():
        parser.error(f"no {program} (run ./uet build)")
    if args.trips < 1:
        parser.error("--trips must be at least 1")
    env = dict(os.environ, FI_PROVIDER_PATH=str(args.build / "lib"))
    figures = {}
    for provider in (BASELINE, args.provider):
        print(f"fep_instructions: {provider}", flush=True)
        try:
            figures[provider] = per_trip(program, provider, args.trips, env)
        except (RuntimeError, subprocess.TimeoutExpired) as err:
            print(f"fep_instructions: {err}", file=sys.stderr)
            return 1
    ratio = figures[BASELINE] / figures[args.provider]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fep_instructions.json").write_text(json.dumps(
        {"trips": args.trips, "instructions_per_round_trip": figures, "ratio": ratio}, indent=2) + "\n")
    for provider, n in figures.items():
        print(f"{provider:<10}{n:>10,.0f} user-space instructions per 64-byte datagram round trip")
    print(f"ratio ({BASELINE} / {args.provider}): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
