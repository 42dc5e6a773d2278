"""A run names the spec version it checks against (./uet run --spec-version): both decoders follow it,
softuet follows it through its manifest's {spec_version}, a provider that implements another version is
marked in the report and fails where the versions differ."""
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
# Two DGRAM checks: under 1.0.3 a UET_DATAGRAM_SEND carries message_id 0 (spec/wire.yaml spec_versions).
DGRAM_CASES = "Msg.SendUsesTheTable2_22Opcode"
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="namespace pairs and captures need root (os.geteuid() != 0)")


class TestSpecVersionOption:
    def test_an_unknown_version_is_usage_naming_the_known_ones(self, cmd_uet_run, tmp_path):
        run = cmd_uet_run("--spec-version", "1.0.9", "--report", tmp_path)
        assert run.returncode == 2
        assert "invalid choice: '1.0.9' (choose from '1.0.1', '1.0.3')" in run.stderr

    def test_a_manifest_naming_an_unknown_version_is_refused(self, tmp_path):
        bad = tmp_path / "bad.yaml"
        bad.write_text(f"extends: {SOFTUET}\nspec_version: '2.0'\n")
        run = subprocess.run([sys.executable, "-m", "harness.inputs.manifest", "check", str(bad)], cwd=REPO,
                             env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=60)
        assert run.returncode == 1
        assert run.stderr == f"{bad}: spec_version: not one of 1.0.1, 1.0.3\n"  # the key, never the value


@root_only
class TestRunBySpecVersion:
    def test_softuet_passes_by_1_0_3_and_the_report_says_so(self, cmd_uet_run, results_of, tmp_path):
        run = cmd_uet_run("--provider", SOFTUET, "--spec-version", "1.0.3", "--only", DGRAM_CASES,
                          "--report", tmp_path, "--quiet")
        assert run.returncode == 0, run.stdout + run.stderr
        doc = results_of(tmp_path)
        assert doc["run_info"]["spec_version"] == "1.0.3"
        assert doc["run_info"]["manifests"][0]["implements_checked_version"] is True
        dgram = [r for r in doc["results"] if r["case"].endswith("/dgram")]
        assert dgram and {r["verdict"] for r in dgram} == {"pass"}
        assert "spec 1.0.3" in run.stdout

    def test_a_1_0_1_provider_checked_by_1_0_3_fails_on_the_datagram_message_id(self, cmd_uet_run, results_of,
                                                                                     tmp_path):
        old = tmp_path / "softuet-1.0.1.yaml"
        old.write_text(f"extends: {SOFTUET}\nname: softuet-old\nspec_version: '1.0.1'\n"
                       "environment: {SOFTUET_SPEC_VERSION: '1.0.1'}\n")
        run = cmd_uet_run("--provider", old, "--spec-version", "1.0.3", "--only", DGRAM_CASES,
                          "--report", tmp_path / "runs", "--quiet")
        assert run.returncode == 1, run.stdout + run.stderr
        assert "softuet-old says it implements spec 1.0.1; this run checks 1.0.3" in run.stdout
        doc = results_of(tmp_path / "runs")
        assert doc["run_info"]["manifests"][0]["implements_checked_version"] is False
        failed = [r for r in doc["results"] if r["verdict"] == "fail"]
        assert failed and all(r["case"].endswith("/dgram") for r in failed)
        assert all("uet.ses.message_id" in (r["message"] or "") for r in failed)
        assert all(r["repro"].endswith("--spec-version 1.0.3") for r in failed)
        # The same provider checked by the version it implements passes.
        again = cmd_uet_run("--provider", old, "--only", DGRAM_CASES, "--report", tmp_path / "runs", "--quiet")
        assert again.returncode == 0, again.stdout + again.stderr
