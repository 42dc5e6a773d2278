"""The run's seed and the order of the cases: the seed places the counted loss and names the attempts; it does
not reorder a binary's cases (nothing shuffles them: shuffled, the security cases depend on their order), so
the case binaries are not given a googletest seed that would say it does."""
import os
import pathlib

import pytest

from harness.run.run_cases import run_manifest

REPO = pathlib.Path(__file__).resolve().parents[2]
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

