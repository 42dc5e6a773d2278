"""Runs of the suite for the tests, Wireshark-style: the command (cmd_uet_run), the one reader of a run's
results (results_of), and the runs several tests look at, each made once per pytest session (suite_run for
`./uet run` as a user runs it, cell_run for one cell's case binaries, as the mutation run makes them,
certify_package for a submission package of `./uet certify`).

A shared run is made once in the whole session, also under `pytest -n N --dist loadfile`: loadfile gives each
worker whole files, so two files that need the same run are usually on two workers, each with a session of
its own; a cache per worker would make the run once per worker. So the run's folder is in the session's
shared temporary folder (every worker's basetemp is inside it), named by the run's arguments, and a lock
file there (flock: the kernel lets go of it when its holder dies) makes the first worker run it while
another that needs it waits for that run instead of making its own. A test reads a shared run and never
changes it; one that must change it works on copy_to()'s private copy.
"""
import dataclasses
import fcntl
import hashlib
import os
import pathlib
import pickle
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
UET_RUN = (sys.executable, "-m", "harness.run.run_suite")  # what ./uet run runs after its build
UET_CERTIFY = (sys.executable, "-m", "harness.certify.certify")


def results_of(folder) -> dict:
    """The results.json of a run folder, or of the run a report folder's `latest` names, read by the suite's
    one reader (harness/results/results.py)."""
    from harness.results.results import read_results_json
    folder = pathlib.Path(folder)
    if not (folder / "results.json").exists() and (folder / "latest").exists():
        folder = (folder / "latest").resolve()
    return read_results_json(folder)[1]


class UetRun:
    """cmd_uet_run(*args, timeout=600, env=None) -> CompletedProcess (text) of ./uet run's harness with ARGS, from
    the repository's root, with the build the tests use (UET_BUILD; --build names another) and `env` over its
    environment; argv(*args) is its command line, env its environment (for a test that drives the process
    itself, e.g. to signal it)."""

    def __init__(self, build_dir: pathlib.Path):
        self.build_dir = build_dir

    @property
    def env(self) -> dict:
        # the test's environment as it is now (a test may have set a variable for this run)
        return dict(os.environ, UET_BUILD=str(self.build_dir), PYTHONPATH=str(REPO))

    @staticmethod
    def argv(*args) -> list[str]:
        return [*UET_RUN, *map(str, args)]

    def __call__(self, *args, timeout=600, env=None) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(*args), cwd=REPO, env=dict(self.env, **(env or {})), capture_output=True,
                              text=True, timeout=timeout)


@pytest.fixture(scope="session")
def cmd_uet_run(build_dir):
    return UetRun(build_dir)


