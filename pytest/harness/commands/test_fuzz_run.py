"""harness/selftest/fuzz.py: `run` (the fuzzers' part of ./uet test: every input in the repository replayed once, then
a short run of each fuzzer) and `campaign` (./uet fuzz: real fuzzing, what it finds kept under out/fuzz).
Mostly with stand-ins for the libFuzzer binaries, shell scripts that print what libFuzzer prints and exit as it
does, so that a crash, a leak, a timeout or a fuzzer that will not stop can be planted; one campaign runs the
real decoder fuzzer of build-fuzz for 3 s."""
import json
import os
import pathlib
import re
import select
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
from harness.selftest.fuzz_libfuzzer import Process  # noqa: E402

BINARIES = {"decode": "uet-decode-fuzzer", "softuet-frames": "softuet-frame-fuzzer",
            "reassembly": "uet-reassembly-fuzzer", "entity": "uet-entity-fuzzer", "agent": "uet-agent-fuzzer"}
CORPORA = {"decode": ["codec/fuzz/corpus"], "softuet-frames": ["fep/fuzz/corpus", "fep/fuzz/regressions"],
           "reassembly": ["codec/fuzz/corpus-reassembly"], "entity": ["entity/fuzz/corpus"],
           "agent": ["containers/agent/fuzz/corpus", "containers/agent/fuzz/regressions"]}

# Given files, libFuzzer runs each once and names it; given folders, it fuzzes. FAIL_ON (a file name) and
# FAIL_AS plant a failure in the replay, CRASH=1 one in fuzzing; HOLD=1 makes a fuzzer that ignores
# -max_total_time until SIGINT, as a hung one would, and then writes its pids to the FIFO READY.
STAND_IN = r"""#!/bin/sh
prefix=./ files=0
for a in "$@"; do
  case "$a" in -artifact_prefix=*) prefix=${a#-artifact_prefix=};; -*) ;; *) [ -f "$a" ] && files=$((files+1));; esac
done
echo "$@" > "${prefix}argv"
if [ "$files" -gt 0 ]; then
  echo "$0: Running $files inputs 1 time(s) each."
  for a in "$@"; do
    case "$a" in -*) continue;; esac
    echo "Running: $a"
    if [ "${a##*/}" = "$FAIL_ON" ]; then
      case "$FAIL_AS" in
        crash) echo "==9==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011"
               echo "SUMMARY: AddressSanitizer: heap-buffer-overflow decode.cpp:12 in decode"; exit 1;;
        leak) echo "==9==ERROR: LeakSanitizer: detected memory leaks"
              echo "SUMMARY: AddressSanitizer: 77 byte(s) leaked in 1 allocation(s)."
              echo "INFO: a leak has been found in the initial corpus."; exit 1;;
        timeout) echo "ALARM: working on the last Unit for 11 seconds"
                 echo "==9== ERROR: libFuzzer: timeout after 11 seconds"; echo "SUMMARY: libFuzzer: timeout"; exit 70;;
      esac
    fi
    echo "Executed $a in 3 ms"
  done
  exit 0
fi
if [ -n "$CRASH" ]; then
  printf 'x' > "${prefix}crash-0123abcd"
  echo "==9==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011"
  echo "SUMMARY: AddressSanitizer: heap-buffer-overflow decode.cpp:12 in decode"
  echo "artifact_prefix='$prefix'; Test unit written to ${prefix}crash-0123abcd"
  exit 1
fi
echo "#2	INITED cov: 10 ft: 12 corp: 3/30b exec/s: 0 rss: 30Mb"
echo "#1024	pulse  cov: 5 ft: 6 corp: 3/30b lim: 4 exec/s: 512 rss: 30Mb"
if [ -n "$HOLD" ]; then
  trap 'echo "==9== libFuzzer: run interrupted; exiting"; echo "stat::number_of_executed_units: 77"; exit 72' INT
  sleep 1000 & child=$!
  [ -n "$READY" ] && echo "$$ $child" > "$READY"
  wait $child; wait $child
fi
echo "#4000	DONE   cov: 321 ft: 654 corp: 9/90b lim: 4 exec/s: 4000 rss: 40Mb"
echo "stat::number_of_executed_units: 4000"
echo "stat::average_exec_per_sec:     4000"
echo "stat::new_units_added:          6"
echo "stat::peak_rss_mb:              40"
"""


