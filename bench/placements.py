"""What each placement costs over namespaces (./uet bench placements): the same run (the default suite, or
what --only picks) with the same seed in each placement, one after the other in this invocation; the
run's wall time, the cases' own time (per case, matched by id) and each cell's set-up and tear-down, as
ratios against the namespace run; and whether every verdict is the same.

    /usr/bin/python3 bench/placements.py [--placement P ...] [--only PATTERN ...] [--seed N] [--jobs N]

Targets (issue 17): containers within 1.3x and nodes within 1.5x of the namespace run's time. Exit 1 when a
verdict differs between placements (the placements must not change what the suite finds).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from containers import image  # noqa: E402
from harness.results.results import read_results_json  # noqa: E402

TARGETS = {"containers": 1.3, "nodes": 1.5}


def run(placement: str, args, folder: pathlib.Path) -> dict:
    argv = [sys.executable, "-m", "harness.run.run_suite", "--seed", str(args.seed), "--quiet", "--no-decode-check",
            "--jobs", str(args.jobs), "--report", str(folder), "--placement", placement]
    for pattern in args.only:
        argv += ["--only", pattern]
    t0 = time.monotonic()
    done = subprocess.run(argv, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True)
    wall = time.monotonic() - t0
    if done.returncode not in (0, 1):
        sys.exit(f"placements: the {placement} run failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    doc = read_results_json(next(folder.glob("*/results.json")))[1]
    cases = {r["id"]: r for r in doc["results"]}
    setup = [c["timing"]["wall"] - sum(b["wall"] for b in c["timing"].get("binaries", {}).values())
             for c in doc["cells"] if c.get("timing")]
    return {"placement": placement, "wall": wall, "cases": cases, "summary": doc["summary"],
            "case_seconds": sum(r.get("seconds") or 0.0 for r in cases.values()),
            "cell_setup_mean": statistics.mean(setup) if setup else 0.0, "cells": len(doc["cells"])}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="./uet bench placements", description=__doc__.splitlines()[0])
    p.add_argument("--placement", action="append", choices=("containers", "nodes"),
                   help="placements to measure against namespaces (default both)")
    p.add_argument("--only", action="append", default=[], help="passed to ./uet run (default: the whole default suite)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "bench" / "placements")
    args = p.parse_args(argv)
    args.seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    others = args.placement or ["containers", "nodes"]
    print(f"placements: seed {args.seed}, {args.jobs} cells at a time, {'--only ' + ' '.join(args.only) if args.only else 'the default suite'}")
    if "containers" in others:  # a first build of the base image is set-up, not the placement's cost
        image.ensure_image(REPO / "build", [REPO.resolve()], say=lambda s: print("placements: " + s))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    runs = [run(name, args, args.out / stamp / name) for name in ["namespaces", *others]]
    base = runs[0]
    print(f"\n{'placement':<12}{'run s':>8}{'ratio':>7}{'cases s':>9}{'ratio':>7}{'median case':>13}"
          f"{'cell set-up s':>15}{'verdicts':>11}{'target':>13}")
    worst_difference = 0
    report = {"seed": args.seed, "jobs": args.jobs, "only": args.only, "placements": []}
    for r in runs:
        common = [k for k in r["cases"] if k in base["cases"] and (base["cases"][k].get("seconds") or 0) > 0.05]
        per_case = [(r["cases"][k].get("seconds") or 0) / base["cases"][k]["seconds"] for k in common]
        differ = sorted(k for k in set(r["cases"]) | set(base["cases"])
                        if (r["cases"].get(k) or {}).get("verdict") != (base["cases"].get(k) or {}).get("verdict"))
        worst_difference = max(worst_difference, len(differ))
        ratio = r["wall"] / base["wall"]
        target = TARGETS.get(r["placement"])
        median = statistics.median(per_case) if per_case else float("nan")
        print(f"{r['placement']:<12}{r['wall']:>8.1f}{ratio:>7.2f}{r['case_seconds']:>9.1f}"
              f"{r['case_seconds'] / base['case_seconds']:>7.2f}{median:>13.2f}{r['cell_setup_mean']:>15.2f}"
              f"{'same' if not differ else f'{len(differ)} differ':>11}"
              f"{(('met ' if ratio <= target else 'MISSED ') + f'{target}x') if target else '':>13}")
        for k in differ[:10]:
            print(f"    {k}: {(base['cases'].get(k) or {}).get('verdict')} in namespaces, "
                  f"{(r['cases'].get(k) or {}).get('verdict')} in {r['placement']}")
        report["placements"].append({"placement": r["placement"], "run_seconds": round(r["wall"], 1),
                                     "run_ratio": round(ratio, 3), "case_seconds": round(r["case_seconds"], 1),
                                     "median_case_ratio": round(median, 3), "cell_setup_mean": round(r["cell_setup_mean"], 2),
                                     "cells": r["cells"], "summary": r["summary"], "verdicts_differ": differ})
    (args.out / stamp / "placements.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nplacements: written {args.out / stamp / 'placements.json'}")
    return 1 if worst_difference else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
