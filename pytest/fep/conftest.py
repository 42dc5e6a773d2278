"""Fixtures for the softuet provider tests: the provider path, the fabtests binaries, namespace pairs."""
import os
import pathlib
import subprocess

import pytest

from containers import NamespacePair
from softuet_helpers import fabtest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def softuet_env(build_dir):
    """The environment that loads build/lib/libsoftuet-fi.so as provider "softuet" (and nothing else)."""
    lib = build_dir / "lib" / "libsoftuet-fi.so"
    if not lib.exists():
        pytest.fail(f"{lib} is not built: run ./uet build")
    env = dict(os.environ)
    for var in [k for k in env if k.startswith(("SOFTUET_", "UET_PROVIDER_", "FI_"))]:
        del env[var]
    env["FI_PROVIDER_PATH"] = str(lib.parent)
    env["FI_PROVIDER"] = "softuet"
    # The mutation run (harness/selftest/mutation.py) turns one fault knob on for the wire checks through this.
    if os.environ.get("UET_MUTATION_FAULTS"):
        env["SOFTUET_FAULTS"] = os.environ["UET_MUTATION_FAULTS"]
    return env


@pytest.fixture(scope="session")
def fi_info(softuet_env):
    """Run fi_info with softuet loaded: fi_info(*args, env_extra={}) -> CompletedProcess (text)."""
    binary = fabtest("fi_info")

    def run(*args, env_extra=None, timeout=60):
        env = dict(softuet_env, **(env_extra or {}))
        return subprocess.run([binary, *args], capture_output=True, text=True, env=env, timeout=timeout)

    return run


@pytest.fixture
def pair():
    """Two FEP namespaces; MTU 9000 so that a 4096-byte UET payload is never IP-fragmented."""
    with NamespacePair(mtu=9000) as p:
        yield p
