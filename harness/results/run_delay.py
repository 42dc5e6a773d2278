"""How long a case binary's threads waited for a CPU: the harness's side of the rule that a verdict must not
change with host load (the cases' side: cases/common/claims/liveness.hpp).

The kernel counts, per thread, the time it was runnable but not running (/proc/PID/task/TID/schedstat, its
second field). A case's deadline is extended by what the worst thread of the binary's process group waited
(up to the deadline again), and a deadline that still passes after the host starved those threads for a
tenth of it more than the extension gave back makes the case an `error`, "inconclusive: the host was busy",
never a `timeout` held against the provider; starvation the extension made good leaves it a `timeout`. Processes the harness cannot see (another placement's node) count as not starved.
"""
from __future__ import annotations

import os

BUSY_SHARE = 0.10          # as cases/common/claims/liveness.hpp's kBusyShare
INCONCLUSIVE = "inconclusive: the host was busy"

Snapshot = dict[tuple[int, int], int]   # (process, thread) -> nanoseconds runnable but not running


def _group_pids(pgid: int) -> list[int]:
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # after the name: state, ppid, pgrp
            pids.append(int(entry.name))
    return pids


def snapshot(pgid: int | None) -> Snapshot:
    """The run delay of every thread of the process group `pgid` now ({} when there is none to see)."""
    out: Snapshot = {}
    if not pgid:
        return out
    for pid in _group_pids(pgid):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    out[(pid, int(tid))] = int(f.read().split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return out


def worst_since(before: Snapshot, after: Snapshot) -> tuple[float, str]:
    """(seconds, whose) of the thread that waited longest between two snapshots (one born since counts all)."""
    worst, whose = 0, ""
    for key, now in after.items():
        waited = now - before.get(key, 0)
        if waited > worst:
            worst, whose = waited, f"process {key[0]} thread {key[1]}"
    return worst / 1e9, whose


def load_average() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"
