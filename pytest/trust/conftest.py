"""Fixtures of the trust-boundary tests that more than one file uses: the hostile user (`nobody`, through
setpriv), folders it controls or shares with root, a file of root's it would like overwritten, libfabric
installations laid out as `make install` lays them out (made by root or by nobody), a run against a hostile
provider, and the harness's commands run as ./uet runs them (behind harness/commands/guard.py, so a traceback
shows as exit 3)."""
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import types

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.run import run_suite  # noqa: E402
from harness.wire.capture_cap import CAPTURE_CAP_BYTES  # noqa: E402

CHATTY_CASE = "Wire.NumberedRequestsCarryANonzeroMessageId"

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
NOBODY_UID = 65534
# A command that reads a hostile file must not take the host's memory with it, whatever it does wrong.
MEMORY_CAP = 2 << 30


@pytest.fixture
def as_nobody():
    """as_nobody(*argv) -> the CompletedProcess of argv run as nobody; it must succeed."""
    def run(*argv):
        done = subprocess.run([*NOBODY, *map(str, argv)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done
    return run


def _folder_under_tmp(mode: int):
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-test-trust-", dir="/tmp"))
    folder.chmod(mode)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def shared_tmp():
    """A folder like /tmp: root's, world-writable and sticky, so nobody may make things in it (tmp_path is
    root's 0700)."""
    yield from _folder_under_tmp(0o1777)


@pytest.fixture
def reachable():
    """A folder of root's (0755) under /tmp that nobody may enter but not write (tmp_path is 0700)."""
    yield from _folder_under_tmp(0o755)


def write_libfabric(root: pathlib.Path, *, fi_info: str = "exit 1", cflags: str = "-I${includedir}",
                    others: dict[str, str] | None = None, at: pathlib.Path | None = None) -> pathlib.Path:
    """An installation of libfabric 2.1 at `root` (installed for `at`, where it is then copied): bin/fi_info (a
    shell script of `fi_info`), lib/libfabric.so, its .pc file with `cflags` (and `others`: more .pc files by
    name, in the same folder) and its headers."""
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "fi_info").write_text(f"#!/bin/sh\n{fi_info}\n")
    (root / "bin" / "fi_info").chmod(0o755)
    (root / "lib" / "pkgconfig").mkdir(parents=True)
    (root / "lib" / "libfabric.so").write_text("")
    pc = (f"prefix={at or root}\nexec_prefix=${{prefix}}\nlibdir=${{exec_prefix}}/lib\nincludedir=${{prefix}}/include\n\n"
          f"Name: libfabric\nVersion: 2.1.0\nCflags: {cflags}\nLibs: -L${{libdir}} -lfabric\n")
    for name, text in {"libfabric.pc": pc, **(others or {})}.items():
        (root / "lib" / "pkgconfig" / name).write_text(text)
    (root / "include" / "rdma").mkdir(parents=True)
    (root / "include" / "rdma" / "fabric.h").write_text("#define FI_MAJOR_VERSION 2\n#define FI_MINOR_VERSION 1\n")
    return root


@pytest.fixture
def root_libfabric(tmp_path):
    """root_libfabric(name='lf', under=tmp_path, **parts) -> an installation root made, by default in a folder
    only root may write."""
    def make(name="lf", under=tmp_path, **parts):
        return write_libfabric(under / name, **parts)
    return make


@pytest.fixture
def nobodys_libfabric(shared_tmp, as_nobody):
    """nobodys_libfabric(**parts) -> shared_tmp/lf, an installation nobody made: laid out by root, then copied
    there by nobody, so every file of it is nobody's."""
    def make(**parts):
        staged = write_libfabric(shared_tmp / "staged" / "lf", at=shared_tmp / "lf", **parts)
        as_nobody("cp", "-r", staged, shared_tmp / "lf")
        shutil.rmtree(shared_tmp / "staged")
        return shared_tmp / "lf"
    return make


@pytest.fixture
def check_usage(tmp_path, capsys):
    """check_usage(*args) -> (exit status, stdout, stderr) of ./uet run's answer before its set-up and build
    (what ./uet asks first, in this process)."""
    def run(*args):
        capsys.readouterr()
        rc = run_suite.main([*map(str, args), "--check-usage", "--build", str(tmp_path / "no-build"),
                             "--report", str(tmp_path / "runs")])
        out, err = capsys.readouterr()
        return rc, out, err
    return run


@pytest.fixture(scope="module")
def uet_decode(build_dir):
    return build_dir / "bin" / "uet-decode"


@pytest.fixture(scope="module")
def chatty_run(build_dir, cmd_uet_run, results_of, tmp_path_factory):
    """A run of one wire case (CHATTY_CASE) against softuet with the chatty provider (cases/hostile/chatty.c)
    in its place: 4 MiB more than a capture keeps goes on the wire at its first send. Its results.json
    (doc), run folder (folder) and the case's result (result)."""
    if not (build_dir / "hostile" / "libchatty-fi.so").exists():
        pytest.fail(f"the chatty provider is not built in {build_dir}/hostile: run ./uet build")
    folder = tmp_path_factory.mktemp("chatty")
    manifest = folder / "chatty.yaml"
    manifest.write_text(f"extends: {REPO}/cases/manifests/softuet.yaml\n"
                        "environment:\n  FI_PROVIDER_PATH: \"{build}/hostile\"\n"
                        "  CHATTY_WRAPS: \"{build}/lib/libsoftuet-fi.so\"\n"
                        f"  CHATTY_BYTES: \"{CAPTURE_CAP_BYTES + (4 << 20)}\"\n")
    run = cmd_uet_run("--provider", manifest, "--only", CHATTY_CASE, "--report", folder / "runs", "--quiet", timeout=900)
    # 1: its one case is an error (the flood pushed its frames past the cap; test_capture_cap says why)
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    run_dir = (folder / "runs" / "latest").resolve()
    doc = results_of(run_dir)
    found = [r for r in doc["results"] if CHATTY_CASE in r["case"]]
    assert len(found) == 1, [(r["case"], r["verdict"], r["reason"]) for r in doc["results"]]
    return types.SimpleNamespace(doc=doc, folder=run_dir, result=found[0])


@pytest.fixture
def nobody_folder(reachable):
    """A folder nobody made and owns, where root is asked to write."""
    folder = reachable / "nobody-owns-this"
    folder.mkdir()
    os.chown(folder, NOBODY_UID, NOBODY_UID)
    return folder


@pytest.fixture
def shared_folder(reachable):
    """A folder of root's that every user may write, with the sticky bit (as /tmp)."""
    folder = reachable / "shared"
    folder.mkdir()
    folder.chmod(0o1777)
    return folder


class Victim:
    """A file of root's that a planted link points at."""
    TEXT = "root's own file: nothing the suite writes\n"

    def __init__(self, path: pathlib.Path):
        self.path = path
        path.write_text(self.TEXT)

    def untouched(self) -> bool:
        return self.path.read_text() == self.TEXT


@pytest.fixture
def victim(tmp_path):
    return Victim(tmp_path / "victim")


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


@pytest.fixture
def cmd_guarded():
    """cmd_guarded(command, module, *args, timeout=120, limits=None) -> CompletedProcess (text) of
    `python3 -m harness.commands.guard COMMAND MODULE ARGS`, as ./uet runs it, with at most MEMORY_CAP of
    memory; `limits`: more (resource, value) limits."""
    def run(command, module, *args, timeout=120, limits=()):
        def preexec():
            _capped()
            for which, value in limits:
                resource.setrlimit(which, (value, value))
        env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-m", "harness.commands.guard", command, module, *map(str, args)],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=preexec)
    return run


@pytest.fixture
def fake_build(tmp_path, traits_line):
    """A build whose one case binary (area aaa) exits at once: a run of it writes a whole report in seconds."""
    build = tmp_path / "build"
    (build / "cases").mkdir(parents=True)
    binary = build / "cases" / "uet-cases-aaa"
    binary.write_text(f"#!/bin/sh\n[ \"$1\" != --uet-traits ] || echo '{traits_line}'\nexit 0\n")
    binary.chmod(0o755)
    return build
