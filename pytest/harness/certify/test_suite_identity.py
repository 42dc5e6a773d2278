"""Issue 35, item 9: `./uet certify` took every untracked file as a change of the suite, so the vendor's manifest
that the README's `manifest init -o vendor.yaml` leaves in the checkout made every package INVALID. An untracked
file counts only where it can change what runs: inside a folder the commit tracks, or where Python could load
it."""
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.files import suite_identity  # noqa: E402


@pytest.fixture
def checkout(tmp_path):
    """A git checkout of one commit holding harness/run.py and a top-level README."""
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)
    git("init", "-q")
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "run.py").write_text("print('run')\n")
    (tmp_path / "README.md").write_text("suite\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    return tmp_path


class TestUntrackedFiles:
    def test_a_vendors_manifest_beside_the_checkout_is_no_change(self, checkout):
        (checkout / "vendor.yaml").write_text("provider: x\n")
        (checkout / "labs" / "a").mkdir(parents=True)
        (checkout / "labs" / "a" / "vendor.yaml").write_text("provider: x\n")
        assert suite_identity.changes(checkout) == []

    @pytest.mark.parametrize("path", ["harness/extra.txt", "yaml.py", "labs/sitecustomize.py", "labs/x.pth",
                                      "labs/native.so"])
    def test_what_could_change_what_runs_is_a_change(self, checkout, path):
        (checkout / path).parent.mkdir(parents=True, exist_ok=True)
        (checkout / path).write_text("")
        assert suite_identity.changes(checkout) == [f"?? {path}"]

    def test_a_change_to_a_tracked_file_is_a_change(self, checkout):
        (checkout / "README.md").write_text("changed\n")
        assert suite_identity.changes(checkout) == [" M README.md"]