def stand_ins(build: pathlib.Path, **planted) -> pathlib.Path:
    """Every fuzzer's binary as a stand-in; planted[name] = {"FAIL_ON": ..., "FAIL_AS": ..., "HOLD": ...}."""
    (build / "bin").mkdir(parents=True, exist_ok=True)
    for name, binary in BINARIES.items():
        setting = "".join(f"{k}='{v}'\n" for k, v in planted.get(name.replace("-", "_"), {}).items())
        path = build / "bin" / binary
        path.write_text(STAND_IN.replace("#!/bin/sh\n", "#!/bin/sh\n" + setting, 1))
        path.chmod(0o755)
    return build


def harness(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "harness.selftest.fuzz", *map(str, args)], cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True,
                          timeout=timeout)


def repository_inputs(name: str) -> list[str]:
    return sorted(str(pathlib.Path(d, f)) for c in CORPORA[name] for d, _, files in os.walk(REPO / c) for f in files)


def ready_pids(reader: int) -> list[int]:
    """The process ids a stand-in wrote to its FIFO once it was ready for the signal."""
    assert select.select([reader], [], [], 30)[0], "the stand-in never started"
    return [int(p) for p in os.read(reader, 100).split()]


def alive(pid: int) -> bool:
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class TestReplay:
    def run(self, tmp_path, **planted):
        build = stand_ins(tmp_path / "build-fuzz", **planted)
        out, junit = tmp_path / "out", tmp_path / "junit" / "fuzz.xml"
        res = harness("run", "--build", build, "--seconds", 1, "--seed", 4242, "--out", out, "--junit", junit)
        cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
        return res, out, cases

    def test_every_input_in_the_repository_runs_once(self, tmp_path):
        res, out, cases = self.run(tmp_path)
        assert res.returncode == 0, res.stdout + res.stderr
        for name in BINARIES:
            inputs = repository_inputs(name)
            assert inputs
            assert re.search(rf"^fuzz: replay {name}: {len(inputs)} inputs in \d+\.\d s \(slowest 3 ms: ",
                             res.stdout, re.M), res.stdout
            assert (out / name / "replay-argv").read_text().split()[4:] == inputs  # after the 4 libFuzzer flags
            assert cases[f"replay {name}"].find("failure") is None
        assert list(cases) == [f"replay {n}" for n in BINARIES] + list(BINARIES)

    @pytest.mark.parametrize("kind, problem", [
        ("crash", "AddressSanitizer: heap-buffer-overflow decode.cpp:12 in decode"),
        ("leak", "AddressSanitizer: 77 byte(s) leaked in 1 allocation(s)."),
        ("timeout", "libFuzzer: timeout")])
    def test_a_failing_input_fails_its_replay_and_is_named(self, tmp_path, kind, problem):
        inputs = repository_inputs("decode")
        planted = inputs[5]
        res, out, cases = self.run(tmp_path, decode={"FAIL_ON": pathlib.Path(planted).name, "FAIL_AS": kind})
        assert res.returncode == 1
        replay = f"{tmp_path / 'build-fuzz' / 'bin' / 'uet-decode-fuzzer'} {planted}"
        expected = f"5 of {len(inputs)} inputs passed; input {planted}: {problem}; replay: {replay}"
        assert f"fuzz: FAILED replay decode: {expected}; log {out / 'decode' / 'replay.txt'}" in res.stdout
        failure = cases["replay decode"].find("failure")
        assert failure.get("message") == f"uet-decode-fuzzer: {expected}"
        assert f"Running: {planted}" in failure.text
        assert [n for n, c in cases.items() if c.find("failure") is not None] == ["replay decode"]
        assert ET.parse(tmp_path / "junit" / "fuzz.xml").getroot().get("failures") == "1"


