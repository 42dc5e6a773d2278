"""RUDI on the wire (spec/wire.yaml choice rudi-criteria; spec 2.2.5.3.4.1-b/m, 2.2.6-b, 2.2.10.3-a):
softuet-rudi-probe writes and reads to an MR across a namespace pair, and the capture on side a shows
which delivery mode carried them. An IDEMPOTENT_SAFE key between HPC FEPs travels as RUDI_REQ (PDS type 4,
a pkt_id each) answered by RUDI_RESP (type 5, the same pkt_id); any other key, or a peer without HPC, keeps
RUD. Under nftables loss every RUDI write and read still completes with the right data. The two RUDI knobs
make the delivery check report the requests they send over RUDI."""
import os
import subprocess

import pytest

from softuet_helpers import built_probe, decode_strict, server_address

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

UET_PORT = 4793
PDS_RUD_REQ, PDS_RUDI_REQ, PDS_RUDI_RESP, PDS_ACK = 2, 4, 5, 7
UET_WRITE, UET_READ = 0x01, 0x02
RC_OK = 0x01
SAFE_KEY = (1 << 63) | 0x77
PLAIN_KEY = 0x77
SIZES = [1, 4096, 4097, 65536, 1 << 20]
NO_HPC = "ai_base,ai_full"


@pytest.fixture
def probe(build_dir):
    return built_probe(build_dir, "softuet-rudi-probe")


