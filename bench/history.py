"""The benchmarks' record: one JSON line per run in bench/records/<name>.jsonl (committed, so that a regression
shows against the runs before it the day it lands), and the table `--history` prints from it.

A line holds when (UTC) and on what the run measured: the commit, whether the tree differed from it (and in
which of the folders that make the figures), the machine's processor count and load, and the figures the
benchmark chose to keep (its ratios and absolute figures). Reading needs no build and no root: only this
module and the file.
"""
from __future__ import annotations

import datetime
import json
import os
import pathlib
import subprocess
from typing import Callable, Iterable

REPO = pathlib.Path(__file__).resolve().parent.parent
RECORDS = REPO / "bench" / "records"
# The folders whose code the benchmarks measure: a run with changes there measured something else than its commit.
MEASURED_CODE = ("fep", "codec", "spec", "bench", "deps")


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def provenance() -> dict:
    """Where and on what a run happens."""
    changed = [line[3:] for line in _git("status", "--porcelain", "--untracked-files=no").splitlines() if len(line) > 3]
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": _git("rev-parse", "HEAD") or "unknown",
            "modified": bool(changed),
            "modified_in": sorted({path.split("/", 1)[0] for path in changed} & set(MEASURED_CODE)),
            "nproc": os.cpu_count(), "load1": load1}


def append(name: str, figures: dict, path: pathlib.Path | None = None) -> pathlib.Path:
    """Appends one run (its provenance and `figures`) to bench/records/<name>.jsonl; returns the file."""
    path = path or RECORDS / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({**provenance(), **figures}, sort_keys=False) + "\n")
    return path


def read(name: str, path: pathlib.Path | None = None) -> list[dict]:
    """The runs of bench/records/<name>.jsonl, oldest first; a line that is not JSON is skipped."""
    path = path or RECORDS / f"{name}.jsonl"
    if not path.exists():
        return []
    runs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            runs.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return runs


def dig(run: dict, keys: Iterable[str]):
    """run[k1][k2]..., or None where a key is missing."""
    value = run
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


# A column of the table: its heading, how its value is found in a run, and how it is printed.
Column = tuple[str, Callable[[dict], "float | None"], str]


def column(heading: str, *keys: str, fmt: str = ".2f") -> Column:
    return heading, lambda run: dig(run, keys), fmt


def table(runs: list[dict], columns: list[Column]) -> str:
    """One row per run, newest last: when, commit (+ when its tree was modified), processors and load, then
    each column's value and its change against the previous run that has one."""
    headings = ["time (UTC)", "commit", "cpus", "load"] + [c[0] for c in columns]
    rows = [headings]
    last: dict[str, float] = {}
    for run in runs:
        commit = str(run.get("commit", "?"))[:9] + ("+" if run.get("modified_in") else "")
        load = run.get("load1")
        row = [str(run.get("time", "?"))[:16].replace("T", " "), commit, str(run.get("nproc", "?")),
               "?" if load is None else f"{load:.1f}"]
        for heading, get, fmt in columns:
            value = get(run)
            if not isinstance(value, (int, float)):
                row.append("-")
                continue
            text = format(value, fmt)
            if heading in last and last[heading]:
                text += f" ({(value - last[heading]) / last[heading]:+.0%})"
            last[heading] = value
            row.append(text)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(headings))]
    lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             for r in rows]
    return "\n".join(lines)


def show(name: str, columns: list[Column], legend: str, path: pathlib.Path | None = None) -> int:
    """Prints the table of bench/records/<name>.jsonl; exit status 0."""
    runs = read(name, path)
    if not runs:
        print(f"no {name} benchmark run recorded yet ({path or RECORDS / f'{name}.jsonl'})")
        return 0
    print(table(runs, columns))
    print(f"commit+: the tree differed from the commit in {', '.join(MEASURED_CODE)}; "
          f"(+n%): change against the previous run. {legend}")
    return 0
