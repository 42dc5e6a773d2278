"""./uet on a machine its set-up has not touched: every command's --help and bad usage are answered with
Python's standard library alone (harness/commands/), and no command ever shows a traceback.

A newcomer's Debian 12 has /usr/bin/python3 but none of Debian's Python packages the set-up installs
(python3-yaml, -jsonschema, -jinja2, ...). The tests hide them: each command runs in a private mount
namespace with an empty tmpfs over every folder of Python's packages, so the clone, the build and the host
stay as they are. What a command needs the packages for runs after ./uet has installed them (setup/deps.sh).
"""
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
UET = REPO / "uet"
# Where /usr/bin/python3 finds Debian's packages (and any a user added); whichever of them exists is hidden.
PACKAGE_FOLDERS = ("/usr/lib/python3/dist-packages", "/usr/local/lib/python3.11/dist-packages",
                   "/usr/lib/python3.11/site-packages")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="a private mount namespace needs root (os.geteuid() != 0)")

HIDE = "; ".join(f"mount -t tmpfs -o size=1m,mode=0755 tmpfs {d}" for d in PACKAGE_FOLDERS if os.path.isdir(d))


def bare(*argv, cwd=REPO, timeout=120) -> subprocess.CompletedProcess:
    """argv in a mount namespace where Debian's Python packages are hidden (PYTHONNOUSERSITE: root's own
    site-packages too)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "UET_"))}
    env["PYTHONNOUSERSITE"] = "1"
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", f'{HIDE} && exec "$@"',
                           "sh", *map(str, argv)], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def said(run: subprocess.CompletedProcess) -> str:
    return run.stdout + run.stderr


def nothing_set_up(run: subprocess.CompletedProcess) -> None:
    text = said(run)
    assert "Traceback" not in text, text
    # setup/*.sh and ./uet's build say what they do on lines of their own
    assert not [line for line in text.splitlines() if line.startswith(("setup:", "uet: building"))], text


# Every command ./uet has, with a word of its help (the commands in Python show their parser's usage line).
HELP = [("run", "usage: ./uet run"), ("certify", "usage: ./uet certify"), ("verify", "usage: ./uet verify"),
        ("selftest", "usage: ./uet selftest"), ("compare", "usage: ./uet compare"), ("merge", "usage: ./uet merge"),
        ("history", "usage: ./uet history"), ("plugfest", "usage: ./uet plugfest"), ("manifest", "usage: ./uet manifest"),
        ("manifest init", "usage: ./uet manifest init"), ("manifest check", "usage: ./uet manifest check"),
        ("fuzz", "usage: python3 -m harness.selftest.fuzz campaign"), ("test", "./uet test [--workers N]"),
        ("build", "./uet build [--all]"), ("setup", "./uet setup"), ("bench", "./uet bench decode"),
        ("slurm", "usage: ./uet slurm submit")]

# (arguments, exit status, what the one message says)
BAD_USAGE = [
    (["run", "--bogus"], 2, "unrecognized arguments: --bogus"),
    (["run", "--provider", "missing.yaml"], 2, "uet run: bad manifest:\n  missing.yaml: cannot read: No such file"),
    (["run", "--initiator", "softuet.yaml"], 2, "--initiator needs --target"),
    (["run", "--seed", "-1"], 2, "--seed -1 is out of range"),
    (["run", "--pair", "missing-pair.yaml"], 2, "uet run: --pair missing-pair.yaml: no such file"),
    (["run", "--spec-version"], 2, "argument --spec-version: expected one argument"),
    (["run", "--involving", "softuet.yaml"], 2, "--involving goes with --matrix"),
    (["slurm", "bogus"], 2, "invalid choice: 'bogus'"),
    (["slurm", "submit", "--shards", "0"], 2, "--shards 0 is out of range: 1 to 1000"),
    (["slurm", "submit", "--shard", "1/3"], 2, "--shard is the array's to give"),
    (["slurm", "submit", "--bogus"], 2, "./uet slurm submit (the options of ./uet run): error: unrecognized arguments: --bogus"),
    (["slurm", "submit", "--provider", "missing.yaml"], 2, "uet slurm: bad manifest:\n  missing.yaml: cannot read: No such file"),
    (["certify"], 2, "one of the arguments --provider --initiator is required"),
    (["certify", "--provider", "missing.yaml"], 2, "uet certify: missing.yaml: cannot read: No such file"),
    (["verify", "missing.tar.zst"], 2, "uet verify: no package at"),
    (["verify"], 2, "the following arguments are required: package"),
    (["selftest", "--bogus"], 2, "unrecognized arguments: --bogus"),
    (["selftest", "--knob", "nope"], 2, "no such knob: nope"),
    (["compare", "a", "b"], 2, "uet compare: a: cannot read: No such file or directory"),
    (["compare", "--bogus"], 2, "./uet compare: error:"),
    (["merge", "/nonexistent-shard"], 2, "uet merge: /nonexistent-shard: no such folder"),
    (["merge"], 2, "the following arguments are required: SHARD_DIR"),
    (["run", "--shard", "0/3"], 2, "--shard 0/3: the shard's number is 1 to 3"),
    (["run", "--shard", "4/3"], 2, "--shard 4/3: the shard's number is 1 to 3"),
    (["run", "--shard", "1/0"], 2, "--shard 1/0: a run has at least 1 shard"),
    (["run", "--shard", "x"], 2, "--shard x: give I/N"),
    (["run", "--shard", "1/3"], 2, "--shard needs --seed"),
    (["history", "/nonexistent-run-folder"], 2, "history: no such folder: /nonexistent-run-folder"),
    (["plugfest", "ingest", "missing.tar.zst"], 2, "uet plugfest: not a package: "),
    (["plugfest", "ingest", "p.tar.zst", "--lab", "../x"], 2, "'../x' is not a lab name"),
    (["plugfest"], 2, "the following arguments are required: ingest|render"),
    (["manifest", "check", "missing.yaml"], 1, "missing.yaml: cannot read: No such file or directory"),
    (["manifest", "bogus"], 2, "invalid choice: 'bogus'"),
    (["manifest", "init"], 2, "the following arguments are required: --provider"),
    (["manifest", "init", "--provider", "x", "--timeout", "0"], 2, "'0' is not a deadline"),
    (["fuzz", "--bogus"], 2, "unrecognized arguments: --bogus"),
    (["test", "--bogus"], 2, "unknown option for ./uet test: '--bogus'"),
    (["build", "--bogus"], 2, "unknown option for ./uet build: '--bogus'"),
    (["setup", "--bogus"], 2, "unknown option for ./uet setup: '--bogus'"),
    (["bench", "bogus"], 2, "usage: ./uet bench decode|fep"),
    (["bogus"], 2, "unknown command 'bogus'"),
    ([], 2, "The suite's one entry point"),
]


@root_only
class TestWithoutDebiansPythonPackages:
    def test_the_packages_are_hidden(self):
        run = bare("/usr/bin/python3", "-c", "import yaml")
        assert run.returncode == 1 and "No module named 'yaml'" in run.stderr

    @pytest.mark.parametrize("command,usage", HELP, ids=[c for c, _ in HELP])
    def test_help(self, command, usage):
        run = bare(UET, *command.split(), "--help")
        assert run.returncode == 0, said(run)
        assert usage in run.stdout
        nothing_set_up(run)

    @pytest.mark.parametrize("argv,status,message", BAD_USAGE, ids=[" ".join(a) or "(none)" for a, _, _ in BAD_USAGE])
    def test_bad_usage(self, argv, status, message):
        run = bare(UET, *argv)
        assert (run.returncode, message in said(run)) == (status, True), said(run)
        nothing_set_up(run)

    def test_paths_are_the_callers(self, tmp_path):
        run = bare(UET, "compare", "old-run", "new-run", cwd=tmp_path)
        assert run.returncode == 2
        assert run.stderr.splitlines()[0] == ("uet compare: old-run: cannot read: No such file or directory (give a "
                                              "run folder or its results.json)")

    def test_every_front_module_imports(self):
        modules = sorted(f"harness.commands.{p.stem}" for p in (REPO / "harness" / "commands").glob("*.py")
                         if p.stem != "__init__")
        run = bare("/usr/bin/python3", "-c", f"import importlib; [importlib.import_module(m) for m in {modules!r}]",
                   cwd=REPO)
        assert run.returncode == 0, run.stderr


class TestTheGuard:
    """What any command does with an exception nobody expected: one line, a log, exit 3."""

    def guard(self, tmp_path, body: str, name="boom"):
        (tmp_path / f"{name}.py").write_text(f"def main(argv):\n    {body}\n")
        env = dict(os.environ, PYTHONPATH=f"{REPO}:{tmp_path}")
        return subprocess.run([sys.executable, "-m", "harness.commands.guard", "./uet boom", name, "a1"], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=60)

    def test_an_unexpected_exception_is_one_line_and_a_log(self, tmp_path):
        run = self.guard(tmp_path, "raise KeyError('results')")
        assert run.returncode == 3 and run.stdout == ""
        line, = run.stderr.splitlines()
        head, _, log = line.partition(" (the traceback: ")
        assert head == "./uet boom: failed unexpectedly: KeyError: 'results'"
        path = REPO / log.removesuffix(")")
        try:
            text = path.read_text()
            assert text.startswith("./uet boom a1\n") and "Traceback (most recent call last)" in text
            assert "raise KeyError('results')" in text
        finally:
            path.unlink()

    def test_a_missing_debian_package_is_named(self, tmp_path):
        run = self.guard(tmp_path, "raise ModuleNotFoundError(\"No module named 'openpyxl'\", name='openpyxl')")
        assert (run.returncode, run.stderr) == (3, "./uet boom: Debian's python3-openpyxl is not installed (./uet setup "
                                                   "installs it; Python is /usr/bin/python3)\n")

    def test_exit_status_and_usage_pass_through(self, tmp_path):
        assert self.guard(tmp_path, "return 7").returncode == 7
        run = self.guard(tmp_path, "raise SystemExit(2)")
        assert (run.returncode, run.stderr) == (2, "")