def probe_run(pair, probe, env, tmp_path, decode, key, sizes=SIZES, server_env=None, loss=0, name="rudi"):
    """Serve `key` on side b, write and read `sizes` from side a; returns (client run, capture records,
    whether the capture holds every frame: tcpdump may drop some of a 1 MiB burst)."""
    pcap = tmp_path / f"{name}.pcap"
    with pair.capture("a", str(pcap), filter=f"udp port {UET_PORT}") as cap:
        for side in ("a", "b") if loss else ():
            pair.impair(side, loss_percent=loss, udp_dport=UET_PORT)
        server = pair.popen("b", [probe, "serve", hex(key)], env=dict(env, **(server_env or {})), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            addr = server_address(server)
            client = pair.run("a", [probe, "run", addr, hex(key), *map(str, sizes)], env=env, timeout=240,
                              capture_output=True, text=True)
        finally:
            server.stdin.close()
            server.wait(timeout=20)
    return client, decode_strict(decode, pcap), not cap.stats.get("dropped_by_kernel")


@pytest.fixture
def run_probe(pair, probe, softuet_env, tmp_path, cmd_uet_decode):
    def run(key, **kwargs):
        env = dict(softuet_env, **kwargs.pop("env_extra", {}))
        return probe_run(pair, probe, env, tmp_path, cmd_uet_decode, key, **kwargs)

    return run


def rma_requests(records):
    """The RMA request packets of the capture: (PDS type, fields)."""
    return [r["fields"] for r in records
            if r["fields"]["uet.pds.type"] in (PDS_RUD_REQ, PDS_RUDI_REQ)
            and r["fields"].get("uet.ses.opcode") in (UET_WRITE, UET_READ)]


def rudi_problems(records, whole=True):
    """What is wrong with a capture that should be all RUDI: each request a RUDI_REQ with a pkt_id, each
    response a RUDI_RESP with RC_OK naming the pkt_id of a request sent to its source (when the capture
    is `whole`)."""
    problems = []
    requests = rma_requests(records)
    if not requests:
        problems.append("no RMA request in the capture")
    problems += [f"RMA request of PDS type {f['uet.pds.type']}" for f in requests if f["uet.pds.type"] != PDS_RUDI_REQ]
    sent = {(f["ip.dst"], f["uet.pds.pkt_id"]) for f in requests if f["uet.pds.type"] == PDS_RUDI_REQ}
    responses = [r["fields"] for r in records if r["fields"]["uet.pds.type"] == PDS_RUDI_RESP]
    if not responses:
        problems.append("no RUDI_RESP in the capture")
    for f in responses:
        if whole and (f["ip.src"], f["uet.pds.pkt_id"]) not in sent:
            problems.append(f"RUDI_RESP for pkt_id {f['uet.pds.pkt_id']} that was not sent")
        if f.get("uet.ses.rsp.return_code") != RC_OK:
            problems.append(f"RUDI_RESP with return code {f.get('uet.ses.rsp.return_code')}")
    if any(r["fields"]["uet.pds.type"] == PDS_ACK for r in records):
        problems.append("an ACK: RUDI uses no PDC")
    return problems


def rud_problems(records):
    """What is wrong with a capture that should be all RUD: any RUDI packet."""
    problems = [f"PDS type {r['fields']['uet.pds.type']}" for r in records
                if r["fields"]["uet.pds.type"] in (PDS_RUDI_REQ, PDS_RUDI_RESP)]
    if not rma_requests(records):
        problems.append("no RMA request in the capture")
    return problems


def assert_all_ok(client, sizes=SIZES):
    assert client.returncode == 0, client.stdout + client.stderr
    assert client.stdout.split() == [w for s in sizes for w in ("ok", str(s))], client.stdout


class TestRudiSelection:
    @pytest.mark.requirements("2.2.5.3.4.1-m", "2.2.6-b", "2.2.10.3-a")
    def test_idempotent_safe_key_travels_as_rudi(self, run_probe):
        client, records, whole = run_probe(SAFE_KEY)
        assert_all_ok(client)
        assert rudi_problems(records, whole) == []
        writes = [f for f in rma_requests(records) if f["uet.ses.opcode"] == UET_WRITE]
        reads = [f for f in rma_requests(records) if f["uet.ses.opcode"] == UET_READ]
        assert len(writes) >= sum((s + 4095) // 4096 for s in SIZES) and reads

    @pytest.mark.requirements("2.2.5.3.4.1-b")
    def test_key_without_idempotent_safe_keeps_rud(self, run_probe):
        client, records, _ = run_probe(PLAIN_KEY, sizes=[1, 4097])
        assert_all_ok(client, [1, 4097])
        assert rud_problems(records) == []

    @pytest.mark.requirements("2.2.6-b")
    def test_peer_without_hpc_keeps_rud(self, run_probe):
        client, records, _ = run_probe(SAFE_KEY, sizes=[1, 4097], server_env={"SOFTUET_PROFILES": NO_HPC})
        assert_all_ok(client, [1, 4097])
        assert rud_problems(records) == []


class TestRudiUnderLoss:
    @pytest.mark.requirements("2.2.6-b")
    def test_every_write_and_read_completes_with_its_data(self, run_probe):
        sizes = SIZES * 3
        client, records, whole = run_probe(SAFE_KEY, sizes=sizes, loss=10, name="rudi-loss")
        assert_all_ok(client, sizes)
        requests = rma_requests(records)
        retx = [f for f in requests if f["uet.pds.flags.retx"] == 1]
        assert retx, "no retransmitted RUDI request under 10 % loss"
        # The capture on a's veth misses what a's own impairment dropped, so it cannot pair a
        # retransmission with its first copy; what it shows is that every response names a pkt_id sent.
        assert rudi_problems(records, whole) == []
        print(f"requests={len(requests)} retransmitted={len(retx)}")


class TestRudiKnobs:
    """Each knob makes the check of its rule report the requests it sends over RUDI."""

    def test_rudi_to_unsafe_key_is_caught(self, run_probe):
        _, records, _ = run_probe(PLAIN_KEY, sizes=[1], env_extra={"SOFTUET_FAULTS": "rudi_to_unsafe_key"})
        assert rud_problems(records) != []

    def test_rudi_without_hpc_is_caught(self, run_probe):
        _, records, _ = run_probe(SAFE_KEY, sizes=[1], server_env={"SOFTUET_PROFILES": NO_HPC},
                               env_extra={"SOFTUET_FAULTS": "rudi_without_hpc"})
        assert rud_problems(records) != []
