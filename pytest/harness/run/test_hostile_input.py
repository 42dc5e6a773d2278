"""Issue 24, finding 7 (input): input that broke the run is answered with exit 2 and the file, key and problem,
before anything is built: a --seed googletest cannot take, a deadline that is not one (nan, inf, 0), and
manifests that are not UTF-8, not files, too large, too deeply extended, YAML alias bombs or hold bad
placeholders. ./uet hands its process to Python (exec), so SIGTERM reaches the harness, which then ends as
Ctrl-C does: a partial report whose exit status counts what did not run."""
import json
import os
import pathlib
import select
import shutil
import signal
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.inputs import manifest as manifest_mod  # noqa: E402

VALID = "provider: udp\nuet: false\nprofiles: []\nendpoint_types: [rdm]\n"


class Answer:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cmd_run_unbuilt(tmp_path, capsys):
    """cmd_run_unbuilt(*args) -> (returncode, stdout, stderr) of the run's main with an empty build, in this
    process: bad usage must be answered before the build is needed (a run that got further exits 3)."""
    from harness.run import run_suite
    build = tmp_path / "no-build"
    build.mkdir()

    def run(*args):
        capsys.readouterr()
        try:
            rc = run_suite.main([*map(str, args), "--build", str(build), "--report", str(tmp_path / "runs")])
        except SystemExit as exc:  # argparse's answer to bad usage
            rc = exc.code
        out, err = capsys.readouterr()
        return Answer(rc, out, err)
    return run


@pytest.fixture
def cmd_check(capsys):
    """cmd_check(*refs) -> (returncode, stdout, stderr) of `python3 -m harness.inputs.manifest check REFS`, in this process."""
    def run(*refs):
        capsys.readouterr()
        rc = manifest_mod.main(["check", *map(str, refs)])
        out, err = capsys.readouterr()
        return Answer(rc, out, err)
    return run


class TestNumbers:
    def test_the_front_door_answers_a_seed_out_of_range_with_exit_2(self, cmd_uet_run, tmp_path):
        run = cmd_uet_run("--seed", 1 << 31, env={"UET_BUILD": str(tmp_path)}, timeout=60)
        assert run.returncode == 2 and "--seed 2147483648 is out of range" in run.stderr

    @pytest.mark.parametrize("seed", ["2147483648", "4294967296", "-1"])
    def test_a_seed_googletest_cannot_take_is_refused(self, cmd_run_unbuilt, seed):
        # Before: 2^31 went to --gtest_random_seed; every binary printed its help and ran nothing (0 checks, exit 0).
        run = cmd_run_unbuilt("--seed", seed)
        assert run.returncode == 2
        assert run.stderr.splitlines()[-1] == (
            f"./uet run: error: --seed {seed} is out of range: a seed is 0 to 2147483647")

    @pytest.mark.parametrize("given,shown", [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"), ("1e999", "inf"),
                                             ("0", "0.0"), ("-5", "-5.0"), ("86401", "86401.0")])
    def test_a_deadline_must_be_finite_and_positive(self, cmd_run_unbuilt, given, shown):
        # Before: nan and inf turned the case deadline off (no comparison with nan is true).
        run = cmd_run_unbuilt(f"--case-deadline={given}")
        assert run.returncode == 2
        assert run.stderr.splitlines()[-1] == (f"./uet run: error: --case-deadline {shown} is not a deadline: give "
                                               "seconds, more than 0 and at most 86400")

    def test_the_largest_seed_and_a_short_deadline_pass_the_check(self):
        from harness.run.run_suite import parse_args
        args = parse_args(["--seed", "2147483647", "--case-deadline", "0.5"])
        assert (args.seed, args.case_deadline) == (2147483647, 0.5)


