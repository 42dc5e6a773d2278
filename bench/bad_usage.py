"""How long ./uet takes to refuse bad usage (the README's target: under 2 s, before any set-up). A figure of
the machine and its load, so measured here and not asserted by a test (pytest checks only that no set-up
or build ran before the refusal).

    /usr/bin/python3 bench/bad_usage.py [--repeat N]
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/bad_usage.py", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    args = parser.parse_args(argv)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"bad usage, {args.repeat} runs each, load {load}; target < {TARGET_S:g} s")
    for command in COMMANDS:
        times, codes = [], set()
        for _ in range(args.repeat):
            t0 = time.monotonic()
            done = subprocess.run([str(REPO / "uet"), *command], capture_output=True, text=True, timeout=600)
            times.append(time.monotonic() - t0)
            codes.add(done.returncode)
        median = statistics.median(times)
        print(f"  ./uet {' '.join(command):<62} median {median:5.2f} s, max {max(times):5.2f} s, exit "
              f"{'/'.join(map(str, sorted(codes)))}{'' if median < TARGET_S else '  (over the target)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
