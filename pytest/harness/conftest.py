"""Fixtures of the harness tests that more than one file uses: a provider that misbehaves on purpose, and
who still has it loaded."""
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
HOSTILE_SOURCE = pathlib.Path(__file__).with_name("hostile_provider.c")


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
