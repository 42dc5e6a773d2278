"""The data traffic class on the wire (spec 2.2.7): every packet a FEP sends carries the data DSCP in its
IP header (IPv4 DS field, IPv6 traffic class). UET_PROVIDER_DEF_DATA_TC sets it; the fault knob
wrong_dscp (2.2.7-d) sends DSCP 0 instead, and the same check must then fail."""
import os

import pytest

from softuet_helpers import decode_strict, run_pingpong

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

EXPEDITED = 46  # any DSCP other than the default data TC would do; EF is easy to recognise


def dscp_problems(records, want):
    """One line per frame whose IP DSCP is not `want` (IPv4 DS field or IPv6 traffic class)."""
    problems = []
    for r in records:
        f = r["fields"]
        got = f.get("ip.dsfield.dscp", f.get("ipv6.tclass.dscp"))
        if got != want:
            problems.append(f"frame {r['frame']}: DSCP {got}, want {want}")
    return problems


def pingpong_dscps(pair, softuet_env, tmp_path, cmd_uet_decode, family, faults=None):
    env = dict(softuet_env, UET_PROVIDER_DEF_DATA_TC=str(EXPEDITED))
    if faults:
        env["SOFTUET_FAULTS"] = faults
    sides = {s: {"SOFTUET_ADDR": getattr(getattr(pair, s), family)} for s in ("a", "b")}
    pcap = tmp_path / f"tc-{family}.pcap"
    run_pingpong(pair, env, "rdm", 64, 10, pcap, side_env=sides)
    records = decode_strict(cmd_uet_decode, pcap)
    assert records
    return records


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
class TestDataTrafficClass:
    @pytest.mark.requirements("2.2.7-a", "2.2.7-d")
    def test_every_packet_carries_the_data_dscp(self, pair, softuet_env, tmp_path, cmd_uet_decode, family):
        records = pingpong_dscps(pair, softuet_env, tmp_path, cmd_uet_decode, family)
        assert dscp_problems(records, EXPEDITED) == []

    def test_the_check_fails_with_knob_wrong_dscp(self, pair, softuet_env, tmp_path, cmd_uet_decode, family):
        records = pingpong_dscps(pair, softuet_env, tmp_path, cmd_uet_decode, family, faults="wrong_dscp")
        assert len(dscp_problems(records, EXPEDITED)) == len(records)
