"""Large messages on the wire (spec/wire.yaml choices rendezvous-protocol, deferrable-send-protocol,
rendezvous-ext-layout; spec 2.2.2.1-a/c/d, 2.2.5.4.1.2-a..e, 2.2.5.4.2.2-a..c, 2.2.10.4-g/h/i).

softuet-rndv-probe sends messages from side a to side b of a namespace pair, with its buffer in a remote-read
MR or not, and side b posts its receives before the sends or after them. The capture on side a, decoded by
uet-decode, shows:
- between HPC FEPs, a send of at least 8192 bytes from a remote-read MR is one UET_RENDEZVOUS_SEND/TSEND
  packet carrying min(size, 2048) eager bytes and the extension header naming the sender's endpoint, MR key
  and offset; b reads the rest with UET_READs to that key, and only then answers the request;
- between AI Full FEPs, a send of that size is UET_DEFERRABLE_SEND/TSEND with a nonzero initiator token
  (distinct among the active ones) and target token 0; without a posted receive b answers RC_NO_MATCH,
  later sends UET_DEFERRABLE_RTR with both tokens, and a restarts the message with them;
- an HPC FEP without AI Full takes a deferrable send as a send; a FEP with HPC sends none to it.
Every message arrives byte-exact, and once (the receiver finds nothing for one more receive per message).
Each knob of these rules makes one of these checks report problems."""
import os
import pathlib
import selectors
import subprocess
import time

import pytest
import yaml

from harness.inputs import address_layout
from softuet_helpers import built_probe, decode_strict

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

REPO = pathlib.Path(__file__).resolve().parents[2]
CONST = {k: v["value"] for k, v in yaml.safe_load((REPO / "spec" / "wire.yaml").read_text())["constants"].items()}
UET_PORT = CONST["udp_port"]
THRESHOLD = CONST["rendezvous_size_default"]  # 8192 (choice rendezvous-size-default)
MAX_EAGER = CONST["max_eager_size_default"]   # 2048 (choice max-eager-size-default)
MTU = 4096
MR_KEY = 0x5AFE  # the probe's MR
PDS_REQ = (2, 3)
PDS_ACK = 7
UET_READ, UET_SEND, UET_TAGGED_SEND = 0x02, 0x05, 0x09
RDV_SEND, RDV_TSEND, DEF_SEND, DEF_TSEND, RTR = 0x06, 0x0A, 0x08, 0x0B, 0x0C
RC_OK, RC_NO_MATCH = 0x01, 0x05
LIST_EXPECTED, LIST_OVERFLOW = 0, 1
HPC = "ai_base,hpc"
AI_FULL = "ai_base,ai_full"
BOTH = "ai_base,ai_full,hpc"
# Without a common profile: an AI Full FEP and an HPC FEP operate in AI Full (2.2.2.1-b). With AI Base on
# both sides they would share AI Base, the common profile of highest priority they have (choices
# profile-priority and no-common-profile), and send plain sends.
AI_FULL_ONLY, HPC_ONLY = "ai_full", "hpc"
SIZES = [100, 8191, 8192, 20000, 65536, 1 << 20]


@pytest.fixture
def probe(build_dir):
    return built_probe(build_dir, "softuet-rndv-probe")


