"""Issue 24, finding 6: files and locks in shared places. The host lock lives in a folder only root may
enter, is opened without following a symlink and is waited for with a deadline that names its holder; the
stale-cluster cleanup removes only folders the suite made (ours, with its marker); a manifest variant whose
name climbs out of the run folder is refused by the checker and by the place that makes cell folders.
The hostile side runs as `nobody` through setpriv."""
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

from containers import host, nodes  # noqa: E402
from containers.host import HostLock, NamespaceError  # noqa: E402
from harness.files.untrusted import OutsideFolder, folder_inside  # noqa: E402

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
NOBODY_UID = 65534
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the hostile side runs as nobody: needs root")


def as_nobody(*argv):
    run = subprocess.run([*NOBODY, *map(str, argv)], capture_output=True, text=True, timeout=10)
    assert run.returncode == 0, run.stderr
    return run


@pytest.fixture
def shared_tmp():
    """A folder like /tmp: world-writable and sticky, reachable by nobody (tmp_path is not)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-test-shared-", dir="/tmp"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def lock_folder(tmp_path):
    return tmp_path / "lock"


@root_only
class TestHostLock:
    def test_the_default_lock_is_in_a_folder_only_root_may_enter(self):
        # Before: /run/lock/uet-containers.lock, in a folder of mode 1777 where any user may plant a symlink.
        with HostLock() as lock:
            path = os.readlink(f"/proc/self/fd/{lock.fd}")
            folder = os.lstat(os.path.dirname(path))
            file = os.fstat(lock.fd)
        assert os.path.dirname(path) == host.LOCK_DIR
        assert stat.S_ISDIR(folder.st_mode) and (folder.st_uid, stat.S_IMODE(folder.st_mode)) == (0, 0o700)
        assert stat.S_ISREG(file.st_mode) and (file.st_uid, stat.S_IMODE(file.st_mode)) == (0, 0o600)

    def test_a_missing_folder_is_made_0700(self, lock_folder):
        with HostLock(folder=str(lock_folder)) as lock:
            assert lock.path == str(lock_folder / "namespaces.lock")
        st = os.lstat(lock_folder)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o700)

    def test_a_folder_made_by_nobody_is_refused(self, shared_tmp):
        as_nobody("mkdir", "-m", "0700", shared_tmp / "lock")
        with pytest.raises(NamespaceError) as err:
            HostLock(folder=str(shared_tmp / "lock")).__enter__()
        assert str(err.value) == (f"the lock folder {shared_tmp / 'lock'} is owned by uid {NOBODY_UID} with mode 0700: "
                                  "it must be ours (uid 0) and 0700, as no other user may reach the lock; remove it "
                                  "and run again")
        assert os.listdir(shared_tmp / "lock") == []

    def test_a_folder_others_may_write_is_refused(self, lock_folder):
        lock_folder.mkdir(mode=0o700)
        lock_folder.chmod(0o1777)
        with pytest.raises(NamespaceError, match=r"is owned by uid 0 with mode 1777: it must be ours"):
            HostLock(folder=str(lock_folder)).__enter__()

    def test_a_symlink_planted_by_nobody_as_the_folder_is_not_followed(self, shared_tmp, tmp_path):
        victim = tmp_path / "root-only"
        victim.mkdir(mode=0o700)
        as_nobody("ln", "-s", victim, shared_tmp / "lock")
        with pytest.raises(NamespaceError, match=r"cannot be opened as a folder .*not a symlink"):
            HostLock(folder=str(shared_tmp / "lock")).__enter__()
        assert os.listdir(victim) == []

    def test_a_symlink_as_the_lock_file_is_not_followed(self, lock_folder, tmp_path):
        lock_folder.mkdir(mode=0o700)
        victim = tmp_path / "created-by-root"
        (lock_folder / "namespaces.lock").symlink_to(victim)
        with pytest.raises(NamespaceError) as err:
            HostLock(folder=str(lock_folder)).__enter__()
        assert str(err.value) == (f"cannot open the lock file {lock_folder / 'namespaces.lock'}: "
                                  "Too many levels of symbolic links")
        assert not victim.exists()

    def test_a_held_lock_ends_the_wait_at_the_deadline_naming_its_holder(self, lock_folder):
        # Before: flock(LOCK_EX) with no deadline: a holder that never lets go stopped every run for good.
        with HostLock(folder=str(lock_folder)):
            pass
        holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys\n"
                                   f"fd = os.open({str(lock_folder / 'namespaces.lock')!r}, os.O_RDWR)\n"
                                   "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\nsys.stdin.read()"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline() == "held\n"
            with pytest.raises(NamespaceError) as err:
                HostLock(folder=str(lock_folder), deadline=0.3).__enter__()
        finally:
            holder.stdin.close()
            holder.wait(timeout=10)
        message = str(err.value)
        assert message.startswith(f"the host lock {lock_folder / 'namespaces.lock'} was not free within 0.3 s: "
                                  f"held by pid {holder.pid} ({sys.executable} -c import fcntl")
        assert message.endswith("; wait for it to end, or end it")
        with HostLock(folder=str(lock_folder), deadline=0.3):  # free again once the holder is gone
            pass


@root_only
class TestStaleClusterCleanup:
    """cleanup_stale_clusters() as root over a /tmp of its own (tempfile.gettempdir patched); pid 99999 is above
    this machine's pid_max, so its owner is never alive."""

    @pytest.fixture(autouse=True)
    def tmp_is_shared(self, monkeypatch, shared_tmp):
        monkeypatch.setattr(tempfile, "gettempdir", lambda: str(shared_tmp))

    def test_a_folder_of_another_user_is_kept(self, shared_tmp):
        # Before: removed as root, because its name said uet-nodes-<a dead pid>-.
        folder = shared_tmp / "uet-nodes-99999-theirs"
        as_nobody("mkdir", folder)
        as_nobody("sh", "-c", f'echo 99999 > {folder}/{nodes.MARKER} && echo keep > {folder}/data')
        assert nodes.cleanup_stale_clusters() == []
        assert (folder / "data").read_text() == "keep\n"

    def test_a_dead_run_s_own_folder_with_its_marker_is_removed(self, shared_tmp):
        folder = shared_tmp / "uet-nodes-99998-ours"
        folder.mkdir()
        (folder / nodes.MARKER).write_text("99998\n")
        assert nodes.cleanup_stale_clusters() == [str(folder)]
        assert not folder.exists()

    def test_our_folder_without_the_marker_is_kept(self, shared_tmp):
        folder = shared_tmp / "uet-nodes-99997-unmarked"
        folder.mkdir()
        assert nodes.cleanup_stale_clusters() == []
        assert folder.is_dir()

    def test_a_marker_naming_another_pid_is_not_ours(self, shared_tmp):
        folder = shared_tmp / "uet-nodes-99996-other"
        folder.mkdir()
        (folder / nodes.MARKER).write_text("1\n")
        assert nodes.cleanup_stale_clusters() == []
        assert folder.is_dir()

    def test_a_symlink_named_like_a_cluster_is_not_followed(self, shared_tmp, tmp_path):
        victim = tmp_path / "victim"
        victim.mkdir()
        (victim / nodes.MARKER).write_text("99995\n")
        as_nobody("ln", "-s", victim, shared_tmp / "uet-nodes-99995-link")
        assert nodes.cleanup_stale_clusters() == []
        assert sorted(os.listdir(victim)) == [nodes.MARKER]

    def test_the_placement_marks_the_folder_it_makes(self, tmp_path):
        nodes.mark_ours(tmp_path)
        assert (tmp_path / nodes.MARKER).read_text() == f"{os.getpid()}\n"
        assert nodes.is_ours(tmp_path, os.getpid())


