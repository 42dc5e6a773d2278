"""The ready-made CI definitions of ci/ (GitHub Actions, GitLab, the Slurm batch scripts): every file parses,
their structure holds together (the shards' matrix or parallel: and N, the merge after every shard and also
when one failed, the artifacts where the merge reads them), and their commands, carried out here in the
engines' order with the engines' variables (pytest/ci/conftest.py), end with a merged run that passes and is
the union of the shards. A definition whose command is broken fails here."""
import pathlib
import subprocess

import pytest
import yaml

CI = pathlib.Path(__file__).resolve().parents[2] / "ci"

GITHUB_MATRIX = CI / "github" / "uet-matrix.yml"
GITHUB_VENDOR = CI / "github" / "uet-vendor.yml"
GITLAB = CI / "gitlab" / "uet.gitlab-ci.yml"
SLURM_SCRIPTS = (CI / "slurm" / "uet-shard.sbatch", CI / "slurm" / "uet-merge.sbatch")
SMALL_RUN = "--only discovery"   # one area: what a lab sets in UET_RUN_OPTIONS, small here to keep ./uet test short


def load(path: pathlib.Path) -> dict:
    return yaml.safe_load(path.read_text())


def union_of(results_of, runs) -> list[tuple[str, str]]:
    return sorted((r["id"], r["verdict"]) for run in runs for r in results_of(run)["results"])


def statuses(jobs) -> dict[str, int | None]:
    return {j.name: j.status for j in jobs}


def said(jobs) -> str:
    return "\n".join(f"--- {j.name} ({j.status})\n{j.output[-3000:]}" for j in jobs)


def shard_runs(jobs, prefix: str) -> list[pathlib.Path]:
    """The run folder each shard job wrote in its own workspace, by shard index."""
    found = {}
    for j in jobs:
        if j.name.startswith(prefix):
            (run,) = [p for p in (j.workspace / "out" / "shards").glob("*/*") if not p.is_symlink()]
            found[int(run.parent.name)] = run
    return [found[i] for i in sorted(found)]


class TestEveryFile:
    def test_ci_holds_only_definitions_this_test_reads(self):
        assert sorted(p for p in CI.rglob("*") if p.is_file()) == sorted(
            [GITHUB_MATRIX, GITHUB_VENDOR, GITLAB, *SLURM_SCRIPTS])

    @pytest.mark.parametrize("path", [GITHUB_MATRIX, GITHUB_VENDOR, GITLAB], ids=lambda p: p.name)
    def test_each_yaml_definition_parses_to_a_mapping(self, path):
        assert isinstance(load(path), dict)

    @pytest.mark.parametrize("path", SLURM_SCRIPTS, ids=lambda p: p.name)
    def test_each_batch_script_is_shell_that_parses(self, path):
        done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (0, "")


def commands(path: pathlib.Path) -> list[str]:
    """The shell lines of a definition: GitHub's steps' run:, GitLab's jobs' script:."""
    doc = load(path)
    scripts = [step["run"] for job in doc.get("jobs", {}).values() for step in job["steps"] if "run" in step] + \
        [line for job in doc.values() if isinstance(job, dict) for line in job.get("script", [])]
    return [line.strip() for script in scripts for line in script.splitlines() if line.strip()]


# What a runner needs besides the README's set-up: nothing. A line calls ./uet, or lists the shards' folders.
PLAIN_SHELL = ("./uet ", "set --", 'for run in "$')


class TestEveryCommand:
    @pytest.mark.parametrize("path", [GITHUB_MATRIX, GITHUB_VENDOR, GITLAB], ids=lambda p: p.name)
    def test_calls_only_uet_and_plain_shell(self, path):
        lines = commands(path)
        assert [line for line in lines if not line.startswith(PLAIN_SHELL)] == []
        assert any(line.startswith("./uet run ") for line in lines)