class TestShortRun:
    def test_a_crash_fails_the_run_and_names_its_reproducer(self, tmp_path):
        build = stand_ins(tmp_path / "build-fuzz", decode={"CRASH": "1"})
        out, junit = tmp_path / "out", tmp_path / "junit" / "fuzz.xml"
        res = harness("run", "--build", build, "--seconds", 1, "--seed", 4242, "--out", out, "--junit", junit)
        assert res.returncode == 1, res.stdout + res.stderr
        assert "seed 4242" in res.stdout
        reproducer = out / "decode" / "crash-0123abcd"
        assert reproducer.exists()
        cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
        failure = cases["decode"].find("failure")
        assert failure.get("message") == (
            "uet-decode-fuzzer failed (exit 1: AddressSanitizer: heap-buffer-overflow decode.cpp:12 in decode); "
            f"reproducer {reproducer}; replay: {build / 'bin' / 'uet-decode-fuzzer'} {reproducer}")
        assert "heap-buffer-overflow" in failure.text
        assert cases["replay decode"].find("failure") is None
        assert cases["softuet-frames"].find("failure") is None
        assert re.fullmatch(r"softuet-frames: 4000 execs in \d+ s \(4000/s\), cov 321, ft 654, new units 6, "
                            r"peak RSS 40 MB", cases["softuet-frames"].find("system-out").text)
        argv = (out / "softuet-frames" / "argv").read_text().split()
        assert "-seed=4242" in argv and "-max_total_time=1" in argv
        # It writes what it finds to out/, the first folder libFuzzer is given, and starts from the repository's.
        assert argv[-3:] == [str(out / "softuet-frames" / "corpus"), str(REPO / "fep" / "fuzz" / "corpus"),
                             str(REPO / "fep" / "fuzz" / "regressions")]

    def test_the_last_run_is_cleared_but_campaigns_are_kept(self, tmp_path):
        build = stand_ins(tmp_path / "build-fuzz")
        out = tmp_path / "out"
        (out / "decode" / "campaign-20260101T000000Z" / "corpus").mkdir(parents=True)
        (out / "decode" / "campaign-20260101T000000Z" / "corpus" / "found").write_text("x")
        (out / "decode" / "crash-old").write_text("x")
        res = harness("run", "--build", build, "--seconds", 1, "--out", out, "--junit", tmp_path / "fuzz.xml")
        assert res.returncode == 0, res.stdout + res.stderr
        assert sorted(p.name for p in (out / "decode").iterdir()) == [
            "argv", "campaign-20260101T000000Z", "corpus", "log.txt", "replay-argv", "replay.txt"]
        assert (out / "decode" / "campaign-20260101T000000Z" / "corpus" / "found").exists()

    def test_the_seed_comes_from_UET_FUZZ_SEED(self, tmp_path):
        build = stand_ins(tmp_path / "build-fuzz")
        res = subprocess.run([sys.executable, "-m", "harness.selftest.fuzz", "run", "--build", str(build), "--seconds", "1",
                              "--out", str(tmp_path / "out"), "--junit", str(tmp_path / "fuzz.xml")], cwd=REPO,
                             env=dict(os.environ, PYTHONPATH=str(REPO), UET_FUZZ_SEED="77"), capture_output=True,
                             text=True, timeout=60)
        assert res.stdout.startswith("fuzz: seed 77 (repeat with UET_FUZZ_SEED=77)")
        assert "-seed=77" in (tmp_path / "out" / "agent" / "argv").read_text().split()

    def test_a_fuzzer_not_built_is_named(self, tmp_path):
        build = tmp_path / "build-fuzz"
        (build / "bin").mkdir(parents=True)
        (build / "bin" / "uet-decode-fuzzer").write_text("#!/bin/sh\n")
        res = harness("run", "--build", build, "--seconds", 1, "--out", tmp_path / "out", "--junit",
                      tmp_path / "fuzz.xml")
        assert res.returncode == 3
        assert f"fuzz: not built: {build / 'bin' / 'softuet-frame-fuzzer'}, {build / 'bin' / 'uet-reassembly-fuzzer'}, " \
            f"{build / 'bin' / 'uet-entity-fuzzer'}, {build / 'bin' / 'uet-agent-fuzzer'} " in res.stderr


