"""Running the suite on engines a lab already runs (Slurm; the CI definitions of ci/ need no Python of their
own): each engine only hands out the shard index and collects the runs, ./uet run --shard and ./uet merge do
the rest on its nodes."""