BAD_NAMES = ["/..", "..", "../../etc", "a/b", "x\0y", ".hidden", "x" * 101]


def manifest_with_variant(path: pathlib.Path, variant: str) -> pathlib.Path:
    path.write_text("provider: tcp\nuet: false\nendpoint_types: [rdm]\nvariants:\n"
                    f"  {json.dumps(variant)}: {{}}\n  ok: {{}}\n")
    return path


class TestCellFolderNames:
    @pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
    def test_the_checker_refuses_a_variant_name_that_is_not_a_folder_name(self, name, tmp_path):
        # Before: `/..` passed the checker and the run made its cell folder outside the run folder.
        manifest = manifest_with_variant(tmp_path / "m.yaml", name)
        run = subprocess.run([sys.executable, "-m", "harness.inputs.manifest", "check", str(manifest)], cwd=REPO,
                             env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=30)
        assert run.returncode == 1
        # Where the name is, not the name: a message never quotes a file's content (harness/files/input_files.py)
        assert run.stderr == (f"{manifest}: variants: the name of variant 1 of 2 is not a plain name of at most 100 "
                              "characters (letters, digits and _ . + -, starting with a letter or digit): it becomes "
                              "a folder of the run\n")

    def test_the_run_answers_such_a_variant_with_exit_2_before_it_writes(self, cmd_uet_run, tmp_path):
        manifest = manifest_with_variant(tmp_path / "m.yaml", "/..")
        report = tmp_path / "runs"
        run = cmd_uet_run("--provider", f"{manifest}#/..", "--report", report, env={"UET_BUILD": str(tmp_path)}, timeout=30)
        assert run.returncode == 2, run.stderr
        assert f"{manifest}: variants: the name of variant 1 of 2 is not a plain name" in run.stderr
        assert not report.exists()

    @pytest.mark.parametrize("name", ["..", ".", "a/../..", "/etc", "x\0y", ""], ids=repr)
    def test_a_cell_folder_outside_the_run_folder_is_refused(self, name, tmp_path):
        with pytest.raises(OutsideFolder):
            folder_inside(tmp_path / "cells", name)

    def test_a_cell_folder_that_is_a_symlink_out_is_refused(self, tmp_path):
        (tmp_path / "cells").mkdir()
        (tmp_path / "cells" / "softuet").symlink_to("/etc")
        with pytest.raises(OutsideFolder) as err:
            folder_inside(tmp_path / "cells", "softuet")
        assert str(err.value) == f"{tmp_path / 'cells' / 'softuet'} resolves to /etc, outside {tmp_path / 'cells'}"

    def test_a_plain_name_is_the_folder_below(self, tmp_path):
        assert folder_inside(tmp_path / "cells", "softuet-ai-base+hpc__udp") == \
            (tmp_path / "cells" / "softuet-ai-base+hpc__udp").resolve()
