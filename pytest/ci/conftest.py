"""The CI definitions of ci/ carried out on this machine as their engines would: each job of a GitHub Actions
workflow or a GitLab pipeline in its order (needs, stages), a matrix or parallel: job once per index with the
engine's variables, each job in a workspace of its own (as on a runner of its own) that holds only what it made
and the artifacts it downloaded, the artifacts kept as the engines keep them (paths relative to the
workspace, the exclusions honoured). The commands run from this clone's root, as a runner runs them from its
checkout, with the workspace's variable (GITHUB_WORKSPACE, CI_PROJECT_DIR) naming the job's own folder: the
definitions write there. An expression or key the engine would not know here fails the test, so a definition
cannot use what this carrying-out does not understand."""
from __future__ import annotations

import dataclasses
import fnmatch
import itertools
import os
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
CI = REPO / "ci"
JOB_TIMEOUT_S = 1800
EXPRESSION_RE = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
VARIABLE_RE = re.compile(r"\$(\w+)|\$\{(\w+)\}")


@dataclasses.dataclass
class Job:
    """One job as it ran: its name (with its index), exit status (None: skipped) and output."""
    name: str
    status: int | None
    output: str
    workspace: pathlib.Path


def load(path: pathlib.Path) -> dict:
    return yaml.safe_load(path.read_text())


def _files(workspace: pathlib.Path, paths: list[str], excludes: list[str]) -> list[pathlib.Path]:
    """The files below `paths` (relative to the workspace, globs allowed), less those matching `excludes`."""
    found = []
    for pattern in paths:
        for top in sorted(workspace.glob(pattern.rstrip("/"))):
            below = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
            found += [p for p in below if not any(
                fnmatch.fnmatch(str(q.relative_to(workspace)), e.rstrip("/"))
                for e in excludes for q in (p, *p.parents) if q != workspace and workspace in q.parents)]
    return found


def _keep(files: list[pathlib.Path], root: pathlib.Path, store: pathlib.Path) -> None:
    for f in files:
        (store / f.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, store / f.relative_to(root))  # follows a link, as the engines' uploads do


