"""Issue 26: one typed route from the harness to a case binary. The cell plan (cases/plan/cell-plan.schema.yaml)
is the one thing a binary is told about its run; harness/run/cell_plan.py writes and validates it, the binary
refuses a plan it cannot read (naming it), and a vendor can write one to run a binary by hand."""
import json
import os
import pathlib
import socket
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.inputs import manifest as manifest_mod  # noqa: E402
from harness.run import cell_plan  # noqa: E402
from harness.wire.capture_cap import CAPTURE_CAP_BYTES  # noqa: E402

MANIFESTS = REPO / "cases" / "manifests"
# Each side's record as the harness's writer makes it.
RECORDS = tuple(manifest_mod.load(MANIFESTS / "softuet.yaml").resolve(build=REPO / "build", port=port)
                for port in (4793, 4794))


def plan(tmp_path, **over) -> dict:
    args = dict(cell="a--b", area="msg", initiator_manifest=tmp_path / "i.json", target_manifest=tmp_path / "t.json",
                initiator_record=RECORDS[0], target_record=RECORDS[1],
                results=tmp_path / "msg.jsonl", captures=tmp_path / "captures")
    args.update(over)
    return cell_plan.make(**args)


class TestThePlan:
    def test_a_plan_names_both_sides_and_puts_the_target_beside_by_default(self, tmp_path):
        got = plan(tmp_path)
        assert got == {"plan_version": 2, "cell": "a--b", "area": "msg",
                       "initiator": {"manifest": str(tmp_path / "i.json"), "resolved": RECORDS[0]},
                       "target": {"manifest": str(tmp_path / "t.json"), "resolved": RECORDS[1],
                                  "place": {"kind": "beside"}},
                       "results": str(tmp_path / "msg.jsonl"), "captures": str(tmp_path / "captures"),
                       "capture_cap_bytes": CAPTURE_CAP_BYTES}

    def test_each_placement_s_target_place_is_valid(self, tmp_path):
        assert plan(tmp_path, target_place=cell_plan.netns_place("uet-b-1"))["target"]["place"] == \
            {"kind": "netns", "netns": "uet-b-1"}
        got = plan(tmp_path, target_place=cell_plan.agent_place("[fd00::2]:7000", "/run/s"), control_listen="fd00::1")
        assert (got["target"]["place"]["kind"], got["control_listen"]) == ("agent", "fd00::1")

    def test_the_loss_travels_as_numbers_and_words(self, tmp_path):
        loss = {"every": 7, "offset": 3, "seed": 10, "pattern": "every 7th", "rules": {"ignored": "here"}}
        assert plan(tmp_path, loss=loss)["loss"] == {"every": 7, "offset": 3, "seed": 10, "pattern": "every 7th"}

    @pytest.mark.parametrize("over, problem", [
        ({"target_place": {"kind": "moon"}}, "target.place"),
        ({"target_place": {"kind": "netns", "netns": "../etc"}}, "target.place"),
        ({"target_place": {"kind": "agent", "agent": "x"}}, "target.place"),
        ({"loss": {"every": 1, "offset": 0, "seed": 0, "pattern": "p"}}, "loss.every: less than the minimum of 2"),
    ])
    def test_a_plan_that_breaks_its_schema_is_refused_naming_the_key(self, tmp_path, over, problem):
        with pytest.raises(cell_plan.PlanError) as err:
            plan(tmp_path, **over)
        assert problem in str(err.value) and "cell plan a--b/msg" in str(err.value)

    def test_a_side_whose_record_breaks_its_declaration_is_refused_naming_the_key(self, tmp_path):
        with pytest.raises(cell_plan.PlanError) as err:
            plan(tmp_path, target_record=dict(RECORDS[1], wire=dict(RECORDS[1]["wire"], mtu=9000)))
        assert str(err.value).startswith("cell plan a--b/msg: target: resolved side: wire: unknown key: mtu (its "
                                         "declaration: manifest.schema.yaml, $defs/resolved)")


class TestTheBinaryReadsIt:
    def run(self, build_dir, env):
        return subprocess.run([str(build_dir / "cases" / "uet-cases-discovery")], env=dict(os.environ, **env),
                              capture_output=True, text=True, timeout=60)

    def test_without_a_plan_the_binary_says_how_to_get_one(self, build_dir):
        env = {k: v for k, v in os.environ.items() if k != cell_plan.PLAN_VARIABLE}
        run = subprocess.run([str(build_dir / "cases" / "uet-cases-discovery")], env=env, capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 3
        assert "cell plan (none): set UET_CASES_PLAN to a cell plan (harness/run/cell_plan.py writes one" in run.stderr

    def test_a_plan_of_another_version_is_refused(self, build_dir, tmp_path):
        bad = dict(plan(tmp_path), plan_version=1)
        (tmp_path / "p.json").write_text(json.dumps(bad))
        run = self.run(build_dir, {cell_plan.PLAN_VARIABLE: str(tmp_path / "p.json")})
        assert run.returncode == 3 and "plan_version 1, this binary reads 2" in run.stderr

    def test_a_plan_that_is_not_json_is_refused_naming_the_file(self, build_dir, tmp_path):
        (tmp_path / "p.json").write_text("{ not json")
        run = self.run(build_dir, {cell_plan.PLAN_VARIABLE: str(tmp_path / "p.json")})
        assert run.returncode == 3 and f"cell plan {tmp_path / 'p.json'}: not a cell plan:" in run.stderr


class TestByHand:
    def test_the_command_writes_a_plan_and_prints_how_to_run_the_binary(self, build_dir, tmp_path):
        # Ports of this test's own: the host's 4793 may be another test's (the binary runs in this namespace).
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("", 0))
            port = s.getsockname()[1] if s.getsockname()[1] < 65535 else 40000
        run = subprocess.run([sys.executable, "-m", "harness.run.cell_plan", "--provider", str(MANIFESTS / "softuet.yaml"),
                              "--area", "discovery", "--port", str(port), "--build", str(build_dir),
                              "-o", str(tmp_path)], cwd=REPO,
                             env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        written = json.loads((tmp_path / "discovery.plan.json").read_text())
        assert written["initiator"]["manifest"] == str(tmp_path / "initiator.manifest.json")
        assert json.loads((tmp_path / "initiator.manifest.json").read_text())["wire"]["udp_port"] == port
        assert f"UET_CASES_PLAN={tmp_path / 'discovery.plan.json'}" in run.stdout
        assert "FI_PROVIDER=softuet" in run.stdout and run.stdout.rstrip().endswith("uet-cases-discovery")
        # The command it prints runs the binary's cases.
        line = run.stdout.strip()
        ran = subprocess.run(["bash", "-c", line + " --gtest_filter='*GetnameReturnsTheCompleteUetAddress*'"],
                             capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
        assert "[  PASSED  ]" in ran.stdout

    def test_an_unknown_area_is_bad_usage(self, build_dir, tmp_path):
        run = subprocess.run([sys.executable, "-m", "harness.run.cell_plan", "--provider", str(MANIFESTS / "softuet.yaml"),
                              "--area", "nope", "--build", str(build_dir), "-o", str(tmp_path)], cwd=REPO,
                             env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=60)
        assert run.returncode == 2 and "no binary" in run.stderr and "uet-cases-nope" in run.stderr
