"""Helpers of the softuet tests (a module with a unique name: several conftest.py exist under pytest/)."""
import json
import pathlib
import shutil
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PINGPONG_PORT = 47592  # fi_pingpong's out-of-band TCP port for the address exchange


def fabtest(name):
    """Path of a fabtests/libfabric tool: the project-local libfabric first, then PATH."""
    local = REPO / "deps" / "libfabric" / "bin" / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (libfabric's fabtests)")
    return found


def wait_listening(pair, side, port, proc, timeout=20.0):
    """Wait until `port` is a listening TCP socket in `side` (fi_pingpong's client does not retry)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(f"server exited with {proc.returncode} before listening: {out}")
        ss = pair.run(side, ["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, timeout=10)
        if ss.stdout.strip():
            return
        # The server's socket appears within milliseconds; re-check at a short interval, bounded above.
        time.sleep(0.02)
    raise AssertionError(f"nothing listens on TCP {port} in side {side} after {timeout} s")


def decode_strict(cmd_uet_decode, pcap):
    """The records of a capture; every frame must decode as UET with no diagnostic (uet-decode --strict)."""
    res = cmd_uet_decode("--strict", pcap)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    records = [json.loads(line) for line in res.stdout.splitlines()]
    for r in records:
        assert r["status"] == "uet" and r["diagnostics"] == [], r
    return records


def run_pingpong(pair, env, ep_type, size, iterations, pcap, side_env=None):
    """fi_pingpong over softuet: server in side b, client in side a, UET traffic captured on side a.

    ``side_env`` ({"a": {...}, "b": {...}}) adds per-side variables (SOFTUET_ADDR puts a FEP on IPv6).
    The out-of-band exchange always dials side b's IPv4 address: fi_pingpong resolves it for IPv4 only."""
    binary = fabtest("fi_pingpong")
    argv = [binary, "-p", "softuet", "-e", ep_type, "-S", str(size), "-I", str(iterations)]
    envs = {s: dict(env, **((side_env or {}).get(s) or {})) for s in ("a", "b")}
    with pair.capture("a", str(pcap), filter="udp port 4793"):
        server = pair.popen("b", argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=envs["b"])
        wait_listening(pair, "b", PINGPONG_PORT, server)
        client = pair.run("a", argv + [pair.b.ipv4], capture_output=True, text=True, env=envs["a"],
                          timeout=60)
        server_out, _ = server.communicate(timeout=60)
    assert client.returncode == 0, f"client: {client.stdout}\n{client.stderr}\nserver: {server_out}"
    assert server.returncode == 0, f"server: {server_out}"
    return client.stdout, server_out
