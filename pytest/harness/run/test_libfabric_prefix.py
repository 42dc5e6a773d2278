"""./uet run against another libfabric (--libfabric PREFIX, a manifest's `libfabric:`): a prefix that is no
libfabric the suite can build against is bad usage (exit 2) naming the missing file, answered before any set-up;
a good one gets a build tree of its own, keyed by its version and place; each side of a pair runs its own tree's
binary with its own libfabric first in its library path, and run_info and the report say which.

The end-to-end tests need a second libfabric installation: UET_TEST_SECOND_LIBFABRIC, else out/libfabric-second
(`UET_LIBFABRIC_INTO=out/libfabric-second bash setup/libfabric.sh` builds the suite's libfabric 2.1.0 there:
3.5 minutes of CPU). Without one they are skipped: ./uet test never builds a second libfabric.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
from harness.run import cell_plan  # noqa: E402
from harness.inputs import libfabric_prefix, run_info, side_builds
from harness.inputs import manifest as manifest_mod  # noqa: E402

SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
TCP_RXM = REPO / "cases" / "manifests" / "tcp_rxm.yaml"
SECOND = pathlib.Path(os.environ.get("UET_TEST_SECOND_LIBFABRIC") or REPO / "out" / "libfabric-second")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="namespace pairs and captures need root (os.geteuid() != 0)")


def fake_prefix(root: pathlib.Path, *, fi_info=True, library=True, pc=True, api=(2, 1), version="2.1.0",
                said_prefix=None) -> pathlib.Path:
    """A folder laid out as a libfabric installation, with only the parts asked for (nothing in it runs)."""
    root.mkdir(parents=True, exist_ok=True)
    if fi_info:
        (root / "bin").mkdir(exist_ok=True)
        (root / "bin" / "fi_info").write_text("#!/bin/sh\nexit 1\n")
        (root / "bin" / "fi_info").chmod(0o755)
    (root / "lib").mkdir(exist_ok=True)
    if library:
        (root / "lib" / "libfabric.so").write_text("")
    if pc:
        (root / "lib" / "pkgconfig").mkdir(exist_ok=True)
        (root / "lib" / "pkgconfig" / "libfabric.pc").write_text(
            f"prefix={said_prefix or root}\nexec_prefix=${{prefix}}\nlibdir=${{exec_prefix}}/lib\n"
            f"includedir=${{prefix}}/include\n\nName: libfabric\nVersion: {version}\nCflags: -I${{includedir}}\n"
            "Libs: -L${libdir} -lfabric\n")
    if api:
        (root / "include" / "rdma").mkdir(parents=True, exist_ok=True)
        (root / "include" / "rdma" / "fabric.h").write_text(
            f"#define FI_MAJOR_VERSION {api[0]}\n#define FI_MINOR_VERSION {api[1]}\n")
    return root


def uet_run(*args, timeout=60):
    return subprocess.run([str(REPO / "uet"), "run", *map(str, args)], capture_output=True, text=True, timeout=timeout)


class TestThePrefixCheck:
    def test_a_libfabric_installation_is_named_by_version_and_place(self, tmp_path):
        one, two = fake_prefix(tmp_path / "one"), fake_prefix(tmp_path / "two")
        a, b = libfabric_prefix.check(one), libfabric_prefix.check(two)
        assert (a.version, a.api, a.lib, a.pkgconfig) == ("2.1.0", (2, 1), one / "lib", one / "lib" / "pkgconfig")
        assert a.key.startswith("2.1.0-") and b.key.startswith("2.1.0-") and a.key != b.key
        assert side_builds.tree_of(a) == REPO / "build-libfabric" / a.key

    def test_a_link_to_an_installation_is_that_installation(self, tmp_path):
        real = fake_prefix(tmp_path / "real")
        (tmp_path / "link").symlink_to(real)
        assert libfabric_prefix.check(tmp_path / "link").key == libfabric_prefix.check(real).key

    @pytest.mark.parametrize("parts, missing", [
        ({"fi_info": False, "library": False}, "neither {p}/bin/fi_info nor {p}/lib/libfabric.so exists"),
        ({"pc": False}, "no {p}/lib/pkgconfig/libfabric.pc"),
        ({"api": None}, "no libfabric headers: {p}/include/rdma/fabric.h is missing"),
        ({"library": False}, "no {p}/lib/libfabric.so (the libdir of {p}/lib/pkgconfig/libfabric.pc)"),
    ])
    def test_a_missing_part_is_named(self, tmp_path, parts, missing):
        prefix = fake_prefix(tmp_path / "lf", **parts)
        with pytest.raises(libfabric_prefix.PrefixError) as err:
            libfabric_prefix.check(prefix)
        assert missing.format(p=prefix) in str(err.value)

    def test_a_moved_installation_is_refused(self, tmp_path):
        prefix = fake_prefix(tmp_path / "lf", said_prefix="/opt/where-it-was")
        with pytest.raises(libfabric_prefix.PrefixError, match="says prefix=/opt/where-it-was.*moved"):
            libfabric_prefix.check(prefix)

    def test_a_libfabric_1_x_is_too_old(self, tmp_path):
        # Debian 12's libfabric is 1.17; its headers cannot be had here without the network, so a prefix
        # laid out as it would be stands in for it.
        prefix = fake_prefix(tmp_path / "lf", api=(1, 17), version="1.17.0")
        with pytest.raises(libfabric_prefix.PrefixError) as err:
            libfabric_prefix.check(prefix)
        assert str(err.value).startswith(f"libfabric 1.17.0 at {prefix} is too old: its headers' API is 1.17")
        assert "FI_VERSION(2, 0)" in str(err.value)

    def test_the_suites_own_libfabric_passes(self):
        own = libfabric_prefix.suite_prefix()
        if not (own / "lib" / "pkgconfig" / "libfabric.pc").exists():
            pytest.skip(f"no libfabric at {own} (./uet setup builds it)")
        assert libfabric_prefix.check(own).api[0] >= 2


class TestBadUsageIsFast:
    """What ./uet run answers before its set-up: no 'setup:' line, no build (its speed is what ./uet bench
    run-time measures, not a test: a loaded host takes seconds to start any Python)."""

    def run_refused(self, *args):
        run = uet_run(*args)
        assert run.returncode == 2, run.stderr
        assert "setup:" not in run.stdout + run.stderr and "building" not in run.stdout + run.stderr
        return run.stderr

    def test_a_folder_that_is_not_there(self, tmp_path):
        said = self.run_refused("--libfabric", tmp_path / "nowhere", "--provider", SOFTUET)
        assert said == f"uet run: --libfabric {tmp_path / 'nowhere'}: {tmp_path / 'nowhere'}: no such folder " \
                       "(a libfabric prefix is the folder that holds its bin/fi_info, lib/libfabric.so and " \
                       "lib/pkgconfig/libfabric.pc)\n"

    def test_a_prefix_without_its_pc_file(self, tmp_path):
        prefix = fake_prefix(tmp_path / "lf", pc=False)
        said = self.run_refused("--libfabric", prefix, "--provider", SOFTUET)
        assert f"no {prefix}/lib/pkgconfig/libfabric.pc" in said

    def test_a_libfabric_too_old(self, tmp_path):
        prefix = fake_prefix(tmp_path / "lf", api=(1, 17), version="1.17.0")
        assert "is too old" in self.run_refused("--libfabric", prefix)

    def test_a_manifests_libfabric_is_named_with_the_manifest(self, tmp_path):
        target = tmp_path / "vendor.yaml"
        target.write_text(f"extends: {SOFTUET}\nname: vendor\nlibfabric: elsewhere\n")
        said = self.run_refused("--initiator", SOFTUET, "--target", target)
        assert said.startswith(f"uet run: {target}: libfabric: {tmp_path / 'elsewhere'}: no such folder")


class TestTheManifestKey:
    def test_a_relative_path_is_the_files_and_repo_is_expanded(self, tmp_path):
        (tmp_path / "sub").mkdir()
        base = tmp_path / "sub" / "base.yaml"
        base.write_text(f"extends: {SOFTUET}\nlibfabric: ../lf\n")
        child = tmp_path / "child.yaml"
        child.write_text("extends: sub/base.yaml\nvariants:\n  here: {libfabric: '{repo}/out/lf'}\n")
        assert manifest_mod.load(child).libfabric == tmp_path / "lf"
        assert manifest_mod.load(f"{child}#here").libfabric == REPO / "out" / "lf"

    def test_only_repo_may_be_used(self, tmp_path):
        bad = tmp_path / "bad.yaml"
        bad.write_text(f"extends: {SOFTUET}\nlibfabric: '{{build}}/lf'\n")
        with pytest.raises(manifest_mod.ManifestError, match=r"libfabric: unknown placeholder \{build\} "
                                                             r"\(known: \{repo\}"):
            manifest_mod.load(bad)

    def test_run_libfabric_is_the_default_and_a_manifests_own_wins(self, tmp_path):
        own = tmp_path / "own.yaml"
        own.write_text(f"extends: {SOFTUET}\nlibfabric: /opt/own\n")
        assert manifest_mod.load(SOFTUET).with_default_libfabric(pathlib.Path("/opt/run")).libfabric == pathlib.Path("/opt/run")
        assert manifest_mod.load(own).with_default_libfabric(pathlib.Path("/opt/run")).libfabric == pathlib.Path("/opt/own")

    def test_the_sides_libfabric_comes_first_in_its_library_path(self, tmp_path, monkeypatch):
        monkeypatch.setenv("LD_LIBRARY_PATH", "/inherited")
        record = manifest_mod.load(SOFTUET).resolve(build=REPO / "build", port=4793, library_first=tmp_path / "lib")
        assert record["environment"]["LD_LIBRARY_PATH"] == f"{tmp_path / 'lib'}:/inherited"
        assert "LD_LIBRARY_PATH" not in manifest_mod.load(SOFTUET).resolve(build=REPO / "build", port=4793)["environment"]


class TestTheTreesARunBuilds:
    def check_usage(self, *args):
        return subprocess.run([sys.executable, "-m", "harness.run.run_suite", "--check-usage", *map(str, args)], cwd=REPO,
                              env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=60)

    def test_none_without_another_libfabric(self):
        run = self.check_usage("--provider", SOFTUET)
        assert (run.returncode, run.stdout) == (0, "uet-run\n")

    def test_the_suites_own_libfabric_named_is_the_suites_own_tree(self):
        own = libfabric_prefix.suite_prefix()
        if not (own / "lib" / "pkgconfig" / "libfabric.pc").exists():
            pytest.skip(f"no libfabric at {own} (./uet setup builds it)")
        run = self.check_usage("--libfabric", own, "--provider", SOFTUET)
        assert (run.returncode, run.stdout) == (0, "uet-run\n"), run.stderr

    def test_softuet_is_built_only_for_a_manifest_that_loads_it_from_the_tree(self, tmp_path):
        prefix = fake_prefix(tmp_path / "lf")
        lf = libfabric_prefix.check(prefix)
        expected = [str(side_builds.tree_of(lf)), str(prefix), str(prefix / "lib" / "pkgconfig")]
        softuet = self.check_usage("--libfabric", prefix, "--provider", SOFTUET)
        assert softuet.stdout.splitlines() == ["uet-tools", "\t".join(expected + ["uet-run-side softuet-fi"])], \
            softuet.stderr
        tcp = self.check_usage("--libfabric", prefix, "--provider", TCP_RXM)
        assert tcp.stdout.splitlines() == ["uet-tools", "\t".join(expected + ["uet-run-side"])], tcp.stderr

    def test_the_run_info_says_the_suites_libfabric_was_not_used(self, tmp_path):
        lf = libfabric_prefix.check(fake_prefix(tmp_path / "lf"))
        named = side_builds.Side(side_builds.tree_of(lf), lf)
        assert run_info.suite_libfabric({"a": named, "b": named}) == \
            "not used: every side ran with its own (see each manifest's)"
        assert run_info.suite_libfabric({"a": named, "b": side_builds.Side(REPO / "build", None)}) == \
            run_info.libfabric_version()

    def test_a_side_on_the_suites_own_libfabric_needs_all_of_build(self, tmp_path):
        prefix = fake_prefix(tmp_path / "lf")
        own = tmp_path / "softuet-own.yaml"
        own.write_text(f"extends: {SOFTUET}\nname: softuet-own\nlibfabric: {libfabric_prefix.suite_prefix()}\n")
        run = self.check_usage("--libfabric", prefix, "--initiator", SOFTUET, "--target", own)
        assert run.stdout.splitlines()[0] == "uet-run", run.stderr

    def test_a_tree_and_its_libfabric_are_shown_to_every_placement(self, tmp_path):
        lf = libfabric_prefix.check(fake_prefix(tmp_path / "lf"))
        sides = {"a": side_builds.Side(REPO / "build", None), "b": side_builds.Side(side_builds.tree_of(lf), lf),
                 "c": side_builds.Side(side_builds.tree_of(lf), lf)}
        assert side_builds.mounts(sides) == [(str(side_builds.tree_of(lf)), "ro"), (str(lf.prefix), "ro")]

    def test_the_plan_names_the_targets_binary_only_when_it_is_another(self, tmp_path):
        record = manifest_mod.load(SOFTUET).resolve(build=REPO / "build", port=4793)
        common = dict(cell="c", area="msg", initiator_manifest=tmp_path / "i.json", target_manifest=tmp_path / "t.json",
                      initiator_record=record, target_record=record, results=tmp_path / "r.jsonl", captures=tmp_path)
        assert "binary" not in cell_plan.make(**common)["target"]
        plan = cell_plan.make(**common, target_binary=tmp_path / "uet-cases-msg")
        assert plan["target"]["binary"] == str(tmp_path / "uet-cases-msg")
        with pytest.raises(cell_plan.PlanError, match="target.binary: does not match the pattern"):
            cell_plan.make(**common, target_binary=pathlib.Path("relative/uet-cases-msg"))


class TestTheFrontDoorWithAPrefix:
    """./uet run --libfabric PREFIX on a fresh clone of a machine without libfabric: what it sets up and builds,
    as its CMake calls (a stand-in cmake on PATH records them; nothing is compiled) and the set-up's lines say.
    UET_LIBFABRIC=system makes the suite's own libfabric, were it asked for, fail at once instead of being
    fetched and built."""

    @pytest.fixture(scope="class")
    def fresh_run(self, tmp_path_factory, checkout_copy, stub_cmake):
        top = tmp_path_factory.mktemp("fresh")
        clone = checkout_copy(top / "clone")
        prefix = fake_prefix(top / "vendor-libfabric")
        tools = stub_cmake(top / "bin")
        env = {k: v for k, v in os.environ.items()
               if k not in ("PKG_CONFIG_PATH", "UET_LIBFABRIC_PREFIX", "UET_LIBFABRIC_SOURCE", "UET_BUILD")}
        env.update(PATH=f"{tools}:{env['PATH']}", CMAKE_CALLS=str(top / "cmake-calls"), UET_LIBFABRIC="system")
        run = subprocess.run([str(clone / "uet"), "run", "--libfabric", str(prefix), "--provider",
                              "cases/manifests/udp.yaml", "--only", "msg"], cwd=clone, env=env, capture_output=True,
                             text=True, timeout=600)
        calls = (top / "cmake-calls").read_text().splitlines() if (top / "cmake-calls").exists() else []
        return clone, prefix, run, calls

    def test_the_suites_libfabric_is_neither_set_up_nor_built_against(self, fresh_run):
        clone, _, run, calls = fresh_run
        assert "setup: libfabric:" not in run.stdout + run.stderr
        assert "setup: ok: the suite's own libfabric left out (every side of this run has its own)" in run.stdout
        assert not (clone / "deps").exists()
        assert calls[:2] == [
            f"-S . -B build -DUET_PYTHON=/usr/bin/python3 -DUET_JUNIT_DIR={clone}/out/junit -DUET_LTO=OFF "
            + "-DUET_TOOLS_ONLY=OFF" + "".join(f" {o}" for o in launcher_options()) + " -DUET_TOOLS_ONLY=ON",
            f"--build build -j {len(os.sched_getaffinity(0))} --target uet-tools"], run.stdout + run.stderr

    def test_the_case_binaries_and_softuet_only_in_the_prefixs_tree(self, fresh_run):
        clone, prefix, run, calls = fresh_run
        tree = clone / "build-libfabric" / libfabric_prefix.check(prefix).key
        assert [c.split()[:4] for c in calls[2:]] == [["-S", ".", "-B", str(tree)], ["--build", str(tree), "-j",
                                                                                     str(len(os.sched_getaffinity(0)))]]
        assert f"-DUET_LIBFABRIC_REQUIRED_PREFIX={prefix}" in calls[2]
        assert calls[3].endswith("--target uet-run-side")  # udp's provider is libfabric's own: no softuet

    def test_the_run_looks_for_its_cases_in_the_prefixs_tree(self, fresh_run):
        clone, prefix, run, _ = fresh_run
        tree = clone / "build-libfabric" / libfabric_prefix.check(prefix).key
        assert run.returncode == 3  # nothing was compiled
        assert run.stderr.splitlines()[-1] == f"uet run: no case binaries in {tree / 'cases'} (run ./uet build)"


def launcher_options() -> list[str]:
    """What ./uet adds to each configure for ccache, where it is installed."""
    if shutil.which("ccache") is None:
        return []
    return ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]


def second_libfabric():
    if not (SECOND / "lib" / "pkgconfig" / "libfabric.pc").exists():
        pytest.skip(f"no second libfabric at {SECOND}: UET_LIBFABRIC_INTO={SECOND} bash setup/libfabric.sh builds "
                    "one (about 5 minutes; ./uet test does not), or name one in UET_TEST_SECOND_LIBFABRIC")
    return libfabric_prefix.check(SECOND)


@root_only
class TestEndToEnd:
    """./uet run as a user runs it: the tree of the second libfabric is built the first time (minutes)."""

    def run_ok(self, report, *args):
        run = uet_run(*args, "--only", "msg", "--seed", 7, "--report", report, "--quiet", timeout=3600)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        return json.loads((report / "latest" / "results.json").read_text())

    def test_a_provider_against_another_libfabric(self, tmp_path):
        lf = second_libfabric()
        doc = self.run_ok(tmp_path / "runs", "--libfabric", SECOND, "--provider", SOFTUET)
        assert doc["summary"]["pass"] > 0
        [side] = doc["run_info"]["manifests"]
        assert side["libfabric"] == {"source": "named", "version": lf.version, "api": f"{lf.api[0]}.{lf.api[1]}",
                                     "prefix": str(lf.prefix), "build": str(side_builds.tree_of(lf))}
        assert str(lf.prefix) in (tmp_path / "runs" / "latest" / "index.html").read_text()
        cell = tmp_path / "runs" / "latest" / "cells" / "softuet"
        record = json.loads((cell / "initiator.manifest.json").read_text())
        assert record["environment"]["LD_LIBRARY_PATH"].split(":")[0] == str(lf.lib)
        assert record["environment"]["FI_PROVIDER_PATH"] == f"{side_builds.tree_of(lf)}/lib"
        assert "binary" not in json.loads((cell / "msg.plan.json").read_text())["target"]

    def test_a_pair_whose_target_alone_names_it(self, tmp_path):
        lf = second_libfabric()
        target = tmp_path / "softuet-second.yaml"
        target.write_text(f"extends: {SOFTUET}\nname: softuet-second\nlibfabric: {SECOND}\n")
        doc = self.run_ok(tmp_path / "runs", "--initiator", SOFTUET, "--target", target)
        assert doc["summary"]["pass"] > 0
        sides = {m["name"]: m["libfabric"] for m in doc["run_info"]["manifests"]}
        assert sides["softuet"]["source"] == "suite" and sides["softuet"]["build"] == str((REPO / "build").resolve())
        assert sides["softuet-second"]["prefix"] == str(lf.prefix)
        cell = tmp_path / "runs" / "latest" / "cells" / "softuet__softuet-second"
        plan = json.loads((cell / "msg.plan.json").read_text())
        assert plan["target"]["binary"] == str(side_builds.tree_of(lf) / "cases" / "uet-cases-msg")
        target_record = json.loads((cell / "target.manifest.json").read_text())
        assert target_record["environment"]["LD_LIBRARY_PATH"].split(":")[0] == str(lf.lib)
        assert "LD_LIBRARY_PATH" not in json.loads((cell / "initiator.manifest.json").read_text())["environment"]
        loads = subprocess.run(["ldd", plan["target"]["binary"]], capture_output=True, text=True, check=True,
                               env=dict(os.environ, LD_LIBRARY_PATH=target_record["environment"]["LD_LIBRARY_PATH"]))
        assert f"=> {lf.lib}/libfabric.so" in loads.stdout

    def test_a_plan_written_by_hand_names_the_targets_binary_too(self, tmp_path):
        lf = second_libfabric()
        if not (side_builds.tree_of(lf) / "cases" / "uet-cases-msg").exists():
            pytest.skip(f"{side_builds.tree_of(lf)} is not built (./uet run --libfabric {SECOND} builds it)")
        target = tmp_path / "softuet-second.yaml"
        target.write_text(f"extends: {SOFTUET}\nname: softuet-second\nlibfabric: {SECOND}\n")
        run = subprocess.run([sys.executable, "-m", "harness.run.cell_plan", "--provider", str(SOFTUET), "--target",
                              str(target), "--area", "msg", "-o", str(tmp_path / "plan")], cwd=REPO, capture_output=True,
                             text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)
        assert run.returncode == 0, run.stderr
        plan = json.loads((tmp_path / "plan" / "msg.plan.json").read_text())
        assert plan["target"]["binary"] == str(side_builds.tree_of(lf) / "cases" / "uet-cases-msg")
        target_record = json.loads((tmp_path / "plan" / "target.manifest.json").read_text())
        assert target_record["environment"]["LD_LIBRARY_PATH"].split(":")[0] == str(lf.lib)
