"""The shard of a run a plan asks for (./uet run --shard I/N, harness/run/execute.py): the cells it runs, each
with its index in the whole plan, and what its results.json records of it (run_info.shard)."""
from __future__ import annotations

from harness.shards import fingerprint, partition


def of_run(plan, cells: list, traits: dict[str, dict], manifests: list, sides: dict) -> tuple[list[tuple[int, object]], dict]:
    """([(index in the whole plan, cell)], run_info.shard) of `plan`'s shard of the whole plan's `cells`
    (`manifests` and `sides` the whole plan's); partition.ShardError (bad usage) when it cannot be cut so."""
    index, count = plan.shard
    recorded = partition.recorded_durations(plan.shard_weights) if plan.shard_weights else None
    weights = partition.weights(cells, traits, recorded)
    names = list(weights)
    try:
        shards = partition.cut(names, weights, count)
    except partition.ShardError as exc:
        raise partition.ShardError(f"--shard {index}/{count}: {exc}") from None
    parts = fingerprint.parts(plan, manifests, sides, weights)
    record = {"index": index, "count": count, "fingerprint": fingerprint.of(parts), "parts": parts,
              "units": shards[index - 1], "all_units": names, "cut": shards}
    return partition.cells_of_shard(cells, shards[index - 1]), record
