"""./uet slurm submit on a Slurm of the test's own (containers/slurm.py: munged, slurmctld and two slurmd on this
host): the shards' job array and the merge job, sbatched from ci/slurm/, run on the two nodes and merge to one
run that is the shards' union; a shard cancelled before it ran makes the merge job refuse, naming it, and the
commands ./uet slurm submit printed for that case run it again and merge. Waits are polls with a deadline on
Slurm's job-completion record, never sleeps."""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import tempfile

import pytest

from containers.slurm import SlurmCluster, missing_binaries

REPO = pathlib.Path(__file__).resolve().parents[2]
SMALL_RUN = ("--only", "discovery")   # one area: three shards of it keep ./uet test short
SHARDS = 3
SEED = 11
JOB_DEADLINE_S = 1800.0         # a bound against a hang on a loaded host, not a measure


@pytest.fixture(scope="module")
def slurm():
    missing = missing_binaries()
    if missing:
        pytest.skip(f"Slurm is not installed ({', '.join(missing)} missing; setup/packages.txt lists slurm-wlm)")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-slurm-"))
    folder.chmod(0o755)
    cluster = SlurmCluster(folder, nodes=("uets1", "uets2"))
    try:
        yield cluster.start()
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


class Submitted:
    """What ./uet slurm submit printed: the array's and the merge's job ids, the shards' folder, and the two
    commands it gives for a lost shard (run it again, merge again)."""

    def __init__(self, done: subprocess.CompletedProcess):
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        out = done.stdout
        self.array = re.search(r"shards: job array (\d+), tasks 1-(\d+)", out).group(1)
        self.merge = re.search(r"merge: job (\d+),", out).group(1)
        self.work = pathlib.Path(re.search(r"each into (\S+)/I \(", out).group(1))
        self.seed = int(re.search(r"seed (\d+), every shard's", out).group(1))
        self.rerun, self.merge_again = [shlex.split(line) for line in out.splitlines() if line.startswith("  sbatch ")]


def submit(slurm, report: pathlib.Path, *options) -> Submitted:
    return Submitted(subprocess.run([str(REPO / "uet"), "slurm", "submit", "--shards", str(SHARDS), "--report",
                                     str(report), "--shard-report", str(report.parent / "shards"), "--seed",
                                     str(SEED), *options, *SMALL_RUN],
                                    cwd=REPO, env=slurm.env, capture_output=True, text=True, timeout=1800))


def ended(slurm, job: str) -> dict:
    """The job's line of the job-completion record, as key=value pairs, once it has ended."""
    def done() -> bool:
        reason = slurm.run("squeue", "-h", "-j", job, "-o", "%r").stdout.strip()
        assert reason != "DependencyNeverSatisfied", f"job {job} waits on a dependency that can no longer be met"
        return slurm.ended(int(job))
    slurm.wait_for(done, f"job {job} to end", deadline=JOB_DEADLINE_S)
    line = next(line for line in (slurm.logs / "jobcomp.txt").read_text().splitlines() if line.startswith(f"JobId={job} "))
    return dict(word.split("=", 1) for word in line.split() if "=" in word)


def sbatch(slurm, argv: list[str]) -> str:
    done = slurm.run(*argv[:1], "--parsable", *argv[1:])
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")[0]


def union_of(results_of, runs: list[pathlib.Path]) -> list[tuple[str, str]]:
    return sorted((r["id"], r["verdict"]) for run in runs for r in results_of(run)["results"])


class TestASlurmArrayOfShards:
    def test_the_array_and_the_merge_job_give_one_run_that_is_the_shards_union(self, slurm, tmp_path, results_of):
        report = tmp_path / "runs"
        job = submit(slurm, report)
        assert job.seed == SEED
        merge = ended(slurm, job.merge)
        log = (job.work / "logs" / "merge.out").read_text()
        assert (merge["JobState"], merge["ExitCode"]) == ("COMPLETED", "0:0"), log[-3000:]
        shards = [(job.work / str(i) / "latest").resolve() for i in range(1, SHARDS + 1)]
        merged = results_of(report / "latest")
        assert [results_of(s)["run_info"]["shard"]["index"] for s in shards] == [1, 2, 3]
        assert sorted((r["id"], r["verdict"]) for r in merged["results"]) == union_of(results_of, shards)
        assert merged["results"] and merged["summary"]["exit_status"] == 0

    def test_a_cancelled_shard_is_named_by_the_merge_and_the_printed_commands_run_it_again(self, slurm, tmp_path,
                                                                                          results_of):
        report = tmp_path / "runs"
        job = submit(slurm, report, "--sbatch-option=--hold")  # nothing starts before the task is cancelled
        assert slurm.run("scancel", f"{job.array}_2").returncode == 0
        assert slurm.run("scontrol", "release", job.array, job.merge).returncode == 0
        merge = ended(slurm, job.merge)
        log = (job.work / "logs" / "merge.out").read_text()
        assert merge["ExitCode"] == "2:0", log[-3000:]
        assert f"{job.work}/2/latest" in log, log[-3000:]
        assert not (report / "latest").exists()

        rerun = sbatch(slurm, [a.replace("--array=I", "--array=2") for a in job.rerun])
        assert slurm.run("scontrol", "release", rerun).returncode == 0
        assert ended(slurm, rerun)["ExitCode"] == "0:0"
        again = sbatch(slurm, job.merge_again)
        assert slurm.run("scontrol", "release", again).returncode == 0
        merge = ended(slurm, again)
        log = (job.work / "logs" / "merge.out").read_text()
        assert (merge["JobState"], merge["ExitCode"]) == ("COMPLETED", "0:0"), log[-3000:]
        shards = [(job.work / str(i) / "latest").resolve() for i in range(1, SHARDS + 1)]
        assert sorted((r["id"], r["verdict"]) for r in results_of(report / "latest")["results"]) == \
            union_of(results_of, shards)


