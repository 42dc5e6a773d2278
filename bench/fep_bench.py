#!/usr/bin/python3
"""FEP benchmark: softuet against libfabric's own providers, between the two sides of a namespace pair.

In one run, with fabtests programs (server on side b, client on side a):
  - latency       fi_pingpong with 64-byte messages: usec per transfer (lower is better);
  - message rate  fi_rdm_bw (RDM) with 64-byte messages: transfers per second; for DGRAM, the figures of the
                  latency runs (fabtests has no datagram streaming program);
  - bandwidth     fi_rdm_bw with 64 KiB messages (RDM only): MB/s.
Baselines: `udp` for FI_EP_DGRAM, `tcp;ofi_rxm` for FI_EP_RDM. Each figure is the median of --repeat runs; the two
providers take turns run by run, so a slow spell of a shared machine falls on both.
The veth pair has a 9000-byte MTU (--mtu): softuet carries 4 KiB payloads per packet, as UET fabrics do,
which a 1500-byte link would split into IP fragments; both providers run over the same link.
Ratios are stated so that >= 1.0 is in softuet's favour (rate: softuet / baseline; latency: baseline /
softuet). Results go to out/bench/fep.json, and each complete run appends its ratios and figures to
bench/records/fep.jsonl (bench/history.py); --history prints that record (no build, no root needed).
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import history  # noqa: E402  (bench/, this script's folder)

BASELINE = {"dgram": "udp", "rdm": "tcp;ofi_rxm"}
# The record's table: each ratio, then the RDM bandwidths it is made of.
HISTORY_COLUMNS = [
    history.column("dgram lat", "endpoints", "dgram", "ratios", "latency", fmt=".3f"),
    history.column("rdm lat", "endpoints", "rdm", "ratios", "latency", fmt=".3f"),
    history.column("rdm rate", "endpoints", "rdm", "ratios", "message_rate", fmt=".3f"),
    history.column("rdm bw", "endpoints", "rdm", "ratios", "bandwidth", fmt=".3f"),
    history.column("softuet MB/s", "endpoints", "rdm", "figures", "bandwidth", "softuet", "mb_per_sec", fmt=".0f"),
    history.column("tcp MB/s", "endpoints", "rdm", "figures", "bandwidth", "tcp;ofi_rxm", "mb_per_sec", fmt=".0f"),
]
def parse_perf(output: str) -> dict:
    """The figures of a fabtests performance line. Pingpong programs print 'bytes #sent #ack total time MB/sec
    usec/xfer Mxfers/sec', bandwidth programs 'bytes iters total time MB/sec usec/xfer Mxfers/sec'; the last
    three columns are the same. The rate comes from usec/xfer, which has more digits than Mxfers/sec."""
    for line in output.splitlines():
        parts = line.split()
        if len(parts) in (7, 8) and parts[0][:1].isdigit() and parts[-4].endswith("s"):  # "64" or "64k"
            usec = float(parts[-2])
            return {"mb_per_sec": float(parts[-3]), "usec_per_xfer": usec, "xfers_per_sec": 1e6 / usec}
    raise ValueError("no performance line in fabtests output:\n" + output[-1500:])


def run_once(pair, argv: list[str], env: dict) -> dict:
    """The figures of one run of a fabtests program."""
    from harness.run.fabtests import FabtestError, run_pair

    run = run_pair(pair, argv, env=env, timeout=120)
    if not run.ok:
        raise FabtestError(run.describe())
    return parse_perf(run.client_output)


def measure(pair, argvs: dict[str, list[str]], env: dict, repeat: int, label: str) -> dict:
    """Median figures of each provider's program, the providers taking turns (bench/turns.py); a provider
    whose program fails gets {"error": ...} and the other goes on."""
    from harness.run.fabtests import FabtestError
    from turns import take_turns

    runners = {prov: functools.partial(run_once, pair, argv, env) for prov, argv in argvs.items()}
    return take_turns(runners, repeat, f"fep_bench: {label}", (FabtestError, ValueError), stop_on_error=False)


def programs(ep: str, iterations: int) -> dict[str, list[str]]:
    it = ["-I", str(iterations)]
    if ep == "dgram":
        pp = ["fi_pingpong", "-e", "dgram", "-S", "64"] + it
        return {"latency": pp, "rate": pp}
    return {"latency": ["fi_pingpong", "-e", "rdm", "-S", "64"] + it,
            "rate": ["fi_rdm_bw", "-S", "64", "-W", "64"] + it,
            "bandwidth": ["fi_rdm_bw", "-S", "65536", "-W", "16", "-I", str(max(100, iterations // 50))]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="softuet", help="provider under test (default softuet)")
    parser.add_argument("--provider-path", default=str(REPO / "build" / "lib"), help="FI_PROVIDER_PATH for it")
    parser.add_argument("--ep", choices=["dgram", "rdm", "both"], default="both")
    parser.add_argument("--iterations", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mtu", type=int, default=9000, help="MTU of the veth pair (default 9000)")
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "bench")
    parser.add_argument("--history", action="store_true", help="print the record of earlier runs and exit")
    parser.add_argument("--no-record", action="store_true", help="do not append this run to bench/records/fep.jsonl")
    args = parser.parse_args()
    if args.history:
        return history.show("fep", HISTORY_COLUMNS, "Ratios >= 1.0 are in softuet's favour.")
    from containers import NamespacePair

    if os.geteuid() != 0:
        parser.error("network namespaces need root")
    eps = ["dgram", "rdm"] if args.ep == "both" else [args.ep]
    env = {"FI_PROVIDER_PATH": args.provider_path}
    # The record is committed: a path inside the clone is kept relative to it, never this machine's.
    shown = pathlib.Path(args.provider_path).resolve()
    shown = str(shown.relative_to(REPO)) if shown.is_relative_to(REPO) else shown.name
    results: dict = {"provider": args.provider, "provider_path": shown, "iterations": args.iterations,
                     "repeat": args.repeat, "mtu": args.mtu, "endpoints": {}}
    with NamespacePair(mtu=args.mtu) as pair:
        for ep in eps:
            row = results["endpoints"][ep] = {"baseline": BASELINE[ep], "figures": {}, "ratios": {}}
            measured: dict[tuple[str, ...], dict] = {}  # by program line: DGRAM's pingpong serves two measures
            for what, argv in programs(ep, args.iterations).items():
                if tuple(argv) not in measured:
                    argvs = {prov: argv[:1] + ["-p", prov] + argv[1:] for prov in (BASELINE[ep], args.provider)}
                    measured[tuple(argv)] = measure(pair, argvs, env, args.repeat, f"{ep} {what}")
                figures = row["figures"][what] = measured[tuple(argv)]
                base, ours = figures[BASELINE[ep]], figures[args.provider]
                if "error" in base or "error" in ours:
                    continue
                if what == "latency":
                    row["ratios"]["latency"] = base["usec_per_xfer"] / ours["usec_per_xfer"]
                elif what == "rate":
                    row["ratios"]["message_rate"] = ours["xfers_per_sec"] / base["xfers_per_sec"]
                else:
                    row["ratios"]["bandwidth"] = ours["mb_per_sec"] / base["mb_per_sec"]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fep.json").write_text(json.dumps(results, indent=2) + "\n")
    # A run of the default provider whose every measure has its ratio joins the record.
    complete = all(len(row["ratios"]) == len(programs(ep, 1)) for ep, row in results["endpoints"].items())
    if not args.no_record and args.provider == "softuet" and complete:
        print(f"fep_bench: recorded in {history.append('fep', results).relative_to(REPO)}")
    print(f"{'ep':<6}{'measure':<11}{'provider':<14}{'usec/xfer':>11}{'xfers/s':>14}{'MB/s':>11}")
    for ep, row in results["endpoints"].items():
        for what, figures in row["figures"].items():
            for prov, f in figures.items():
                if "error" in f:
                    print(f"{ep:<6}{what:<11}{prov:<14}  error: {f['error']}")
                else:
                    print(f"{ep:<6}{what:<11}{prov:<14}{f['usec_per_xfer']:>11.2f}{f['xfers_per_sec']:>14,.0f}"
                          f"{f['mb_per_sec']:>11.1f}")
        for name, ratio in row["ratios"].items():
            print(f"ratio {ep} {name} ({args.provider} vs {row['baseline']}): {ratio:.3f}"
                  + ("" if name == "bandwidth" else ("  target >= 1.0: " + ("met" if ratio >= 1.0 else "MISSED"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
