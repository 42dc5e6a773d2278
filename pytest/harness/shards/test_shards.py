"""./uet run --shard I/N: the cut of the plan (harness/shards/partition.py) and the plan fingerprint
(harness/shards/fingerprint.py), on the cells of the front door's modes (harness/run/plan.py) with declared
traits; the option at the front door. The runs of shards and their merge: test_merge.py."""
import dataclasses
import pathlib

import pytest

from harness.commands import run as run_options
from harness.results.results import write_results_json
from harness.run import plan as plan_mod
from harness.run import run_plan, run_suite
from harness.shards import fingerprint, partition

REPO = pathlib.Path(__file__).resolve().parents[3]


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
    """The default run's cells: softuet and its six profile-set variants (each against itself), and the 42
    negotiation pairs."""
    return plan_mod.cells("default", [], TRAITS, set())


@pytest.fixture(scope="module")
def one_cell():
    return plan_mod.cells("provider", ["softuet.yaml"], TRAITS, set())


class TestTheCutOfSeveralCells:
    def test_every_unit_is_in_exactly_one_shard(self, default_cells):
        _, shards = cut_of(default_cells, 3)
        units = [u for s in shards for u in s]
        assert sorted(units) == sorted(u.name for u in partition.units_of(default_cells))
        assert len(units) == len(set(units)) == 7 * 5 + 42

    def test_an_interop_cell_is_never_split(self, default_cells):
        _, shards = cut_of(default_cells, 3)
        pairs = [c for c in default_cells if not c.solo]
        assert len(pairs) == 42
        assert sorted(u for s in shards for u in s if "/" not in u) == sorted(c.id for c in pairs)
        for s in shards:
            kept = [(i, c) for i, c in partition.cells_of_shard(default_cells, s) if not c.solo]
            assert all(c is default_cells[i] for i, c in kept)

    def test_a_cell_of_one_manifest_is_cut_by_area_its_areas_in_one_shard_each(self, default_cells):
        _, shards = cut_of(default_cells, 3)
        softuet = default_cells[0]
        ran = [c.areas for s in shards for i, c in partition.cells_of_shard(default_cells, s) if i == 0]
        assert softuet.id == "softuet" and softuet.solo and len(ran) > 1
        assert sorted(a for areas in ran for a in areas) == sorted(softuet.areas)
        assert all(areas == [a for a in softuet.areas if a in areas] for areas in ran)  # each in the cell's order

    def test_each_cell_keeps_its_index_in_the_whole_plan(self, default_cells):
        _, shards = cut_of(default_cells, 3)
        for s in shards:
            for index, cell in partition.cells_of_shard(default_cells, s):
                assert default_cells[index].id == cell.id

    def test_the_cut_is_the_same_every_time(self, default_cells):
        again = plan_mod.cells("default", [], TRAITS, set())
        assert cut_of(default_cells, 3) == cut_of(again, 3)

    def test_the_shards_weigh_near_the_same(self, default_cells):
        weights, shards = cut_of(default_cells, 3)
        # an area weighs its declared weight (7 x 13), a negotiation pair 1 + 0.5 (42 x 1.5): 154 in all
        assert [weights[u] for u in ("softuet/msg", "softuet/negotiation", "softuet__softuet-hpc")] == [6.0, 0.5, 1.5]
        loads = [sum(weights[u] for u in s) for s in shards]
        assert loads == [53.0, 50.5, 50.5]

    def test_each_cell_of_one_manifest_is_spread_over_the_shards(self, default_cells):
        # its areas run one after another: a cell whole in one shard would be that shard's long pole
        weights, shards = cut_of(default_cells, 3)
        for cell in (c for c in default_cells if c.solo):
            portions = [sum(weights[u] for u in s if u.startswith(cell.id + "/")) for s in shards]
            # msg (6) alone in one shard, authz (3.5) in another, the rest (3.5) in the third
            assert sorted(portions) == [3.5, 3.5, 6.0], (cell.id, portions)

    def test_each_shard_lists_its_units_in_plan_order(self, default_cells):
        _, shards = cut_of(default_cells, 3)
        order = [u.name for u in partition.units_of(default_cells)]
        assert all(s == sorted(s, key=order.index) for s in shards)

    def test_one_shard_is_the_whole_plan(self, default_cells):
        _, shards = cut_of(default_cells, 1)
        assert shards == [[u.name for u in partition.units_of(default_cells)]]
        assert [(i, c.areas) for i, c in partition.cells_of_shard(default_cells, shards[0])] == \
            [(i, c.areas) for i, c in enumerate(default_cells)]


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


    def test_involving_is_the_manifest_it_names_not_its_spelling(self):
        manifests = REPO / "cases" / "manifests"

        def options(involving):
            argv = ["--matrix", str(manifests / "softuet.yaml"), str(manifests / "personalities" / "extended-address.yaml"),
                    "--involving", involving, "--seed", "7"]
            return fingerprint.options(run_suite.plan(argv))
        same = options(str(manifests / "softuet.yaml"))
        assert same["involving"] == "softuet"
        assert options(f"{manifests}/personalities/../softuet.yaml") == same
        assert options(str(manifests / "personalities" / "extended-address.yaml")) != same

    def test_every_field_of_the_plan_is_fingerprinted_or_said_not_to_decide(self):
        said = fingerprint.DECIDING_OPTIONS + fingerprint.IN_OTHER_PARTS + fingerprint.NOT_DECIDING
        assert sorted(said) == sorted(f.name for f in dataclasses.fields(run_plan.RunPlan))
        assert len(set(said)) == len(said)


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

    def test_more_shards_than_units_exits_2_before_anything_runs(self, cmd_uet_run, tmp_path):
        done = cmd_uet_run("--provider", "softuet.yaml", "--only", "av", "--only", "mr", "--seed", "7", "--shard", "3/3",
                           "--report", tmp_path, "--quiet")
        assert (done.returncode, done.stderr) == (2, "uet run: --shard 3/3: this run has 2 unit(s) to share out "
                                                     "(softuet/av, softuet/mr), fewer than 3 shards: a shard would run "
                                                     "nothing; give at most 2 shards\n")
        assert list(tmp_path.iterdir()) == []

    def test_a_good_shard_is_its_numbers(self):
        args, _ = run_options.parse(["--shard", "2/3", "--seed", "7"])
        assert args.shard == (2, 3)


class TestTheTreesChanges:
    def test_the_same_edits_agree_and_other_edits_differ(self, tmp_path):
        (tmp_path / "a.py").write_text("one\n")
        first = fingerprint.changes_digest([" M a.py"], repo=tmp_path)
        assert fingerprint.changes_digest([" M a.py"], repo=tmp_path) == first
        (tmp_path / "a.py").write_text("two\n")
        assert fingerprint.changes_digest([" M a.py"], repo=tmp_path) != first
        assert fingerprint.changes_digest([], repo=tmp_path) is None
