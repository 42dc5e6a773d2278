"""Fixtures of the harness tests that more than one file uses: a provider that misbehaves on purpose, who
still has it loaded, a run of the suite, and a fresh clone whose cmake only records what ./uet asks of it."""
import os
import pathlib
import shutil
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


def _checkout_copy(folder: pathlib.Path) -> pathlib.Path:
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        if (REPO / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, folder / name)
    return folder


@pytest.fixture(scope="session")
def checkout_copy():
    """checkout_copy(folder) -> folder, holding the suite's tracked files as this checkout has them: a fresh clone
    (no deps/, no build)."""
    return _checkout_copy


def _stub_cmake(folder: pathlib.Path) -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cmake").write_text('#!/bin/sh\nprintf \'%s\\n\' "$*" >> "$CMAKE_CALLS"\n'
                                  '[ "$1 $2" != "--build ${CMAKE_FAIL_TREE:-}" ] || exit 1\n')
    (folder / "cmake").chmod(0o755)
    return folder


@pytest.fixture(scope="session")
def stub_cmake():
    """stub_cmake(folder) -> folder, for the front of PATH: its cmake compiles nothing, appends each call's
    arguments to $CMAKE_CALLS, and fails the build of the tree $CMAKE_FAIL_TREE names (so a command stops there)."""
    return _stub_cmake
