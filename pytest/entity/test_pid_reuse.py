"""A grant names a process, not a number (issue 24, finding 3): what root maps to a pid, and the keys of the
secure domains bound to its JobIDs, go to the process that had the pid when it was mapped, and die with it.
The probe (pid_reuse_probe.py) runs in a pid namespace of its own, where it sets the next pid itself."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

import control as c

PROBE = pathlib.Path(__file__).with_name("pid_reuse_probe.py")
EACCES, ENOENT = 13, 2
KEY = bytes(range(0x40, 0x60)).hex()


@pytest.fixture
def probe(build_dir):
    if os.geteuid() != 0:
        pytest.skip("the probe sets pids in a pid namespace of its own and runs askers as nobody: it runs as root")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-pid-reuse-"))
    folder.chmod(0o755)

    def run(scenario):
        r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", sys.executable, str(PROBE),
                            str(build_dir / "bin"), str(folder), scenario], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr + (folder / "entity.log").read_text(errors="replace")
        out = json.loads(r.stdout)
        assert out["asker_pid"] == out["granted_pid"], "the probe did not get the pid reused"
        return out

    try:
        yield run
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class TestPidReuse:
    def test_a_process_given_an_exited_grantees_pid_gets_neither_its_jobid_nor_its_key(self, probe):
        out = probe("exited")
        pid = out["asker_pid"]
        # The grantee itself was served: the check, the key, an address.
        assert [(r["error"], r["key"]) for r in out["granted"]] == [(0, None), (0, KEY), (0, None)]
        assert [(r["error"], r["key"]) for r in out["asker"]] == [(EACCES, None), (EACCES, None), (ENOENT, None)]
        check, key, alloc = out["asker"]
        assert check["what"] == f"JobID 291 is not granted to pid {pid} (uid 65534) for service 'svc'"
        assert key["what"] == f"secure domain 7 is bound to JobID 291, which is not granted to pid {pid} (uid 65534)"
        assert alloc["what"] == f"no JobID is mapped to pid {pid} (uid 65534) for service 'svc'"

    def test_a_connection_left_by_an_exited_process_speaks_for_no_one(self, probe):
        """SO_PEERCRED names the pid of the process that connected; a child that inherits the connection and
        outlives it is not whoever takes that pid next."""
        out = probe("inherited")
        assert [(r["error"], r["key"]) for r in out["asker"]] == [(EACCES, None), (EACCES, None), (ENOENT, None)]


class TestKeyWithoutJob:
    def test_a_key_bound_to_no_jobid_is_sent_to_no_process(self, entity):
        conn = c.Connection(entity.socket)
        assert conn.call(c.message("JOB_MAP", c.u32("pid", os.getpid()), c.string("service", "s"),
                                   c.u32("job_id", 291)))["error"] == 0
        r = entity.run_ctl("key-update", "--sdi", 11, "--key", KEY, "--epoch", 1)
        assert r.returncode == 0, r.stderr
        reply = conn.call(c.message("KEY_REQUEST", c.u32("sdi", 11)))
        assert (reply["error"], reply["attr"]) == (EACCES, c.ATTR["sdi"])
        assert reply["what"] == "secure domain 11 is bound to no JobID: its key goes to no process"
