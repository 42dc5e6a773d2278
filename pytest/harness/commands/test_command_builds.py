"""Each command builds only what it uses: the trees and the targets every ./uet command passes to `cmake --build`,
on a copy of the checkout whose cmake records its calls and compiles nothing (BUILDS in ./uet says them). The
build of a command's last tree fails on purpose, so that the command stops there (exit 3) before it runs anything.
"""
import itertools
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
SOFTUET = "cases/manifests/softuet.yaml"
RUN = [("build", "uet-run")]
TESTS = [("build-asan", "uet-ctest"), ("build-fuzz", "uet-fuzzers")]

# ./uet ARGS -> the (tree, targets) of its `cmake --build` calls, in order.
EXPECTED = {
    ("run", "--only", "msg"): RUN,
    ("certify", "--provider", SOFTUET): RUN,
    ("slurm", "submit", "--only", "msg"): RUN,  # once, before the array: its tasks find the build done
    ("selftest",): [("build", "uet-selftest")],  # the wire checks it runs need their probes
    ("verify", "package.tar.zst"): RUN,
    ("plugfest", "ingest", "package.tar.zst"): RUN,   # it checks each package as verify does
    ("build",): RUN,
    ("build", "--all"): [("build", "all"), *TESTS],
    ("test",): [("build", "uet-pytest"), *TESTS],
    ("fuzz", "--minutes", "1"): [("build-fuzz", "uet-fuzzers")],
    ("bench", "decode"): [("build-bench", "uet-decode pcap-read-loop")],
    ("bench", "fep"): [("build-bench", "softuet-fi")],
    ("bench", "fep-instructions"): [("build-bench", "dgram-roundtrip softuet-fi")],
    ("bench", "fep-critical-path"): [("build-bench", "softuet-fi")],
    ("bench", "socket-calls"): [("build", "socket-calls")],
    ("bench", "entity"): [("build", "entity-bench uet-entity softuet-fi")],
    ("bench", "under-load"): RUN,
    ("bench", "placements"): RUN,
    ("bench", "shards"): RUN,
}


def built(calls: list[str]) -> list[tuple[str, str]]:
    """(tree, targets) of each `cmake --build TREE -j N [--target T...]` call."""
    found = []
    for call in calls:
        words = call.split()
        if words[0] == "--build":
            targets = words[words.index("--target") + 1:] if "--target" in words else []
            found.append((words[1], " ".join(targets)))
    return found


class TestWhatEachCommandBuilds:
    @pytest.fixture(scope="class")
    def cmd_uet_recorded(self, tmp_path_factory, checkout_copy, stub_cmake):
        """cmd_uet_recorded(args, stop_at) -> (CompletedProcess, cmake's calls) of ./uet ARGS in a fresh clone that
        shares this checkout's libfabric (deps/), its build of the tree `stop_at` failing."""
        top = tmp_path_factory.mktemp("builds")
        clone = checkout_copy(top / "clone")
        if (REPO / "deps").exists():
            (clone / "deps").symlink_to((REPO / "deps").resolve())
        (clone / "package.tar.zst").write_bytes(b"")
        tools = stub_cmake(top / "bin")
        env = {k: v for k, v in os.environ.items() if k not in ("UET_BUILD", "CMAKE_FAIL_TREE")}

        made = itertools.count()

        def run(args, stop_at):
            calls = top / f"cmake-calls-{next(made)}"
            done = subprocess.run([str(clone / "uet"), *args], cwd=clone, capture_output=True, text=True, timeout=300,
                                  env=dict(env, PATH=f"{tools}:{env['PATH']}", CMAKE_CALLS=str(calls),
                                           CMAKE_FAIL_TREE=stop_at))
            return done, calls.read_text().splitlines() if calls.exists() else []
        return run

    @pytest.mark.parametrize("args", list(EXPECTED), ids=" ".join)
    def test_the_command_builds_its_targets_and_nothing_else(self, cmd_uet_recorded, args):
        expected = EXPECTED[args]
        last_tree = expected[-1][0]
        done, calls = cmd_uet_recorded(args, last_tree)
        assert (done.returncode, built(calls)) == (3, expected), done.stdout[-2000:] + done.stderr[-2000:]
        assert done.stderr.splitlines()[-1].startswith(f"uet: build of {last_tree} failed"), done.stderr[-2000:]

