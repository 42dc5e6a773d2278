"""What a submission says about the suite that made it (suite.json): the commit, whether the tree had
changes, and the SHA-256 of what decided its verdicts (the case binaries, the suite's libraries, the decoder
and the spec data). ./uet certify writes it; ./uet verify compares it with this checkout; a shard of a run (./uet run --shard,
harness/shards/fingerprint.py) puts it in its fingerprint.
"""
from __future__ import annotations

import hashlib
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]
SPEC_DIR = REPO / "spec"


class SuiteStateError(RuntimeError):
    """git cannot tell this checkout's commit or state."""


def file_sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _git(*args: str, repo: pathlib.Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60)


def commit(repo: pathlib.Path = REPO) -> str:
    proc = _git("rev-parse", "HEAD", repo=repo)
    if proc.returncode != 0:
        raise SuiteStateError(f"git rev-parse HEAD in {repo}: {proc.stderr.strip()}")
    return proc.stdout.strip()


# An untracked file of these kinds can change what runs wherever it lies: Python finds modules (and .pth
# files, native extensions) by name on a path that holds the checkout.
RUNNABLE_SUFFIXES = (".py", ".pyc", ".pth", ".so")


def changes(repo: pathlib.Path = REPO) -> list[str]:
    """`git status --porcelain` lines: what differs from the commit and can change what runs (ignored build
    outputs do not count). An untracked file counts inside a folder the commit tracks, or when Python could
    load it; a vendor's manifest beside the checkout (`manifest init -o vendor.yaml`) does not."""
    proc = _git("status", "--porcelain", "--untracked-files=all", repo=repo)
    if proc.returncode != 0:
        raise SuiteStateError(f"git status in {repo}: {proc.stderr.strip()}")
    tracked = set(_git("ls-tree", "--name-only", "-d", "HEAD", repo=repo).stdout.split())
    return [line for line in proc.stdout.splitlines() if line.strip() and _counts(line, tracked)]


def _counts(line: str, tracked_folders: set[str]) -> bool:
    if not line.startswith("?? "):
        return True
    path = line[3:].strip('"')
    return path.endswith(RUNNABLE_SUFFIXES) or path.split("/", 1)[0] in tracked_folders


def is_known_commit(sha: str, repo: pathlib.Path = REPO) -> bool:
    """sha is a commit of this checkout's history: HEAD's or one a branch or tag reaches (an object that
    merely lies in the repository, unreachable, is not history)."""
    if not isinstance(sha, str) or len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
        return False
    if _git("cat-file", "-e", f"{sha}^{{commit}}", repo=repo).returncode != 0:
        return False
    if _git("merge-base", "--is-ancestor", sha, "HEAD", repo=repo).returncode == 0:
        return True
    return bool(_git("for-each-ref", "--count=1", "--contains", sha, "refs/heads", "refs/remotes", "refs/tags",
                     repo=repo).stdout.strip())


def built_files(build: pathlib.Path) -> dict[str, pathlib.Path]:
    """The built files whose bytes decide verdicts and decodes, by their path under the build tree."""
    found = sorted(build.glob("cases/uet-cases-*")) + sorted(build.glob("lib/*.so*")) + [build / "bin" / "uet-decode"]
    return {str(p.relative_to(build)): p for p in found if p.is_file() and not p.is_symlink()}


def spec_files(spec_dir: pathlib.Path = SPEC_DIR) -> dict[str, pathlib.Path]:
    return {f"spec/{p.name}": p for p in sorted(spec_dir.glob("*.yaml"))}


def hashes(files: dict[str, pathlib.Path]) -> dict[str, str]:
    return {name: file_sha256(path) for name, path in files.items()}


def describe(build: pathlib.Path, repo: pathlib.Path = REPO) -> dict:
    """suite.json's content for this checkout and build."""
    changed = changes(repo)
    return {"commit": commit(repo), "modified": bool(changed), "changes": changed,
            "built_sha256": hashes(built_files(build)), "spec_sha256": hashes(spec_files(repo / "spec"))}
