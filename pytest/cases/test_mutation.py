"""The mutation test (issue: "for every fault knob of the reference FEP, at least one case must fail with
the knob on and pass with it off"): harness.mutation runs the suite once per knob of fep/src/faults.def,
and every knob must be caught, by a named case."""
import json
import os
import subprocess
import sys

import pytest

from harness.mutation import knobs

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="cases run in namespace pairs and capture: root")


def test_every_fault_knob_is_caught_by_a_named_case(build_dir, tmp_path):
    env = dict(os.environ, UET_CASES_PORT="48400")
    run = subprocess.run([sys.executable, "-m", "harness.mutation", "--build", str(build_dir), "--out", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=3000)
    print(run.stdout)
    report = json.loads((tmp_path / "mutation.json").read_text())
    assert report["knobs"] == len(knobs()), "every knob of faults.def ran"
    uncaught = [r["knob"] for r in report["results"] if not r["caught_by"]]
    assert uncaught == [], run.stdout[-3000:]
    for r in report["results"]:
        assert all(":" in c for c in r["caught_by"]), r  # "manifest: case" or "wire: test"
    assert run.returncode == 0, run.stderr[-2000:]
