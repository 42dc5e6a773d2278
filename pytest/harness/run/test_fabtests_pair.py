"""harness.run.fabtests runs fabtests programs across a namespace pair: proven here with libfabric's own
providers, so a failure with softuet points at softuet, not at the runner."""
import os
import shutil

import pytest

from containers import NamespacePair
from harness.run.fabtests import FabtestError, run_pair

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (os.geteuid() != 0)")


@pytest.fixture(scope="module")
def pair():
    if not shutil.which("fi_pingpong"):
        pytest.fail("fabtests are not on PATH: run through ./uet test (setup/env.sh puts deps/libfabric/bin first)")
    with NamespacePair() as p:
        yield p


class TestFabtestsPair:
    def test_pingpong_over_udp_dgram(self, pair):
        run = run_pair(pair, ["fi_pingpong", "-p", "udp", "-e", "dgram", "-I", "50", "-S", "64"], timeout=60)
        assert run.ok, run.describe()
        assert "=50" in run.client_output

    def test_rdm_over_tcp_rxm_with_oob_exchange(self, pair):
        run = run_pair(pair, ["fi_rdm", "-p", "tcp;ofi_rxm"], timeout=60)
        assert run.ok, run.describe()
        assert run.client_argv[-2:] == ["-E=3000", pair.b.ipv4]

    def test_tagged_pingpong_over_ipv6(self, pair):
        run = run_pair(pair, ["fi_rdm_tagged_pingpong", "-p", "tcp;ofi_rxm", "-I", "20", "-S", "64"], timeout=60,
                       ipv6=True)
        assert run.ok, run.describe()

    def test_a_failing_program_is_reported_without_waiting_out_the_timeout(self, pair):
        run = run_pair(pair, ["fi_pingpong", "-p", "no_such_provider", "-e", "dgram"], timeout=60)
        assert not run.ok and run.client_rc != 0
        # what ends it: the server's own fi_getinfo failure, so neither side waits for the other
        assert run.server_rc != 0 and "fi_getinfo()" in run.server_output and "No data available" in run.server_output, \
            run.describe()

    def test_a_server_that_never_listens_is_an_error(self, pair):
        with pytest.raises(FabtestError, match="server exited"):
            run_pair(pair, ["false"], timeout=30, ready_timeout=15)  # exits before any socket exists
