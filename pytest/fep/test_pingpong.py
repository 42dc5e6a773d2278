"""fi_pingpong between the two sides of a namespace pair over softuet, with the traffic captured on side a
and decoded by uet-decode --strict: DGRAM is UUD + UET_DATAGRAM_SEND, RDM is RUD + UET_SEND."""
import json
import os
import subprocess

import pytest

from containers.netns import NamespacePair
from softuet_helpers import PINGPONG_PORT, fabtest, wait_listening

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

JOB_ID = 291
UET_PORT = 4793
PDS_RUD_REQ, PDS_UUD_REQ = 2, 6
UET_SEND, UET_DATAGRAM_SEND = 0x05, 0x07


def run_pingpong(pair, env, ep_type, size, iterations, pcap):
    binary = fabtest("fi_pingpong")
    argv = [binary, "-p", "softuet", "-e", ep_type, "-S", str(size), "-I", str(iterations)]
    with pair.capture("a", str(pcap), filter=f"udp port {UET_PORT}"):
        server = pair.popen("b", argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        wait_listening(pair, "b", PINGPONG_PORT, server)
        client = pair.run("a", argv + [pair.b.ipv4], capture_output=True, text=True, env=env, timeout=60)
        server_out, _ = server.communicate(timeout=60)
    assert client.returncode == 0, f"client: {client.stdout}\n{client.stderr}\nserver: {server_out}"
    assert server.returncode == 0, f"server: {server_out}"
    return client.stdout, server_out


def decode(cmd_uet_decode, pcap):
    res = cmd_uet_decode("--strict", pcap)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    return [json.loads(line) for line in res.stdout.splitlines()]


@pytest.fixture
def pair():
    with NamespacePair(mtu=9000) as p:
        yield p


@pytest.fixture
def env(softuet_env):
    return dict(softuet_env, SOFTUET_JOB_ID=str(JOB_ID))


class TestPingpongDgram:
    def test_dgram_pingpong_is_uud_datagram_send(self, pair, env, tmp_path, cmd_uet_decode):
        pcap = tmp_path / "dgram.pcap"
        client_out, _ = run_pingpong(pair, env, "dgram", 64, 100, pcap)
        assert "=100" in client_out  # 100 sent, 100 acknowledged by the pong
        records = decode(cmd_uet_decode, pcap)
        # 100 pings + 100 pongs of 64 bytes, plus the final "fin" exchange; never fewer than the data.
        data = [r for r in records if r["payload_len"] == 64]
        assert len(data) == 200
        for r in records:
            f = r["fields"]
            assert r["status"] == "uet" and r["diagnostics"] == [], r
            assert r["layers"][-2:] == ["uet.pds.uud", "uet.ses.std"], r
            assert f["uet.pds.type"] == PDS_UUD_REQ
            assert f["uet.ses.opcode"] == UET_DATAGRAM_SEND
            assert f["uet.ses.som"] == 1 and f["uet.ses.eom"] == 1
            assert f["uet.ses.job_id"] == JOB_ID
            assert f["uet.ses.message_id"] != 0
            assert f["uet.ses.resource_index"] >= 1  # RI 0 is reserved
            assert f["uet.ses.request_length"] == r["payload_len"]


class TestPingpongRdm:
    def test_rdm_pingpong_is_rud_send(self, pair, env, tmp_path, cmd_uet_decode):
        pcap = tmp_path / "rdm.pcap"
        client_out, _ = run_pingpong(pair, env, "rdm", 64, 100, pcap)
        assert "=100" in client_out
        records = decode(cmd_uet_decode, pcap)
        assert len([r for r in records if r["payload_len"] == 64]) == 200
        for r in records:
            f = r["fields"]
            assert r["status"] == "uet" and r["diagnostics"] == [], r
            assert r["layers"][-2:] == ["uet.pds.rud_rod_req", "uet.ses.std"], r
            assert f["uet.pds.type"] == PDS_RUD_REQ
            assert f["uet.ses.opcode"] == UET_SEND
            assert f["uet.ses.job_id"] == JOB_ID
            assert f["uet.ses.message_id"] != 0
            assert f["uet.pds.flags.syn"] == 1  # no ACK in milestone 1: the PDC stays in SYN state
        # PSNs increase by one per packet within each direction's PDC.
        by_pdc = {}
        for r in records:
            f = r["fields"]
            by_pdc.setdefault((f["ip.src"], f["uet.pds.spdcid"]), []).append(f["uet.pds.psn"])
        for key, psns in by_pdc.items():
            assert psns == list(range(psns[0], psns[0] + len(psns))), key

    def test_rdm_segments_large_messages(self, pair, env, tmp_path, cmd_uet_decode):
        # 10000 bytes = 4096 + 4096 + 1808: SOM, middle, EOM packets of one message_id.
        pcap = tmp_path / "rdm-large.pcap"
        client_out, _ = run_pingpong(pair, env, "rdm", 10000, 10, pcap)
        assert "=10" in client_out
        records = decode(cmd_uet_decode, pcap)
        data = [r for r in records if r["fields"]["uet.ses.request_length"] == 10000]
        assert len(data) == 2 * 10 * 3
        a_to_b = [r["fields"] for r in data if r["fields"]["ip.src"] == pair.a.ipv4]
        first = a_to_b[:3]
        assert [f["uet.ses.som"] for f in first] == [1, 0, 0]
        assert [f["uet.ses.eom"] for f in first] == [0, 0, 1]
        assert len({f["uet.ses.message_id"] for f in first}) == 1
        assert [f.get("uet.ses.message_offset") for f in first[1:]] == [4096, 8192]
        assert [f.get("uet.ses.payload_length") for f in first[1:]] == [4096, 1808]
