"""./uet slurm submit: a sharded ./uet run on the lab's own Slurm, as a job array and a merge job.

usage: ./uet slurm submit [--shards N] [--report DIR] [--shard-report DIR] [--seed S] [--sbatch-option=OPTION]...
                          [RUN OPTIONS...]

examples:
  ./uet slurm submit --shards 3 --matrix a.yaml b.yaml c.yaml
  ./uet slurm submit --shards 8 --report /shared/uet/runs --sbatch-option=--partition=uet --matrix a.yaml b.yaml
  SBATCH_ACCOUNT=lab SBATCH_TIMELIMIT=4:00:00 ./uet slurm submit --shards 4 --provider vendor.yaml

It draws one seed (or takes --seed) and prints it, then sbatches ci/slurm/uet-shard.sbatch as a job array
--array=1-N, whose task I runs ./uet run RUN OPTIONS --shard I/N --seed S into SHARD_DIR/<submission>/I,
and ci/slurm/uet-merge.sbatch with --dependency=afterany on the array: it runs ./uet merge over the N shards
and writes the merged run in DIR (DIR/latest), refusing, by name, a shard that is missing (afterany: a task
lost with its node does not hide the merge). It prints the job ids, where the merged run will be, and the
commands that run a lost shard again and merge once more. The clone and DIR must be on a file system every
node sees at the same path; ./uet slurm submit sets up and builds first, so the tasks find the build done.
sbatch options a lab needs (partition, account, time) go in --sbatch-option (both jobs) or in sbatch's own
SBATCH_* environment variables.

exit status: 0 both jobs are submitted; 2 bad usage (the run options as ./uet run checks them), no sbatch, or
sbatch refused a job (its message is shown; an array already submitted is cancelled); 3 set-up or build
failed, or it failed unexpectedly (one line names the log with the traceback).
"""
from __future__ import annotations

import argparse
import pathlib
import sys

from harness.commands import run as run_options
from harness.commands.run import SEED_MAX

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARDS_DEFAULT = 3
SHARDS_MAX = 1000  # Slurm's default MaxArraySize is 1001: task ids 0 to 1000


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="./uet slurm", allow_abbrev=False, usage=__doc__.split("\n\n")[1].removeprefix("usage: "),
                                description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[2:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["submit"], help="submit: the shards' job array and the merge job")
    p.add_argument("--shards", type=int, default=SHARDS_DEFAULT,
                   help=f"N, the shards and the array's tasks, 1 to {SHARDS_MAX} (default {SHARDS_DEFAULT}); e.g. --shards 8")
    p.add_argument("--report", type=pathlib.Path, default=REPO / "out" / "runs",
                   help="the folder the merged run is written under (default out/runs); e.g. --report /shared/uet/runs")
    p.add_argument("--shard-report", type=pathlib.Path, default=REPO / "out" / "shards",
                   help="the folder the shards' runs are written under, a folder of its own for each submission "
                        "(default out/shards); e.g. --shard-report /shared/uet/shards")
    p.add_argument("--seed", type=int, default=None, help=f"the seed of every shard, 0 to {SEED_MAX} (default: a new "
                   "one, printed); e.g. --seed 7")
    p.add_argument("--sbatch-option", action="append", default=[], metavar="OPTION",
                   help="repeatable: an option of both sbatch calls, written with '='; e.g. "
                        "--sbatch-option=--partition=uet --sbatch-option=--time=4:00:00")
    # ./uet asks this before it builds: the run options' own check, after the set-up (manifests, pair file).
    p.add_argument("--check-usage", action="store_true", help=argparse.SUPPRESS)
    return p


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """(./uet slurm's own options, the run options as given); exits 2 naming what is wrong."""
    p = parser()
    args, run_argv = p.parse_known_args(argv)
    if not 1 <= args.shards <= SHARDS_MAX:
        p.error(f"--shards {args.shards} is out of range: 1 to {SHARDS_MAX}")
    if args.seed is not None and not 0 <= args.seed <= SEED_MAX:
        p.error(f"--seed {args.seed} is out of range: a seed is 0 to {SEED_MAX}")
    if any(a == "--shard" or a.startswith("--shard=") for a in run_argv):
        p.error("--shard is the array's to give: task I runs shard I/N of --shards N")
    wrong = [o for o in args.sbatch_option if o and not o.startswith("-")]
    if wrong:
        p.error(f"--sbatch-option takes an sbatch option, written with '=' (got '{wrong[0]}'); "
                "e.g. --sbatch-option=--partition=uet")
    run_options.parse(as_a_shard(run_argv, args), prog="./uet slurm submit (the options of ./uet run)")
    return args, run_argv


def as_a_shard(run_argv: list[str], args: argparse.Namespace) -> list[str]:
    """The run options as each task gives them (with its --shard and the seed), so that what goes only with
    --shard (--shard-weights) is checked as the tasks will have it."""
    return [*run_argv, "--shard", f"1/{args.shards}", "--seed", str(args.seed if args.seed is not None else 1)]


def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold, 2 (with the reason) when they do not."""
    args, run_argv = parse(argv)
    manifests, files = run_options.unreadable_inputs(run_options.parse(as_a_shard(run_argv, args))[0])
    for problem in files + (["bad manifest:\n  " + "\n  ".join(manifests)] if manifests else []):
        print(f"uet slurm: {problem}", file=sys.stderr)
    return 2 if manifests or files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
