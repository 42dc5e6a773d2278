"""A process of the suite on this host, and every process it starts, held in a cgroup v2 of its own, so that
its end ends them all: a provider's daemon that forked twice and left its session included (a process stays
in its parent's cgroup whatever it does; only root can move it out).

The cgroups are made in one of the suite's own, ``uet``, at the root of the cgroup v2 hierarchy
(/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host), and removed once empty. Each is named after the
process that made it (its pid namespace, pid and start time, so a reused pid is not taken for it): a group whose
maker was killed before it could end it (SIGKILL, the OOM killer) is ended and removed by the next Group made in
that pid namespace (a suite in a container that shares the hierarchy cannot see the host's processes). The command enters its
cgroup itself, before it runs (a shell writes 0, "this process", to cgroup.procs and execs it): nothing it
forks is ever outside. Where no cgroup can be made (not root, no cgroup v2), the members of the session the
command leads are ended instead: a daemon that left that session with setsid is then not found.
"""
from __future__ import annotations

import itertools
import os
import pathlib
import select
import signal
import time

SUITE_GROUP = "uet"
END_TIMEOUT_S = 10.0   # for the kernel to take a killed cgroup's processes away
_serial = itertools.count(1)


def hierarchy() -> pathlib.Path | None:
    """The cgroup v2 hierarchy's mount point, when this process may make cgroups in it."""
    if os.geteuid() != 0:
        return None
    try:
        lines = pathlib.Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields, _, rest = line.partition(" - ")
        if rest.split(" ", 1)[0] == "cgroup2":
            mount = pathlib.Path(fields.split(" ")[4])
            if os.access(mount / "cgroup.procs", os.W_OK):
                return mount
    return None


def _stat_after_name(pid: str) -> list[str] | None:
    """/proc/PID/stat's fields after the command's name (which may hold spaces and parentheses): state first."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def _session_of(pid: str) -> int | None:
    fields = _stat_after_name(pid)
    return int(fields[3]) if fields else None  # state, ppid, pgrp, session


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").partition("[")[2].rstrip("]") or "0"
    except OSError:
        return "0"


def _maker_name(pid: int) -> str:
    """PIDNS-PID-STARTTIME: the process, not just its number (field 22, "starttime", in clock ticks since boot)."""
    fields = _stat_after_name(str(pid))
    return f"{_pid_namespace()}-{pid}-{fields[19] if fields else 0}"


def _maker_gone(group_name: str) -> bool:
    """Has the process of this pid namespace that made the group `group_name` (PIDNS-PID-STARTTIME-SERIAL)
    ended? Another namespace's group, or a name this module does not give, is not this process's to judge."""
    parts = group_name.split("-")
    if len(parts) != 4 or not all(p.isdigit() for p in parts) or parts[0] != _pid_namespace():
        return False
    return _maker_name(int(parts[1])) != "-".join(parts[:3])


class Group:
    """Where one command and all it forks run: `wrap` its argv (started as a session leader), `end` them all."""

    def __init__(self):
        self.path: pathlib.Path | None = None
        root = hierarchy()
        if root is None:
            return
        try:
            suite = root / SUITE_GROUP
            suite.mkdir(mode=0o755, exist_ok=True)
            _sweep_orphans(suite)
            path = suite / f"{_maker_name(os.getpid())}-{next(_serial)}"
            path.mkdir(mode=0o755)
            self.path = path
        except OSError:
            self.path = None

    @property
    def kind(self) -> str:
        return "cgroup" if self.path else "session"

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` run inside the group: it enters the cgroup before anything of it runs."""
        if self.path is None:
            return list(argv)
        return ["/bin/sh", "-c", 'echo 0 > "$0" && exec "$@"', str(self.path / "cgroup.procs"), *map(str, argv)]

    def end(self, leader: int | None = None) -> None:
        """Kills every process of the group: of the cgroup, or else of the session `leader` led; then removes
        the cgroup once the kernel has taken them away."""
        if self.path is None:
            if leader is not None:
                self._end_session(leader)
            return
        if _kill_and_remove(self.path):
            self.path = None

    @staticmethod
    def _end_session(leader: int) -> None:
        for entry in pathlib.Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid() and _session_of(entry.name) == leader:
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


def _kill_and_remove(path: pathlib.Path) -> bool:
    """Kills every process of the cgroup `path` and removes it once the kernel has taken them away."""
    try:
        (path / "cgroup.kill").write_text("1")
    except OSError:
        return False  # already removed, or a kernel without cgroup.kill (before 5.14): nothing more to do
    _wait_empty(path)
    try:
        path.rmdir()
        return True
    except OSError:
        return False  # still populated (a process stuck in the kernel): left for the next look


def _wait_empty(path: pathlib.Path) -> None:
    """Until cgroup.events says "populated 0" (the kernel signals each change of that file to poll)."""
    deadline = time.monotonic() + END_TIMEOUT_S
    try:
        fh = open(path / "cgroup.events", "rb", buffering=0)
    except OSError:
        return
    with fh:
        poller = select.poll()
        poller.register(fh, select.POLLPRI | select.POLLERR)
        while b"populated 0" not in os.pread(fh.fileno(), 4096, 0):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            poller.poll(left * 1000)


def _sweep_orphans(suite: pathlib.Path) -> None:
    """Ends the groups whose maker is gone: it was killed before its `end` (what it started may still run)."""
    try:
        children = [c for c in suite.iterdir() if c.is_dir()]
    except OSError:
        return
    for child in children:
        if _maker_gone(child.name):
            _kill_and_remove(child)