@pytest.fixture
def slurm_client(tmp_path):
    """slurm_client(sbatch_body) -> (PATH, calls file): a PATH whose sbatch runs `sbatch_body` (sh; $n is its
    call's number) and whose scancel records its arguments: Slurm's answers without a Slurm."""
    tools = tmp_path / "bin"
    tools.mkdir()
    calls = tmp_path / "calls"

    def make(sbatch_body: str):
        (tools / "sbatch").write_text(f'#!/bin/sh\necho "sbatch $*" >> {calls}\nn=$(grep -c ^sbatch {calls})\n{sbatch_body}\n')
        (tools / "scancel").write_text(f'#!/bin/sh\necho "scancel $*" >> {calls}\n')
        for tool in ("sbatch", "scancel"):
            (tools / tool).chmod(0o755)
        return f"{tools}:/usr/bin:/bin", calls
    return make


def submit_module(tmp_path, path: str, *options) -> subprocess.CompletedProcess:
    """./uet slurm submit's module as ./uet runs it after the set-up and the build (no set-up here)."""
    return subprocess.run(["/usr/bin/python3", "-m", "harness.commands.guard", "./uet slurm",
                           "harness.engines.slurm_submit", "submit", "--report", str(tmp_path / "runs"),
                           "--shard-report", str(tmp_path / "shards"), *options, *SMALL_RUN],
                          cwd=REPO, env={"PATH": path, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=120)


class TestARefusedSubmission:
    def test_without_sbatch_it_is_bad_usage_naming_it(self, tmp_path):
        done = submit_module(tmp_path, str(tmp_path))
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == ("uet slurm: no sbatch on PATH: ./uet slurm submit uses the lab's own Slurm (its client "
                               "commands and SLURM_CONF)\n")

    def test_sbatch_refusing_the_array_is_shown_and_leaves_nothing(self, tmp_path, slurm_client):
        path, calls = slurm_client('echo "sbatch: error: invalid partition specified: nope" >&2; exit 1')
        done = submit_module(tmp_path, path, "--sbatch-option=--partition=nope")
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("uet slurm: sbatch refused uet-shard.sbatch (sbatch --parsable --array=1-3 ")
        assert done.stderr.endswith("\n  sbatch: error: invalid partition specified: nope\n")
        assert list((tmp_path / "shards").iterdir()) == []
        assert "--partition=nope" in calls.read_text()

    def test_sbatch_refusing_the_merge_cancels_the_array(self, tmp_path, slurm_client):
        path, calls = slurm_client('[ "$n" = 1 ] && { echo "41;cluster"; exit 0; }; echo "sbatch: error: nope" >&2; exit 1')
        done = submit_module(tmp_path, path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.endswith("  sbatch: error: nope\n(the shards' array 41 is cancelled)\n")
        assert calls.read_text().splitlines()[1].startswith("sbatch --parsable --dependency=afterany:41 ")
        assert calls.read_text().splitlines()[2:] == ["scancel 41"]

    @pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another user's needs root to make")
    def test_a_shard_folder_another_user_controls_is_refused_and_nothing_submitted(self, tmp_path, slurm_client):
        path, calls = slurm_client('echo "41;cluster"')
        (tmp_path / "shards").mkdir()
        os.chown(tmp_path / "shards", 65534, 65534)  # nobody could swap what the submission makes there
        done = submit_module(tmp_path, path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"uet slurm: --shard-report {tmp_path / 'shards'}: ")
        assert (list((tmp_path / "shards").iterdir()), calls.exists()) == ([], False)


class TestTheOptions:
    def test_shard_weights_are_checked_as_each_task_gives_them(self):
        from harness.commands import slurm as slurm_options
        args, run_argv = slurm_options.parse(["submit", "--shards", "3", "--shard-weights", "out/runs/latest", "--only", "msg"])
        assert (args.shards, run_argv) == (3, ["--shard-weights", "out/runs/latest", "--only", "msg"])

    def test_a_bad_sbatch_option_is_the_one_named(self, capsys):
        from harness.commands import slurm as slurm_options
        with pytest.raises(SystemExit) as done:
            slurm_options.parse(["submit", "--sbatch-option=--partition=uet", "--sbatch-option=time=4:00:00"])
        assert done.value.code == 2
        assert "(got 'time=4:00:00')" in capsys.readouterr().err