def bomb(levels: int = 9) -> str:
    """A "billion laughs" under the free-form key `features`: 10^levels values from a few hundred bytes."""
    lines = ["  a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return VALID + "features:\n" + "\n".join(lines) + "\n"


def extends_chain(folder: pathlib.Path, files: int) -> pathlib.Path:
    for i in range(files):
        (folder / f"m{i}.yaml").write_text(f"extends: m{i + 1}.yaml\n" if i < files - 1 else VALID)
    return folder / "m0.yaml"


class TestManifestInput:
    """Each bad manifest: the checker names the problem (exit 1, its convention) and the run exits 2 with the same
    line, before it needs the build. Before: tracebacks with exit 1, or memory exhaustion (/dev/zero, the bomb)."""

    @pytest.fixture
    def bad_manifest(self, tmp_path):
        def make(kind):
            m = tmp_path / "m.yaml"
            if kind == "not UTF-8":
                m.write_bytes(VALID.encode() + b"name: caf\xe9\n")
                return m, f"{m}: (top level): not UTF-8 text: byte 0xe9 at offset {len(VALID) + 9}"
            if kind == "/dev/zero":
                return pathlib.Path("/dev/zero"), "/dev/zero: (top level): not a regular file: a manifest is a YAML file"
            if kind == "a FIFO":
                os.mkfifo(m)
                return m, f"{m}: (top level): not a regular file: a manifest is a YAML file"
            if kind == "a folder":
                m.mkdir()
                return m, f"{m}: (top level): not a regular file: a manifest is a YAML file"
            if kind == "too large":
                m.write_text(VALID + "#" * manifest_mod.MAX_BYTES)
                return m, f"{m}: (top level): larger than {manifest_mod.MAX_BYTES} bytes: not a manifest"
            if kind == "1,500 files of extends":
                first = extends_chain(tmp_path, 1500)
                return first, (f"{tmp_path / 'm15.yaml'}: extends: a chain of more than {manifest_mod.MAX_EXTENDS} "
                               f"files (from {first})")
            if kind == "an alias bomb":
                m.write_text(bomb())
                return m, (f"{m}: features: more than {manifest_mod.MAX_VALUES} values or {manifest_mod.MAX_DEPTH} "
                           "levels of nesting once YAML aliases are expanded (an alias bomb, or an alias inside itself)")
            if kind == "an alias inside itself":
                m.write_text(VALID + "features: &loop {again: *loop}\n")
                return m, (f"{m}: features: more than {manifest_mod.MAX_VALUES} values or {manifest_mod.MAX_DEPTH} "
                           "levels of nesting once YAML aliases are expanded (an alias bomb, or an alias inside itself)")
            if kind == "nested too deeply":
                m.write_text(VALID + "features: {x: " + "[" * 1000 + "]" * 1000 + "}\n")
                return m, f"{m}: (top level): nested too deeply to read"
            raise AssertionError(kind)
        return make

    KINDS = ["not UTF-8", "/dev/zero", "a FIFO", "a folder", "too large", "1,500 files of extends", "an alias bomb",
             "an alias inside itself", "nested too deeply"]

    @pytest.mark.parametrize("kind", KINDS)
    def test_the_checker_names_the_problem(self, bad_manifest, cmd_check, kind):
        ref, problem = bad_manifest(kind)
        run = cmd_check(ref)
        assert (run.returncode, run.stderr, run.stdout) == (1, problem + "\n", "")

    @pytest.mark.parametrize("kind", KINDS)
    def test_the_run_exits_2_with_the_problem(self, bad_manifest, cmd_run_unbuilt, kind):
        ref, problem = bad_manifest(kind)
        run = cmd_run_unbuilt("--provider", ref)
        assert (run.returncode, run.stderr) == (2, f"uet run: bad manifest:\n  {problem}\n")

    def test_a_pair_file_that_is_not_utf8(self, cmd_run_unbuilt, tmp_path):
        pair = tmp_path / "pair.yaml"
        pair.write_bytes(b"provider: caf\xe9.yaml\n")
        run = cmd_run_unbuilt("--pair", pair)
        assert run.returncode == 2
        assert run.stderr.splitlines()[-1] == (f"./uet run: error: the pair file cannot be read: {pair}: (top level): "
                                               "not UTF-8 text: byte 0xe9 at offset 13")

    @pytest.mark.parametrize("value,problem", [
        ("{nope}", "unknown placeholder {nope}"),
        ("{build.__class__}", "unknown placeholder {build.__class__}"),
        ("{0}", "unknown placeholder {0}"),
        ("{port!r}", "unknown placeholder {port!r}"),
        ("{port:>9}", "unknown placeholder {port:>9}"),
        ("{", "bad placeholder (Single '{' encountered in format string; a literal brace is written {{ or }})"),
        ("}", "bad placeholder (Single '}' encountered in format string; a literal brace is written {{ or }})"),
    ])
    def test_a_bad_placeholder_is_named_with_its_key(self, cmd_check, cmd_run_unbuilt, tmp_path, value, problem):
        # Before: load() accepted it; resolve() then raised KeyError or ValueError in the middle of the run.
        m = tmp_path / "m.yaml"
        m.write_text(VALID + f"variants:\n  v1:\n    environment: {{FI_LOG_LEVEL: {json.dumps(value)}}}\n")
        known = ", ".join("{" + p + "}" for p in manifest_mod.placeholder_values(REPO, 0, "", None))
        tail = f" (known: {known}; a literal brace is {{{{ or }}}})" if problem.startswith("unknown") else ""
        line = f"{m}: variants.v1.environment.FI_LOG_LEVEL: {problem}{tail}"  # the value itself is never shown
        check = cmd_check(m)
        assert (check.returncode, check.stderr) == (1, line + "\n")
        run = cmd_run_unbuilt("--provider", f"{m}#v1")
        assert (run.returncode, run.stderr) == (2, f"uet run: bad manifest:\n  {line}\n")

    def test_literal_braces_and_known_placeholders_resolve(self, tmp_path):
        m = tmp_path / "m.yaml"
        m.write_text(VALID + "environment: {A: '{{json}}', B: '{build}/lib:{port}'}\n")
        record = manifest_mod.load(m).resolve(build=tmp_path, port=4793)
        assert record["environment"] == {"A": "{json}", "B": f"{tmp_path}/lib:4793"}

    def test_a_chain_of_the_limit_is_read(self, tmp_path):
        assert manifest_mod.load(extends_chain(tmp_path, manifest_mod.MAX_EXTENDS)).provider == "udp"


# Its --check-usage answers as the real one does: a run's names the target of the suite's tree (./uet builds it).
STUB_HARNESS = """import os, signal, sys
if "--check-usage" in sys.argv:
    if __file__.endswith("run_suite.py"):
        print("uet-run")
    sys.exit(0)
def stop(signum, frame):
    print("harness: SIGTERM", flush=True)
    sys.exit(143)
signal.signal(signal.SIGTERM, stop)
print(os.getpid(), flush=True)
while True:
    signal.pause()
"""


@pytest.fixture
def uet_tree(tmp_path):
    """A copy of ./uet whose set-up does nothing and whose cmake only records that it was asked; returns
    (root, env, file of cmake's calls). Its Python packages are added by the test."""
    root = tmp_path / "tree"
    (root / "setup").mkdir(parents=True)
    shutil.copy(REPO / "uet", root / "uet")
    (root / "setup" / "all.sh").write_text("exit 0\n")
    (root / "setup" / "deps.sh").write_text("exit 0\n")
    (root / "setup" / "env.sh").write_text("export UET_PYTHON=/usr/bin/python3\n")
    tools = tmp_path / "bin"
    tools.mkdir()
    calls = tmp_path / "cmake-calls"
    (tools / "cmake").write_text(f"#!/bin/sh\necho \"$*\" >> {calls}\n")
    (tools / "cmake").chmod(0o755)
    return root, dict(os.environ, PATH=f"{tools}:{os.environ['PATH']}"), calls


class TestUetScript:
    @pytest.mark.parametrize("command,module", [("run", "run/run_suite"), ("selftest", "selftest/mutation")])
    def test_the_python_harness_is_the_uet_process_and_gets_sigterm(self, uet_tree, command, module):
        # Before: Python ran as a child of bash; SIGTERM to ./uet killed bash and left the harness running.
        root, env, _ = uet_tree
        (root / "harness" / module).parent.mkdir(parents=True)
        (root / "harness" / "__init__.py").write_text("")
        (root / "harness" / module).parent.joinpath("__init__.py").write_text("")
        (root / "harness" / f"{module}.py").write_text(STUB_HARNESS)
        (root / "harness" / "commands").symlink_to(REPO / "harness" / "commands")  # the options and the guard
        (root / "containers").symlink_to(REPO / "containers")
        proc = subprocess.Popen(["bash", str(root / "uet"), command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, start_new_session=True)
        try:
            line = proc.stdout.readline()
            while line.startswith("uet: "):  # ./uet's own "building ..." lines
                line = proc.stdout.readline()
            assert int(line) == proc.pid
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=10)
            assert (proc.returncode, out) == (143, "harness: SIGTERM\n")
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)

    @pytest.mark.parametrize("args,message", [
        (["--seed", "2147483648"], "--seed 2147483648 is out of range"),
        (["--case-deadline", "nan"], "--case-deadline nan is not a deadline"),
        (["--provider", "/dev/zero"], "/dev/zero: (top level): not a regular file"),
    ])
    def test_bad_usage_is_answered_before_the_build(self, uet_tree, args, message):
        root, env, calls = uet_tree
        for package in ("harness", "containers", "reports", "cases", "spec", "captures"):
            (root / package).symlink_to(REPO / package)
        run = subprocess.run(["bash", str(root / "uet"), "run", *args], capture_output=True, text=True, env=env,
                             timeout=60)
        assert run.returncode == 2
        assert message in run.stderr
        assert not calls.exists(), "cmake ran: " + calls.read_text()

    @pytest.mark.parametrize("args,message", [
        (["test", "--bogus"], "unknown option for ./uet test: '--bogus' (./uet test [--workers N] | --fresh-machine"),
        (["test", "--workers", "0"], "--workers needs a number from 1 to 99 (got '0')"),
        (["build", "--everything"], "unknown option for ./uet build: '--everything' (./uet build [--all])"),
        (["selftest", "--knob", "no_such_knob"], "no such knob: no_such_knob (fep/src/faults.def lists them)"),
        (["fuzz", "--only", "no_such_fuzzer"], "no_such_fuzzer"),
        (["fuzz", "--minutes", "0"], "--minutes"),
        (["bench", "test-time", "--workers", "0"], "--workers must be from 1 to 99"),
        (["bench", "no-such-bench"], "usage: ./uet bench decode|"),
    ])
    def test_bad_usage_of_every_command_is_answered_before_the_set_up(self, uet_tree, args, message):
        # Before: ./uet test ignored its arguments and ran the whole loop; selftest and fuzz set up and built
        # first. The set-up of this copy writes a marker, so "before the set-up" is what is checked.
        root, env, calls = uet_tree
        (root / "setup" / "all.sh").write_text(f"echo setup >> {calls}\nexit 0\n")
        for package in ("harness", "fep", "bench"):
            (root / package).symlink_to(REPO / package)
        run = subprocess.run(["bash", str(root / "uet"), *args], capture_output=True, text=True, env=env, timeout=60)
        assert run.returncode == 2, run.stdout + run.stderr
        assert message in run.stderr
        assert not calls.exists(), "set-up or cmake ran: " + calls.read_text()


