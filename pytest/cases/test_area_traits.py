"""Issue 36, item 3: each area declares its traits beside its cases (UET_AREA_TRAITS, cases/common/claims/area_traits.hpp),
its binary prints them (--uet-traits, one JSON line) and harness/run/run_cases.py's area_traits reads them once;
the harness's choices (which cells run an area, the suite's entity, the counted loss, the progress weight, the
mutation run's pairs of profile sets) follow them. Expected values come from the sources' declarations, each
read with the struct's defaults, so a binary that prints other than it declares, or a reader that drops or
renames a trait, fails here; a binary that prints none is an error naming it."""
import json
import pathlib
import re
import subprocess

import pytest

from harness.inputs import manifest as manifest_mod
from harness.run import plan as plan_mod
from harness.run.run_cases import Cell, CellRun, TraitsError, area_traits, areas_for, case_binaries

REPO = pathlib.Path(__file__).resolve().parents[2]
HEADER = REPO / "cases" / "common" / "claims" / "area_traits.hpp"
DECLARATION_RE = re.compile(r"^UET_AREA_TRAITS\((.*)\);$", re.M)


def defaults() -> dict:
    """AreaTraits' members with their defaults, as the header gives them."""
    body = HEADER.read_text().split("struct AreaTraits {", 1)[1].split("};", 1)[0]
    return {name: json.loads(value) for name, value in
            re.findall(r"^\s+(?:int|bool|double) (\w+) = ([^;]+);", body, re.M)}


def declared(area: str) -> dict:
    """The area's traits as its sources declare them: cases/*/<area>_cases.cpp, or the sources of the folder
    named after it (a binary of several sources), holding one declaration."""
    sources = sorted((REPO / "cases").glob(f"*/{area}_cases.cpp")) or sorted((REPO / "cases" / area).glob("*.cpp"))
    found = [args for source in sources for args in DECLARATION_RE.findall(source.read_text())]
    assert len(found) == 1, (area, sources, found)
    return dict(defaults(), **{k: json.loads(v) for k, v in re.findall(r"\.(\w+) = ([^,]+)", found[0])})


@pytest.fixture(scope="module")
def built(build_dir):
    binaries = case_binaries(build_dir)
    if not binaries:
        pytest.fail(f"no case binaries in {build_dir / 'cases'}: run ./uet build")
    return binaries


class TestTheBinaries:
    def test_each_prints_one_json_line_of_the_traits(self, built):
        for area, binary in built.items():
            run = subprocess.run([str(binary), "--uet-traits"], capture_output=True, text=True)
            assert (run.returncode, run.stderr, run.stdout.count("\n")) == (0, "", 1), area
            assert sorted(json.loads(run.stdout)) == sorted(defaults()), area

    def test_each_prints_what_its_source_declares(self, built, build_dir):
        assert area_traits(build_dir) == {a: declared(a) for a in built}
        assert len(built) > 15


class TestTheHarnessFollowsThem:
    def test_a_cell_of_two_manifests_runs_the_two_process_areas(self, built, build_dir):
        assert areas_for(True, build_dir) == list(built)
        assert areas_for(False, build_dir) == [a for a in built if declared(a)["processes"] == 2]
        assert 0 < len(areas_for(False, build_dir)) < len(built)

    def test_a_pair_run_plans_single_process_areas_per_side_and_the_rest_across(self, build_dir):
        traits = area_traits(build_dir)
        cells = plan_mod.cells("pair", ["softuet.yaml", "softuet.yaml#hpc"], traits, set())
        assert [(c.id, c.areas) for c in cells] == [
            ("softuet", [a for a, t in traits.items() if t["processes"] == 1]),
            ("softuet-hpc", [a for a, t in traits.items() if t["processes"] == 1]),
            ("softuet__softuet-hpc", [a for a, t in traits.items() if t["processes"] == 2])]

    def test_the_default_run_pairs_profile_sets_for_the_areas_about_them(self, build_dir):
        traits = area_traits(build_dir)
        pairs = [a for a in traits if declared(a)["profile_pairs"]]
        assert pairs
        cells = plan_mod.cells("default", [], traits, set())
        assert {tuple(c.areas) for c in cells if not c.solo} == {tuple(pairs)}
        assert all(c.areas == list(traits) for c in cells if c.solo)

    def test_a_cell_takes_each_area_s_entity_and_loss_from_the_initiator_s_binary(self, built, build_dir, tmp_path):
        m = manifest_mod.load("softuet.yaml")
        run = CellRun(Cell(m, m, list(built)), build_dir, tmp_path)
        assert {a: run._traits(a) for a in built} == {a: declared(a) for a in built}
        assert run._traits("not-built") == {}


class TestAnAreaWithoutTraits:
    @pytest.mark.parametrize("body", ['echo "This program contains tests written using Google Test."',
                                      "echo '{\"processes\": 2}'", "exit 1"])
    def test_is_an_error_naming_its_binary(self, tmp_path, body):
        binary = tmp_path / "cases" / "uet-cases-undeclared"
        binary.parent.mkdir()
        binary.write_text(f"#!/bin/sh\n{body}\n")
        binary.chmod(0o755)
        with pytest.raises(TraitsError) as e:
            area_traits(tmp_path)
        assert str(e.value).startswith(f"{binary} does not say its area's traits (--uet-traits printed no JSON "
                                       "object of processes, entity, loss_every, weight, profile_pairs; each area "
                                       "declares UET_AREA_TRAITS)")
