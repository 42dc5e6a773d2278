"""The SES header a request travels in follows the criteria (spec 2.2.10.4-d/-f; spec/wire.yaml choices
small-message-criteria and small-rma-criteria): one-packet sends, RMA and atomics in the medium header
(small message / small RMA), everything else in the standard header. Each knob that breaks the choice
must make the same check report the requests it affects."""
import os

import pytest

from harness.run.fabtests import run_pair
from softuet_helpers import decode_strict, header_format_problems, run_pingpong

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

PDS_RUD_REQ = 2
UET_WRITE, UET_READ, UET_ATOMIC, UET_FETCHING_ATOMIC = 0x01, 0x02, 0x03, 0x04


def captured_fabtest(pair, env, argv, pcap, cmd_uet_decode):
    with pair.capture("a", str(pcap), filter="udp port 4793"):
        run = run_pair(pair, [argv[0], "-p", "softuet", *argv[1:]], env=env, timeout=120)
    assert run.ok, run.describe()
    return decode_strict(cmd_uet_decode, pcap)


def requests_with(records, opcode):
    return [r for r in records if r["fields"]["uet.pds.type"] == PDS_RUD_REQ and r["fields"]["uet.ses.opcode"] == opcode]


class TestSendHeaders:
    @pytest.mark.requirements("2.2.10.4-d")
    def test_small_and_large_sends_take_their_headers(self, pair, softuet_env, tmp_path, cmd_uet_decode):
        for size in (1, 4096, 4097):
            pcap = tmp_path / f"send-{size}.pcap"
            run_pingpong(pair, softuet_env, "rdm", size, 5, pcap)
            records = decode_strict(cmd_uet_decode, pcap)
            assert header_format_problems(records) == [], size
            layer = "uet.ses.medium" if size <= 4096 else "uet.ses.std"
            assert any(layer in r["layers"] and r["payload_len"] == min(size, 4096) for r in records), size

    def test_the_check_fails_with_knob_std_header_for_small_message(self, pair, softuet_env, tmp_path, cmd_uet_decode):
        pcap = tmp_path / "send-knob.pcap"
        run_pingpong(pair, dict(softuet_env, SOFTUET_FAULTS="std_header_for_small_message"), "rdm", 64, 5, pcap)
        records = decode_strict(cmd_uet_decode, pcap)
        requests = [r for r in records if r["fields"]["uet.pds.type"] == PDS_RUD_REQ]
        assert requests and len(header_format_problems(records)) == len(requests)


class TestRmaHeaders:
    @pytest.mark.parametrize("op,opcode,size,layer", [
        ("write", UET_WRITE, 1024, "uet.ses.medium"),
        ("read", UET_READ, 1024, "uet.ses.medium"),
        ("writedata", UET_WRITE, 1024, "uet.ses.std"),  # remote CQ data: the standard header
        ("write", UET_WRITE, 10000, "uet.ses.std"),     # three packets
    ])
    @pytest.mark.requirements("2.2.10.4-f")
    def test_rma_takes_its_header(self, pair, softuet_env, tmp_path, cmd_uet_decode, op, opcode, size, layer):
        records = captured_fabtest(pair, softuet_env, ["fi_rma_bw", "-e", "rdm", "-o", op, "-S", str(size), "-I", "20"],
                                   tmp_path / f"rma-{op}-{size}.pcap", cmd_uet_decode)
        assert header_format_problems(records) == []
        rma = requests_with(records, opcode)
        assert rma and all(layer in r["layers"] for r in rma)

    @pytest.mark.requirements("2.2.10.4-e")
    def test_atomics_take_the_small_rma_header(self, pair, softuet_env, tmp_path, cmd_uet_decode):
        records = captured_fabtest(pair, softuet_env, ["fi_rdm_atomic", "-I", "2", "-o", "sum"],
                                   tmp_path / "atomic.pcap", cmd_uet_decode)
        assert header_format_problems(records) == []
        atomics = requests_with(records, UET_ATOMIC) + requests_with(records, UET_FETCHING_ATOMIC)
        assert atomics and all(r["layers"][-2:] == ["uet.ses.medium", "uet.ses.atomic"] for r in atomics)

    def test_the_check_fails_with_knob_std_header_for_small_rma(self, pair, softuet_env, tmp_path, cmd_uet_decode):
        env = dict(softuet_env, SOFTUET_FAULTS="std_header_for_small_rma")
        records = captured_fabtest(pair, env, ["fi_rma_bw", "-e", "rdm", "-o", "write", "-S", "1024", "-I", "20"],
                                   tmp_path / "rma-knob.pcap", cmd_uet_decode)
        writes = requests_with(records, UET_WRITE)
        assert writes and len(header_format_problems(records)) >= len(writes)


class TestOptimizedHeader:
    """RMA and atomics to an OPTIMIZED key take the optimized non-matching header, with the RKEY/INDEX in
    ses.resource_index (spec 2.2.5.3.4.1-i, 2.2.10.4). The traffic is softuet-api-test's optimized-key
    case, run on the loopback of one namespace and captured there."""
    CASE = "SoftuetRma.OptimizedKeyWriteReadAndAtomic"
    PORT = 47990
    RKEY = 0x2A

    def run_case(self, pair, build_dir, tmp_path, cmd_uet_decode, softuet_env, faults=None):
        env = dict(softuet_env, SOFTUET_ADDR="127.0.0.1", SOFTUET_UDP_PORT=str(self.PORT))
        if faults:
            env["SOFTUET_FAULTS"] = faults
        pcap = tmp_path / "optimized.pcap"
        with pair.capture("a", str(pcap), filter=f"udp port {self.PORT}", interface="lo"):
            run = pair.run("a", [str(build_dir / "fep" / "test" / "softuet-api-test"), f"--gtest_filter={self.CASE}"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert run.returncode == 0, run.stdout[-3000:]
        return decode_strict(cmd_uet_decode, pcap, "--port", str(self.PORT))

    @pytest.mark.requirements("2.2.10.4-b", "2.2.10.4-c")
    def test_rma_to_an_optimized_key_uses_the_optimized_header(self, pair, build_dir, tmp_path, cmd_uet_decode, softuet_env):
        records = self.run_case(pair, build_dir, tmp_path, cmd_uet_decode, softuet_env)
        rma = [r for r in records if r["fields"].get("uet.ses.opcode") in (UET_WRITE, UET_READ, UET_FETCHING_ATOMIC)
               and r["fields"]["uet.pds.type"] == PDS_RUD_REQ]
        assert {r["fields"]["uet.ses.opcode"] for r in rma} == {UET_WRITE, UET_READ, UET_FETCHING_ATOMIC}
        assert all("uet.ses.small" in r["layers"] for r in rma), [r["layers"] for r in rma]
        assert {r["fields"]["uet.ses.resource_index"] for r in rma} == {self.RKEY, self.RKEY + 1}
        assert header_format_problems(records) == []

    def test_the_check_fails_with_knob_no_optimized_header(self, pair, build_dir, tmp_path, cmd_uet_decode, softuet_env):
        records = self.run_case(pair, build_dir, tmp_path, cmd_uet_decode, softuet_env, faults="no_optimized_header")
        assert len(header_format_problems(records)) >= 3
