"""Unmodified fabtests programs over softuet between two namespaces (server on side b, client on a)."""
import pytest

from harness.fabtests import run_pair

PROGRAMS = [
    ["fi_dgram"],
    ["fi_rdm"],
    ["fi_rdm_pingpong", "-S", "1024", "-I", "200"],
    ["fi_rdm_bw", "-S", "64", "-W", "64", "-I", "2000"],
]


@pytest.mark.parametrize("argv", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_fabtests_program_passes_over_softuet(pair, softuet_env, argv):
    run = run_pair(pair, [argv[0], "-p", "softuet", *argv[1:]], env=softuet_env, timeout=120)
    assert run.ok, run.describe()
