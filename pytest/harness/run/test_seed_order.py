"""The order of a run's results. The seed places the counted loss and names the attempts; it does not reorder
a binary's cases (nothing shuffles them: shuffled, the security cases depend on their order), so the case
binaries are not given a googletest seed that would say it does. The report lists the results in the plan's
order (cells, their areas, each binary's cases as they ran), not as cells run side by side ended."""
import os
import pathlib

import pytest

from harness.run.run_cases import run_manifest

REPO = pathlib.Path(__file__).resolve().parents[3]
SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="softuet's cells run in namespace pairs: root")


@pytest.fixture(scope="module")
def av_runs(build_dir, tmp_path_factory):
    """seed -> (the cases in the order they ended, the binary's command lines from its log), of the av area
    (single-process, quick)."""
    out = {}
    for seed in (1, 2):
        folder, ended = tmp_path_factory.mktemp(f"av-{seed}"), []
        run_manifest(SOFTUET, build_dir, folder, areas=["av"], seed=seed, on_result=lambda r: ended.append(r.case))
        out[seed] = ended, [line for line in (folder / "av.log").read_text().splitlines() if line.startswith("$ ")]
    return out


class TestTheSeed:
    def test_the_case_binaries_get_no_googletest_seed(self, av_runs):
        # Before: --gtest_random_seed=N on every binary, without --gtest_shuffle: it decided nothing.
        for _, argvs in av_runs.values():
            assert argvs and all("--gtest_random_seed" not in a and "--gtest_shuffle" not in a for a in argvs), argvs

    def test_the_cases_run_in_the_binary_order_whatever_the_seed(self, av_runs):
        assert len(av_runs[1][0]) > 10
        assert av_runs[1][0] == av_runs[2][0]


class TestTheReportFollowsThePlan:
    VARIANTS = ["", "#ai_base", "#ai_base+ai_full", "#ai_base+hpc", "#ai_full", "#ai_full+hpc", "#hpc"]

    def test_cells_run_side_by_side_are_reported_one_after_the_other(self, uet_run_here, tmp_path):
        # Before: results.json listed the cases as they ended, so seven cells run at once came in the order they
        # happened to end (and the JUnit's suites, the statement's lists with them): two runs of one seed differed.
        status, outcome, said = uet_run_here("--matrix", *[f"{SOFTUET}{v}" for v in self.VARIANTS], "--only", "av",
                                             "--jobs", "7", "--seed", "3", "--report", tmp_path, "--quiet")
        assert status == 0, said[-2000:]
        cells = [c["id"] for c in outcome.doc["cells"]]
        assert cells == ["softuet"] + [f"softuet-{v[1:].replace('_', '-')}" for v in self.VARIANTS[1:]]
        seen = [r["cell"] for r in outcome.doc["results"]]
        assert seen == sorted(seen, key=cells.index)
        by_cell = [[r["case"] for r in outcome.doc["results"] if r["cell"] == c] for c in cells]
        assert all(cases == by_cell[0] for cases in by_cell)   # the same binary's cases, in its order in each cell
