"""UDP port 4793 in Wire.IpHeaderFollowsTheAddressesAndTrafficClass (2.2.10.1-a, choice uet-udp-port): a provider
that binds a UET port of its own
(personality own-port, manifest `wire: {udp_port: auto}`) fails it, blamed on the side whose port it is, with
the port it used; where the suite gives each side its port ({port}), no provider chose one and the port is not
held against it."""
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from harness.run_cases import run_manifest  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a pair's sides run in network namespaces (root)")

CASE = "Claimed/Wire.IpHeaderFollowsTheAddressesAndTrafficClass/rdm"
SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
OWN_PORT = REPO / "cases" / "manifests" / "personalities" / "own-port.yaml"


def run(tmp_path, initiator, target=None):
    results = run_manifest(initiator, pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")), tmp_path,
                           target=target, areas=["wire"], case_filter="Claimed/Wire.IpHeaderFollowsTheAddressesAndTrafficClass/*")
    return {r.case: r for r in results}


class TestUdpPort4793:
    def test_a_provider_that_binds_its_own_port_fails_blamed_on_the_target(self, tmp_path):
        got = run(tmp_path, OWN_PORT)[CASE]
        assert (got.verdict, got.blamed_side, got.statements) == ("fail", "target", ["2.2.10.1-a"]), got.message
        assert "requests go to the target's UDP port " in got.message and ", not UET's 4793 " in got.message
        assert "the target's ACKs go to the initiator's UDP port " in got.message
        assert "uet-udp-port" in got.choices

    def test_ports_the_suite_gave_are_not_the_providers_choice(self, tmp_path):
        got = run(tmp_path, SOFTUET)[CASE]
        assert got.verdict == "pass", got.message
        assert "uet-udp-port" not in got.choices

    def test_only_the_side_that_chose_is_blamed(self, tmp_path):
        got = run(tmp_path, SOFTUET, target=OWN_PORT)[CASE]
        assert (got.verdict, got.blamed_side) == ("fail", "target"), got.message
        assert "the target's ACKs go to" not in got.message
