"""The entity holds under a local crowd (issue 24, finding 5): one user's connections cannot starve root's,
the token key is never written into a file another user made, a damaged store is refused at start, and the
trace is private, bounded and keeps no secure-domain key unless asked."""
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import pytest

import control as c
from harness.run.entity import EntityError, wait_serving

NOBODY = 65534
OTHER = 4242
PER_USER = 128  # entity/src/server.cpp: kMaxConnectionsPerUser
KEY = bytes(range(0x20, 0x40))
SETPRIV_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]

# Run as nobody: opens N connections (each connect waits for the entity to take it), asks one request on
# each, prints how many were answered, then holds them all until a line comes on stdin.
CROWD = ("import socket, sys\n"
         "conns = []\n"
         "for _ in range(int(sys.argv[2])):\n"
         "    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); conns.append(s)\n"
         "served = 0\n"
         "for s in conns:\n"
         "    s.settimeout(5)\n"
         "    try:\n"
         "        s.send(bytes.fromhex(sys.argv[3])); served += len(s.recv(65536)) > 0\n"
         "    except OSError:\n"
         "        pass\n"
         "print(served, flush=True)\n"
         "sys.stdin.readline()\n")


@pytest.fixture
def open_folder(build_dir):
    """A folder every user may write into (mode 0777, not sticky), as a careless /run or /tmp sub-folder is."""
    if os.geteuid() != 0:
        pytest.skip("these tests set users against root: they run as root")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-entity-open-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def as_nobody(*cmd):
    r = subprocess.run([*SETPRIV_NOBODY, *cmd], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr


class TestConnectionLimits:
    def test_one_users_crowd_of_connections_leaves_root_and_other_users_served(self, entity):
        ask = c.message("JOB_GET", c.string("service", "s")).hex()
        crowd = subprocess.Popen([*SETPRIV_NOBODY, sys.executable, "-c", CROWD, str(entity.socket), "600", ask],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert crowd.stdout.readline().strip() == str(PER_USER)  # the rest were closed at once
            r = entity.run_ctl("map", "--pid", 77, "--service", "s", "--job", 5)
            assert r.returncode == 0, r.stderr
            assert entity.run_ctl("list").stdout == "77 s 5\n"
            other = entity.run_ctl("get", "--service", "s", user=OTHER)
            assert other.returncode == 1 and "no JobID is mapped to pid" in other.stderr  # answered, not shut out
        finally:
            crowd.communicate("\n", timeout=10)
        assert "uid 65534 holds 128 connections" in entity.log.read_text()


class TestTokenKeyFile:
    @pytest.mark.parametrize("plant", ["file", "symlink"])
    def test_a_file_another_user_planted_is_not_written_into(self, entity_at, open_folder, plant):
        """User nobody plants the name the key used to be written through (token.key.new): a file of its own,
        or a symlink to a root-owned file. The key ends up in a root-owned 0600 token.key, and neither the
        planted file nor the symlink's target changes."""
        victim = open_folder.parent / f"{open_folder.name}-victim"
        victim.write_text("root's\n")
        try:
            planted = open_folder / "token.key.new"
            if plant == "file":
                as_nobody("sh", "-c", f"echo nobody\\'s > {planted}; chmod 666 {planted}")
            else:
                as_nobody("ln", "-s", str(victim), str(planted))
            e = entity_at(open_folder)
            try:
                e.start()
            finally:
                e.stop()
            key = open_folder / "token.key"
            st = key.lstat()
            assert (oct(st.st_mode), st.st_uid, st.st_size) == (oct(0o100600), 0, 32)
            assert victim.read_text() == "root's\n"
            if plant == "file":
                assert (planted.read_text(), planted.stat().st_uid) == ("nobody's\n", NOBODY)
        finally:
            victim.unlink()


class TestStoreFolder:
    def test_a_write_ahead_log_planted_by_nobody_is_never_written_the_keys(self, entity_at, open_folder):
        """User nobody makes entity.db-wal, a file of its own every user may write, before the entity starts;
        SQLite would open it and write the keys into it. The entity refuses the folder and exits 3."""
        planted = open_folder / "entity.db-wal"
        as_nobody("sh", "-c", f": > {planted}; chmod 666 {planted}")
        e = entity_at(open_folder)
        e.store = open_folder / "entity.db"
        try:
            e.start()
            assert e.run_ctl("key-update", "--sdi", 9, "--key", KEY.hex(), "--epoch", 2, "--job", 291).returncode == 0
            pytest.fail(f"the entity serves from a folder every user writes; nobody's -wal holds the key: "
                        f"{KEY in planted.read_bytes()}")
        except EntityError:
            pass
        finally:
            e.stop()
        assert e.proc.returncode == 3
        assert e.log.read_text() == (f"uet-entity: the entity's store {e.store}: its folder {open_folder} is writable "
                                     "by other users\n")
        assert (planted.read_bytes(), e.store.exists()) == (b"", False)


def corrupt_a_page_of(store: pathlib.Path, table: str) -> int:
    """Overwrites the page-type byte of one of `table`'s leaf pages (an invalid type); returns the page number."""
    db = sqlite3.connect(store)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    page = db.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1",
                      (table,)).fetchone()[0]
    db.close()  # the last connection checkpoints the write-ahead log into the file
    with open(store, "r+b") as f:
        f.seek((page - 1) * page_size)
        f.write(b"\x00")
    return page


class TestDamagedStore:
    def test_a_store_with_a_corrupted_page_is_refused_at_start_naming_the_file(self, entity):
        conn = c.Connection(entity.socket)
        for pid in range(1000, 1400):
            assert conn.call(c.message("JOB_MAP", c.u32("pid", pid), c.string("service", "many"),
                                       c.u32("job_id", pid)))["error"] == 0
        conn.close()
        entity.stop()
        corrupt_a_page_of(entity.store, "job_map")
        log = entity.folder / "damaged.log"
        with open(log, "w") as out:
            proc = subprocess.Popen([str(entity.binary), "--socket", str(entity.socket), "--store", str(entity.store)],
                                    stdout=subprocess.DEVNULL, stderr=out)
        try:
            wait_serving(proc, entity.socket, log)
            pytest.fail("the entity serves from a damaged store")
        except EntityError:
            pass
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
        said = log.read_text()
        assert proc.returncode == 3, said
        assert f"uet-entity: the entity's store {entity.store} is damaged (PRAGMA quick_check: " in said
        assert "it is not used: restore a copy, or move it away to start with an empty store" in said

    def test_an_intact_store_starts(self, entity):
        entity.stop()
        entity.start()
        assert entity.run_ctl("list").returncode == 0


def trace_lines(path: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class TestTrace:
    def start(self, entity_at, folder, *args):
        e = entity_at(folder)
        e.args = ["--trace", str(folder / "trace.jsonl"), *args]
        return e.start()

    def key_traffic(self, e):
        """An administrator sets a key, this process (mapped) asks for it."""
        assert e.run_ctl("key-update", "--sdi", 9, "--key", KEY.hex(), "--epoch", 2, "--job", 291).returncode == 0
        conn = c.Connection(e.socket)
        assert conn.call(c.message("JOB_MAP", c.u32("pid", os.getpid()), c.string("service", "s"),
                                   c.u32("job_id", 291)))["error"] == 0
        assert conn.call(c.message("KEY_REQUEST", c.u32("sdi", 9)))["error"] == 0
        conn.close()

    def test_a_trace_is_0600_and_holds_no_key(self, entity_at, open_folder):
        e = self.start(entity_at, open_folder)
        try:
            self.key_traffic(e)
        finally:
            e.stop()
        trace = open_folder / "trace.jsonl"
        assert (oct(trace.stat().st_mode), trace.stat().st_uid) == (oct(0o100600), 0)
        assert KEY.hex() not in trace.read_text()
        lines = trace_lines(trace)
        update = next(line for line in lines if line["cmd"] == "KEY_UPDATE")
        request = next(line for line in lines if line["cmd"] == "KEY_REQUEST")
        assert update["attrs"]["key"] == "redacted: 32 bytes (--trace-keys records it)"
        assert request["replies"][0]["attrs"]["key"] == "redacted: 32 bytes (--trace-keys records it)"

    def test_keys_are_traced_only_when_asked(self, entity_at, open_folder):
        e = self.start(entity_at, open_folder, "--trace-keys")
        try:
            self.key_traffic(e)
        finally:
            e.stop()
        request = next(line for line in trace_lines(open_folder / "trace.jsonl") if line["cmd"] == "KEY_REQUEST")
        assert request["replies"][0]["attrs"]["key"] == KEY.hex()

    def test_a_trace_stops_growing_at_its_cap_and_says_so(self, entity_at, open_folder):
        e = self.start(entity_at, open_folder, "--trace-max-bytes", "4096")
        trace = open_folder / "trace.jsonl"
        try:
            conn = c.Connection(e.socket)
            for seq in range(1, 101):
                assert conn.call(c.message("JOB_GET", c.string("service", "s"), seq=seq))["error"] == 2
            size = trace.stat().st_size
            for seq in range(101, 201):  # still answered, no longer recorded
                assert conn.call(c.message("JOB_GET", c.string("service", "s"), seq=seq))["error"] == 2
            assert trace.stat().st_size == size
        finally:
            e.stop()
        assert size <= 4096
        lines = trace_lines(trace)
        assert lines[-1] == {"trace_capped_at_bytes": 4096}
        assert all(line["cmd"] == "JOB_GET" for line in lines[:-1]) and len(lines) > 10
        assert f"the trace {trace} reached its cap of 4096 bytes" in e.log.read_text()

    def test_a_trace_file_another_user_made_is_not_written_into(self, entity_at, open_folder):
        trace = open_folder / "trace.jsonl"
        as_nobody("sh", "-c", f": > {trace}; chmod 666 {trace}")
        e = entity_at(open_folder)
        e.args = ["--trace", str(trace)]
        r = subprocess.run([str(e.binary), "--socket", str(e.socket), "--store", str(e.store), *e.args],
                           capture_output=True, text=True, timeout=10)
        assert r.returncode == 3
        assert f"the trace {trace} belongs to uid 65534, not to this entity: it is not written into" in r.stderr
        assert trace.read_text() == ""
