"""The privileged entity as a test fixture: a uet-entity of the test's own, with its socket in a folder of the
test's own (mode 0755, so that a process of another user can reach the socket) and its store in a sub-folder
only root enters (as the harness has it)."""
import os
import pathlib
import shlex
import shutil
import signal
import subprocess
import tempfile

import pytest

from harness.run.entity import own_folder, store_of, wait_serving


def _new_copy(source: pathlib.Path, to: pathlib.Path) -> pathlib.Path:
    """An executable copy made as a new file (O_EXCL, never through a link): some tests hand the folder to
    other users, and root writes nothing another user could have planted."""
    fd = os.open(to, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o755)
    with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
        shutil.copyfileobj(src, out)
    return to


class Entity:
    def __init__(self, build: pathlib.Path, folder: pathlib.Path):
        self.binary = build / "bin" / "uet-entity"
        # A copy others may run: the checkout may sit in a folder only root can enter.
        self.ctl = _new_copy(build / "bin" / "uet-entity-ctl", folder / "uet-entity-ctl")
        self.cred = _new_copy(build / "bin" / "uet-cred", folder / "uet-cred")
        self.args = []
        self.folder = folder
        self.socket = folder / "control.sock"
        self.store = store_of(folder)
        own_folder(self.store.parent, 0o700)
        self.log = folder / "entity.log"
        self.proc = None

    def start(self):
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen([str(self.binary), "--socket", str(self.socket), "--store", str(self.store),
                                          *self.args], stdout=subprocess.DEVNULL, stderr=log)
        wait_serving(self.proc, self.socket, self.log)
        return self

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    def run_ctl(self, *args, user: int | None = None, timeout: float = 10):
        cmd = [str(self.ctl), "--socket", str(self.socket), *map(str, args)]
        if user is not None:
            cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def run_cred(self, *args, user: int | None = None, groups: list[int] | None = None, job: int | None = None,
                 timeout: float = 10):
        """`uet-cred ARGS`, as `user` (with `groups`), inside `job`: under a root-owned process that calls itself
        "slurmstepd: [JOB.0]", as Slurm's step daemon does, which is how the entity finds a process's job."""
        cmd = [str(self.cred), "--socket", str(self.socket), *map(str, args)]
        if user is not None:
            extra = f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups"
            cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", extra, *cmd]
        if job is not None:
            # A list, not one command: bash would exec a lone command in place of itself and lose the parent.
            inner = shlex.join(cmd) + "; rc=$?; exit $rc"
            cmd = ["bash", "-c", f"exec -a 'slurmstepd: [{job}.0]' bash -c {shlex.quote(inner)}"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def entity_at(build_dir):
    """entity_at(folder) -> an Entity whose socket, store and log live in `folder` (not started)."""
    return lambda folder: Entity(build_dir, folder)


@pytest.fixture
def entity(build_dir):
    if os.geteuid() != 0:
        pytest.skip("the entity's tests check uid 0 against other users: they run as root")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-entity-"))
    folder.chmod(0o755)
    e = Entity(build_dir, folder)
    try:
        yield e.start()
    finally:
        e.stop()
        shutil.rmtree(folder, ignore_errors=True)
