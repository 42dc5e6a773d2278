"""The suite's own privileged entity (build/bin/uet-entity) for a cell whose manifest asks for it
(privileged_entity.start: suite): started before the cell's entity cases, stopped after, its socket and
store in a folder of its own under /run/uet/entity (a socket path must be short), its log in the cell's folder."""
from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import socket
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


def entity_root() -> str | None:
    """Where the suite's entities keep their folders: /run/uet/entity as root, so that a placement's
    containers see every cell's entity through one volume; else the temporary folder."""
    if os.geteuid() != 0:
        return None
    ENTITY_ROOT.mkdir(parents=True, exist_ok=True)
    ENTITY_ROOT.chmod(0o755)
    return str(ENTITY_ROOT)


def trace_of(sock: str) -> pathlib.Path:
    """The Control API trace the suite's entity writes beside its socket (manifest placeholder {entity_trace})."""
    return pathlib.Path(sock).parent / "trace.jsonl"


@contextlib.contextmanager
def suite_entity(build: pathlib.Path, log: pathlib.Path):
    """Yields the socket path of a running uet-entity; stops it and removes its folder afterwards, keeping
    its Control API trace beside `log` (privileged-entity-trace.jsonl): what the provider asked and was told."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-entity-", dir=entity_root()))
    folder.chmod(0o755)  # the processes it answers may run as other users
    sock = folder / "control.sock"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as out:
        proc = subprocess.Popen([str(build / "bin" / "uet-entity"), "--socket", str(sock), "--store",
                                 str(folder / "entity.db"), "--trace", str(trace_of(str(sock)))],
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