class TestTheGitHubMatrix:
    def test_a_job_per_shard_1_to_n_and_a_merge_after_all_of_them_even_a_failed_one(self):
        doc = load(GITHUB_MATRIX)
        n = int(doc["env"]["UET_SHARDS"])
        assert doc["jobs"]["shard"]["strategy"]["matrix"]["shard"] == list(range(1, n + 1))
        assert doc["jobs"]["shard"]["strategy"]["fail-fast"] is False
        assert (doc["jobs"]["merge"]["needs"], doc["jobs"]["merge"]["if"]) == ("shard", "${{ !cancelled() }}")

    def test_the_shards_and_the_merge_give_one_passing_run_that_is_their_union(self, github_run, results_of):
        jobs = github_run(GITHUB_MATRIX).run({"UET_RUN_OPTIONS": SMALL_RUN})
        assert statuses(jobs) == {"shard-1": 0, "shard-2": 0, "shard-3": 0, "merge": 0}, said(jobs)
        merge = jobs[-1].workspace
        merged = results_of(merge / "out" / "runs" / "latest")
        assert merged["summary"]["exit_status"] == 0 and merged["results"]
        assert sorted((r["id"], r["verdict"]) for r in merged["results"]) == union_of(results_of,
                                                                                      shard_runs(jobs, "shard-"))

    def test_a_broken_command_fails_the_workflow(self, github_run, tmp_path):
        broken = tmp_path / "uet-matrix.yml"
        broken.write_text(GITHUB_MATRIX.read_text().replace('--seed "$UET_SEED"', '--sed "$UET_SEED"'))
        jobs = github_run(broken).run({"UET_RUN_OPTIONS": SMALL_RUN})
        assert [j.status for j in jobs[:3]] == [2, 2, 2], said(jobs)
        assert "./uet run: error: unrecognized arguments:" in jobs[0].output and "--sed 7" in jobs[0].output
        assert jobs[-1].name == "merge" and jobs[-1].status not in (0, None)


class TestTheVendorWorkflow:
    def test_it_runs_only_the_cells_involving_the_vendors_provider(self, github_run, results_of):
        # three providers; the vendor's is the middle one
        matrix = "softuet.yaml softuet.yaml#hpc softuet.yaml#ai_full"
        jobs = github_run(GITHUB_VENDOR).run({"UET_MATRIX": matrix, "UET_VENDOR_MANIFEST": "softuet.yaml#hpc",
                                              "UET_RUN_OPTIONS": "--only discovery --only wire"})
        assert statuses(jobs) == {"vendor": 0}, said(jobs)
        run = results_of(jobs[0].workspace / "out" / "runs" / "latest")
        cells = sorted(c["id"] for c in run["cells"])
        assert cells == sorted(["softuet-hpc", "softuet__softuet-hpc", "softuet-hpc__softuet",
                                "softuet-hpc__softuet-ai-full", "softuet-ai-full__softuet-hpc"])
        assert run["summary"]["exit_status"] == 0


class TestTheGitLabPipeline:
    def test_parallel_n_shards_and_a_merge_that_needs_their_artifacts_even_a_failed_ones(self):
        doc = load(GITLAB)
        assert doc["stages"] == ["shards", "merge"]
        assert doc["uet-shard"]["parallel"] == int(doc["variables"]["UET_SHARDS"])
        assert doc["uet-merge"]["needs"] == [{"job": "uet-shard", "artifacts": True}]
        assert (doc["uet-merge"]["when"], doc["uet-shard"]["artifacts"]["when"]) == ("always", "always")

    def test_the_shards_and_the_merge_give_one_passing_run_that_is_their_union(self, gitlab_run, results_of):
        jobs = gitlab_run(GITLAB).run({"UET_RUN_OPTIONS": SMALL_RUN})
        assert statuses(jobs) == {"uet-shard 1/3": 0, "uet-shard 2/3": 0, "uet-shard 3/3": 0, "uet-merge": 0}, \
            said(jobs)
        merged = results_of(jobs[-1].workspace / "out" / "runs" / "latest")
        assert merged["summary"]["exit_status"] == 0 and merged["results"]
        assert sorted((r["id"], r["verdict"]) for r in merged["results"]) == union_of(results_of,
                                                                                      shard_runs(jobs, "uet-shard"))
