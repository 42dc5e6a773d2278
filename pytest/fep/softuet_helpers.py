"""Helpers of the softuet tests (a module with a unique name: several conftest.py exist under pytest/)."""
import json
import pathlib
import selectors
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


def built_probe(build_dir, name):
    """Path of a probe program of the build (build/bin/NAME); the test fails when it is not built."""
    path = build_dir / "bin" / name
    if not path.exists():
        pytest.fail(f"{path} is not built: run ./uet build")
    return str(path)


def read_until(proc, prefix, timeout):
    """The lines `proc` prints up to and including the first that starts with `prefix`."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    lines, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not sel.select(timeout=deadline - time.monotonic()):
            break
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"exited with {proc.wait(timeout=10)} before '{prefix}': {''.join(lines)}"
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        lines.append(line)
        if line.startswith(prefix):
            return lines
    raise AssertionError(f"no '{prefix}' within {timeout} s (a hang); so far: {''.join(lines[-20:])}")


def server_address(server, timeout=20.0):
    """The "addr HEX" line a probe server (build/bin/softuet-*-probe serve) prints once it is ready."""
    return read_until(server, "addr ", timeout)[-1].split()[1]


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


def decode_strict(cmd_uet_decode, pcap, *options):
    """The records of a capture; every frame must decode as UET with no diagnostic (uet-decode --strict).
    `options` go to uet-decode as well (e.g. "--port", "47990")."""
    res = cmd_uet_decode("--strict", *options, pcap)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    records = [json.loads(line) for line in res.stdout.splitlines()]
    for r in records:
        assert r["status"] == "uet" and r["diagnostics"] == [], r
    return records


def run_pingpong(pair, env, ep_type, size, iterations, pcap, side_env=None, capture_filter="udp port 4793"):
    """fi_pingpong over softuet: server in side b, client in side a, UET traffic captured on side a.

    ``side_env`` ({"a": {...}, "b": {...}}) adds per-side variables (SOFTUET_ADDR puts a FEP on IPv6);
    ``capture_filter`` is tcpdump's ("udp" for FEPs that bind ports of their own).
    The out-of-band exchange always dials side b's IPv4 address: fi_pingpong resolves it for IPv4 only."""
    binary = fabtest("fi_pingpong")
    argv = [binary, "-p", "softuet", "-e", ep_type, "-S", str(size), "-I", str(iterations)]
    envs = {s: dict(env, **((side_env or {}).get(s) or {})) for s in ("a", "b")}
    with pair.capture("a", str(pcap), filter=capture_filter):
        server = pair.popen("b", argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=envs["b"])
        wait_listening(pair, "b", PINGPONG_PORT, server)
        client = pair.run("a", argv + [pair.b.ipv4], capture_output=True, text=True, env=envs["a"],
                          timeout=60)
        server_out, _ = server.communicate(timeout=60)
    assert client.returncode == 0, f"client: {client.stdout}\n{client.stderr}\nserver: {server_out}"
    assert server.returncode == 0, f"server: {server_out}"
    return client.stdout, server_out


def request_key(f):
    """What names a request on its PDC: its message_id, or its PSN when its header has none (the small
    message and small RMA headers; spec/wire.yaml choice unnumbered-response-message-id)."""
    if "uet.ses.message_id" in f:
        return ("message_id", f["uet.ses.message_id"])
    return ("psn", f["uet.pds.psn"])


def response_key(f):
    """The request an ACK's SES response answers, named as request_key names it: a response with message_id
    0 answers the request whose PSN the ACK acknowledges (cack_psn + ack_psn_offset)."""
    mid = f.get("uet.ses.rsp.message_id", f.get("uet.ses.rsp.read_request_message_id"))
    if mid:
        return ("message_id", mid)
    return ("psn", (f["uet.pds.cack_psn"] + f["uet.pds.ack_psn_offset"]) % 2**32)


def unconfirmed_keys(requests):
    """The request_keys of one PDC's requests whose answers its initiator had not confirmed at the end: at or
    after the CLEAR_PSN of its last request (the oldest PSN it still waited to see ACKed). A closing target
    restates those answers (fep/src/transport.cpp, kCloseRestatements): they may have more responses than
    copies of the request."""
    start = requests[0]["uet.pds.psn"]
    last = max(requests, key=lambda f: (f["uet.pds.psn"] - start) % 2**32)
    clear = (last["uet.pds.psn"] + last["uet.pds.clear_psn_offset"]) % 2**32
    return {request_key(f) for f in requests if (f["uet.pds.psn"] - clear) % 2**32 < 2**31}


OPTIMIZED_KEY_BIT = 1 << 62


def header_format_problems(records, small_max=16383, mtu=4096):
    """One line per request whose SES header breaks the header choice (spec/wire.yaml choices
    optimized-header-criteria, small-message-criteria and small-rma-criteria, for a target that takes the
    optimized header): a one-packet send or RMA of at most `small_max` bytes travels in the medium header
    (unless an RMA carries remote CQ data), or for an RMA to an OPTIMIZED key in the optimized
    non-matching header; anything else in the standard header. A request in the optimized header carries
    no key, so one that is eligible is taken as right."""
    problems = []
    for r in records:
        f = r["fields"]
        if f.get("uet.pds.type") not in (2, 3):  # RUD/ROD requests only
            continue
        one_packet = f["uet.ses.som"] == 1 and f["uet.ses.eom"] == 1
        small = one_packet and f["uet.ses.request_length"] <= min(small_max, mtu)
        rma = f["uet.ses.opcode"] in (0x01, 0x02, 0x03, 0x04)  # WRITE, READ, ATOMIC, FETCHING_ATOMIC
        eligible = small and not (rma and f.get("uet.ses.hd") == 1)
        key = f.get("uet.ses.memory_key")
        optimized = rma and eligible and (key is None or (key & OPTIMIZED_KEY_BIT and key & 0xFFFFFFFFF000 == 0))
        want = "uet.ses.small" if optimized else "uet.ses.medium" if eligible else "uet.ses.std"
        if want not in r["layers"]:
            problems.append(f"frame {r['frame']}: opcode {f['uet.ses.opcode']} of {f['uet.ses.request_length']} "
                            f"bytes in {[l for l in r['layers'] if l.startswith('uet.ses')]}, want {want}")
    return problems
