"""Run a fabtests client/server program across a namespace pair: server on one side, client on the other.

fabtests clients do not retry their out-of-band connection, so the client starts only once the server's
control port is listening in its namespace (polled with `ss`, bounded by a deadline; never a fixed sleep).
Every process has a timeout; a server still running when its client is done is stopped and reported.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
import time

# The control port each program listens on: fi_pingpong has its own; the rest use -E (OOB exchange).
PINGPONG_CONTROL_PORT = 47592
OOB_PORT = 3000


class FabtestError(RuntimeError):
    """The pair could not be run (the server never listened, a program hung)."""


@dataclasses.dataclass
class FabtestRun:
    program: str
    server_argv: list[str]
    client_argv: list[str]
    server_rc: int
    client_rc: int
    server_output: str
    client_output: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.server_rc == 0 and self.client_rc == 0

    def describe(self) -> str:
        return (f"{self.program}: server rc={self.server_rc}, client rc={self.client_rc} in {self.seconds:.1f}s\n"
                f"server: {' '.join(self.server_argv)}\n{self.server_output[-2000:]}\n"
                f"client: {' '.join(self.client_argv)}\n{self.client_output[-2000:]}")


def listening(pair, side: str, port: int) -> bool:
    proc = pair.run(side, ["ss", "-Hltn", f"sport = :{port}"], timeout=10, capture_output=True, text=True)
    return bool(proc.stdout.strip())


def wait_listening(pair, side: str, port: int, server: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not listening(pair, side, port):
        if server.poll() is not None:
            out = server.stdout.read() if server.stdout else ""
            raise FabtestError(f"server exited ({server.returncode}) before listening on {port}:\n{out[-2000:]}")
        if time.monotonic() > deadline:
            raise FabtestError(f"server did not listen on port {port} within {timeout:.0f}s")
        time.sleep(0.02)  # polling interval of a bounded readiness probe, not synchronisation


def run_pair(pair, argv: list[str], *, env: dict | None = None, server_side: str = "b", timeout: float = 120.0,
             ipv6: bool = False, ready_timeout: float = 20.0, server_wrapper: list[str] | None = None) -> FabtestRun:
    """Run `argv` (program and options, e.g. ["fi_rdm", "-p", "tcp;ofi_rxm"]) as server on `server_side`
    and as client, with the server's address, on the other side. `server_wrapper` goes before the server's
    command line (a tracer, say: ["perf", "record", ..., "--"])."""
    program = os.path.basename(argv[0])
    pingpong = program == "fi_pingpong"
    port = PINGPONG_CONTROL_PORT if pingpong else OOB_PORT
    common = list(argv) if pingpong else list(argv) + [f"-E={port}"]
    client_side = "a" if server_side == "b" else "b"
    server_ip = pair[server_side].ipv6 if ipv6 else pair[server_side].ipv4
    # The out-of-band socket listens on IPv4 unless the server is given its own address.
    server_argv = common + (["-s", server_ip] if ipv6 and not pingpong else [])
    client_argv = common + [server_ip]
    full_env = {**os.environ, **(env or {})}
    start = time.monotonic()
    server = pair.popen(server_side, list(server_wrapper or []) + server_argv, env=full_env, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True)
    try:
        wait_listening(pair, server_side, port, server, ready_timeout)
        try:
            client = pair.run(client_side, client_argv, env=full_env, timeout=timeout, capture_output=True, text=True)
        except subprocess.TimeoutExpired as err:
            raise FabtestError(f"{program} client did not finish within {timeout:.0f}s") from err
        # A failed client leaves its server waiting for it: give the server a moment, not the whole timeout.
        server_wait = max(5.0, timeout - (time.monotonic() - start)) if client.returncode == 0 else 5.0
        try:
            server_out, _ = server.communicate(timeout=server_wait)
        except subprocess.TimeoutExpired:
            if client.returncode == 0:
                raise FabtestError(f"{program} server did not finish after its client succeeded") from None
            server.kill()
            server_out, _ = server.communicate(timeout=10)
        return FabtestRun(program, server_argv, client_argv, server.returncode, client.returncode, server_out,
                          client.stdout + client.stderr, time.monotonic() - start)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
