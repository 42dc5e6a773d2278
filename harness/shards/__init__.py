"""A run cut into shards (./uet run --shard I/N): the plan's units and their weights, the cut, and the plan
fingerprint every shard records so that ./uet merge (harness/merge/) can tell shards of one run."""
