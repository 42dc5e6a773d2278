"""Fixtures of the trust-boundary tests: the hostile user (`nobody`, through setpriv), folders it controls or
shares with root, a file of root's it would like overwritten, and the harness's commands run as ./uet runs
them (behind harness/commands/guard.py, so a traceback shows as exit 3)."""
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
NOBODY_UID = 65534
# A command that reads a hostile file must not take the host's memory with it, whatever it does wrong.
MEMORY_CAP = 2 << 30


@pytest.fixture
def as_nobody():
    """as_nobody(*argv) -> CompletedProcess of argv run as nobody (it must succeed)."""
    def run(*argv):
        done = subprocess.run([*NOBODY, *map(str, argv)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done
    return run


@pytest.fixture
def reachable():
    """A folder of root's (0755) under /tmp that nobody may enter but not write (tmp_path is 0700)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-test-trust-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def nobody_folder(reachable):
    """A folder nobody made and owns, where root is asked to write."""
    folder = reachable / "nobody-owns-this"
    folder.mkdir()
    os.chown(folder, NOBODY_UID, NOBODY_UID)
    return folder


@pytest.fixture
def shared_folder(reachable):
    """A folder of root's that every user may write, with the sticky bit (as /tmp)."""
    folder = reachable / "shared"
    folder.mkdir()
    folder.chmod(0o1777)
    return folder


class Victim:
    """A file of root's that a planted link points at."""
    TEXT = "root's own file: nothing the suite writes\n"

    def __init__(self, path: pathlib.Path):
        self.path = path
        path.write_text(self.TEXT)

    def untouched(self) -> bool:
        return self.path.read_text() == self.TEXT


@pytest.fixture
def victim(tmp_path):
    return Victim(tmp_path / "victim")


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


@pytest.fixture
def cmd_guarded():
    """cmd_guarded(command, module, *args, timeout=120, limits=None) -> CompletedProcess (text) of
    `python3 -m harness.commands.guard COMMAND MODULE ARGS`, as ./uet runs it, with at most MEMORY_CAP of
    memory; `limits`: more (resource, value) limits."""
    def run(command, module, *args, timeout=120, limits=()):
        def preexec():
            _capped()
            for which, value in limits:
                resource.setrlimit(which, (value, value))
        env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-m", "harness.commands.guard", command, module, *map(str, args)],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=preexec)
    return run


@pytest.fixture
def fake_build(tmp_path):
    """A build whose one case binary (area aaa) exits at once: a run of it writes a whole report in seconds."""
    build = tmp_path / "build"
    (build / "cases").mkdir(parents=True)
    binary = build / "cases" / "uet-cases-aaa"
    binary.write_text("#!/bin/sh\nexit 0\n")
    binary.chmod(0o755)
    return build


@pytest.fixture
def make_run():
    """make_run(runs, name, results) -> a run folder runs/name written by the run's own writers
    (harness/run_suite.py assemble and write_outputs) for `results` (harness.results.Result, cell 'udp')."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    import datetime
    from harness import manifest as manifest_mod
    from harness import run_suite
    from harness.run_cases import Cell

    def make(runs: pathlib.Path, name: str, results: list) -> pathlib.Path:
        folder = runs / name
        folder.mkdir(parents=True)
        udp = manifest_mod.load(REPO / "cases" / "manifests" / "udp.yaml")
        doc = run_suite.assemble(
            run_id=name, command="./uet run --provider udp.yaml", mode="provider", seed=7, spec_version="1.0.1",
            started=datetime.datetime(2026, 11, 28, 12, tzinfo=datetime.timezone.utc), cells=[Cell(udp, udp, ["msg"])],
            results=results, versions={"udp": "1.0"}, placement="none", partial=False, decode={}, run_dir=folder,
            timings={}, losses={})
        run_suite.write_outputs(doc, folder, runs)
        return folder
    return make
