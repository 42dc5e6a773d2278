"""No root write into a place another user controls (issue: trust boundaries, finding 2). The impostor-entity
case (ControlApi.AnEntityNotRunningAsRootIsNotBelieved) used to make a mode-0777 folder under /tmp and copy
uet-entity into it as root: a `nobody` process that planted a link there had root overwrite a file of its
choice. Now root copies only into a folder only root may write (cases/single/impostor_folders.cpp), and
the impostor's own folder is emptied with the impostor's rights. A racer running as nobody plants links
in every uet-impostor-* folder it can while the case runs; the file they point at must stay as it was.

The case makes its folders in TMPDIR, here a folder of the test's own: another run of the suite on the host
makes impostor folders of its own in /tmp, which these tests must not see.

Issue 34 (low): the impostor ran as the shared `nobody`, so any other nobody process could take its socket or end
it, and the provider was blamed. It now runs as the suite's own user, uet-impostor (setup/impostor-user.sh)."""
import json
import pathlib
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.run.run_cases import run_manifest  # noqa: E402

CASE = "ControlApi.AnEntityNotRunningAsRootIsNotBelieved"
RACER = textwrap.dedent("""
    # Plants links named as what root writes (the binary's copy) in every impostor folder it can write,
    # as fast as it can, until its standard input closes; says what it saw and planted.
    import json, os, select, sys
    target, tmp, seen, planted = sys.argv[1], sys.argv[2], set(), []
    while not select.select([sys.stdin], [], [], 0)[0]:
        for entry in os.scandir(tmp):
            if not entry.name.startswith("uet-impostor-"):
                continue
            seen.add(entry.name)
            for folder in (entry.path, entry.path + "/bin"):  # where root writes
                try:
                    os.symlink(target, folder + "/uet-entity")
                    planted.append(folder)
                except OSError:
                    pass
    print(json.dumps({"seen": sorted(seen), "planted": planted}))
""")


@pytest.fixture
def own_tmp():
    """A TMPDIR for the case that only this test looks in: root's, 0755 (the impostor, as nobody, passes
    through it to its folders; nobody may write in it). Not under tmp_path, which nobody may not pass."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-test-impostor-tmp-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class TestImpostorFolder:
    def test_a_racer_as_nobody_cannot_make_root_write_through_a_link(self, build_dir, tmp_path, own_tmp):
        victim_dir = tmp_path / "victim"
        victim_dir.mkdir()
        victim = victim_dir / "root-owned"
        victim.write_text("root's own file\n")
        racer = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable,
                                  "-c", RACER, str(victim), str(own_tmp)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            results = run_manifest(REPO / "cases" / "manifests" / "softuet.yaml", build_dir, tmp_path / "out",
                                   areas=["entity"], case_filter=CASE, ports=(48440, 48441),
                                   extra_env={"TMPDIR": str(own_tmp)})
        finally:
            said, _ = racer.communicate("", timeout=30)
        raced = json.loads(said)
        assert raced["seen"], "the racer never saw the impostor's folder: it did not race"
        assert victim.read_bytes() == b"root's own file\n", "root wrote through a link nobody planted"
        assert raced["planted"] == []
        assert [(r.case, r.verdict) for r in results] == [(CASE, "pass")], results[0].reason
        assert list(own_tmp.iterdir()) == [], "the case left its impostor folders behind"

    def test_the_folders_belong_to_root_and_to_the_impostor(self, build_dir, tmp_path, own_tmp):
        """While the impostor runs: its parent and bin folder are root's 0755, its own folder is the suite's
        impostor user's 0700, and the impostor entity runs as that user (real, effective, saved and file ids)."""
        watcher = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
            import json, os, select, sys
            def running(binary):  # the ids of the process that runs `binary`, once it does
                for pid in filter(str.isdigit, os.listdir("/proc")):
                    try:
                        if os.readlink(f"/proc/{pid}/exe") == binary:
                            status = open(f"/proc/{pid}/status").read().splitlines()
                            return next(line.split()[1:] for line in status if line.startswith("Uid:"))
                    except OSError:  # gone, or not ours to read
                        pass
            while not select.select([sys.stdin], [], [], 0)[0]:
                for e in os.scandir(sys.argv[1]):
                    # Its own folder handed to the impostor's user: the modes are final from then until the
                    # case's end, a window a loaded host does not miss (the impostor runs until then).
                    try:
                        uids = running(e.path + "/bin/uet-entity") if e.name.startswith("uet-impostor-") else None
                        if uids and os.stat(e.path + "/own").st_uid != 0:
                            st = {p: os.stat(e.path + p) for p in ("", "/bin", "/own")}
                            print(json.dumps({**{p: [s.st_uid, oct(s.st_mode & 0o7777)] for p, s in st.items()},
                                              "impostor": uids}))
                            sys.exit()
                    except OSError:  # not made yet, or already gone
                        pass
            print("{}")
        """), str(own_tmp)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            run_manifest(REPO / "cases" / "manifests" / "softuet.yaml", build_dir, tmp_path / "out",
                         areas=["entity"], case_filter=CASE, ports=(48442, 48443), extra_env={"TMPDIR": str(own_tmp)})
        finally:
            said, _ = watcher.communicate("", timeout=30)
        impostor = pwd.getpwnam("uet-impostor").pw_uid  # ./uet setup makes it (setup/impostor-user.sh)
        assert impostor != 65534
        assert json.loads(said) == {"": [0, "0o755"], "/bin": [0, "0o755"], "/own": [impostor, "0o700"],
                                    "impostor": [str(impostor)] * 4}