class TestPartialReport:
    def test_not_run_counts_each_area_without_a_verdict(self):
        from harness.results.results import Result
        from harness.run.run_cases import Cell
        from harness.run.execute import not_run
        m = manifest_mod.load(REPO / "cases" / "manifests" / "udp.yaml")
        cells = [Cell(m, m, ["msg", "tagged"])]
        ran = [Result(cells[0].id, "msg", "uet-cases-msg", "Msg.A", "pass")]
        missing = not_run(cells, ran, "not run: the run was interrupted before this area's cases had a verdict")
        assert [(r.cell, r.area, r.case, r.verdict, r.reason) for r in missing] == [
            ("udp", "tagged", "uet-cases-tagged (whole binary)", "error",
             "not run: the run was interrupted before this area's cases had a verdict")]

    def test_sigterm_to_the_harness_ends_it_as_ctrl_c_does(self, cmd_uet_run, results_of, tmp_path, traits_line):
        # Before: SIGTERM stopped the run silently and the partial report said exit_status 0 with areas not run.
        # A build of two fake areas: the first says it started (through a FIFO the test reads) and waits.
        build = tmp_path / "build"
        (build / "cases").mkdir(parents=True)
        for area, body in (("aaa", 'echo started > "$UET_TEST_STARTED"\nexec sleep 600\n'), ("zzz", "exit 0\n")):
            binary = build / "cases" / f"uet-cases-{area}"
            binary.write_text(f"#!/bin/sh\n[ \"$1\" != --uet-traits ] || exec echo '{traits_line}'\n" + body)
            binary.chmod(0o755)
        started = tmp_path / "started"
        os.mkfifo(started)
        proc = subprocess.Popen(cmd_uet_run.argv("--provider", "udp.yaml", "--same-host", "--build", build, "--report",
                                                 tmp_path / "runs"), cwd=REPO,
                                env=dict(cmd_uet_run.env, UET_TEST_STARTED=str(started)),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            fifo = os.open(started, os.O_RDONLY | os.O_NONBLOCK)
            try:  # readable once the first binary wrote to it; a harness that never gets there fails in 60 s
                assert select.select([fifo], [], [], 60)[0], "the first case binary did not start"
                assert os.read(fifo, 64) == b"started\n"
            finally:
                os.close(fifo)
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=60)
        finally:
            proc.kill()
            proc.wait(timeout=10)
        assert proc.returncode == 130, out
        assert "uet run: interrupted (SIGTERM); stopping the running cases, writing the partial report" in out
        doc = results_of(tmp_path / "runs")
        assert doc["run_info"]["partial"] is True
        assert doc["summary"]["exit_status"] == 130 and doc["summary"]["error"] == 2
        assert [(r["area"], r["case"], r["verdict"], r["reason"]) for r in doc["results"]] == [
            (area, f"uet-cases-{area} (whole binary)", "error",
             "not run: the run was interrupted before this area's cases had a verdict") for area in ("aaa", "zzz")]
