"""softuet under hostile traffic while a transfer is in flight. softuet-transfer-probe sends messages and RMA
writes of known contents from side a to side b (RUD); meanwhile an injector in each namespace
(frame_injector.py) sends mutated copies of every frame its side's FEP sends (requests from a, ACKs and
responses from b) to the peer: thousands of frames with the right PDC IDs and wrong fields, cut short or
extended. Then the injectors stop and the same two processes exchange more messages.

Checked: no hang (every operation completes or fails with an error entry within the probe's deadline);
every message the server received has the right length and bytes, and so has its write slot; none arrived
twice; every message whose send completed without error arrived; both processes still serve the normal
exchange afterwards, without errors. The seed is printed; UET_HOSTILE_SEED repeats the mutations (the
interleaving with the transfer is the kernel's)."""
import json
import os
import pathlib
import random
import selectors
import signal
import subprocess
import sys
import time

import pytest

from softuet_helpers import built_probe, read_until, server_address

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

INJECTOR = pathlib.Path(__file__).with_name("frame_injector.py")
REPO = pathlib.Path(__file__).resolve().parents[2]
SLOTS = 4096         # write slots at the server (message SEQ writes slot SEQ % SLOTS)
TO_INJECT = 2500     # the transfer runs until each injector has sent this many copies
NORMAL = 256         # messages of the normal exchange afterwards
COPIES = 2           # mutated copies of each frame
DEADLINE = 150       # seconds for one phase: the probe's own per-batch deadline is 60 s


def start_injector(pair, side, seed):
    me, peer = pair[side], pair.peer(side)
    proc = pair.popen(side, [sys.executable, str(INJECTOR), me.ifname, me.ipv4, peer.ipv4, str(seed), str(COPIES)],
                      env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                      text=True)
    read_until(proc, "ready", 30)
    return proc


def wait_injected(injectors, target, timeout):
    """Until each injector's "injected N" lines reach `target` (they run beside the transfer)."""
    sel = selectors.DefaultSelector()
    for side, proc in injectors.items():
        sel.register(proc.stdout, selectors.EVENT_READ, side)
    counts, deadline = dict.fromkeys(injectors, 0), time.monotonic() + timeout
    while min(counts.values()) < target:
        left = deadline - time.monotonic()
        assert left > 0, f"the injectors sent only {counts} copies in {timeout} s"
        for key, _ in sel.select(timeout=left):
            line = key.fileobj.readline()
            assert line, f"injector {key.data} exited: {injectors[key.data].stderr.read()}"
            if line.startswith("injected "):
                counts[key.data] = int(line.split()[1])


def stop_injector(proc):
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, f"injector failed: {err}"
    return json.loads(out.strip().splitlines()[-1])


def client_errors(lines):
    """{(kind, seq): err} of the client's "error KIND SEQ ERR" lines."""
    return {(w[1], int(w[2])): int(w[3]) for w in (line.split() for line in lines) if w[0] == "error"}


def test_transfer_survives_mutated_copies_of_its_frames(pair, softuet_env, build_dir):
    seed = int(os.environ.get("UET_HOSTILE_SEED") or random.randrange(1, 2**31))
    print(f"hostile traffic: seed {seed} (repeat with UET_HOSTILE_SEED={seed})")
    probe = built_probe(build_dir, "softuet-transfer-probe")
    server = pair.popen("b", [probe, "serve", str(SLOTS)], env=softuet_env, text=True,
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    injectors = {}
    try:
        addr = server_address(server)
        injectors = {side: start_injector(pair, side, seed + i) for i, side in enumerate("ab")}
        client = pair.popen("a", [probe, "run", addr, str(SLOTS), str(NORMAL)], env=softuet_env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_injected(injectors, TO_INJECT, DEADLINE)
        injected = {side: stop_injector(proc) for side, proc in injectors.items()}
        injectors = {}
        client.stdin.write("stop\n")
        client.stdin.flush()
        hostile_round = read_until(client, "done 0 ", DEADLINE)
        sent = int(hostile_round[-1].split()[2])
        out, err = client.communicate(timeout=DEADLINE)
        assert client.returncode == 0, f"client: {err}"
        normal_round = out.splitlines()
        server_out, server_err = server.communicate(timeout=60)
    finally:
        for proc in injectors.values():
            proc.kill()
    assert server.returncode == 0, f"server: {server_err}"
    print(f"injected: {injected}")
    errors = client_errors(hostile_round)
    print(f"messages sent under injection: {sent}; operations that failed with an error entry: {len(errors)} "
          f"{sorted(errors)[:20]}")

    assert all(i["injected"] >= TO_INJECT for i in injected.values()), injected
    bad = [line for line in server_out.splitlines() if line.split()[0] in ("dup", "corrupt", "slot", "foreign", "recv-error")]
    assert not bad, f"delivered twice, corrupted, with a wrong slot, or not sent at all: {bad[:20]}"
    got = {int(s) for s in next(line for line in server_out.splitlines() if line.startswith("got")).split()[1:]}
    sent_ok = {s for s in range(sent) if ("send", s) not in errors}
    assert sent_ok <= got, f"sends completed without error but never arrived: {sorted(sent_ok - got)[:20]}"
    assert f"done {sent} {NORMAL}" in normal_round, normal_round
    assert not client_errors(normal_round), normal_round
    assert set(range(sent, sent + NORMAL)) <= got, "the normal exchange after the injection lost messages"
