"""The default run as three shards (./uet run --seed 11 --shard I/3) merged by ./uet merge equals the default run
with the same seed made whole, result by result (pytest/same_run.py: verdict, reason code, reason, statements,
blame, detail, judged_by; the conformance statement but for the run's own facts), in the same order, with the
same exit status; the decoder cross-check ran once, in shard 1."""
import os

import pytest

from harness.results.results import read_results_json
from same_run import differences

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="softuet's cells run in namespace pairs: root")


class TestTheDefaultRunInThreeShards:
    def test_the_shards_share_out_every_unit_once(self, default_shards, default_unsharded):
        records = [s.results()["run_info"]["shard"] for s in default_shards]
        units = [u for r in records for u in r["units"]]
        whole = default_unsharded.results()["cells"]
        plan = [f"{c['id']}/{a}" for c in whole if c["kind"] == "single" for a in c["areas"]] + \
            [c["id"] for c in whole if c["kind"] == "pair"]
        assert (sorted(units), len(units)) == (sorted(plan), len(set(units)))
        assert len({r["fingerprint"] for r in records}) == 1

    def test_only_the_first_shard_checks_the_decoders(self, default_shards, default_unsharded):
        decode = [s.results()["decode_crosscheck"] for s in default_shards]
        assert decode[0] == default_unsharded.results()["decode_crosscheck"] and decode[0]["captures"] > 0
        assert [d.get("skipped") for d in decode[1:]] == [True, True]

    def test_the_merge_exits_as_the_run_did(self, default_merged, default_unsharded):
        done, _ = default_merged
        assert (done.returncode, done.stderr) == (default_unsharded.returncode, "")

    def test_the_merged_run_decided_what_the_run_decided(self, default_merged, default_unsharded):
        assert differences(default_unsharded.folder, default_merged[1]) == []

    def test_the_merged_summary_and_cells_are_the_run_s(self, default_merged, default_unsharded):
        whole, merged = default_unsharded.results(), read_results_json(default_merged[1])[1]
        assert merged["summary"] == whole["summary"]
        assert [(c["id"], c["areas"], c["counts"]) for c in merged["cells"]] == \
            [(c["id"], c["areas"], c["counts"]) for c in whole["cells"]]
        assert merged["decode_crosscheck"] == whole["decode_crosscheck"]
        assert merged["negotiation"] == whole["negotiation"]
        assert merged["wire_oracle"] == whole["wire_oracle"]
        assert without_files(merged["coverage"]) == without_files(whole["coverage"])


def without_files(value):
    """The coverage without the paths of the JUnit it was read from (each run's own folder)."""
    if isinstance(value, dict):
        return {k: without_files(v) for k, v in value.items() if k != "file"}
    return [without_files(v) for v in value] if isinstance(value, list) else value
