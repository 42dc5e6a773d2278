"""./uet run --shard I/N: the cut of the plan (harness/shards/partition.py) and the plan fingerprint
(harness/shards/fingerprint.py), on the cells of the front door's modes (harness/run/plan.py) with declared
traits; the option at the front door. The runs of shards and their merge: test_merge.py."""
import pytest

from harness.commands import run as run_options
from harness.results.results import write_results_json
from harness.run import plan as plan_mod
from harness.shards import fingerprint, partition


def traits(processes: int, weight: float, pairs: bool = False) -> dict:
    return {"processes": processes, "entity": False, "loss_every": 0, "weight": weight, "profile_pairs": pairs}


# A build's areas as area_traits says them: single- and two-process areas of unequal weight, one about pairs.
TRAITS = {"msg": traits(2, 6.0), "av": traits(1, 1.0), "authz": traits(2, 3.5), "wire": traits(2, 2.0),
          "negotiation": traits(2, 0.5, pairs=True)}


def cut_of(cells, count, recorded=None):
    weights = partition.weights(cells, TRAITS, recorded)
    return weights, partition.cut(list(weights), weights, count)


@pytest.fixture(scope="module")
def default_cells():
    """The default run's cells: softuet and its six profile-set variants, and the 42 negotiation pairs."""
    return plan_mod.cells("default", [], TRAITS, set())


@pytest.fixture(scope="module")
def one_cell():
    return plan_mod.cells("provider", ["softuet.yaml"], TRAITS, set())


class TestTheCutOfSeveralCells:
    def test_every_cell_is_in_exactly_one_shard(self, default_cells):
        _, shards = cut_of(default_cells, 3)
        ids = [c.id for c in default_cells]
        assert sorted(u for s in shards for u in s) == sorted(ids)
        assert len(ids) == 49 and len(set(ids)) == 49

    def test_a_cell_is_never_split(self, default_cells):
        _, shards = cut_of(default_cells, 3)
        assert all("/" not in u for s in shards for u in s)
        kept = partition.cells_of_shard(default_cells, shards[0])
        assert [c.areas for _, c in kept] == [default_cells[i].areas for i, _ in kept]

    def test_each_cell_keeps_its_index_in_the_whole_plan(self, default_cells):
        _, shards = cut_of(default_cells, 3)
        for s in shards:
            for index, cell in partition.cells_of_shard(default_cells, s):
                assert default_cells[index] is cell

    def test_the_cut_is_the_same_every_time(self, default_cells):
        again = plan_mod.cells("default", [], TRAITS, set())
        assert cut_of(default_cells, 3) == cut_of(again, 3)

    def test_the_heavy_cells_are_shared_out_and_the_shards_weigh_near_the_same(self, default_cells):
        weights, shards = cut_of(default_cells, 3)
        # softuet and its six variants weigh 1 + 6 + 1 + 3.5 + 2 + 0.5 = 14 each, a negotiation pair 1.5
        assert [weights[c.id] for c in default_cells[:8]] == [14.0] * 7 + [1.5]
        heavy = [sum(1 for u in s if weights[u] == 14.0) for s in shards]
        loads = [sum(weights[u] for u in s) for s in shards]
        assert (heavy, loads) == ([3, 2, 2], [54.0, 53.5, 53.5])  # 161 in all

    def test_each_shard_lists_its_units_in_plan_order(self, default_cells):
        _, shards = cut_of(default_cells, 3)
        order = [c.id for c in default_cells]
        assert all(s == sorted(s, key=order.index) for s in shards)

    def test_one_shard_is_the_whole_plan(self, default_cells):
        _, shards = cut_of(default_cells, 1)
        assert shards == [[c.id for c in default_cells]]


class TestTheCutOfOneCell:
    def test_a_run_of_one_cell_is_cut_by_area(self, one_cell):
        weights, shards = cut_of(one_cell, 2)
        assert weights == {"softuet/msg": 6.0, "softuet/av": 1.0, "softuet/authz": 3.5, "softuet/wire": 2.0,
                           "softuet/negotiation": 0.5}
        # the heaviest first, each to the lighter shard: msg | authz, wire, av | then negotiation to the first
        assert shards == [["softuet/msg", "softuet/negotiation"], ["softuet/av", "softuet/authz", "softuet/wire"]]

    def test_the_shard_runs_its_areas_of_the_cell_at_the_cell_s_index(self, one_cell):
        _, shards = cut_of(one_cell, 2)
        [(index, cell)] = partition.cells_of_shard(one_cell, shards[1])
        assert (index, cell.id, cell.areas) == (0, "softuet", ["av", "authz", "wire"])
        assert one_cell[0].areas == ["msg", "av", "authz", "wire", "negotiation"]  # the plan's own cell unchanged

    def test_more_shards_than_units_is_refused_naming_them(self, one_cell):
        with pytest.raises(partition.ShardError) as refused:
            cut_of(one_cell, 6)
        assert str(refused.value) == (
            "this run has 5 unit(s) to share out (softuet/msg, softuet/av, softuet/authz, softuet/wire, "
            "softuet/negotiation), fewer than 6 shards: a shard would run nothing; give at most 5 shards")


