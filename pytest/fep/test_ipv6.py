"""softuet over IPv6 (issue: "UET over IPv4 and IPv6 UDP"): each FEP takes its namespace's IPv6 address
(SOFTUET_ADDR), fi_getname says so (the FA-type flag and the 16-byte FA), and fi_pingpong runs between the
two namespaces with every frame an IPv6/UDP 4793 UET packet that uet-decode --strict decodes."""
import ipaddress
import os

import pytest

from softuet_helpers import decode_strict, fabtest, run_pingpong

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

UET_PORT = 4793
PDS_RUD_REQ, PDS_UUD_REQ, PDS_ACK = 2, 6, 7


@pytest.fixture
def v6(pair, softuet_env):
    """Environment and per-side SOFTUET_ADDR that put each FEP on its namespace's IPv6 address."""
    return softuet_env, {s: {"SOFTUET_ADDR": getattr(pair, s).ipv6} for s in ("a", "b")}


def assert_ipv6_between(records, pair):
    ends = {ipaddress.ip_address(pair.a.ipv6), ipaddress.ip_address(pair.b.ipv6)}
    for r in records:
        f = r["fields"]
        assert r["layers"][:3] == ["eth", "ipv6", "udp"], r["layers"]
        assert {ipaddress.ip_address(f["ipv6.src"]), ipaddress.ip_address(f["ipv6.dst"])} == ends
        assert UET_PORT in (f["udp.dstport"], f["udp.srcport"])


class TestIpv6Address:
    def test_the_domain_is_the_namespace_ipv6_address(self, pair, softuet_env):
        res = pair.run("a", [fabtest("fi_info"), "-p", "softuet"], capture_output=True, text=True,
                       env=dict(softuet_env, SOFTUET_ADDR=pair.a.ipv6), timeout=60)
        assert res.returncode == 0, res.stderr
        assert f"domain: {pair.a.ipv6}" in res.stdout, res.stdout

    def test_a_bad_softuet_addr_is_refused_with_its_name(self, softuet_env, fi_info):
        res = fi_info("-p", "softuet", env_extra={"SOFTUET_ADDR": "2001:db8::zz", "FI_LOG_LEVEL": "warn"})
        assert res.returncode != 0
        assert "SOFTUET_ADDR='2001:db8::zz'" in res.stderr


class TestIpv6Pingpong:
    def test_dgram_over_ipv6(self, pair, v6, tmp_path, cmd_uet_decode):
        env, sides = v6
        pcap = tmp_path / "dgram6.pcap"
        out, _ = run_pingpong(pair, env, "dgram", 64, 50, pcap, side_env=sides)
        assert "=50" in out
        records = decode_strict(cmd_uet_decode, pcap)
        assert len([r for r in records if r["payload_len"] == 64]) == 100
        assert_ipv6_between(records, pair)
        assert {r["fields"]["uet.pds.type"] for r in records} == {PDS_UUD_REQ}

    def test_rdm_over_ipv6(self, pair, v6, tmp_path, cmd_uet_decode):
        env, sides = v6
        pcap = tmp_path / "rdm6.pcap"
        out, _ = run_pingpong(pair, env, "rdm", 10000, 10, pcap, side_env=sides)
        assert "=10" in out
        records = decode_strict(cmd_uet_decode, pcap)
        assert_ipv6_between(records, pair)
        types = {r["fields"]["uet.pds.type"] for r in records}
        assert types == {PDS_RUD_REQ, PDS_ACK}
        # 10000 bytes = 3 packets per message, 10 pings and 10 pongs, each first sent once.
        first = [r for r in records if r["fields"]["uet.pds.type"] == PDS_RUD_REQ and r["fields"]["uet.pds.flags.retx"] == 0]
        assert sum(r["payload_len"] for r in first) >= 20 * 10000
