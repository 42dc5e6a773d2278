"""Whether the default run's verdicts change with host load: the same run (same seed) first on the host as it
is, then N times under stress-ng, each compared check by check with that baseline (harness/trends/compare.py).

    ./uet bench under-load [--runs 5] [--cpu 2] [--io 1] [--jobs 4] [--seed N] [--only AREA ...]

A verdict must not change with load: a loaded run may differ from the baseline only by a check that became
`error` saying "inconclusive: the host was busy" (counted apart), never by a fail or a flaky check. Prints
each run's counts, its time against the baseline's (a ratio), the load average seen while it ran, and what
changed. Exit status 0 when no run failed a check or changed a verdict otherwise; 1 when one did.
"""
from __future__ import annotations

import argparse
import pathlib
import random
import subprocess
import sys
import threading
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from harness.trends.compare import compare, load_run  # noqa: E402 -- the one reader of results.json
from harness.results.verdicts import LABELS, NOT_HELD, VERDICTS, Verdict  # noqa: E402

INCONCLUSIVE = "inconclusive: the host was busy"


class LoadSampler(threading.Thread):
    """The 1-minute load average every 5 s while a run goes on; its highest."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop, self.highest = threading.Event(), 0.0

    def run(self):
        while not self.stop.wait(5):
            with open("/proc/loadavg") as f:
                self.highest = max(self.highest, float(f.read().split()[0]))


def one_run(args, label: str, out: pathlib.Path) -> tuple[dict, float, float]:
    """(results.json, seconds, highest load) of one default run at the bench's seed."""
    argv = [sys.executable, "-m", "harness.run.run_suite", "--seed", str(args.seed), "--jobs", str(args.jobs), "--quiet",
            "--report", str(out / label)] + [x for area in args.only for x in ("--only", area)]
    sampler = LoadSampler()
    sampler.start()
    t0 = time.monotonic()
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    sampler.stop.set()
    run_dirs = sorted(p for p in (out / label).iterdir() if (p / "results.json").exists())
    if not run_dirs:
        raise SystemExit(f"under-load: the {label} run wrote no results (exit {done.returncode}): {done.stderr[-800:]}")
    return load_run(run_dirs[-1]), seconds, sampler.highest


def describe(doc: dict) -> str:
    s = doc.get("summary") or {}
    return ", ".join(f"{s.get(k, 0)} {LABELS[k]}" for k in VERDICTS if k in s or k in (Verdict.PASS, Verdict.FAIL))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="./uet bench under-load", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5, help="loaded runs (default 5)")
    p.add_argument("--cpu", type=int, default=2, help="stress-ng --cpu workers (default 2)")
    p.add_argument("--io", type=int, default=1, help="stress-ng --io workers (default 1)")
    p.add_argument("--jobs", type=int, default=4, help="./uet run --jobs (default 4)")
    p.add_argument("--seed", type=int, default=None, help="the runs' seed (default: a new one, printed)")
    p.add_argument("--only", action="append", default=[], help="./uet run --only (default: the whole default run)")
    p.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "bench" / "under-load")
    args = p.parse_args(argv)
    args.seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 1 << 31)
    out = args.out / time.strftime("%Y%m%d-%H%M%S")
    print(f"under-load: seed {args.seed}, --jobs {args.jobs}, {args.runs} run(s) under stress-ng --cpu {args.cpu} "
          f"--io {args.io}; runs in {out}", flush=True)
    base, base_s, base_load = one_run(args, "baseline", out)
    print(f"  baseline: {describe(base)}; {base_s:.0f} s, load up to {base_load:.1f}", flush=True)
    bad = 0
    stress = subprocess.Popen(["stress-ng", "--cpu", str(args.cpu), "--io", str(args.io), "--quiet"])
    try:
        for i in range(1, args.runs + 1):
            doc, seconds, load = one_run(args, f"loaded-{i}", out)
            diff = compare(base, doc)
            changed = diff["regressions"] + diff["fixes"] + diff["changed"]
            busy = [r for r in changed if r["new"] == "error" and INCONCLUSIVE in (r["why"] or "")]
            other = [r for r in changed if r not in busy]
            failed = sum((doc.get("summary") or {}).get(v, 0) for v in NOT_HELD)
            bad += bool(other or failed)
            print(f"  loaded {i}: {describe(doc)}; {seconds:.0f} s ({seconds / base_s:.1f}x the baseline), load up to "
                  f"{load:.1f}; {len(other)} verdict(s) changed, {len(busy)} inconclusive (host busy)", flush=True)
            for r in other[:10]:
                print(f"    {r['id']}: {r['old']} -> {r['new']}: {r['why']}")
    finally:
        stress.terminate()
        stress.wait()
    print(f"under-load: {'verdicts held' if not bad else f'{bad} run(s) failed a check or changed a verdict'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
