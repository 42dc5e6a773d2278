"""./uet certify and ./uet verify answer bad usage at once (exit 2, naming the bad thing), before any build
or run."""
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[3]


def module(name, *args):
    return subprocess.run([sys.executable, "-m", f"harness.certify.{name}", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))


class TestCertifyUsage:
    def test_bad_manifest_is_named(self, tmp_path):
        bad = tmp_path / "vendor.yaml"
        bad.write_text("provider: [not, a, name]\n")
        run = module("certify", "--check-usage", "--provider", bad)
        assert run.returncode == 2
        assert run.stderr.startswith(f"uet certify: bad manifest:\n  {bad}: ")

    def test_initiator_needs_target(self):
        run = module("certify", "--initiator", "softuet.yaml")
        assert run.returncode == 2
        assert run.stderr.splitlines()[-1] == ("./uet certify: error: --initiator and --target go together (for one "
                                               "provider against itself use --provider)")

    def test_seed_out_of_range(self):
        run = module("certify", "--provider", "softuet.yaml", "--seed", "4294967296")
        assert run.returncode == 2
        assert run.stderr.splitlines()[-1] == "./uet certify: error: --seed 4294967296 is out of range: a seed is 0 to 2147483647"

    def test_shipped_manifest_passes_the_usage_check(self):
        run = module("certify", "--check-usage", "--provider", "cases/manifests/softuet.yaml#hpc")
        assert (run.returncode, run.stderr) == (0, "")


class TestVerifyUsage:
    def test_missing_package(self, tmp_path):
        run = module("verify", "--check-usage", tmp_path / "none.tar.zst")
        assert (run.returncode, run.stderr) == (2, f"uet verify: no package at {tmp_path / 'none.tar.zst'}\n")

    def test_a_folder_is_not_a_package(self, tmp_path):
        run = module("verify", tmp_path, "--report", tmp_path / "report")
        assert run.returncode == 2
        assert run.stderr == f"uet verify: unreadable package: {tmp_path}: not a regular file\n"
