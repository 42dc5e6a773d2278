"""./uet merge: one run from the run folders of its shards (harness/shards/), refused when they would make a
smaller or mixed run; the report written by the run's own writers (harness/run/outputs.py)."""
