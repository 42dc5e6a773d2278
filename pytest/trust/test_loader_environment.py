"""Issue 34, finding 4 (the loader part): a manifest's `environment:` could set LD_PRELOAD, whose library runs in
the case binary before its main and can take the verdict key the harness hands it. Now a manifest that sets a
variable of the dynamic loader (glibc's secure-execution list: harness/inputs/loader_environment.py) is bad usage,
exit 2 naming the manifest, the key and why, unless --allow-loader-environment; the run records that option
(results.json's run_info.opt_ins), a certify package carries it, and ./uet verify names it as a warning."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.certify import certify, package_archive, package_sums  # noqa: E402

from harness.run import run_suite
from harness.certify import verify as verify_mod  # noqa: E402

UDP = REPO / "cases" / "manifests" / "udp.yaml"
WHY = ("sets the dynamic loader's variable: code it names would run in the case binary before its main and could "
       "take the verdict key; refused (--allow-loader-environment runs it anyway, and the results say so)")
# Runs before the case binary's main and leaves its pid where the test looks.
PRELOAD = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void before_main(void) {
  FILE* f = fopen(MARKER, "a");
  if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
}
"""
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the runs need root (namespaces, captures)")


@pytest.fixture
def manifest(tmp_path):
    """manifest(text) -> a manifest extending udp.yaml with `text`."""
    def make(text, name="vendor.yaml"):
        path = tmp_path / name
        path.write_text(f"extends: {UDP}\nname: vendor\n{text}")
        return path
    return make


@pytest.fixture
def preload(tmp_path):
    """(the folder of libmarker.so, the marker file each process that loads it appends its pid to)."""
    marker = tmp_path / "preloaded"
    source = tmp_path / "marker.c"
    source.write_text(PRELOAD)
    subprocess.run(["cc", "-shared", "-fPIC", f'-DMARKER="{marker}"', "-o", str(tmp_path / "libmarker.so"),
                    str(source)], check=True, timeout=120)
    return tmp_path / "libmarker.so", marker


class TestRefused:
    @pytest.mark.parametrize("key,variable", [("environment", "LD_PRELOAD"), ("environment", "LD_AUDIT"),
                                              ("environment", "GCONV_PATH"), ("environment", "LD_LIBRARY_PATH"),
                                              ("indirect_job_id_environment", "LD_PRELOAD")])
    def test_a_loader_variable_is_bad_usage(self, check_usage, manifest, key, variable):
        # Before: exit 0, and the run gave the case binary the variable.
        # The indirect method's environment comes with the JobID it assigns (harness/inputs/manifest.py).
        job = "indirect_job_id: 7\n" if key == "indirect_job_id_environment" else ""
        m = manifest(f"{key}: {{{variable}: /opt/x/lib.so}}\n{job}")
        assert check_usage("--provider", m) == (2, "", f"uet run: bad manifest:\n  {m}: {key}: {variable}: {WHY}\n")

    def test_a_variants_is_named_with_the_variant(self, check_usage, manifest):
        m = manifest("variants:\n  v: {environment: {LD_PRELOAD: /opt/x/lib.so}}\n")
        assert check_usage("--provider", f"{m}#v") == (2, "", f"uet run: bad manifest:\n  {m}#v: environment: "
                                                               f"LD_PRELOAD: {WHY}\n")

    def test_certify_refuses_it_too(self, manifest, capsys):
        m = manifest("environment: {LD_PRELOAD: /opt/x/lib.so}\n")
        assert certify.main(["--provider", str(m), "--check-usage"]) == 2
        assert capsys.readouterr().err == f"uet certify: bad manifest:\n  {m}: environment: LD_PRELOAD: {WHY}\n"

    def test_unsetting_one_is_no_setting(self, check_usage, manifest):
        rc, _, err = check_usage("--provider", manifest("environment: {LD_PRELOAD: null, FI_LOG_LEVEL: warn}\n"))
        assert (rc, err) == (0, "")

    def test_the_option_lets_it_through(self, check_usage, manifest):
        m = manifest("environment: {LD_PRELOAD: /opt/x/lib.so}\n")
        rc, _, err = check_usage("--provider", m, "--allow-loader-environment")
        assert (rc, err) == (0, "")


