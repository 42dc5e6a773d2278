"""Two ./uet commands in one clone build one tree one after the other: the tasks of a Slurm array (./uet slurm
submit) or CI jobs on a shared clone each run ./uet, and two cmakes in one build tree at once would write its
cache and its objects over each other. The second waits on the tree's lock (flock), which /proc/locks shows,
until the first has left cmake; a clone whose cmake only records when it enters and leaves (and, for the first
command, stays until the test lets it go) says the order."""
import os
import pathlib
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
DEADLINE_S = 300.0   # a bound against a hang on a loaded host, not a measure

STUB = """#!/bin/sh
[ "$1" = --build ] || exit 0
echo "in $WHO" >> "$CMAKE_EVENTS"
if [ -n "${HOLD:-}" ]; then while [ ! -e "$HOLD" ]; do sleep 0.05; done; fi
echo "out $WHO" >> "$CMAKE_EVENTS"
"""


def poll(ready, what: str):
    end = time.monotonic() + DEADLINE_S
    while not ready():
        if time.monotonic() > end:
            pytest.fail(f"no {what} within {DEADLINE_S:.0f} s")
        time.sleep(0.05)


def waiting_on(path: pathlib.Path) -> bool:
    """Some process waits for the flock of `path` (a blocked request: '->' in /proc/locks)."""
    inode = f":{os.stat(path).st_ino} "
    return any("->" in line and inode in line for line in pathlib.Path("/proc/locks").read_text().splitlines())


def test_a_second_build_of_a_tree_waits_for_the_first(tmp_path, checkout_copy):
    clone = checkout_copy(tmp_path / "clone")
    if (REPO / "deps").exists():
        (clone / "deps").symlink_to((REPO / "deps").resolve())
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "cmake").write_text(STUB)
    (tools / "cmake").chmod(0o755)
    events, go = tmp_path / "events", tmp_path / "go"
    env = {k: v for k, v in os.environ.items() if k != "UET_BUILD"}
    env.update(PATH=f"{tools}:{env['PATH']}", CMAKE_EVENTS=str(events))

    def said() -> list[str]:
        return events.read_text().splitlines() if events.exists() else []

    def build(who: str, **extra) -> subprocess.Popen:
        return subprocess.Popen([str(clone / "uet"), "build"], cwd=clone, env=dict(env, WHO=who, **extra),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = build("first", HOLD=str(go))
    try:
        poll(lambda: said() == ["in first"], "first build in cmake")
        second = build("second")
        try:
            def second_waits() -> bool:
                assert "in second" not in said(), "the second build entered cmake while the first was in it"
                return waiting_on(clone / "build" / ".uet-build.lock")
            poll(second_waits, "second build waiting on the tree's lock")
            go.touch()
            assert (second.wait(timeout=DEADLINE_S), first.wait(timeout=DEADLINE_S)) == (0, 0), \
                first.stdout.read()[-2000:] + second.stdout.read()[-2000:]
        finally:
            second.kill()
    finally:
        go.touch()
        first.kill()
    assert said() == ["in first", "out first", "in second", "out second"]