def read_lines(proc, until, timeout=60.0):
    """Lines of `proc`'s stdout up to and including the first that starts with `until`. Reads the pipe
    itself (os.read), so that lines a previous call read ahead are kept in proc.pending, not lost in a
    buffered reader the selector cannot see."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    lines = []
    pending = getattr(proc, "pending", "")
    while True:
        while "\n" in pending:
            line, pending = pending.split("\n", 1)
            lines.append(line.strip())
            if line.startswith(until):
                proc.pending = pending
                return lines
        left = deadline - time.monotonic()
        if left <= 0 or not sel.select(timeout=left):
            break
        chunk = os.read(proc.stdout.fileno(), 65536).decode()
        if not chunk:
            raise AssertionError(f"probe exited with {proc.wait(timeout=10)} after {lines}: {proc.stderr.read()}")
        pending += chunk
    proc.pending = pending
    raise AssertionError(f"probe printed no '{until}' line within {timeout} s (got {lines})")


def parse_addr(hex_text):
    """PIDonFEP, resource index and initiator ID of an address softuet's fi_getname gave (its manifest's
    layout, spec/address-layouts.yaml)."""
    b, layout = bytes.fromhex(hex_text), address_layout.resolve("softuet")
    return {"pid_on_fep": address_layout.read(layout, b, "pid_on_fep"),
            "resource_index": address_layout.read(layout, b, "start_index"),
            "initiator": address_layout.read(layout, b, "initiator_id")}


def offsets(sizes):
    """Where the probe puts each message in its MR: 4096-byte aligned, one after the other."""
    at, off = [], 0
    for s in sizes:
        at.append(off)
        off += (s + MTU - 1) // MTU * MTU
    return at


class Run:
    """One transfer: the probes' outputs, the capture, and the two addresses."""

    def __init__(self, sizes, tagged, client, server_out, records, whole, client_addr, server_addr, ip_a):
        self.sizes, self.tagged = sizes, tagged
        self.client_rc, self.client_out, self.client_err = client
        self.server_out = server_out
        self.records, self.whole = records, whole
        self.a, self.b = client_addr, server_addr
        self.ip_a = ip_a

    def fields(self, pred):
        return [(r, r["fields"]) for r in self.records if pred(r["fields"])]

    def requests(self, from_a=True, first=True):
        """SES requests of one direction, first sends only (retx 0) unless `first` is False."""
        return [(r, f) for r, f in self.fields(lambda f: f["uet.pds.type"] in PDS_REQ and "uet.ses.opcode" in f)
                if (f["ip.src"] == self.ip_a) == from_a and (not first or f["uet.pds.flags.retx"] == 0)]

    def responses(self, from_b=True):
        return [(r, f) for r, f in self.fields(lambda f: f["uet.pds.type"] == PDS_ACK and "uet.ses.rsp.return_code" in f)
                if (f["ip.src"] != self.ip_a) == from_b]

    def index(self, f):
        """The message a request of a belongs to (the probe's sizes are distinct)."""
        return self.sizes.index(f["uet.ses.request_length"])


