"""Fixtures of the trust-boundary tests that more than one file uses: a folder like /tmp where the hostile user
`nobody` (through setpriv) makes what root is then asked to use, libfabric installations laid out as
`make install` lays them out, made by root or by nobody, and a run against a hostile provider."""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import types

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from harness import run_suite  # noqa: E402
from harness.capture_cap import CAPTURE_CAP_BYTES  # noqa: E402

CHATTY_CASE = "Wire.NumberedRequestsCarryANonzeroMessageId"

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
NOBODY_UID = 65534


@pytest.fixture
def as_nobody():
    """as_nobody(*argv) -> the CompletedProcess of argv run as nobody; it must succeed."""
    def run(*argv):
        done = subprocess.run([*NOBODY, *map(str, argv)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done
    return run


@pytest.fixture
def shared_tmp():
    """A folder like /tmp: root's, world-writable and sticky, so nobody may make things in it (tmp_path is
    root's 0700)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-test-trust-", dir="/tmp"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


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
def chatty_run(build_dir, tmp_path_factory):
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
    run = subprocess.run([sys.executable, "-m", "harness.run_suite", "--provider", manifest, "--only", CHATTY_CASE,
                          "--build", build_dir, "--report", folder / "runs", "--quiet"], cwd=REPO,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    run_dir = (folder / "runs" / "latest").resolve()
    doc = json.loads((run_dir / "results.json").read_text())
    found = [r for r in doc["results"] if CHATTY_CASE in r["case"]]
    assert len(found) == 1, [(r["case"], r["verdict"], r["reason"]) for r in doc["results"]]
    return types.SimpleNamespace(doc=doc, folder=run_dir, result=found[0])
