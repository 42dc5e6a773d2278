"""./uet slurm submit (its options and help: harness/commands/slurm.py): the shards' job array and the merge
job, sbatched from ci/slurm/ (the files a lab may also read and sbatch by hand), with the lab's own sbatch."""
from __future__ import annotations

import os
import pathlib
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from harness.commands import slurm as slurm_options
from harness.commands.run import SEED_MAX
from harness.files import output_files
from harness.run import run_suite

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARD_SCRIPT = REPO / "ci" / "slurm" / "uet-shard.sbatch"
MERGE_SCRIPT = REPO / "ci" / "slurm" / "uet-merge.sbatch"
SBATCH_TIMEOUT_S = 120.0


class Refused(Exception):
    """sbatch is missing or refused a job: the message says what it said."""


def sbatch(options: list[str], script: pathlib.Path, script_args: list[str]) -> str:
    """The id of the job sbatch submitted (--parsable: "id" or "id;cluster")."""
    argv = ["sbatch", "--parsable", *options, str(script), *script_args]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=SBATCH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Refused(f"sbatch did not answer within {SBATCH_TIMEOUT_S:.0f} s: {shlex.join(argv)}") from None
    if done.returncode != 0:
        raise Refused(f"sbatch refused {script.name} ({shlex.join(argv)}):\n  "
                      + done.stderr.strip().replace("\n", "\n  "))
    return done.stdout.strip().split(";")[0]


def submission_folder(shards: pathlib.Path, seed: int) -> pathlib.Path:
    """A new folder of this submission's shards, SHARD_DIR/<UTC time>-s<seed>-<random>, made here (mode 0700:
    only this user's jobs write in it). Not in the merged run's folder: a folder of runs holds runs only."""
    try:  # as every report folder: refused when another user controls it or a folder on the way
        os.close(output_files.open_folder(shards))
    except OSError as exc:  # output_files.UnsafeFolder among them
        raise Refused(f"--shard-report {shards}: {exc}") from None
    work = pathlib.Path(tempfile.mkdtemp(prefix=f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-s{seed}-",
                                         dir=shards))
    (work / "logs").mkdir()
    return work


def submit(args, run_argv: list[str]) -> int:
    if not shutil.which("sbatch"):
        raise Refused("no sbatch on PATH: ./uet slurm submit uses the lab's own Slurm (its client commands and "
                      "SLURM_CONF)")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, SEED_MAX + 1)
    report = args.report.resolve()
    work = submission_folder(args.shard_report.resolve(), seed)
    n = str(args.shards)
    shard_options = [f"--chdir={REPO}", f"--output={work}/logs/shard-%a.out", *args.sbatch_option]
    shard_args = [n, str(seed), str(work), *run_argv]
    merge_options = [f"--chdir={REPO}", f"--output={work}/logs/merge.out", *args.sbatch_option]
    merge_args = [n, str(work), str(report)]
    try:
        array = sbatch([f"--array=1-{n}", *shard_options], SHARD_SCRIPT, shard_args)
    except Refused:
        shutil.rmtree(work)
        raise
    try:
        merge = sbatch([f"--dependency=afterany:{array}", *merge_options], MERGE_SCRIPT, merge_args)
    except Refused as exc:
        subprocess.run(["scancel", array], capture_output=True, timeout=SBATCH_TIMEOUT_S)
        raise Refused(f"{exc}\n(the shards' array {array} is cancelled)") from None
    print(f"uet slurm: seed {seed}, every shard's")
    print(f"uet slurm: shards: job array {array}, tasks 1-{n}: ./uet run {shlex.join(run_argv)}{' ' if run_argv else ''}"
          f"--shard I/{n} --seed {seed}, each into {work}/I (logs in {work}/logs)")
    print(f"uet slurm: merge: job {merge}, once every task has ended: the merged run will be {report}/latest")
    print("uet slurm: a lost shard I again, then the merge again:\n"
          f"  sbatch {shlex.join(['--array=I', *shard_options, str(SHARD_SCRIPT), *shard_args])}\n"
          f"  sbatch {shlex.join([*merge_options, str(MERGE_SCRIPT), *merge_args])}")
    return 0


def main(argv: list[str]) -> int:
    args, run_argv = slurm_options.parse(argv)
    if args.check_usage:  # what the shards' ./uet run will build: ./uet builds it here, once, before the array
        return run_suite.main(["--check-usage", *run_argv])
    try:
        return submit(args, run_argv)
    except Refused as exc:
        print(f"uet slurm: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