@pytest.fixture(scope="session")
def uet_run_here(build_dir):
    """uet_run_here(*args) -> (exit status, RunOutcome, what it printed) of ./uet run ARGS carried out in this
    process as ./uet run does it (harness/run/run_suite.py: plan, then run: execute, write_outputs), with the
    build the tests use: a test of one file gets the results without a process and a results.json to read."""
    import contextlib
    import io
    from harness.run import run_suite

    def run(*args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status, outcome = run_suite.run(run_suite.plan([*map(str, args), "--build", str(build_dir)]))
        return status, outcome, out.getvalue()
    return run


@pytest.fixture(name="results_of", scope="session")
def results_of_fixture():
    """results_of(folder) -> the run's results.json (a run folder, or a report folder's latest run)."""
    return results_of


def _shared_folder(tmp_path_factory) -> pathlib.Path:
    base = tmp_path_factory.getbasetemp()
    # an xdist worker's basetemp is popen-gwN inside the session's; without workers the session's is its own
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared-runs"


def _once(shared: pathlib.Path, key: str, make):
    """make(folder) -> a picklable value, made once per session for `key` (see the module's text)."""
    place = shared / hashlib.sha256(key.encode()).hexdigest()[:20]
    place.mkdir(parents=True, exist_ok=True)
    with open(place / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = place / "value.pickle"
        if not done.exists():
            folder = place / "run"
            shutil.rmtree(folder, ignore_errors=True)  # what a run that raised left
            folder.mkdir()
            (place / "key").write_text(key + "\n")
            made = pickle.dumps(make(folder))
            (place / "value.tmp").write_bytes(made)
            (place / "value.tmp").rename(done)
        return pickle.loads(done.read_bytes())


@dataclasses.dataclass
class SuiteRun:
    """One `./uet run` of the session: its exit status and output, and its run folder."""
    returncode: int
    stdout: str
    stderr: str
    report: pathlib.Path   # the --report folder
    folder: pathlib.Path   # the run folder (report/latest)

    def results(self) -> dict:
        """Its results.json, read afresh."""
        return results_of(self.folder)


@pytest.fixture(scope="session")
def suite_run(cmd_uet_run, tmp_path_factory):
    """suite_run(*args, timeout=900) -> SuiteRun of `./uet run ARGS --report FOLDER`, made once per session
    for the same ARGS."""
    shared = _shared_folder(tmp_path_factory)

    def run(*args, timeout=900):
        args = [str(a) for a in args]

        def make(folder):
            proc = cmd_uet_run(*args, "--report", folder, timeout=timeout)
            latest = folder / "latest"
            return SuiteRun(proc.returncode, proc.stdout, proc.stderr, folder,
                            latest.resolve() if latest.exists() else latest)
        return _once(shared, "suite\0" + "\0".join(args), make)
    return run


@dataclasses.dataclass
class CellRunRecord:
    """One cell's results (harness.results.results.Result, as the case binaries gave them, before the wire
    oracle judged their captures) and the folder they ran in. Each call gives fresh copies of the results."""
    out: pathlib.Path
    raw: bytes
    attempts: int = 1  # the cell was run again while the host starved one of its cases (CONCLUSIVE_ATTEMPTS)

    def results(self) -> list:
        return pickle.loads(self.raw)

    def by_case(self) -> dict:
        return {r.case: r for r in self.results()}

    def copy_to(self, folder: pathlib.Path) -> list:
        """The results with their captures in a private copy of the run's folder, for a test that changes them
        (the wire oracle's judgement rewrites a capture's decode beside it)."""
        shutil.copytree(self.out, folder, dirs_exist_ok=True)
        results = self.results()
        for r in results:
            for entry in r.evidence.get("captures", []):
                if str(entry.get("file", "")).startswith(f"{self.out}/"):
                    entry["file"] = f"{folder}/{entry['file'][len(str(self.out)) + 1:]}"
        return results


# A case the host starved is an inconclusive error (cases/common/claims/liveness.hpp): it says nothing of what
# a test of the cell looks for, so the cell is run again, in a folder of its own, up to this many times in all.
# What is still inconclusive after them is the test's to judge (never a pass: harness.results.results.inconclusive).
CONCLUSIVE_ATTEMPTS = 3


def until_conclusive(folder: pathlib.Path, run_in) -> CellRunRecord:
    """The record of run_in(where) -> results, run in `folder` and again in a folder of its own while one of its
    results is inconclusive, CONCLUSIVE_ATTEMPTS times at most; the last run's."""
    from harness.results.results import inconclusive
    for attempt in range(1, CONCLUSIVE_ATTEMPTS + 1):
        where = folder if attempt == 1 else folder / f"attempt-{attempt}"
        where.mkdir(exist_ok=True)
        results = run_in(where)
        if not any(inconclusive(r) for r in results):
            break
    return CellRunRecord(where, pickle.dumps(results), attempt)


@pytest.fixture(scope="session")
def cell_run(build_dir, tmp_path_factory):
    """cell_run(initiator, target=None, areas=None, knob=None, case_filter="*", extra_env=None, **options) ->
    CellRunRecord of harness.run.run_cases.run_manifest: one cell, made once per session for the same
    arguments. `knob` is softuet's SOFTUET_FAULTS (fep/README.md "Personalities") on both sides; `options`
    are run_manifest's (ports, use_namespaces, placement, seed). A cell with a case the host starved is run
    again (CONCLUSIVE_ATTEMPTS); the record says how many runs it took."""
    from harness.run.run_cases import run_manifest
    shared = _shared_folder(tmp_path_factory)

    def run(initiator, target=None, areas=None, knob=None, case_filter="*", extra_env=None, **options):
        env = dict(extra_env or {}, **({"SOFTUET_FAULTS": knob} if knob else {})) or None
        target = None if target is not None and str(target) == str(initiator) else target  # a manifest alone
        key = repr(("cell", str(initiator), str(target) if target else None, list(areas) if areas else None,
                    case_filter, sorted((env or {}).items()), sorted(options.items())))

        def make(folder):
            return until_conclusive(folder, lambda where: run_manifest(
                initiator, build_dir, where, target=target, areas=list(areas) if areas else None,
                case_filter=case_filter, extra_env=env, **options))
        return _once(shared, key, make)
    return run


@dataclasses.dataclass
class CertifyRun:
    """One `./uet certify` of the session: its exit status and output, and the package it wrote (None when none)."""
    returncode: int
    stdout: str
    stderr: str
    package: pathlib.Path | None


@pytest.fixture(scope="session")
def certify_package(build_dir, tmp_path_factory):
    """certify_package(*args, timeout=1800) -> CertifyRun of `./uet certify ARGS --out FOLDER` (its harness, with the
    build the tests use), made once per session for the same ARGS: a real package is a whole mustpass run.
    The package is valid only when made from a clean checkout (commit your changes first)."""
    shared = _shared_folder(tmp_path_factory)

    def run(*args, timeout=1800):
        args = [str(a) for a in args]

        def make(folder):
            env = dict(os.environ, UET_BUILD=str(build_dir), PYTHONPATH=str(REPO))
            proc = subprocess.run([*UET_CERTIFY, *args, "--out", str(folder)], cwd=REPO, env=env, capture_output=True,
                                  text=True, timeout=timeout)
            packages = sorted(folder.glob("*.tar.zst"))
            return CertifyRun(proc.returncode, proc.stdout, proc.stderr, packages[0] if packages else None)
        return _once(shared, "certify\0" + "\0".join(args), make)
    return run
