"""The harness's half of the agent protocol (containers/agent/include/uet/agent/protocol.hpp): a process
started by a side's ``uet-agent``, with the few things of ``subprocess.Popen`` the harness uses (``pid``,
``poll``, ``wait``, ``kill``, ``returncode``) and a ``fileno`` that turns readable when its end is known.

    secret = RunSecret.make(folder)      # the run's secret, a 0600 file the agents are started with
    proc = AgentProcess("unix:/run/uet/pairs/x/a.sock", ["/bin/true"], env={"PATH": "/usr/bin"}, secret=secret.value)
    proc.wait(timeout=10)

Every connection answers the agent's challenge with HMAC-SHA-256(secret, nonce) (auth.hpp): without the
run's secret an agent starts nothing. A ``Lease`` held open keeps an agent started with ``--lease``
alive; when the harness goes, its connections close and the agent ends with everything it started.
An agent that goes away (its container or node stopped) ends the wait with ``lost`` set: the process is
then gone too, and ``returncode`` is None.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import pathlib
import secrets
import select
import socket
import time

from .placement import InfraError

AUTH_LABEL = b"uet-agent-auth-v1\n"


class AgentError(RuntimeError):
    """An agent could not be reached or refused a request; the message names the agent and why."""


class AgentUnreachable(AgentError, InfraError):
    """No agent answers at the address: its container or node is gone or was never reached. Lost
    infrastructure when no case of the cell has run yet (containers/placement.py InfraError says why only then);
    a refused request (a wrong secret, a spawn that failed) stays an AgentError."""


def _connect(spec: str, timeout: float) -> socket.socket:
    if spec.startswith("unix:"):
        family, address = socket.AF_UNIX, spec[len("unix:"):]
    elif spec.startswith("[") and "]:" in spec:
        host, port = spec[1:].rsplit("]:", 1)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        address = (host, int(port))
    else:
        raise AgentError(f"agent address {spec!r} is neither unix:PATH nor [address]:port")
    deadline = time.monotonic() + timeout
    pause = 0.01
    while True:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.connect(address)
            return sock
        except (FileNotFoundError, ConnectionRefusedError) as exc:  # not listening yet: within the deadline
            sock.close()
            if time.monotonic() + pause > deadline:
                raise AgentUnreachable(f"the agent at {spec} did not answer within {timeout:g} s: {exc}") from None
            time.sleep(pause)  # a poll interval inside a deadline, not a guess at readiness
            pause = min(pause * 2, 0.1)
        except OSError as exc:
            sock.close()
            raise AgentUnreachable(f"the agent at {spec} is not reachable: {exc}") from None


@dataclasses.dataclass(frozen=True)
class RunSecret:
    """The secret a run's agents answer to: its value, and the 0600 file that hands it over."""
    path: pathlib.Path
    value: str

    @classmethod
    def make(cls, folder: pathlib.Path) -> "RunSecret":
        """A new secret in `folder` (which must be the run's own), created exclusively and never through
        a link: a file another user made there first makes this fail rather than be written into."""
        path = pathlib.Path(folder) / f"agent-secret-{secrets.token_hex(4)}"
        value = secrets.token_hex(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, value.encode() + b"\n")
        finally:
            os.close(fd)
        return cls(path, value)


def answer(secret: str, nonce: str) -> str:
    return hmac.new(secret.encode(), AUTH_LABEL + nonce.encode(), hashlib.sha256).hexdigest()


