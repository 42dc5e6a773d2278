"""How long ./uet takes to refuse bad usage (the README's target: under 2 s, before any set-up), and its ratio
to a baseline measured in the same invocation: the bare start of Python with argparse, which every refusal
pays. A figure of the machine and its load, so measured here and not asserted by a test (pytest checks only
that no set-up or build ran before the refusal).

    ./uet bench bad-usage [--repeat N]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import pathlib
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
COMMANDS = [["test", "--bogus"], ["run", "--libfabric", "/nonexistent", "--provider", "softuet.yaml"],
            ["selftest", "--knob", "nope"], ["manifest", "init"]]
TARGET_S = 2.0


def timed(argv: list[str], repeat: int) -> tuple[float, set[int]]:
    """(median seconds, exit statuses) of `repeat` runs of argv."""
    times, codes = [], set()
    for _ in range(repeat):
        t0 = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        times.append(time.monotonic() - t0)
        codes.add(done.returncode)
    return statistics.median(times), codes


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="./uet bench bad-usage", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    args = parser.parse_args(argv)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"bad usage, {args.repeat} runs each, load {load}; target < {TARGET_S:g} s")
    baseline, _ = timed(["/usr/bin/python3", "-c", "import argparse"], args.repeat)
    label = "baseline: /usr/bin/python3 -c 'import argparse'"
    print(f"  {label:<68} median {baseline:5.2f} s")
    for command in COMMANDS:
        median, codes = timed([str(REPO / "uet"), *command], args.repeat)
        print(f"  ./uet {' '.join(command):<62} median {median:5.2f} s ({median / baseline:4.1f}x the baseline), exit "
              f"{'/'.join(map(str, sorted(codes)))}{'' if median < TARGET_S else '  (over the target)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