@root_only
class TestARun:
    def run(self, build_dir, report, m, *more):
        return run_suite.main(["--provider", str(m), "--only", "av", "--seed", "7", "--quiet", "--no-decode-check",
                               "--build", str(build_dir), "--report", str(report), *more])

    def test_a_refused_preload_never_runs(self, build_dir, tmp_path, manifest, preload):
        library, marker = preload
        assert self.run(build_dir, tmp_path / "runs", manifest(f"environment: {{LD_PRELOAD: {library}}}\n")) == 2
        assert not marker.exists()

    def test_an_allowed_one_runs_before_main_and_is_recorded(self, build_dir, tmp_path, manifest, preload):
        library, marker = preload
        m = manifest(f"environment: {{LD_PRELOAD: {library}}}\n")
        assert self.run(build_dir, tmp_path / "runs", m, "--allow-loader-environment") == 0
        info = json.loads((tmp_path / "runs" / "latest" / "results.json").read_text())["run_info"]
        assert info["opt_ins"] == [{"option": "--allow-loader-environment",
                                    "let_through": [f"{m}: environment: LD_PRELOAD"]}]
        assert marker.read_text().split(), "the preloaded library never ran: the test shows nothing"


@root_only
class TestAPackage:
    @pytest.fixture(scope="class")
    def package(self, build_dir, tmp_path_factory):
        """A certify package of a run allowed a loader variable (a harmless one: the locale's folder)."""
        folder = tmp_path_factory.mktemp("loader")
        (folder / "udp.yaml").write_text(UDP.read_text())  # beside it: the package keeps the two as they lie
        m = folder / "vendor.yaml"
        m.write_text("extends: udp.yaml\nname: vendor\nenvironment: {LOCPATH: /nonexistent}\n")
        env = dict(os.environ, UET_BUILD=str(build_dir), PYTHONPATH=str(REPO))
        done = subprocess.run([sys.executable, "-m", "harness.certify.certify", "--provider", str(m), "--seed", "7", "--only",
                               "av", "--out", str(folder / "out"), "--allow-loader-environment"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return m, next((folder / "out").glob("*.tar.zst"))

    def verify(self, build_dir, tmp_path, capsys, package):
        capsys.readouterr()
        verify_mod.main([str(package), "--report", str(tmp_path / "report"), "--build", str(build_dir)])
        return [line for line in capsys.readouterr().out.splitlines() if line.startswith("uet verify: [")]

    def test_verify_names_the_option_as_a_warning(self, build_dir, tmp_path, capsys, package):
        _, package = package
        lines = self.verify(build_dir, tmp_path, capsys, package)
        # named as the package holds it (the run ran on the package's copy)
        assert "uet verify: [trust-opt-in] the run was made with --allow-loader-environment: manifests/vendor.yaml: " \
               "environment: LOCPATH" in lines
        report = json.loads((tmp_path / "report" / "verification.json").read_text())
        assert [f["invalidates"] for f in report["findings"] if f["kind"] == "trust-opt-in"] == [False]

    def test_a_package_whose_record_of_it_was_removed_is_invalid(self, build_dir, tmp_path, capsys, package):
        _, package = package
        tree = tmp_path / "tree"
        tree.mkdir()
        subprocess.run(["tar", "--zstd", "-xf", str(package), "-C", str(tree)], check=True, timeout=600)
        results = tree / "run" / "results.json"
        doc = json.loads(results.read_text())
        doc["run_info"]["opt_ins"] = []
        results.write_text(json.dumps(doc))
        names = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file() and p.name != package_sums.NAME)
        package_sums.write(tree, names)  # sealed again, as a forger would
        package_archive.write(tree, names + [package_sums.NAME], tmp_path / "forged.tar.zst", 0)
        lines = self.verify(build_dir, tmp_path, capsys, tmp_path / "forged.tar.zst")
        assert ("uet verify: [manifest] manifests/vendor.yaml: environment: LOCPATH: a loader variable, and "
                "results.json records no --allow-loader-environment, without which a run refuses it") in lines