class TestRecordedWeights:
    def test_a_previous_run_s_durations_decide_the_cut(self, one_cell, tmp_path):
        run = tmp_path / "run"
        run.mkdir()
        timing = {"wall": 30.0, "binaries": {"msg": {"wall": 2.0}, "av": {"wall": 20.0}, "authz": {"wall": 4.0},
                                             "wire": {"wall": 3.0}}}
        write_results_json({"format": 1, "cells": [{"id": "softuet", "timing": timing}], "results": []},
                           run / "results.json")
        recorded = partition.recorded_durations(run)
        assert recorded == {"softuet": 30.0, "softuet/msg": 2.0, "softuet/av": 20.0, "softuet/authz": 4.0,
                            "softuet/wire": 3.0}
        weights, shards = cut_of(one_cell, 2, recorded)
        # negotiation has no record: its declared 0.5, scaled as the recorded areas' 12.5 declared are to 29 s
        assert weights["softuet/negotiation"] == round(0.5 * 29 / 12.5, 3)
        assert shards == [["softuet/av"], ["softuet/msg", "softuet/authz", "softuet/wire", "softuet/negotiation"]]

    def test_a_file_that_is_no_run_is_refused_naming_it(self, tmp_path):
        (tmp_path / "results.json").write_text("[1, 2]\n")
        with pytest.raises(partition.ShardError) as refused:
            partition.recorded_durations(tmp_path)
        assert str(refused.value).startswith(f"--shard-weights {tmp_path}: ")


class TestTheFingerprint:
    PARTS = {"suite": {"commit": "a" * 40, "modified": False}, "binaries": {"suite": {"cases/uet-cases-msg": "1"}},
             "libfabric": {"suite": "2"}, "manifests": [{"name": "softuet", "provider": "softuet", "sha256": "3"}],
             "seed": 7, "count": 3, "spec_version": "1.0.1", "mode": "default",
             "options": {"only": [], "placement": None}, "weights": {"softuet": 14.0}}

    def test_it_does_not_depend_on_the_order_of_keys(self):
        shuffled = dict(reversed(list(self.PARTS.items())))
        assert fingerprint.of(shuffled) == fingerprint.of(self.PARTS)

    @pytest.mark.parametrize("part,value", [("seed", 8), ("count", 2), ("suite", {"commit": "b" * 40, "modified": False}),
                                            ("binaries", {"suite": {"cases/uet-cases-msg": "9"}}),
                                            ("options", {"only": ["msg"], "placement": None})])
    def test_a_part_that_differs_is_named(self, part, value):
        other = dict(self.PARTS, **{part: value})
        assert fingerprint.of(other) != fingerprint.of(self.PARTS)
        assert fingerprint.differing(self.PARTS, other) == [part]


class TestTheOption:
    @pytest.mark.parametrize("given,message", [
        ("0/3", "--shard 0/3: the shard's number is 1 to 3"), ("4/3", "--shard 4/3: the shard's number is 1 to 3"),
        ("1/0", "--shard 1/0: a run has at least 1 shard"),
        ("x", "--shard x: give I/N, this shard's number and the number of shards, e.g. --shard 2/3"),
        ("-1/3", "--shard -1/3: give I/N"), ("1/3/4", "--shard 1/3/4: give I/N")])
    def test_a_bad_shard_exits_2_naming_it(self, given, message, capsys):
        with pytest.raises(SystemExit) as done:
            run_options.parse([f"--shard={given}", "--seed", "7"])
        assert done.value.code == 2
        assert message in capsys.readouterr().err

    def test_a_shard_needs_a_seed(self, capsys):
        with pytest.raises(SystemExit) as done:
            run_options.parse(["--shard", "2/3"])
        assert done.value.code == 2
        assert "--shard needs --seed: every shard of a run runs with the same seed" in capsys.readouterr().err

    def test_weights_need_a_shard(self, capsys):
        with pytest.raises(SystemExit):
            run_options.parse(["--shard-weights", "out/runs/latest"])
        assert "--shard-weights goes with --shard I/N" in capsys.readouterr().err

    def test_a_good_shard_is_its_numbers(self):
        args, _ = run_options.parse(["--shard", "2/3", "--seed", "7"])
        assert args.shard == (2, 3)
