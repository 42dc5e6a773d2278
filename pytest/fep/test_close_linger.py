"""A target that closes while its initiator is not running: the last ACK must still reach it.

softuet-linger-probe sends one message from side a to side b. Every ACK b sends is dropped (nftables, a's input
hook) until a has been stopped (SIGSTOP) and b has answered every copy a sent; then the drop is lifted,
b closes its endpoint and exits, and only then a runs again (SIGCONT). A send completes on its ACK and SES
response, so a completes only if b's close left them on the way to a while a could not ask again: a peer
starved across the target's linger must not depend on being scheduled in time (a fi_pingpong client under
load failed so with FI_EIO after its 10 s give-up). Each step waits for an event (a line, a process state,
nftables counters), never for a time."""
import json
import os
import signal
import subprocess
import time

import pytest

from containers.host import tool
from softuet_helpers import built_probe, read_until, server_address

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

TABLE = "uet_linger"  # apart from the pair's own impairment table (uet_impair)
DEADLINE = 60         # seconds: a bound for a hang, longer than softuet's 10 s retransmission give-up


def nft(pair, side, *args, script=None):
    done = pair.run(side, [tool("nft"), *args], input=script, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def count_and_drop(pair, side):
    """Counts the UDP datagrams `side` sends and receives on its veth (which carries UET alone), and drops
    those it receives. The output hook counts in the sender's own call: once it is stopped, its count is
    final."""
    ifname = pair[side].ifname
    script = (f"add table inet {TABLE}\ndelete table inet {TABLE}\ntable inet {TABLE} {{\n"
              f"  chain sent {{ type filter hook output priority 0; policy accept; "
              f"oifname \"{ifname}\" meta l4proto udp counter; }}\n"
              f"  chain received {{ type filter hook input priority 0; policy accept; "
              f"iifname \"{ifname}\" meta l4proto udp counter drop; }}\n}}\n")
    nft(pair, side, "-f", "-", script=script)


def counts(pair, side):
    """{chain: packets} of count_and_drop's table, read at one instant."""
    listed = json.loads(nft(pair, side, "-j", "list", "table", "inet", TABLE))["nftables"]
    return {item["rule"]["chain"]: e["counter"]["packets"] for item in listed if "rule" in item
            for e in item["rule"]["expr"] if "counter" in e}


def wait_for(condition, what):
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {DEADLINE} s (a hang)"
        time.sleep(0.02)  # polling interval of a bounded wait for an event, not synchronisation


def state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


class TestCloseAfterLostFinalAck:
    def test_starved_initiator_gets_its_answer_after_the_target_closed(self, pair, softuet_env, build_dir):
        probe = built_probe(build_dir, "softuet-linger-probe")
        count_and_drop(pair, "a")  # a's request and its retransmissions; b's ACKs, all lost for now
        target = pair.popen("b", [probe, "serve"], env=softuet_env, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        addr = server_address(target)
        initiator = pair.popen("a", [probe, "send", addr], env=softuet_env, text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        stopped = False
        try:
            read_until(target, "received", DEADLINE)
            initiator.send_signal(signal.SIGSTOP)
            stopped = True
            wait_for(lambda: state(initiator.pid) == "T", "stopped initiator")
            # b answers each copy of a single-packet message with one ACK: once as many ACKs were dropped as
            # a sent copies, no answer of b's is still to come, and the next one is its close's.
            wait_for(lambda: (lambda n: n["received"] >= n["sent"] >= 1)(counts(pair, "a")), "answer to every copy")
            nft(pair, "a", "delete", "table", "inet", TABLE)
            target.stdin.write("close\n")
            target.stdin.flush()
            closed, target_err = target.communicate(timeout=DEADLINE)
            assert (target.returncode, closed.split()) == (0, ["closed"]), target_err
            initiator.send_signal(signal.SIGCONT)
            stopped = False
            out, err = initiator.communicate(timeout=DEADLINE)
        finally:
            if stopped:
                initiator.send_signal(signal.SIGCONT)
        assert initiator.returncode == 0, err
        # FI_EIO here: a's retransmissions found b closed and gave up.
        assert out.split() == ["sent"], out + err
