"""The suite's own privileged entity (build/bin/uet-entity) for a cell whose manifest asks for it
(privileged_entity.start: suite): started before the cell's entity cases, stopped after, its socket in a
folder of its own under /run/uet/entity (a socket path must be short) and its store in a sub-folder of that
only root enters, its log in the cell's folder."""
from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import socket
import stat
import subprocess
import tempfile
import time

READY_DEADLINE_S = 10.0
ENTITY_ROOT = pathlib.Path("/run/uet/entity")


class EntityError(Exception):
    """The entity did not start: the message says why, with its log."""


def wait_serving(proc: subprocess.Popen, sock: pathlib.Path, log: pathlib.Path,
                 deadline: float = READY_DEADLINE_S) -> None:
    """Returns once the uet-entity `proc` answers a connect at `sock`; EntityError, with its log, when it
    exits or does not answer within `deadline` seconds."""
    end = time.monotonic() + deadline
    while True:
        if proc.poll() is not None:
            raise EntityError(f"uet-entity exited {proc.returncode}: {log.read_text(errors='replace').strip()}")
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            try:
                s.connect(str(sock))
                return
            except OSError:
                pass
        if time.monotonic() > end:
            raise EntityError(f"uet-entity did not answer at {sock} within {deadline:.0f} s (log {log})")
        time.sleep(0.01)


def own_folder(path: pathlib.Path, mode: int) -> None:
    """`path` made `mode` when missing; one already there is made `mode` only when it is a folder (not a symlink)
    of ours that no other user may write into, else EntityError: root never makes its files where another
    user could have put a folder or a link of theirs."""
    try:
        path.mkdir(mode=mode)
    except FileExistsError:
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise EntityError(f"the entity's folder {path} cannot be opened as a folder ({exc.strerror}): it must be a "
                          "folder, not a symlink; remove it and run again") from None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise EntityError(f"the entity's folder {path} is owned by uid {st.st_uid} with mode "
                              f"{stat.S_IMODE(st.st_mode):04o}: it must be ours (uid {os.geteuid()}) and writable by "
                              "no other user; remove it and run again")
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def entity_root() -> str | None:
    """Where the suite's entities keep their folders: /run/uet/entity as root, so that a placement's
    containers see every cell's entity through one volume; else the temporary folder."""
    if os.geteuid() != 0:
        return None
    ENTITY_ROOT.parent.mkdir(parents=True, exist_ok=True)
    own_folder(ENTITY_ROOT, 0o755)  # others enter it to reach their cell's socket
    return str(ENTITY_ROOT)


def store_of(folder: pathlib.Path) -> pathlib.Path:
    """The SQLite store of the entity whose folder is `folder`: in a sub-folder only root may enter."""
    return folder / "store" / "entity.db"


def trace_of(sock: str) -> pathlib.Path:
    """The Control API trace the suite's entity writes beside its socket (manifest placeholder {entity_trace})."""
    return pathlib.Path(sock).parent / "trace.jsonl"


@contextlib.contextmanager
def suite_entity(build: pathlib.Path, log: pathlib.Path):
    """Yields the socket path of a running uet-entity; stops it and removes its folder afterwards, keeping
    its Control API trace beside `log` (privileged-entity-trace.jsonl): what the provider asked and was told."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-entity-", dir=entity_root()))
    # The processes it answers may run as other users: they reach the socket by its name, and list nothing.
    folder.chmod(0o711)
    own_folder(store_of(folder).parent, 0o700)  # the store holds secure-domain keys and the token key
    sock = folder / "control.sock"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as out:
        proc = subprocess.Popen([str(build / "bin" / "uet-entity"), "--socket", str(sock), "--store",
                                 str(store_of(folder)), "--trace", str(trace_of(str(sock)))],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_serving(proc, sock, log)
        yield str(sock)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if trace_of(str(sock)).exists():
            shutil.copy(trace_of(str(sock)), log.with_name(log.stem + "-trace.jsonl"))
        shutil.rmtree(folder, ignore_errors=True)