@pytest.fixture
def transfer(pair, probe, softuet_env, tmp_path, cmd_uet_decode):
    def run(sizes, *, profiles=(BOTH, BOTH), mr=False, tagged=False, late=False, loss=0, env_extra=None,
            server_env=None, name="rndv", client_timeout=60):
        env = dict(softuet_env, **(env_extra or {}))
        envs = {"a": dict(env, SOFTUET_PROFILES=profiles[0]),
                "b": dict(env, SOFTUET_PROFILES=profiles[1], **(server_env or {}))}
        flags = ["--tagged"] if tagged else []
        pcap = tmp_path / f"{name}.pcap"
        with pair.capture("a", str(pcap), filter=f"udp port {UET_PORT}") as cap:
            for side in ("a", "b") if loss else ():
                pair.impair(side, loss_percent=loss, udp_dport=UET_PORT)
            server = pair.popen("b", [probe, "recv", "late" if late else "early", *flags, *map(str, sizes)],
                                env=envs["b"], text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
            try:
                server_addr = read_lines(server, "addr ")[-1].split()[1]
                client = pair.popen("a", [probe, "send", server_addr, *(["--mr"] if mr else []), *flags,
                                          *map(str, sizes)], env=envs["a"], text=True, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
                client_addr = read_lines(client, "addr ")[-1].split()[1]
                if late:
                    time.sleep(1.0)  # the sends reach b, which has no receive yet
                    server.stdin.write(f"post {client_addr}\n")
                    server.stdin.flush()
                try:
                    client_rest, client_err = client.communicate(timeout=client_timeout)
                except subprocess.TimeoutExpired:
                    client.kill()
                    client_rest, client_err = client.communicate(timeout=10)
                # What read_lines read past the address line ("sent ..." of a fast sender) is the sender's
                # output too.
                client_rest = getattr(client, "pending", "") + client_rest
                # A receiver whose messages will not come (the sender failed) is not waited for long.
                try:
                    server_out = read_lines(server, "extra ", timeout=60 if client.returncode == 0 else 3)
                except AssertionError as e:
                    server_out = [f"receiver: {e}"]
            finally:
                server.stdin.close()
                try:
                    server.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait(timeout=10)
        records = decode_strict(cmd_uet_decode, pcap)
        return Run(sizes, tagged, (client.returncode, client_rest, client_err), server_out, records,
                   not cap.stats.get("dropped_by_kernel"), parse_addr(client_addr), parse_addr(server_addr),
                   pair.a.ipv4)

    return run


def delivery_problems(run):
    """Every message sent and received byte-exact, none twice."""
    problems = []
    if run.client_rc != 0:
        problems.append(f"sender exited {run.client_rc}: {run.client_out} {run.client_err}")
    if run.client_out.split() != [w for s in run.sizes for w in ("sent", str(s))]:
        problems.append(f"sender printed {run.client_out.split()}")
    want = [f"ok {s}" for s in run.sizes] + ["extra 0"]
    if [l for l in run.server_out if not l.startswith("addr")] != want:
        problems.append(f"receiver printed {run.server_out}, want {want}")
    return problems


def opcode_of(size, tagged, kind):
    """The opcode a first send of `size` bytes must have: kind 'rendezvous', 'deferrable' or 'send'."""
    if size < THRESHOLD or kind == "send":
        return UET_TAGGED_SEND if tagged else UET_SEND
    return {"rendezvous": RDV_TSEND if tagged else RDV_SEND, "deferrable": DEF_TSEND if tagged else DEF_SEND}[kind]


def opcode_problems(run, kind):
    """The opcode of every first-sent packet of a (each packet of a message: the same opcode)."""
    problems = []
    for _, f in run.requests():
        if f["uet.ses.opcode"] in (UET_READ, RTR):
            problems.append(f"a sent opcode {f['uet.ses.opcode']:#x}")
            continue
        want = opcode_of(f["uet.ses.request_length"], run.tagged, kind)
        if f["uet.ses.opcode"] != want:
            problems.append(f"{f['uet.ses.request_length']}-byte message as opcode {f['uet.ses.opcode']:#x}, want {want:#x}")
    return problems


def rendezvous_problems(run):
    """The rendezvous requests (2.2.5.4.1.2-d/e, 2.2.10.4-i, choice rendezvous-protocol), b's reads of the
    rest, and the response that comes only after them."""
    problems = []
    at = offsets(run.sizes)
    rdv = [(r, f) for r, f in run.requests() if f["uet.ses.opcode"] in (RDV_SEND, RDV_TSEND)]
    large = [s for s in run.sizes if s >= THRESHOLD]
    if sorted(f["uet.ses.request_length"] for _, f in rdv) != sorted(large):
        problems.append(f"rendezvous requests for {[f['uet.ses.request_length'] for _, f in rdv]}, want {large}")
    reads = [(r, f) for r, f in run.requests(from_a=False) if f["uet.ses.opcode"] == UET_READ]
    for r, f in rdv:
        i = run.index(f)
        size = run.sizes[i]
        eager = min(size, MAX_EAGER)
        want = {"uet.ses.som": 1, "uet.ses.eom": 1, "uet.ses.rdv.eager_length": eager, "uet.ses.rdv.ri_generation": 0,
                "uet.ses.rdv.pid_on_fep": run.a["pid_on_fep"], "uet.ses.rdv.resource_index": run.a["resource_index"],
                "uet.ses.rdv.read_offset": at[i], "uet.ses.rdv.read_key": MR_KEY, "uet.ses.hd": 0,
                "uet.ses.match_bits": i + 1 if run.tagged else 0}
        got = {k: f.get(k) for k in want}
        if got != want:
            problems.append(f"{size}-byte rendezvous: {got}, want {want}")
        if r["layers"][-1] != "uet.ses.rendezvous" or r["payload_len"] != eager:
            problems.append(f"{size}-byte rendezvous: layers {r['layers']}, {r['payload_len']} payload bytes, want {eager}")
        # b reads bytes eager.. of the message from a's MR, one MTU at most per read, with the request's JobID.
        mine = [(rr, g) for rr, g in reads if at[i] <= g["uet.ses.buffer_offset"] < at[i] + size]
        for _, g in mine:
            if (g["uet.ses.memory_key"], g["uet.ses.pid_on_fep"], g["uet.ses.job_id"]) != (MR_KEY, run.a["pid_on_fep"], f["uet.ses.job_id"]):
                problems.append(f"read {g}: not to a's MR key, PIDonFEP and the request's JobID")
            if g.get("uet.ses.resource_index", run.a["resource_index"]) != run.a["resource_index"] or g["uet.ses.request_length"] > MTU:
                problems.append(f"read {g}: not to a's endpoint, or more than one MTU")
        read_bytes = sorted((g["uet.ses.buffer_offset"], g["uet.ses.request_length"]) for _, g in mine)
        want_reads = [(at[i] + o, min(MTU, size - o)) for o in range(eager, size, MTU)]
        if run.whole and read_bytes != want_reads:
            problems.append(f"{size}-byte rendezvous: reads {read_bytes[:3]}... ({len(read_bytes)}), want {len(want_reads)} from offset {at[i] + eager}")
        # Its response: RC_OK and the whole length, after every read (the send completes after the pull).
        rsp = [(rr, g) for rr, g in run.responses() if g.get("uet.ses.rsp.message_id") == f["uet.ses.message_id"]]
        if not rsp:
            # The send completed, which takes the response: none in a capture that dropped frames is the
            # capture's loss, not the FEP's.
            if run.whole:
                problems.append(f"{size}-byte rendezvous: no response")
            continue
        g = rsp[0][1]
        if (g["uet.ses.rsp.return_code"], g["uet.ses.rsp.modified_length"]) != (RC_OK, size):
            problems.append(f"{size}-byte rendezvous answered {g['uet.ses.rsp.return_code']} for {g['uet.ses.rsp.modified_length']} bytes")
        if mine and rsp[0][0]["frame"] < max(rr["frame"] for rr, _ in mine):
            problems.append(f"{size}-byte rendezvous answered before b's last read")
    return problems


def deferrable_problems(run, deferred):
    """Deferrable sends (2.2.10.4-g/h, choice deferrable-send-protocol): tokens, answers, and when `deferred`
    (receives posted after the sends, at an AI Full target) the RTR and restart of each message."""
    problems = []
    large = sorted(s for s in run.sizes if s >= THRESHOLD)
    sends = [(r, f) for r, f in run.requests() if f["uet.ses.opcode"] in (DEF_SEND, DEF_TSEND)]
    first = [(r, f) for r, f in sends if f["uet.ses.target_restart_token"] == 0]
    restarts = [(r, f) for r, f in sends if f["uet.ses.target_restart_token"] != 0]
    by_msg, start = {}, {}
    for r, f in first:
        mid = f["uet.ses.message_id"]
        by_msg.setdefault(mid, set()).add((f["uet.ses.initiator_restart_token"], f["uet.ses.request_length"]))
        start[mid] = min(start.get(mid, r["frame"]), r["frame"])
    tokens = {}
    for mid, seen in by_msg.items():
        if len(seen) != 1:
            problems.append(f"message {mid}: packets with different tokens {seen}")
        token, length = min(seen)
        tokens[length] = token
    if sorted(tokens) != large:
        problems.append(f"first deferrable sends of {sorted(tokens)}, want {large}")
    if 0 in tokens.values():
        problems.append("an initiator_restart_token of 0")
    first_rsp = {}  # message_id -> (frame, fields) of b's first response to it
    for r, g in run.responses():
        first_rsp.setdefault(g.get("uet.ses.rsp.message_id"), (r["frame"], g))
    for mid in by_msg:
        g = first_rsp.get(mid, (0, None))[1]
        got = g and (g["uet.ses.rsp.return_code"], g["uet.ses.rsp.list"], g["uet.ses.rsp.modified_length"])
        if deferred and got != (RC_NO_MATCH, LIST_OVERFLOW, 0):
            problems.append(f"message {mid}: first send answered {got}, want RC_NO_MATCH, OVERFLOW, 0 bytes")
        # Not deferred: a wrong answer is a problem; none in the capture is not (the send completed, which
        # takes the answer; the capture of a burst can miss a frame), delivery_problems checks the rest.
        if not deferred and got and got[0] != RC_OK:
            problems.append(f"message {mid}: first send answered {got}, want RC_OK")
    # 2.2.10.4-h: a token is active from the message's first packet until the response that delivers it
    # (the restart's, for a deferred message); two messages active at once have distinct tokens.
    end = {}
    for mid in by_msg:
        done = [first_rsp[g["uet.ses.message_id"]][0] for _, g in restarts
                if g["uet.ses.initiator_restart_token"] == min(by_msg[mid])[0] and g["uet.ses.message_id"] in first_rsp]
        end[mid] = max(done) if deferred and done else first_rsp.get(mid, (float("inf"),))[0]
    mids = sorted(by_msg)
    for i, m1 in enumerate(mids):
        for m2 in mids[i + 1:]:
            same = min(by_msg[m1])[0] == min(by_msg[m2])[0]
            if same and start[m1] <= end[m2] and start[m2] <= end[m1]:
                problems.append(f"messages {m1} and {m2} are active at once with initiator token {min(by_msg[m1])[0]}")
    rtrs = [f for _, f in run.requests(from_a=False) if f["uet.ses.opcode"] == RTR]
    if not deferred:
        if rtrs or restarts:
            problems.append(f"{len(rtrs)} RTRs and {len(restarts)} restarts although the receives were posted first")
        return problems
    # One RTR per deferred message from b, then one restart per RTR from a with both tokens.
    by_token = {f["uet.ses.initiator_restart_token"]: f for f in rtrs}
    if sorted(by_token) != sorted(tokens.values()) or len(rtrs) != len(tokens):
        problems.append(f"RTRs for tokens {sorted(f['uet.ses.initiator_restart_token'] for f in rtrs)}, want {sorted(tokens.values())}")
    target_tokens = [f["uet.ses.target_restart_token"] for f in rtrs]
    if 0 in target_tokens or len(set(target_tokens)) != len(target_tokens):
        problems.append(f"RTR target tokens {target_tokens}: zero or repeated")
    for length, token in tokens.items():
        f = by_token.get(token)
        if not f:
            continue
        want = {"uet.ses.request_length": length, "uet.ses.pid_on_fep": run.a["pid_on_fep"],
                "uet.ses.resource_index": run.a["resource_index"], "uet.ses.initiator": run.b["initiator"],
                "uet.ses.buffer_offset": 0, "uet.ses.hd": 0, "uet.ses.som": 1, "uet.ses.eom": 1}
        got = {k: f.get(k) for k in want}
        if got != want:
            problems.append(f"RTR for the {length}-byte message: {got}, want {want}")
        again = [g for _, g in restarts if g["uet.ses.initiator_restart_token"] == token and g["uet.ses.som"] == 1]
        if len(again) != 1 or again[0]["uet.ses.target_restart_token"] != f["uet.ses.target_restart_token"]:
            problems.append(f"{length}-byte message: restarts {[(g['uet.ses.message_id'], g['uet.ses.target_restart_token']) for g in again]}, want one with target token {f['uet.ses.target_restart_token']}")
            continue
        g = first_rsp.get(again[0]["uet.ses.message_id"], (0, None))[1]
        if not g or (g["uet.ses.rsp.return_code"], g["uet.ses.rsp.list"], g["uet.ses.rsp.modified_length"]) != (RC_OK, LIST_EXPECTED, length):
            problems.append(f"{length}-byte restart answered {g}")
    rtr_rsp = [g for _, g in run.responses(from_b=False) if g["uet.ses.rsp.return_code"] != RC_OK]
    if rtr_rsp:
        problems.append(f"a refused {len(rtr_rsp)} RTRs")
    return problems


class TestRendezvous:
    @pytest.mark.parametrize("tagged", [False, True], ids=["send", "tsend"])
    @pytest.mark.requirements("2.2.5.4.1.2-d", "2.2.5.4.1.2-e", "2.2.5.4.2.2-b", "2.2.5.4.2.2-c", "2.2.10.4-i")
    def test_large_sends_from_a_remote_read_mr_are_rendezvous(self, transfer, tagged):
        run = transfer(SIZES, profiles=(HPC, HPC), mr=True, tagged=tagged)
        assert delivery_problems(run) == []
        assert opcode_problems(run, "rendezvous") == []
        assert rendezvous_problems(run) == []

    @pytest.mark.requirements("2.2.5.4.1.2-b")
    def test_receive_posted_after_the_rendezvous(self, transfer):
        run = transfer([8192, 65536, 1 << 20], profiles=(HPC, HPC), mr=True, late=True)
        assert delivery_problems(run) == []
        assert rendezvous_problems(run) == []

    def test_without_a_remote_read_mr_sends_stay_sends(self, transfer):
        run = transfer([20000, 65536], profiles=(HPC, HPC))
        assert delivery_problems(run) == []
        assert opcode_problems(run, "send") == []


class TestDeferrable:
    @pytest.mark.parametrize("tagged", [False, True], ids=["send", "tsend"])
    @pytest.mark.requirements("2.2.5.4.1.2-a", "2.2.5.4.1.2-c", "2.2.5.4.2.2-a")
    def test_receive_posted_first_takes_the_deferrable_send(self, transfer, tagged):
        run = transfer(SIZES, profiles=(AI_FULL, AI_FULL), tagged=tagged)
        assert delivery_problems(run) == []
        assert opcode_problems(run, "deferrable") == []
        assert deferrable_problems(run, deferred=False) == []

    @pytest.mark.parametrize("tagged", [False, True], ids=["send", "tsend"])
    @pytest.mark.requirements("2.2.10.4-g", "2.2.10.4-h")
    def test_receive_posted_later_restarts_each_message_once(self, transfer, tagged):
        run = transfer(SIZES, profiles=(AI_FULL, AI_FULL), tagged=tagged, late=True)
        assert delivery_problems(run) == []
        assert opcode_problems(run, "deferrable") == []
        assert deferrable_problems(run, deferred=True) == []

    @pytest.mark.requirements("2.2.2.1-c", "2.2.2.1-d")
    def test_hpc_target_takes_deferrable_sends_as_sends(self, transfer):
        # 2.2.2.1-b: an AI Full FEP uses AI Full operations towards an HPC FEP it shares no profile with,
        # which takes a deferrable send as a send (2.2.2.1-c/d): no RC_NO_MATCH, no RTR.
        for tagged in (False, True):
            run = transfer([8192, 65536], profiles=(AI_FULL_ONLY, HPC_ONLY), tagged=tagged, late=True,
                           name=f"aif-hpc-{tagged}")
            assert delivery_problems(run) == []
            assert opcode_problems(run, "deferrable") == []
            assert deferrable_problems(run, deferred=False) == []

    @pytest.mark.requirements("2.2.2.1-a")
    def test_fep_with_hpc_sends_no_deferrable_send_to_an_hpc_only_peer(self, transfer):
        run = transfer([20000], profiles=(BOTH, HPC))
        assert delivery_problems(run) == []
        assert opcode_problems(run, "send") == []


class TestUnderLoss:
    def test_rendezvous_and_deferrable_deliver_once_under_loss(self, transfer):
        sizes = [8192, 65536, 1 << 20]
        rdv = transfer(sizes, profiles=(HPC, HPC), mr=True, late=True, loss=10, name="rdv-loss")
        assert delivery_problems(rdv) == []
        dfr = transfer(sizes, profiles=(AI_FULL, AI_FULL), tagged=True, late=True, loss=10, name="dfr-loss")
        assert delivery_problems(dfr) == []
        retx = [f for _, f in dfr.requests(first=False) if f["uet.pds.flags.retx"] == 1]
        print(f"retransmitted: {len(retx)}")


class TestKnobs:
    """Each knob makes the check of its rule report problems."""

    def test_eager_over_limit_is_caught(self, transfer):
        run = transfer([20000], profiles=(HPC, HPC), mr=True, env_extra={"SOFTUET_FAULTS": "eager_over_limit"})
        assert rendezvous_problems(run) != []

    def test_restart_token_reuse_is_caught(self, transfer):
        # The receives come after the sends, so that every send is active at once (a sender that shares a
        # token restarts the wrong message and may never complete: it is not waited for long).
        run = transfer([8192, 20000, 65536], profiles=(AI_FULL, AI_FULL), late=True, client_timeout=10,
                       env_extra={"SOFTUET_FAULTS": "restart_token_reuse"})
        assert deferrable_problems(run, deferred=True) != []

    def test_hpc_rejects_deferrable_is_caught(self, transfer):
        run = transfer([8192], profiles=(AI_FULL_ONLY, HPC_ONLY), env_extra={"SOFTUET_FAULTS": "hpc_rejects_deferrable"})
        assert delivery_problems(run) != []

    def test_deferrable_to_hpc_is_caught(self, transfer):
        run = transfer([20000], profiles=(BOTH, HPC), env_extra={"SOFTUET_FAULTS": "deferrable_to_hpc"})
        assert opcode_problems(run, "send") != []
