#!/usr/bin/python3
"""Where `./uet test` spends its time: set-up, each build, ctest, the fuzzers, pytest by folder and its 20
slowest tests, wall against CPU, and the whole against its target (15 minutes on a machine where set-up
and builds are done).

    ./uet bench test-time            runs ./uet test, then prints the split
    ./uet bench test-time --last     prints the split of the last ./uet test (out/test-time/last.jsonl)

The phases come from out/test-time/last.jsonl (./uet test writes one line per phase: wall and CPU seconds
of the processes it waited for, exit status); the tests from the JUnit XML in out/junit/. pytest's workers
run side by side, so a folder's test seconds add up to more than the phase's wall time: the ratio of the
two is how much the workers overlap. Exit status: that of ./uet test (0 with --last when the record
exists), 2 bad usage, 3 no record.
"""
import argparse
import collections
import json
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECORD = ROOT / "out" / "test-time" / "last.jsonl"
JUNIT = ROOT / "out" / "junit"
TARGET_BUILT_S = 15 * 60   # ./uet test where set-up and builds are done
SLOWEST = 20


def phases(record: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in record.read_text().splitlines() if line.strip()]


def test_times(junit: pathlib.Path) -> list[tuple[float, str, str]]:
    """[(seconds, file, test)] of every testcase of the JUnit files (pytest's, the fuzzers', ctest's)."""
    found = []
    for path in sorted(junit.glob("*.xml")):
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError:
            continue
        for tc in root.iter("testcase"):
            found.append((float(tc.get("time") or 0), path.name, f"{tc.get('classname') or ''}::{tc.get('name') or ''}"))
    return found


def folder_of(classname_and_name: str) -> str:
    """'pytest.cases.test_x.TestY::test_z' -> 'pytest/cases'."""
    parts = classname_and_name.split("::", 1)[0].split(".")
    return "/".join(parts[:2]) if parts[0] == "pytest" else parts[0]


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:4.1f} s"


def report(record: pathlib.Path, junit: pathlib.Path) -> None:
    rows = phases(record)
    print(f"{'phase':<28} {'wall':>14} {'CPU':>10} {'CPU/wall':>9}  exit")
    for p in rows:
        ratio = p["cpu_s"] / p["wall_s"] if p["wall_s"] else 0.0
        print(f"{p['phase']:<28} {minutes(p['wall_s']):>14} {p['cpu_s']:>9.0f}s {ratio:>9.2f}  {p['rc']}")
    total = next((p for p in rows if p["phase"] == "total"), None)
    if total:
        builds = sum(p["wall_s"] for p in rows if p["phase"] == "setup" or p["phase"].startswith("build "))
        print(f"\ntotal {minutes(total['wall_s'])}; without set-up and builds {minutes(total['wall_s'] - builds)}"
              f" = {(total['wall_s'] - builds) / TARGET_BUILT_S:.2f} x the target of {TARGET_BUILT_S // 60} min"
              " (a built machine)")
    tests = [t for t in test_times(junit) if t[1].startswith("pytest")]
    if not tests:
        return
    by_folder = collections.defaultdict(lambda: [0.0, 0])
    for seconds, _, name in tests:
        by_folder[folder_of(name)][0] += seconds
        by_folder[folder_of(name)][1] += 1
    pytest_wall = sum(p["wall_s"] for p in rows if p["phase"].startswith("pytest"))
    summed = sum(s for s, _, _ in tests)
    print(f"\npytest by folder (test seconds; {summed:.0f} s of tests in {pytest_wall:.0f} s of wall: "
          f"{summed / pytest_wall if pytest_wall else 0:.1f} at a time)")
    for folder, (seconds, count) in sorted(by_folder.items(), key=lambda kv: -kv[1][0]):
        print(f"  {folder:<22} {seconds:>8.1f} s  {count:>4} tests")
    print(f"\nthe {SLOWEST} slowest tests")
    for seconds, _, name in sorted(tests, reverse=True)[:SLOWEST]:
        print(f"  {seconds:>7.1f} s  {name}")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="./uet bench test-time", description=__doc__.splitlines()[0])
    p.add_argument("--last", action="store_true", help="print the split of the last ./uet test; run nothing")
    p.add_argument("--workers", type=int, help="pytest workers for the ./uet test it runs")
    p.add_argument("--check-usage", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.workers is not None and not 1 <= args.workers <= 99:
        p.error("--workers must be from 1 to 99")
    if args.check_usage:
        return 0
    rc = 0
    if not args.last:
        rc = subprocess.run([str(ROOT / "uet"), "test", *(["--workers", str(args.workers)] if args.workers else [])],
                            cwd=ROOT).returncode
        print()
    if not RECORD.exists():
        print(f"test-time: no record of a ./uet test in {RECORD} (run ./uet bench test-time without --last)",
              file=sys.stderr)
        return 3
    report(RECORD, JUNIT)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
