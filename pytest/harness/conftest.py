"""Fixtures of the harness tests that more than one file uses: a provider that misbehaves on purpose, who
still has it loaded, and a run of the suite."""
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
HOSTILE_SOURCE = pathlib.Path(__file__).with_name("hostile_provider.c")


@pytest.fixture(scope="session")
def cmd_uet_run(build_dir):
    """cmd_uet_run(*args) -> CompletedProcess of `python3 -m harness.run.run_suite ARGS` (what ./uet run runs
    after its build)."""
    def run(*args, timeout=600):
        env = dict(os.environ, UET_BUILD=str(build_dir), PYTHONPATH=str(REPO))
        return subprocess.run([sys.executable, "-m", "harness.run.run_suite", *map(str, args)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=timeout)
    return run


@pytest.fixture(scope="session")
def hostile_provider(tmp_path_factory):
    """The folder of libhostile-fi.so (FI_PROVIDER_PATH), built with the libfabric headers the suite builds
    against; HOSTILE_PROVIDER_MODE says how it misbehaves (hostile_provider.c)."""
    include = REPO / "deps" / "libfabric" / "include"
    if not (include / "rdma" / "fabric.h").exists():
        pytest.skip(f"no libfabric headers at {include} (./uet setup builds them)")
    lib = tmp_path_factory.mktemp("hostile") / "lib"
    lib.mkdir()
    subprocess.run(["cc", "-shared", "-fPIC", "-Wall", "-Werror", "-I", str(include), "-o", str(lib / "libhostile-fi.so"),
                    str(HOSTILE_SOURCE)], check=True, timeout=120)
    return lib


def _processes_mapping(path: pathlib.Path) -> list[str]:
    found = []
    for maps in pathlib.Path("/proc").glob("[0-9]*/maps"):
        try:
            if str(path) in maps.read_text():
                found.append(maps.parent.name)
        except OSError:
            continue
    return found


@pytest.fixture(scope="session")
def processes_mapping():
    """processes_mapping(path) -> the pids of the processes that have `path` mapped (a provider left loaded)."""
    return _processes_mapping