def _shell(script: str, env: dict, shell: list[str]) -> tuple[int, str]:
    done = subprocess.run([*shell, script], cwd=REPO, env=env, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    return done.returncode, done.stdout + done.stderr


class GitHubRun:
    """One run of a workflow: run(overrides) carries out every job; `overrides` are the workflow's env values a
    lab would set (e.g. UET_RUN_OPTIONS)."""

    def __init__(self, path: pathlib.Path, top: pathlib.Path, run_number: int):
        self.doc, self.top, self.run_number = load(path), top, run_number
        self.artifacts: dict[str, pathlib.Path] = {}
        self.jobs: list[Job] = []

    def expand(self, text, context: dict):
        if not isinstance(text, str):  # a YAML boolean or number stays one
            return text

        def one(m):
            expr = m.group(1)
            if expr in context:
                return str(context[expr])
            raise AssertionError(f"an expression this test does not know: ${{{{ {expr} }}}}")
        return EXPRESSION_RE.sub(one, text)

    def condition(self, expr: str | None, failed: bool) -> bool:
        if expr is None:
            return not failed
        expr = EXPRESSION_RE.sub(lambda m: m.group(1), expr).strip()
        assert expr in ("!cancelled()", "always()", "success()", "failure()"), expr
        return {"success()": not failed, "failure()": failed}.get(expr, True)

    def order(self) -> list[str]:
        jobs, done = self.doc["jobs"], []
        while len(done) < len(jobs):
            ready = [j for j in jobs if j not in done and all(n in done for n in _listed(jobs[j].get("needs")))]
            assert ready, f"the jobs' needs make a circle: {jobs.keys() - set(done)}"
            done += ready
        return done

    def run(self, overrides: dict | None = None) -> list[Job]:
        base = {"github.run_number": self.run_number}
        env = {k: self.expand(v, base) for k, v in self.doc.get("env", {}).items()} | (overrides or {})
        shell_name = self.doc.get("defaults", {}).get("run", {}).get("shell", "bash")
        assert shell_name == "bash", shell_name
        failed_jobs: set[str] = set()
        for name in self.order():
            spec = self.doc["jobs"][name]
            needs_failed = any(n in failed_jobs for n in _listed(spec.get("needs")))
            matrix = spec.get("strategy", {}).get("matrix", {})
            keys = sorted(matrix)
            for values in itertools.product(*(matrix[k] for k in keys)) if keys else [()]:
                cells = dict(zip(keys, values))
                label = name + "".join(f"-{v}" for v in values)
                if not self.condition(spec.get("if"), needs_failed):
                    self.jobs.append(Job(label, None, "skipped", self.top))
                    continue
                job = self.job(label, spec, env, base | {f"matrix.{k}": v for k, v in cells.items()}
                               | {f"env.{k}": v for k, v in env.items()})
                self.jobs.append(job)
                if job.status:
                    failed_jobs.add(name)
        return self.jobs

    def job(self, label: str, spec: dict, env: dict, context: dict) -> Job:
        workspace = self.top / label
        workspace.mkdir()
        full_env = dict(os.environ, **env, GITHUB_WORKSPACE=str(workspace), CI="true")
        status, output = 0, ""
        for step in spec["steps"]:
            if not self.condition(step.get("if"), status != 0):
                continue
            if "run" in step:
                rc, said = _shell(self.expand(step["run"], context), full_env,
                                  ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"])
                output += said
                status = status or rc
            else:
                rc, said = self.action(step["uses"], {k: self.expand(v, context) for k, v in step.get("with", {}).items()},
                                       workspace)
                output += said
                status = status or rc
        return Job(label, status, output, workspace)

    def action(self, uses: str, given: dict, workspace: pathlib.Path) -> tuple[int, str]:
        name, _, _ = uses.partition("@")
        if name == "actions/checkout":
            return 0, ""
        if name == "actions/upload-artifact":
            lines = [line.strip() for line in given["path"].splitlines() if line.strip()]
            paths = [p for p in lines if not p.startswith("!")]
            files = _files(workspace, paths, [p[1:] for p in lines if p.startswith("!")])
            if not files:
                return (1 if given.get("if-no-files-found") == "error" else 0), f"no files for {given['name']}\n"
            assert given["name"] not in self.artifacts or given.get("overwrite") is True, given["name"]
            # one path: its folder is the artifact's root; several: their common folder
            root = workspace / os.path.commonpath([p.rstrip("/") for p in paths]) if len(paths) > 1 else \
                workspace / paths[0].rstrip("/")
            store = self.top / "artifacts" / given["name"]
            shutil.rmtree(store, ignore_errors=True)
            _keep(files, root if root.is_dir() else root.parent, store)
            self.artifacts[given["name"]] = store
            return 0, ""
        if name == "actions/download-artifact":
            to = workspace / given.get("path", ".")
            chosen = [n for n in self.artifacts if fnmatch.fnmatch(n, given.get("pattern", given.get("name", "*")))]
            for n in chosen:
                shutil.copytree(self.artifacts[n], to if given.get("merge-multiple") is True else to / n,
                                dirs_exist_ok=True)
            return (0, "") if chosen else (1, "no artifact to download\n")
        raise AssertionError(f"an action this test does not know: {uses}")


class GitLabRun:
    """One pipeline: run(overrides) carries out every job by stage (needs: the artifacts of the jobs named)."""

    def __init__(self, path: pathlib.Path, top: pathlib.Path, pipeline_iid: int):
        self.doc, self.top = load(path), top
        self.predefined = {"CI_PIPELINE_IID": str(pipeline_iid), "CI": "true"}
        self.artifacts: dict[str, list[pathlib.Path]] = {}
        self.jobs: list[Job] = []

    def jobs_of(self, stage: str) -> list[str]:
        return [k for k, v in self.doc.items() if isinstance(v, dict) and v.get("stage") == stage]

    def run(self, overrides: dict | None = None) -> list[Job]:
        variables = {k: _expand_variables(str(v), self.predefined) for k, v in self.doc.get("variables", {}).items()}
        variables |= overrides or {}
        failed = False
        for stage in self.doc["stages"]:
            for name in self.jobs_of(stage):
                spec = self.doc[name]
                assert spec.get("when", "on_success") in ("on_success", "always"), spec.get("when")
                count = spec.get("parallel")
                for index in range(1, count + 1) if count else [None]:
                    label = f"{name} {index}/{count}" if index else name
                    if failed and spec.get("when") != "always":
                        self.jobs.append(Job(label, None, "skipped", self.top))
                        continue
                    node = {"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(count)} if index else {}
                    job = self.job(label, name, spec, variables | node)
                    self.jobs.append(job)
                    failed = failed or job.status != 0
        return self.jobs

    def job(self, label: str, name: str, spec: dict, variables: dict) -> Job:
        folder = label.replace(" ", "-").replace("/", "-of-")   # "shard 2/3" -> shard-2-of-3
        workspace = self.top / folder
        workspace.mkdir()
        for need in spec.get("needs", []):
            need_name = need["job"] if isinstance(need, dict) else need
            if not isinstance(need, dict) or need.get("artifacts", True):
                for store in self.artifacts.get(need_name, []):
                    shutil.copytree(store, workspace, dirs_exist_ok=True)
        env = dict(os.environ, **self.predefined, **variables, CI_PROJECT_DIR=str(workspace), CI_JOB_NAME=label)
        status, output = _shell("\n".join(spec["script"]), env, ["bash", "-eo", "pipefail", "-c"])
        kept = spec.get("artifacts")
        if kept and (status == 0 or kept.get("when") == "always"):
            store = self.top / "artifacts" / folder
            _keep(_files(workspace, kept["paths"], kept.get("exclude", [])), workspace, store)
            self.artifacts.setdefault(name, []).append(store)
        return Job(label, status, output, workspace)


def _listed(value) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def _expand_variables(text: str, known: dict) -> str:
    """A GitLab variable's value with the variables it names put in (as GitLab expands them)."""
    return VARIABLE_RE.sub(lambda m: known.get(m.group(1) or m.group(2), m.group(0)), text)


@pytest.fixture
def github_run(tmp_path):
    """github_run(workflow_path, run_number=N) -> a GitHubRun whose jobs' workspaces are in the test's folder."""
    made = itertools.count()
    return lambda path, run_number=7: GitHubRun(path, _fresh(tmp_path, next(made)), run_number)


@pytest.fixture
def gitlab_run(tmp_path):
    """gitlab_run(pipeline_path, pipeline_iid=N) -> a GitLabRun whose jobs' workspaces are in the test's folder."""
    made = itertools.count()
    return lambda path, pipeline_iid=7: GitLabRun(path, _fresh(tmp_path, next(made)), pipeline_iid)


def _fresh(tmp_path: pathlib.Path, n: int) -> pathlib.Path:
    top = tmp_path / f"ci-{n}"
    top.mkdir()
    return top
