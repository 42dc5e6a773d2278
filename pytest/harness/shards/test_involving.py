"""./uet run --matrix ... --involving MANIFEST (a vendor's CI): only the matrix's cells whose initiator or
target is that manifest, known by its name; one the matrix does not hold is bad usage naming the matrix's."""
import pytest

from harness.inputs import manifest as manifest_mod
from harness.run import plan as plan_mod

# Areas as the case binaries declare them (harness/run/run_cases.py area_traits): one of each kind.
TRAITS = {"discovery": {"processes": 1, "profile_pairs": False}, "wire": {"processes": 2, "profile_pairs": False}}
MATRIX = ["softuet.yaml", "softuet.yaml#hpc", "softuet.yaml#ai_full"]


def ids(cells) -> list[str]:
    return [c.id for c in cells]


class TestInvolving:
    def test_keeps_the_cells_whose_initiator_or_target_is_the_manifest(self):
        cells = plan_mod.cells("matrix", MATRIX, TRAITS, set())
        assert ids(plan_mod.involving(cells, "softuet.yaml#hpc")) == [
            "softuet-hpc", "softuet__softuet-hpc", "softuet-hpc__softuet", "softuet-hpc__softuet-ai-full",
            "softuet-ai-full__softuet-hpc"]
        assert len(cells) == 9

    def test_without_it_the_matrix_is_whole(self):
        cells = plan_mod.cells("matrix", MATRIX, TRAITS, set())
        assert plan_mod.involving(cells, None) == cells

    def test_a_manifest_the_matrix_does_not_hold_is_refused_naming_the_matrix(self):
        cells = plan_mod.cells("matrix", MATRIX[:2], TRAITS, set())
        with pytest.raises(manifest_mod.ManifestError) as e:
            plan_mod.involving(cells, "softuet.yaml#ai_full")
        assert str(e.value) == ("--involving softuet.yaml#ai_full: its provider softuet-ai-full is not one of the "
                                "matrix's (softuet, softuet-hpc)")

    def test_the_run_plan_carries_it(self):
        from harness.run import run_suite
        assert run_suite.plan(["--matrix", *MATRIX, "--involving", "softuet.yaml#hpc"]).involving == "softuet.yaml#hpc"
        assert run_suite.plan(["--matrix", *MATRIX]).involving is None
