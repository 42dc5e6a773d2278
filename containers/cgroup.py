"""A process of the suite on this host, and every process it starts, held in a cgroup v2 of its own, so that
its end ends them all: a provider's daemon that forked twice and left its session included (a process stays
in its parent's cgroup whatever it does; only root can move it out).

The cgroups are made in one of the suite's own, ``uet``, at the root of the cgroup v2 hierarchy
(/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host), and removed once empty. The command enters its
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


def _session_of(pid: str) -> int | None:
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # After the command's name, which may hold spaces and parentheses: state, ppid, pgrp, session.
    return int(stat.rsplit(")", 1)[1].split()[3])


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
            path = suite / f"{os.getpid()}-{next(_serial)}"
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
        try:
            (self.path / "cgroup.kill").write_text("1")
        except OSError:
            return  # already removed, or a kernel without cgroup.kill (before 5.14): nothing more to do
        self._wait_empty()
        try:
            self.path.rmdir()
            self.path = None
        except OSError:
            pass  # still populated (a process stuck in the kernel): left for the next look

    def _wait_empty(self) -> None:
        """Until cgroup.events says "populated 0" (the kernel signals each change of that file to poll)."""
        events = self.path / "cgroup.events"
        deadline = time.monotonic() + END_TIMEOUT_S
        with open(events, "rb", buffering=0) as fh:
            poller = select.poll()
            poller.register(fh, select.POLLPRI | select.POLLERR)
            while b"populated 0" not in (os.pread(fh.fileno(), 4096, 0)):
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                poller.poll(left * 1000)

    @staticmethod
    def _end_session(leader: int) -> None:
        for entry in pathlib.Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid() and _session_of(entry.name) == leader:
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