class TestCampaignUsage:
    NAMES = "decode, softuet-frames, reassembly, entity, agent"

    def test_check_usage_needs_no_build_and_answers_fast(self, tmp_path):
        res = harness("campaign", "--check-usage", "--build", tmp_path / "none", "--minutes", "0.5", "--only",
                      "decode", "--only", "agent", "--jobs", os.cpu_count(), "--seed", 3)
        assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
        assert not (tmp_path / "none").exists()  # nothing built, nothing made

    def test_an_unknown_fuzzer_is_refused_with_the_names(self, tmp_path):
        for extra in ([], ["--check-usage"]):
            res = harness("campaign", "--build", tmp_path, "--only", "decoder", *extra)
            assert res.returncode == 2
            assert res.stderr.splitlines()[-1] == (f"python3 -m harness.selftest.fuzz campaign: error: argument --only: "
                                                   f"unknown fuzzer 'decoder' (the fuzzers: {self.NAMES})")

    @pytest.mark.parametrize("args, message", [
        (["--minutes", "0"], "argument --minutes: '0' is no positive number"),
        (["--minutes", "nan"], "argument --minutes: 'nan' is no positive number"),
        (["--jobs", "0"], f"argument --jobs: '0': from 1 to {os.cpu_count()} (the cores of this machine)"),
        (["--jobs", str(os.cpu_count() + 1)],
         f"argument --jobs: '{os.cpu_count() + 1}': from 1 to {os.cpu_count()} (the cores of this machine)"),
        (["--seed", "0"], "argument --seed: '0' is no seed (1 to 4294967295)")])
    def test_bad_values_exit_2(self, args, message):
        res = harness("campaign", "--check-usage", *args)
        assert res.returncode == 2
        assert res.stderr.splitlines()[-1] == f"python3 -m harness.selftest.fuzz campaign: error: {message}"


