"""The fault-knob list (fep/src/faults.def): documented, traced to the catalogue, and used by the code."""
import pathlib
import subprocess
import sys

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "fep" / "tools"))
import faults_md  # noqa: E402

KNOBS = faults_md.knobs((REPO / "fep" / "src" / "faults.def").read_text())


class TestFaultList:
    def test_at_least_twenty_knobs_with_distinct_names(self):
        names = [n for n, _, _ in KNOBS]
        assert len(names) >= 20 and len(set(names)) == len(names)

    def test_faults_md_is_generated_from_the_list(self):
        run = subprocess.run([sys.executable, str(REPO / "fep" / "tools" / "faults_md.py"), "--check"],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr

    def test_every_knob_names_a_catalogue_statement(self):
        catalogue = yaml.safe_load((REPO / "spec" / "catalogue.yaml").read_text())
        statements = catalogue["statements"] if isinstance(catalogue, dict) else catalogue
        ids = {s["id"] for s in statements}
        assert [(n, s) for n, s, _ in KNOBS if s not in ids] == []

    def test_every_knob_is_used_by_the_provider(self):
        sources = "".join(p.read_text() for p in (REPO / "fep" / "src").glob("*.cpp"))
        assert [n for n, _, _ in KNOBS if f"Fault::{n}" not in sources] == []
