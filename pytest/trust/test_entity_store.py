"""The entity's secrets are the entity's (issue 34, finding 1). Its SQLite store holds the secure-domain keys
and the token key; it was made 0644 in a 0755 folder, and user nobody copied both during a run. Now the
store and its -wal and -shm are 0600 from their creation, in a folder only root enters, inside a cell
folder others may pass through to the socket but not list. (A store where another user may write is
refused: pytest/entity/test_local_crowd.py, TestStoreFolder.)"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

from harness.run.entity import EntityError, own_folder, suite_entity

KEY = bytes(range(0x40, 0x60))
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
# Run as nobody: for each file named, what reading it gave (the key found in it, or why it could not be read).
READ = textwrap.dedent("""
    import json, sys
    said = {}
    for name in sys.argv[2:]:
        try:
            with open(name, "rb") as f:
                said[name] = f"read, the key in it: {bytes.fromhex(sys.argv[1]) in f.read()}"
        except OSError as e:
            said[name] = e.strerror
    print(json.dumps(said))
""")
CONNECT = textwrap.dedent("""
    import socket, sys
    socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect(sys.argv[1])
    print("connected")
""")


def as_nobody(*cmd) -> subprocess.CompletedProcess:
    return subprocess.run([*NOBODY, *map(str, cmd)], capture_output=True, text=True, timeout=30)


def key_update(build_dir: pathlib.Path, sock) -> None:
    r = subprocess.run([str(build_dir / "bin" / "uet-entity-ctl"), "--socket", str(sock), "key-update", "--sdi", "9",
                        "--key", KEY.hex(), "--epoch", "2", "--job", "291"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


@pytest.fixture
def harness_entity(build_dir, tmp_path):
    """The entity as the harness starts it for a cell (harness/run/entity.py), holding a secure-domain key; yields
    its folder."""
    if os.geteuid() != 0:
        pytest.skip("the suite's entity runs as root, set against user nobody")
    with suite_entity(build_dir, tmp_path / "entity.log") as sock:
        key_update(build_dir, sock)
        yield pathlib.Path(sock).parent


class TestTheHarnesssEntity:
    def test_nobody_reads_no_file_of_its_store(self, harness_entity):
        files = sorted(harness_entity.rglob("entity.db*"))  # found as root, wherever the store is
        assert KEY in b"".join(p.read_bytes() for p in files)  # the secret is there to be had
        names = [files[0].with_name(name) for name in ("entity.db", "entity.db-wal", "entity.db-shm")]
        r = as_nobody(sys.executable, "-c", READ, KEY.hex(), *names)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == {str(p): "Permission denied" for p in names}
        assert {p.name: (oct(p.stat().st_mode), p.stat().st_uid) for p in files} == \
            {"entity.db": (oct(0o100600), 0), "entity.db-wal": (oct(0o100600), 0)}

    def test_nobody_lists_none_of_its_folders_yet_reaches_its_socket(self, harness_entity):
        folders = [harness_entity, *(p for p in harness_entity.rglob("*") if p.is_dir())]
        for folder in folders:
            r = as_nobody("ls", "-a", folder)
            assert r.returncode == 2 and "Permission denied" in r.stderr, (folder, r.stdout)
        assert len(folders) == 2  # the cell's folder and the store's
        r = as_nobody(sys.executable, "-c", CONNECT, harness_entity / "control.sock")
        assert (r.returncode, r.stdout) == (0, "connected\n"), r.stderr


class TestTheEntitysFolders:
    @pytest.mark.parametrize("plant", ["folder", "symlink"])
    def test_a_folder_another_user_put_there_first_is_refused(self, plant):
        """The harness makes the entity's folders where it expects none; one user nobody put there first (a
        folder of its own, or a symlink to a folder of root's) is refused, and nothing is made or changed."""
        if os.geteuid() != 0:
            pytest.skip("set user nobody against root: runs as root")
        top = pathlib.Path(tempfile.mkdtemp(prefix="uet-entity-folders-"))
        try:
            top.chmod(0o777)
            roots = top / "roots"
            roots.mkdir(mode=0o755)
            planted = top / "store"
            r = as_nobody(*(["mkdir", planted] if plant == "folder" else ["ln", "-s", roots, planted]))
            assert r.returncode == 0, r.stderr
            with pytest.raises(EntityError) as refused:
                own_folder(planted, 0o700)
            assert str(refused.value).startswith(f"the entity's folder {planted} ")
            assert (planted.lstat().st_uid, oct(roots.stat().st_mode)) == (65534, oct(0o40755))
        finally:
            shutil.rmtree(top, ignore_errors=True)
