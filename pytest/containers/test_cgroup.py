"""A command of the suite on this host is held with everything it starts (containers/cgroup.py): its end ends
a daemon it left behind (issue: trust boundaries, round two, low: --same-host left a provider's double-forked
daemons running). In a cgroup of its own where the suite may make one (root, cgroup v2), else in its session."""
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from containers import cgroup  # noqa: E402

# Leaves a daemon behind: forked twice, in a session of its own when argv[1] is "setsid"; its pid in argv[2]
# before the command ends.
DAEMON = r"""
import os, signal, sys
ready, told = os.pipe()
if os.fork() == 0:
    if sys.argv[1] == "setsid":
        os.setsid()
    if os.fork() == 0:
        with open(sys.argv[2], "w") as out:
            out.write(str(os.getpid()))
        os.write(told, b"r")
        signal.pause()
    os._exit(0)
os.close(told)
os.read(ready, 1)
os.wait()
"""


def leave_daemon(group: cgroup.Group, how: str, pidfile: pathlib.Path) -> int:
    """Runs the command in `group` to its end; the daemon's pid."""
    proc = subprocess.Popen(group.wrap([sys.executable, "-c", DAEMON, how, str(pidfile)]), start_new_session=True)
    assert proc.wait(timeout=60) == 0
    group.end(proc.pid)
    return int(pidfile.read_text())


# A maker killed before it ends its group: it makes a group, starts a daemon in it and, once the daemon says it
# runs (inside: the group's shell enters the cgroup before it execs it), prints the group's path and the
# daemon's pid, then waits for its SIGKILL.
KILLED_MAKER = r"""
import signal, subprocess
from containers import cgroup
group = cgroup.Group()
daemon = subprocess.Popen(group.wrap(["/bin/sh", "-c", "echo in; exec sleep infinity"]), stdout=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, start_new_session=True)
daemon.stdout.readline()
print(group.path, daemon.pid, flush=True)
signal.pause()
"""


class TestAGroupEndsWhatItsCommandLeftRunning:
    def test_a_group_whose_maker_was_killed_is_ended_by_the_next_group(self, wait_gone):
        if cgroup.hierarchy() is None:
            pytest.skip("no cgroup v2 hierarchy this process may make cgroups in (not root?)")
        maker = subprocess.Popen([sys.executable, "-c", KILLED_MAKER], cwd=REPO, stdout=subprocess.PIPE, text=True,
                                 env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        left, daemon = maker.stdout.readline().split()
        maker.kill()
        maker.wait(timeout=60)
        assert pathlib.Path(left).exists() and not wait_gone(int(daemon), timeout=0.1), \
            "a SIGKILL leaves the group and its daemon (what the sweep is for)"
        sweeper = cgroup.Group()
        try:
            assert not pathlib.Path(left).exists(), "the next Group removed the orphaned group"
            assert wait_gone(int(daemon)), "and ended the daemon in it"
        finally:
            sweeper.end()

    def test_a_live_makers_group_is_left_alone(self):
        if cgroup.hierarchy() is None:
            pytest.skip("no cgroup v2 hierarchy this process may make cgroups in (not root?)")
        mine = cgroup.Group()
        try:
            other = cgroup.Group()
            other.end()
            assert mine.path.exists(), "a group whose maker still runs is not swept"
        finally:
            mine.end()

    def test_a_daemon_in_a_session_of_its_own_ends_with_the_cgroup(self, tmp_path, wait_gone):
        if cgroup.hierarchy() is None:
            pytest.skip("no cgroup v2 hierarchy this process may make cgroups in (not root?)")
        group = cgroup.Group()
        assert group.kind == "cgroup"
        made = group.path
        assert wait_gone(leave_daemon(group, "setsid", tmp_path / "pid"))
        assert not made.exists(), "the cgroup is removed once empty"

    def test_without_a_cgroup_a_daemon_that_stays_in_the_session_ends_with_it(self, tmp_path, wait_gone,
                                                                              monkeypatch):
        monkeypatch.setattr(cgroup, "hierarchy", lambda: None)
        group = cgroup.Group()
        assert group.kind == "session"
        assert wait_gone(leave_daemon(group, "stay", tmp_path / "pid"))