class _Events:
    """JSON lines from an agent connection, each wait bounded."""

    def __init__(self, sock: socket.socket, spec: str):
        self.sock, self.spec, self.buf, self.closed = sock, spec, b"", False

    def pending(self) -> dict | None:
        if b"\n" not in self.buf:
            return None
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            raise AgentError(f"agent {self.spec} sent a line that is not JSON: {line[:200]!r}") from None

    def next(self, timeout: float | None) -> dict | None:
        """The next event; None when none came within `timeout` (0: do not wait) or the agent closed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            event = self.pending()
            if event is not None or self.closed:
                return event
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.sock], [], [], left)[0]:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                self.closed = True
            self.buf += chunk


def _authenticated(spec: str, secret: str, timeout: float) -> tuple[socket.socket, _Events]:
    """A connection past the agent's challenge."""
    sock = _connect(spec, timeout)
    events = _Events(sock, spec)
    try:
        challenge = events.next(timeout)
    except Exception:
        sock.close()
        raise
    if not challenge or challenge.get("event") != "challenge" or not isinstance(challenge.get("nonce"), str):
        sock.close()
        raise AgentError(f"the agent at {spec} sent no challenge within {timeout:g} s: {challenge}")
    sock.sendall(json.dumps({"op": "auth", "mac": answer(secret, challenge["nonce"])}).encode() + b"\n")
    return sock, events


def hello(spec: str, secret: str, timeout: float = 10.0) -> dict:
    """The agent's hello ({"pid", "hostname"}): proof it serves, and answers this run's secret."""
    sock, events = _authenticated(spec, secret, timeout)
    with sock:
        sock.sendall(b'{"op":"hello"}\n')
        event = events.next(timeout)
    if not event or event.get("event") != "hello":
        raise AgentError(f"the agent at {spec} gave no hello within {timeout:g} s: {event}")
    return event


class Lease:
    """Holds an agent started with --lease: it ends when this connection closes (close(), or this process's
    end, however it ends)."""

    def __init__(self, spec: str, secret: str, timeout: float = 10.0):
        self.spec = spec
        self._sock, _ = _authenticated(spec, secret, timeout)
        # A peer host that vanishes without a FIN is noticed by keepalive, not only by a harness that writes.
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        self._sock.sendall(b'{"op":"lease"}\n')

    def close(self) -> None:
        self._sock.close()


class AgentProcess:
    def __init__(self, spec: str, argv: list[str], env: dict[str, str], *, secret: str, output: str = "",
                 cwd: str = "/", timeout: float = 10.0, inputs: dict[str, str] | None = None):
        self.spec, self.argv = spec, [str(a) for a in argv]
        self.returncode: int | None = None
        self.status: int | None = None      # the raw wait status
        self.cpu_seconds = 0.0
        self.lost = False                   # the agent went away before the process's end was known
        self._sock, self._events = _authenticated(spec, secret, timeout)
        request = {"op": "spawn", "argv": self.argv, "env": {str(k): str(v) for k, v in env.items()},
                   "cwd": cwd, "output": str(output)}
        if inputs:  # {variable: bytes}: each a pipe on descriptor 3, 4, ... which the variable names
            request["inputs"] = {}
            for fd, (name, data) in enumerate(inputs.items(), start=3):
                request["env"][name] = str(fd)
                request["inputs"][str(fd)] = data
        self._sock.sendall(json.dumps(request).encode() + b"\n")
        event = self._events.next(timeout)
        if not event or event.get("event") != "started":
            self._sock.close()
            why = event.get("message") if event else f"no answer within {timeout:g} s"
            raise AgentError(f"agent {spec} did not start {self.argv[0]}: {why}")
        self.pid = int(event["pid"])

    def fileno(self) -> int:
        return self._sock.fileno()

    def _take(self, event: dict | None) -> None:
        if event and event.get("event") == "exited":
            self.status = int(event["status"])
            self.returncode = os.waitstatus_to_exitcode(self.status)
            self.cpu_seconds = float(event.get("cpu_seconds", 0.0))
            self._sock.close()
        elif event is None and self._events.closed and self.returncode is None:
            self.lost = True

    def poll(self) -> int | None:
        if self.returncode is None and not self.lost:
            self._take(self._events.next(0))
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None and not self.lost:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(f"{self.argv[0]} through agent {self.spec} did not end within {timeout:g} s")
            self._take(self._events.next(left))
        return self.returncode

    def kill(self, sig: int = 9) -> None:
        """Signals the process group; closing the connection (close()) would kill it too."""
        if self.returncode is None and not self.lost:
            try:
                self._sock.sendall(json.dumps({"op": "kill", "signal": int(sig)}).encode() + b"\n")
            except OSError:
                self.lost = True

    def close(self) -> None:
        self._sock.close()
