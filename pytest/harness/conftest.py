"""Fixtures of the harness tests that more than one file uses: a provider that misbehaves on purpose, who
still has it loaded, the broken authz pair's run, and a fresh clone whose cmake only records what ./uet asks
of it (running the suite: pytest/fixtures_uet.py)."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
HOSTILE_SOURCE = pathlib.Path(__file__).with_name("hostile_provider.c")
BROKEN = REPO / "cases" / "manifests" / "examples" / "softuet-wrong-job-id.yaml"


@pytest.fixture(scope="session")
def broken_authz_pair(suite_run):
    """The broken-vendor example (softuet with the wrong_job_id fault knob) initiating towards a clean softuet,
    the authz area only, seed 5: the one run of it that test_front_door.py and test_conformance_run.py read."""
    return suite_run("--initiator", BROKEN, "--target", "softuet.yaml", "--only", "authz", "--seed", "5", "--quiet")


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


# A small run cut in two (one cell, softuet, cut by area: msg and av), seed 7: the shards test_merge.py merges.
SMALL_RUN = ("--provider", "softuet.yaml", "--only", "msg", "--only", "av", "--quiet")


@pytest.fixture(scope="session")
def small_run():
    """SMALL_RUN's arguments (without its seed and shard)."""
    return SMALL_RUN


@pytest.fixture(scope="session")
def small_shards(suite_run):
    """[shard 1/2, shard 2/2] (fixtures_uet.SuiteRun) of SMALL_RUN with seed 7, each made once per session."""
    return [suite_run(*SMALL_RUN, "--seed", "7", "--shard", f"{i}/2") for i in (1, 2)]


@pytest.fixture(scope="session")
def small_unsharded(suite_run):
    """SMALL_RUN with seed 7 as one run: what the merge of small_shards must equal."""
    return suite_run(*SMALL_RUN, "--seed", "7")


@pytest.fixture(scope="session")
def small_shard_of_another_seed(suite_run):
    """Shard 2/2 of SMALL_RUN with seed 8: a shard of another run."""
    return suite_run(*SMALL_RUN, "--seed", "8", "--shard", "2/2")


# The default run, seed 11: as one run, and as three shards (./uet run --seed 11 --shard I/3).
DEFAULT_RUN = ("--seed", "11", "--quiet")


@pytest.fixture(scope="session")
def default_unsharded(suite_run):
    return suite_run(*DEFAULT_RUN, timeout=3600)


@pytest.fixture(scope="session")
def default_shards(suite_run):
    return [suite_run(*DEFAULT_RUN, "--shard", f"{i}/3", timeout=3600) for i in (1, 2, 3)]


def _merged(shards, report: pathlib.Path):
    """./uet merge --report REPORT of the shards' run folders, as a user runs it: (process, the merged run)."""
    done = subprocess.run([sys.executable, "-m", "harness.merge.merge_run", "--report", str(report),
                           *(str(s.folder) for s in shards)], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=900)
    return done, (report / "latest").resolve()


@pytest.fixture(scope="module")
def small_merged(small_shards, tmp_path_factory):
    """small_shards merged: (process, the merged run's folder)."""
    return _merged(small_shards, tmp_path_factory.mktemp("merged"))


@pytest.fixture(scope="module")
def default_merged(default_shards, tmp_path_factory):
    """default_shards merged: (process, the merged run's folder)."""
    return _merged(default_shards, tmp_path_factory.mktemp("merged-default"))
