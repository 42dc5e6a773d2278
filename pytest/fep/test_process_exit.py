"""softuet when its application exits with a domain open: the provider's exit hook stops the domain's FEP
thread before libfabric's destructor dlcloses the provider (fep/src/fep_thread.cpp). softuet-exit-probe
leaves a send to itself in flight and checks, in an exit handler that runs after the provider's, that no
thread named softuet-fep is left."""
import os

import pytest

from softuet_helpers import built_probe

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

PORT = 47991
RUNS = 5  # the check is exact on each run; several runs also exercise the race the hook closes


@pytest.fixture
def exit_probe(build_dir):
    return built_probe(build_dir, "softuet-exit-probe")


class TestProcessExit:
    def test_no_fep_thread_outlives_exit_with_the_domain_open(self, pair, exit_probe, softuet_env):
        env = dict(softuet_env, SOFTUET_ADDR="127.0.0.1", SOFTUET_UDP_PORT=str(PORT))
        for run in range(RUNS):
            done = pair.run("a", [exit_probe], env=env, capture_output=True, text=True, timeout=60)
            assert (done.returncode, done.stderr) == (0, ""), f"run {run}: {done.stdout}{done.stderr}"
            assert done.stdout == "sent, exiting with the domain open\n"
