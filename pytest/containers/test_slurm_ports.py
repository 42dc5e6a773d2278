"""A Slurm cluster of the suite's own starts even when another takes one of its ports first: two runs of the
suite on one host each start clusters, and the free ports the kernel names are free only until someone
binds them (containers/slurm.py)."""
import pathlib
import shutil
import socket
import tempfile

import pytest

from containers import slurm as slurm_mod


@pytest.fixture
def held_port():
    """A port another cluster has just taken: bound and listening for the whole test."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_a_port_taken_first_is_given_up_for_another(held_port, monkeypatch):
    missing = slurm_mod.missing_binaries()
    if missing:
        pytest.skip(f"Slurm is not installed ({', '.join(missing)} missing; setup/packages.txt lists slurm-wlm)")
    real, handed = slurm_mod._free_port, []

    def first_one_taken():  # the controller's port of the first configuration is the one held
        handed.append(held_port if not handed else real())
        return handed[-1]
    monkeypatch.setattr(slurm_mod, "_free_port", first_one_taken)
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-slurm-"))
    folder.chmod(0o755)
    cluster = slurm_mod.SlurmCluster(folder)
    try:
        cluster.start()
        assert cluster.all_idle()
        conf = cluster.conf.read_text()
        assert f"SlurmctldPort={held_port}\n" not in conf and "SlurmctldPort=" in conf
        assert len(handed) >= 4  # two configurations of a controller and a node each
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
