"""The mutation test (issue: "for every fault knob of the reference FEP, at least one case must fail with
the knob on and pass with it off"): harness.mutation tries each knob of fep/src/faults.def first on the
checks that name its statement, and every knob must be caught, by a named check, among those (the run's
time is measured by ./uet selftest itself, not asserted here)."""
import json
import os
import subprocess
import sys

import pytest

from harness.mutation import knobs

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="cases run in namespace pairs and capture: root")


def test_every_fault_knob_is_caught_by_a_named_check(build_dir, tmp_path):
    run = subprocess.run([sys.executable, "-m", "harness.mutation", "--build", str(build_dir), "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=1800)
    print(run.stdout)
    assert (tmp_path / "mutation.json").exists(), run.stderr[-3000:]
    report = json.loads((tmp_path / "mutation.json").read_text())
    assert report["knobs"] == len(knobs()), "every knob of faults.def ran"
    uncaught = [r["knob"] for r in report["results"] if not r["caught_by"]]
    assert uncaught == [], run.stdout[-3000:]
    for r in report["results"]:
        assert all(": " in c for c in r["caught_by"]), r  # "cell: case" or "wire: test"
        assert r["cases_run"] + r["wire_checks_run"] > 0, r
    assert run.returncode == 0, run.stderr[-2000:]
    # Targeted: every knob is caught by the checks of its own statement (its cases, or its wire checks),
    # never only by the broad fallbacks; a knob that needs them names a statement no check covers.
    broad = [(r["knob"], r["stage"]) for r in report["results"] if r["stage"] not in ("targeted", "targeted wire")]
    assert broad == [], broad