class TestCampaign:
    def test_a_crash_is_reported_with_its_reproducer(self, tmp_path):
        build = stand_ins(tmp_path / "build-fuzz", agent={"CRASH": "1"})
        out = tmp_path / "out"
        res = harness("campaign", "--build", build, "--minutes", "0.01", "--only", "agent", "--only", "decode",
                      "--jobs", 1, "--seed", 5, "--out", out)
        assert res.returncode == 1, res.stdout + res.stderr
        report = json.loads((out / "campaign.json").read_text())
        assert [(f["name"], f["state"]) for f in report["fuzzers"]] == [("decode", "finished"), ("agent", "crashed")]
        folder = pathlib.Path(report["fuzzers"][0]["corpus_dir"]).parent.name
        assert re.fullmatch(r"campaign-\d{8}T\d{6}Z", folder)
        reproducer = out / "agent" / folder / "crash-0123abcd"
        replay = f"{build / 'bin' / 'uet-agent-fuzzer'} {reproducer}"
        assert report["fuzzers"][1]["crashes"] == [
            {"problem": "AddressSanitizer: heap-buffer-overflow decode.cpp:12 in decode",
             "reproducer": str(reproducer), "replay": replay}]
        assert report["crashes"] == 1
        lines = res.stdout.splitlines()
        assert re.fullmatch(r"decode\s+\d\.\d\d\s+4000\s+4000\s+321\s+654\s+0\s+0", lines[-4]), lines
        assert re.fullmatch(r"agent\s+\d\.\d\d\s+0\s+0\s+0\s+0\s+0\s+1", lines[-3]), lines
        assert lines[-2] == ("agent: AddressSanitizer: heap-buffer-overflow decode.cpp:12 in decode; reproducer "
                             f"{reproducer}; replay: {replay}")
        argv = (out / "decode" / folder / "argv").read_text().split()
        assert argv[:4] == ["-seed=5", "-max_total_time=1", "-print_final_stats=1", "-max_len=512"]
        assert argv[-2:] == [str(out / "decode" / folder / "corpus"), str(REPO / "codec" / "fuzz" / "corpus")]

    def test_progress_lines_show_what_libfuzzer_last_reported(self, tmp_path):
        build = stand_ins(tmp_path / "build-fuzz", decode={"HOLD": "1"})
        out = tmp_path / "out"
        proc = subprocess.Popen([sys.executable, "-m", "harness.selftest.fuzz", "campaign", "--build", str(build), "--only",
                                 "decode", "--minutes", "0.01", "--progress", "0.1", "--out", str(out)], cwd=REPO,
                                env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, text=True)
        try:
            for line in proc.stdout:
                if re.fullmatch(r"fuzz: decode 0:\d\d: execs 1024\+ \(512/s\), cov 5, ft 6, corpus 3 \(0 new kept\)\n",
                                line):
                    break
            else:
                pytest.fail("no progress line")
            proc.send_signal(signal.SIGINT)
            assert proc.wait(30) == 0
        finally:
            proc.kill()
            proc.wait()

    def test_sigterm_stops_the_fuzzers_and_their_children_and_still_reports(self, tmp_path):
        ready = tmp_path / "ready"
        os.mkfifo(ready)
        build = stand_ins(tmp_path / "build-fuzz", entity={"HOLD": "1", "READY": ready})
        out = tmp_path / "out"
        reader = os.open(ready, os.O_RDONLY | os.O_NONBLOCK)  # so that waiting for the stand-in has a limit
        proc = subprocess.Popen([sys.executable, "-m", "harness.selftest.fuzz", "campaign", "--build", str(build), "--only",
                                 "entity", "--only", "agent", "--minutes", "0.01", "--out", str(out)], cwd=REPO,
                                env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, text=True)
        try:
            pids = ready_pids(reader)
            proc.send_signal(signal.SIGTERM)
            stdout, _ = proc.communicate(timeout=30)
        finally:
            os.close(reader)
            proc.kill()
            proc.wait()
        assert proc.returncode == 0
        assert "fuzz: stopped by SIGTERM; what the fuzzers reached:" in stdout
        report = json.loads((out / "campaign.json").read_text())
        assert report["interrupted"] is True
        assert [(f["name"], f["state"], f.get("executions")) for f in report["fuzzers"]] == [
            ("entity", "interrupted", 77), ("agent", "not started", None)]
        # The stand-in's `sleep &` ignores SIGINT (a background job of sh): only the kill of the group ends it.
        assert [alive(p) for p in pids] == [False, False]

    @pytest.mark.skipif(not (REPO / "build-fuzz" / "bin" / "uet-decode-fuzzer").exists(),
                        reason="the fuzz tree is not built (./uet build --all)")
    def test_the_decoder_fuzzer_keeps_what_it_finds_outside_the_repository(self, tmp_path):
        before = sorted(p.name for p in (REPO / "codec" / "fuzz" / "corpus").iterdir())
        out = tmp_path / "out"
        res = harness("campaign", "--build", REPO / "build-fuzz", "--minutes", "0.05", "--only", "decode", "--seed",
                      99, "--out", out)
        assert res.returncode == 0, res.stdout + res.stderr
        report = json.loads((out / "campaign.json").read_text())
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
        assert (report["seed"], report["commit"], report["minutes"], report["jobs"], report["interrupted"]) == (
            99, head.stdout.strip(), 0.05, 1, False)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", report["started"])
        [decode] = report["fuzzers"]
        assert (decode["name"], decode["state"], decode["crashes"], decode["returncode"]) == (
            "decode", "finished", [], 0)
        assert decode["executions"] > 0 and decode["exec_per_sec"] > 0 and decode["cov"] > 0 and decode["ft"] > 0
        corpus = pathlib.Path(decode["corpus_dir"])
        assert corpus.parent.parent == out / "decode"
        assert decode["new_inputs"] == len(list(corpus.iterdir()))
        assert sorted(p.name for p in (REPO / "codec" / "fuzz" / "corpus").iterdir()) == before


class TestProcess:
    def test_a_fuzzer_that_ignores_sigint_is_killed_with_its_group(self, tmp_path, wait_gone):
        ready = tmp_path / "ready"
        os.mkfifo(ready)
        (tmp_path / "stubborn").write_text(f"#!/bin/sh\ntrap '' INT\nsleep 1000 & echo \"$$ $!\" > '{ready}'\nwait\n")
        (tmp_path / "stubborn").chmod(0o755)
        reader = os.open(ready, os.O_RDONLY | os.O_NONBLOCK)
        p = Process([str(tmp_path / "stubborn")], tmp_path / "log.txt")
        try:
            pids = ready_pids(reader)
        finally:
            os.close(reader)
            p.stop("deadline", grace=0.5)
        assert (p.popen.returncode, p.stopped) == (-signal.SIGKILL, "deadline")
        # SIGKILL is sent, not yet delivered, when stop() returns: the group's child ends within a bounded wait
        assert [wait_gone(pid, 10) for pid in pids] == [True, True]
