"""harness/fuzz.py run, the fuzzers' part of ./uet test, with stand-ins for the libFuzzer binaries: one
that finds a crash (the run fails, the JUnit failure names the reproducer libFuzzer wrote and how to
replay it) and one that ends clean (its execs, speed and coverage reach the JUnit test case); the seed
reaches both."""
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

REPO = pathlib.Path(__file__).resolve().parents[2]

# What libFuzzer prints when an input crashes: the reproducer goes to -artifact_prefix.
CRASHING = """#!/bin/sh
for a in "$@"; do case "$a" in -artifact_prefix=*) prefix=${a#-artifact_prefix=};; esac; done
echo "$@" > "${prefix}argv"
printf 'x' > "${prefix}crash-0123abcd"
echo "==1==ERROR: AddressSanitizer: heap-buffer-overflow"
echo "artifact_prefix='$prefix'; Test unit written to ${prefix}crash-0123abcd"
exit 1
"""
CLEAN = """#!/bin/sh
for a in "$@"; do case "$a" in -artifact_prefix=*) prefix=${a#-artifact_prefix=};; esac; done
echo "$@" > "${prefix}argv"
echo "#2	INITED cov: 10 ft: 12 corp: 3/30b exec/s: 0 rss: 30Mb"
echo "#4000	DONE   cov: 321 ft: 654 corp: 9/90b lim: 4 exec/s: 4000 rss: 40Mb"
echo "stat::number_of_executed_units: 4000"
echo "stat::average_exec_per_sec:     4000"
echo "stat::new_units_added:          6"
echo "stat::peak_rss_mb:              40"
"""


def stand_in(bin_dir, name, script):
    path = bin_dir / name
    path.write_text(script)
    path.chmod(0o755)


def test_a_crash_fails_the_run_and_names_its_reproducer(tmp_path):
    build = tmp_path / "build-fuzz"
    (build / "bin").mkdir(parents=True)
    stand_in(build / "bin", "uet-decode-fuzzer", CRASHING)
    stand_in(build / "bin", "softuet-frame-fuzzer", CLEAN)
    stand_in(build / "bin", "uet-reassembly-fuzzer", CLEAN)
    stand_in(build / "bin", "uet-entity-fuzzer", CLEAN)
    stand_in(build / "bin", "uet-agent-fuzzer", CLEAN)
    out, junit = tmp_path / "out", tmp_path / "junit" / "fuzz.xml"
    res = subprocess.run([sys.executable, "-m", "harness.fuzz", "run", "--build", str(build), "--seconds", "1",
                          "--seed", "4242", "--out", str(out), "--junit", str(junit)],
                         cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "seed 4242" in res.stdout
    reproducer = out / "decode" / "crash-0123abcd"
    assert reproducer.exists()
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"decode", "softuet-frames", "reassembly", "entity", "agent"}
    failure = cases["decode"].find("failure")
    assert failure is not None
    assert str(reproducer) in failure.get("message")
    assert f"{build / 'bin' / 'uet-decode-fuzzer'} {reproducer}" in failure.get("message")
    assert "heap-buffer-overflow" in failure.text
    assert cases["softuet-frames"].find("failure") is None
    assert cases["softuet-frames"].find("system-out").text.startswith(
        "softuet-frames: 4000 execs in ") and "(4000/s), cov 321, ft 654, new units 6" in res.stdout
    argv = (out / "softuet-frames" / "argv").read_text().split()
    assert "-seed=4242" in argv and "-max_total_time=1" in argv
    assert str(REPO / "fep" / "fuzz" / "corpus") in argv  # starts from the corpus in the repository...
    assert argv.index(str(out / "softuet-frames" / "corpus")) < argv.index(str(REPO / "fep" / "fuzz" / "corpus"))
    # ...and writes what it finds to out/, the first directory libFuzzer is given


def test_a_fuzzer_not_built_is_named(tmp_path):
    build = tmp_path / "build-fuzz"
    (build / "bin").mkdir(parents=True)
    stand_in(build / "bin", "uet-decode-fuzzer", CLEAN)
    res = subprocess.run([sys.executable, "-m", "harness.fuzz", "run", "--build", str(build), "--seconds", "1",
                          "--out", str(tmp_path / "out"), "--junit", str(tmp_path / "fuzz.xml")],
                         cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 3
    assert f"fuzz: not built: {build / 'bin' / 'softuet-frame-fuzzer'}, {build / 'bin' / 'uet-reassembly-fuzzer'}, " \
        f"{build / 'bin' / 'uet-entity-fuzzer'}, {build / 'bin' / 'uet-agent-fuzzer'} " in res.stderr
