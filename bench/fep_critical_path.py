#!/usr/bin/python3
"""FEP critical path: where a datagram pingpong's time goes, softuet against udp, from the server's system calls.

bench/fep_bench.py times whole pingpongs, and bench/fep_instructions.py counts user-space instructions
without the kernel. This benchmark splits a round trip at its system calls: the fi_pingpong server
(-e dgram, 64 bytes) runs under `perf record -e raw_syscalls:sys_enter,raw_syscalls:sys_exit` in side b
of a namespace pair, and every cycle, from one receive that returns a datagram to the next, is cut into
  - reply path: from that receive's return to the entry of the send that answers it: the provider's and
                the application's user-space work on the critical path;
  - send:       the send call itself (for a veth it also carries the datagram into the peer's socket);
  - cycle:      the whole round trip as the server sees it.
Tracing adds its cost to every system call, equally for both providers: compare the providers' figures,
not the figures with fep_bench's. Medians over --iterations cycles (the first 1,000 skipped), median of
--repeat runs, the providers taking turns run by run. Results go to out/bench/fep_critical_path.json.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from containers import NamespacePair  # noqa: E402
from harness.run.fabtests import FabtestError, run_pair  # noqa: E402
from turns import take_turns  # noqa: E402  (bench/, this script's folder)

BASELINE = "udp"
# x86-64 system call numbers: the receives and sends a datagram provider makes.
RECEIVES = {45: "recvfrom", 47: "recvmsg", 299: "recvmmsg"}
SENDS = {44: "sendto", 46: "sendmsg", 307: "sendmmsg"}
WARMUP_CYCLES = 1000
EVENT = re.compile(r"\s*([\d.]+):\s+raw_syscalls:sys_(enter|exit): NR (\d+)(?: = (-?\d+))?")


def cycles(trace: str) -> list[dict]:
    """The server's cycles, from the `perf script` text of its raw_syscalls events."""
    out: list[dict] = []
    cur: dict | None = None
    send_entered = None
    for line in trace.splitlines():
        m = EVENT.match(line)
        if not m:
            continue
        t, kind, nr = float(m.group(1)), m.group(2), int(m.group(3))
        ret = int(m.group(4)) if m.group(4) is not None else None
        if kind == "exit" and nr in RECEIVES and ret is not None and ret > 0:
            if cur and cur.get("send") is not None:
                cur["cycle"] = t - cur["start"]
                out.append(cur)
            cur = {"start": t, "reply_path": None, "send": None}
            send_entered = None
        elif cur is None:
            continue
        elif kind == "enter" and nr in SENDS and cur["reply_path"] is None:
            cur["reply_path"] = t - cur["start"]
            send_entered = t
        elif kind == "exit" and nr in SENDS and send_entered is not None and cur["send"] is None:
            cur["send"] = t - send_entered
    return out[WARMUP_CYCLES:]


def measure_once(pair, provider: str, env: dict, iterations: int, workdir: pathlib.Path) -> dict:
    data = workdir / f"{provider}.perf.data"
    argv = ["fi_pingpong", "-p", provider, "-e", "dgram", "-S", "64", "-I", str(iterations)]
    wrapper = ["perf", "record", "-q", "-e", "raw_syscalls:sys_enter", "-e", "raw_syscalls:sys_exit", "-o", str(data),
               "--"]
    run = run_pair(pair, argv, env=env, timeout=120, server_wrapper=wrapper)
    if not run.ok:
        raise FabtestError(run.describe())
    script = subprocess.run(["perf", "script", "--ns", "-i", str(data), "-F", "time,event,trace"], capture_output=True,
                            text=True, timeout=300)
    if script.returncode != 0:
        raise FabtestError(f"perf script failed: {script.stderr.strip()[-800:]}")
    found = cycles(script.stdout)
    if len(found) < iterations // 2:
        raise FabtestError(f"{provider}: only {len(found)} cycles found in the trace of {iterations} round trips")
    return {key: statistics.median(c[key] for c in found) * 1e6 for key in ("reply_path", "send", "cycle")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="softuet", help="provider under test (default softuet)")
    parser.add_argument("--provider-path", default=str(REPO / "build" / "lib"), help="FI_PROVIDER_PATH for it")
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "bench")
    args = parser.parse_args()
    if os.geteuid() != 0:
        parser.error("network namespaces need root")
    if args.iterations <= WARMUP_CYCLES * 2 or args.repeat < 1:
        parser.error(f"--iterations must be over {WARMUP_CYCLES * 2} and --repeat at least 1")
    if not shutil.which("perf"):
        print("fep_critical_path: 'perf' was not found: install the Debian package linux-perf", file=sys.stderr)
        return 3
    env = {"FI_PROVIDER_PATH": args.provider_path}
    with NamespacePair(mtu=9000) as pair, tempfile.TemporaryDirectory() as tmp:
        runners = {prov: functools.partial(measure_once, pair, prov, env, args.iterations, pathlib.Path(tmp))
                   for prov in (BASELINE, args.provider)}
        try:
            # The figures are differences between the providers: one that fails stops the benchmark.
            figures = take_turns(runners, args.repeat, "fep_critical_path:", (FabtestError, subprocess.TimeoutExpired),
                                 stop_on_error=True)
        except (FabtestError, subprocess.TimeoutExpired) as err:
            print(f"fep_critical_path: {str(err).splitlines()[0]}", file=sys.stderr)
            return 1
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fep_critical_path.json").write_text(json.dumps(
        {"iterations": args.iterations, "repeat": args.repeat, "usec": figures}, indent=2) + "\n")
    print(f"{'provider':<12}{'reply path':>12}{'send':>10}{'cycle':>10}   (us, traced)")
    for prov, f in figures.items():
        print(f"{prov:<12}{f['reply_path']:>12.3f}{f['send']:>10.3f}{f['cycle']:>10.3f}")
    base, ours = figures[BASELINE], figures[args.provider]
    for key in ("reply_path", "send", "cycle"):
        print(f"{key:<11} {args.provider} - {BASELINE}: {ours[key] - base[key]:+.3f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
