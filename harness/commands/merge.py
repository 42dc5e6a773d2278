"""./uet merge SHARD_DIR...: one run folder from the run folders of a run's shards (./uet run --shard I/N),
as the whole run would have written it: results.json (every result in the plan's order), the JUnit, the
report pages, the conformance statement and the coverage; each shard's logs and captures are brought in (hard
links where the file system allows, else copies), so the report's links hold.

It refuses (exit 2, naming the problem) rather than write a smaller or mixed run: a folder that is not a
shard's run, a shard missing (it prints the command that runs it again), a shard given twice or a check in
two shards, a shard that was interrupted, shards whose fingerprints differ (it names what differs: the
suite's commit, the binaries, libfabric, the manifests, the seed, N or the options).

examples:
  ./uet merge out/runs/shard-1 out/runs/shard-2 out/runs/shard-3
  ./uet merge --report /tmp/runs artifacts/shard-*/latest

exit status: as a run's: 0 every check passed or is not applicable; 1 a check failed, errored or timed out,
or the decoders disagreed; 2 bad usage or a refused merge (the message names the folder and the problem);
3 it failed unexpectedly (one line names the log with the traceback); 4 no check failed, but the
infrastructure kept checks of a shard from running (infra_error: run that shard again, then merge again).
"""
from __future__ import annotations

import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="./uet merge", description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("shards", nargs="+", type=pathlib.Path, metavar="SHARD_DIR",
                   help="each shard's run folder (or a report folder whose `latest` is one)")
    p.add_argument("--report", type=pathlib.Path, default=REPO / "out" / "runs",
                   help="the folder the merged run is written under (default out/runs; `latest` names it); "
                        "e.g. --report /tmp/runs")
    return p


def parse(argv: list[str]) -> argparse.Namespace:
    return parser().parse_args(argv)


def main(argv: list[str]) -> int:
    """Before the set-up: 0 when the options hold and every folder is there, 2 (naming what is not) when not."""
    args = parse(argv)
    missing = [path for path in args.shards if not path.is_dir()]
    for path in missing:
        print(f"uet merge: {path}: no such folder (give each shard's run folder)", file=sys.stderr)
    return 2 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
