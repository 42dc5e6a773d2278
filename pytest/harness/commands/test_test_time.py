"""./uet bench test-time: the split of a ./uet test from its phase record and its JUnit files, and the
record ./uet writes (one JSON line per phase, wall and CPU seconds)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench"))
import test_time  # noqa: E402

PHASES = [
    {"phase": "setup", "wall_s": 1.0, "cpu_s": 0.5, "rc": 0},
    {"phase": "build build", "wall_s": 9.0, "cpu_s": 8.0, "rc": 0},
    {"phase": "ctest", "wall_s": 100.0, "cpu_s": 180.0, "rc": 0},
    {"phase": "pytest (4 workers)", "wall_s": 400.0, "cpu_s": 300.0, "rc": 1},
    {"phase": "total", "wall_s": 600.0, "cpu_s": 0.0, "rc": 1},
]
JUNIT = """<?xml version="1.0"?><testsuites><testsuite name="pytest">
<testcase classname="pytest.cases.test_mutation.TestMutationScore" name="test_a" time="300.0"/>
<testcase classname="pytest.fep.test_rendezvous.TestDeferrable" name="test_b" time="40.5"/>
<testcase classname="pytest.fep.test_rudi" name="test_c" time="9.5"/>
</testsuite></testsuites>"""


@pytest.fixture
def recorded(tmp_path):
    record = tmp_path / "last.jsonl"
    record.write_text("".join(json.dumps(p) + "\n" for p in PHASES))
    junit = tmp_path / "junit"
    junit.mkdir()
    (junit / "pytest.xml").write_text(JUNIT)
    (junit / "ctest-asan.xml").write_text('<testsuite><testcase classname="x" name="codec_unit" time="24"/></testsuite>')
    return record, junit


class TestSplit:
    def test_phases_show_wall_cpu_and_their_ratio(self, recorded, capsys):
        test_time.report(*recorded)
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].split() == ["phase", "wall", "CPU", "CPU/wall", "exit"]
        assert lines[3].split() == ["ctest", "1", "min", "40.0", "s", "180s", "1.80", "0"]
        assert lines[4].split() == ["pytest", "(4", "workers)", "6", "min", "40.0", "s", "300s", "0.75", "1"]

    def test_the_total_is_set_against_the_target_without_set_up_and_builds(self, recorded, capsys):
        test_time.report(*recorded)
        out = capsys.readouterr().out
        assert "total 10 min  0.0 s; without set-up and builds 9 min 50.0 s = 0.66 x the target of 15 min" in out

    def test_pytest_by_folder_and_the_slowest_tests(self, recorded, capsys):
        test_time.report(*recorded)
        out = capsys.readouterr().out
        assert "pytest by folder (test seconds; 350 s of tests in 400 s of wall: 0.9 at a time)" in out
        folders = out.split("pytest by folder")[1].split("the 20 slowest")[0].splitlines()[1:]
        assert [f.split()[0] for f in folders if f.strip()] == ["pytest/cases", "pytest/fep"]
        assert "     50.0 s     2 tests" in out  # pytest/fep: 40.5 + 9.5
        slowest = out.split("the 20 slowest tests\n")[1].splitlines()
        assert slowest[0].split() == ["300.0", "s", "pytest.cases.test_mutation.TestMutationScore::test_a"]
        assert len(slowest) == 3  # ctest's cases are not pytest's

    def test_no_record_is_exit_3_with_the_reason(self, tmp_path):
        env = dict(os.environ)
        run = subprocess.run([sys.executable, str(REPO / "bench" / "test_time.py"), "--last"], capture_output=True,
                             text=True, env=env, cwd=tmp_path, timeout=30)
        if test_time.RECORD.exists():
            assert run.returncode == 0 and "phase" in run.stdout
        else:
            assert run.returncode == 3 and "no record of a ./uet test" in run.stderr


class TestRecord:
    def test_uet_records_a_phase_with_the_cpu_its_children_used(self, tmp_path):
        # The phase functions of ./uet, run on a child that burns CPU: its CPU reaches the record.
        functions = (REPO / "uet").read_text().split("PHASE_NAME=''", 1)[1].split("\nsetup() {", 1)[0]
        script = ("PHASE_NAME=''" + functions + "\nphase_begin burn\n"
                  "/usr/bin/python3 -c 'import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass'\n"
                  "phase_end 7\n")
        record = tmp_path / "times.jsonl"
        subprocess.run(["bash", "-c", script], check=True, timeout=60, env=dict(os.environ, UET_TEST_TIMES=str(record)))
        (line,) = record.read_text().splitlines()
        p = json.loads(line)
        assert (p["phase"], p["rc"]) == ("burn", 7)
        assert p["cpu_s"] >= 0.5 and p["wall_s"] >= p["cpu_s"] - 0.05
