"""Where a run's time goes (./uet bench run-time [RUN_DIR]): per binary (area) and per cell, the wall time of
the case binaries against the CPU time they and their target peers used, so what waits shows apart from
what works. Reads a run folder's results.json (default out/runs/latest); ratios are against the run's
own wall time, measured in the same run.

    /usr/bin/python3 bench/run_time.py [RUN_DIR] [--top N]
"""
from __future__ import annotations

import argparse
import collections
import pathlib
import sys

from harness.files.input_files import InputError
from harness.results.results import read_results_json

REPO = pathlib.Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="./uet bench run-time", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", type=pathlib.Path, default=REPO / "out" / "runs" / "latest")
    parser.add_argument("--top", type=int, default=10, help="the slowest N cells (default 10)")
    args = parser.parse_args(argv)
    try:
        doc = read_results_json(args.run_dir / "results.json")[1]
    except InputError as exc:
        print(f"run-time: {exc}", file=sys.stderr)
        return 2
    info = doc["run_info"]
    total = float(info.get("seconds") or 0.0)
    by_area = collections.defaultdict(lambda: {"wall": 0.0, "cpu": 0.0, "runs": 0})
    cells = []
    for cell in doc.get("cells", []):
        timing = cell.get("timing") or {}
        wall = sum(t["wall"] for t in timing.get("binaries", {}).values())
        cpu = sum(t["cpu"] for t in timing.get("binaries", {}).values())
        cells.append((cell["id"], timing.get("wall", 0.0), wall, cpu))
        for area, t in timing.get("binaries", {}).items():
            by_area[area]["wall"] += t["wall"]
            by_area[area]["cpu"] += t["cpu"]
            by_area[area]["runs"] += 1
    binaries_wall = sum(a["wall"] for a in by_area.values())
    binaries_cpu = sum(a["cpu"] for a in by_area.values())
    print(f"run {info['run_id']}: {total:.1f} s wall, {len(cells)} cells; case binaries {binaries_wall:.1f} s wall "
          f"(summed over the cells run side by side), {binaries_cpu:.1f} s CPU: "
          f"{100 * (1 - binaries_cpu / binaries_wall) if binaries_wall else 0:.0f} % of their time waiting")
    print(f"\n{'area':<14}{'runs':>6}{'wall s':>9}{'CPU s':>8}{'waiting':>9}{'share of binaries':>19}")
    for area, a in sorted(by_area.items(), key=lambda kv: -kv[1]["wall"]):
        waiting = 1 - a["cpu"] / a["wall"] if a["wall"] else 0
        share = a["wall"] / binaries_wall if binaries_wall else 0
        print(f"{area:<14}{a['runs']:>6}{a['wall']:>9.1f}{a['cpu']:>8.1f}{waiting:>8.0%} {share:>18.2f}")
    print(f"\nslowest cells (of {len(cells)}):")
    print(f"{'cell':<44}{'wall s':>8}{'binaries s':>12}{'CPU s':>8}  {'set-up and harness s':>20}")
    for cid, wall, bwall, cpu in sorted(cells, key=lambda c: -c[1])[: args.top]:
        print(f"{cid:<44}{wall:>8.1f}{bwall:>12.1f}{cpu:>8.1f}  {wall - bwall:>20.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
