"""What cutting a run into shards costs (./uet bench shards): the same run (the default suite, or what --only
picks) with the same seed, once whole and once as N shards run one after another plus ./uet merge, in this
invocation; the ratio of their wall times, and whether the merged run decided what the whole one did, check
by check (./uet compare's categories). The shards are balanced by the durations the whole run recorded
(--shard-weights, as a nightly job balances by last night's run), or with --declared by the areas' declared
weights.

    /usr/bin/python3 bench/shards.py [--shards N] [--declared] [--only PATTERN ...] [--seed N] [--jobs N]

Target (issue 37): 3 shards plus the merge within 1.15x of the whole run. Exit 1 when a check's verdict
differs (a shard must not change what the suite finds). The host's load (/proc/loadavg) is printed before
and after: a figure is only as good as the host was quiet.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.results.results import read_results_json  # noqa: E402
from harness.results.run_delay import load_average  # noqa: E402

TARGET = 1.15
VERDICT_CHANGES = ("regressions", "fixes", "changed", "new_checks", "removed_checks")


def timed(argv: list[str], what: str) -> float:
    t0 = time.monotonic()
    done = subprocess.run(argv, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True)
    wall = time.monotonic() - t0
    if done.returncode not in (0, 1):
        sys.exit(f"shards: {what} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    print(f"shards: {what}: {wall:.1f} s (exit {done.returncode})", flush=True)
    return wall


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="./uet bench shards", description=__doc__.splitlines()[0])
    p.add_argument("--shards", type=int, default=3, help="N (default 3)")
    p.add_argument("--only", action="append", default=[], help="passed to ./uet run (default: the whole default suite)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--jobs", type=int, default=4, help="passed to ./uet run (default 4, its own default)")
    p.add_argument("--declared", action="store_true", help="balance by the areas' declared weights, not by the "
                   "whole run's durations")
    p.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "bench" / "shards")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = args.out / f"{stamp}-s{seed}"
    run = [sys.executable, "-m", "harness.run.run_suite", "--seed", str(seed), "--quiet", "--jobs", str(args.jobs)]
    for pattern in args.only:
        run += ["--only", pattern]
    before = load_average()
    print(f"shards: seed {seed}, {args.shards} shards, load before {before}", flush=True)
    whole = timed([*run, "--report", str(out / "whole")], "the whole run")
    weights = [] if args.declared else ["--shard-weights", str(out / "whole" / "latest")]
    parts = [timed([*run, "--report", str(out / f"shard-{i}"), "--shard", f"{i}/{args.shards}", *weights],
                   f"shard {i}/{args.shards}") for i in range(1, args.shards + 1)]
    merge = timed([sys.executable, "-m", "harness.merge.merge_run", "--report", str(out / "merged"),
                   *(str(out / f"shard-{i}" / "latest") for i in range(1, args.shards + 1))], "the merge")
    from harness.trends import compare
    old = read_results_json(out / "whole" / "latest")[1]
    new = read_results_json(out / "merged" / "latest")[1]
    changed = compare.compare(dict(old, _path="whole"), dict(new, _path="merged"))["counts"]
    # a verdict that differs fails the bench; a reason's words (a port, a frame count) are reported only
    differing = {k: changed[k] for k in VERDICT_CHANGES if changed[k]}
    ratio = (sum(parts) + merge) / whole
    record = {"date": stamp, "seed": seed, "shards": args.shards, "whole_s": round(whole, 1),
              "shards_s": [round(s, 1) for s in parts], "merge_s": round(merge, 1), "ratio": round(ratio, 3),
              "target": TARGET, "load_before": before, "load_after": load_average(), "differing": differing,
              "reasons_or_blame_changed": changed["reasons"] + changed["blame"],
              "only": args.only, "host_cores": os.cpu_count(),
              "weights": "declared" if args.declared else "the whole run's durations"}
    (out / "bench.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"shards: balanced by {record['weights']}; {args.shards} shards + merge {sum(parts) + merge:.1f} s vs whole {whole:.1f} s: ratio {ratio:.3f} "
          f"(target <= {TARGET}); load before {before}, after {record['load_after']}; "
          + ("same verdicts, check by check" if not differing else f"DIFFERENT: {differing}") + f"; {out / 'bench.json'}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
