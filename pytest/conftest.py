"""Fixtures shared by the suite's pytest tests: where the built tools are, and capture files."""
import io
import os
import pathlib
import resource
import select
import signal
import struct
import subprocess
import sys
import tarfile

import pytest

# The runs of the suite a test makes or shares (cmd_uet_run, results_of, suite_run, cell_run); not "fixtures":
# pytest has a plugin of its own by that name.
pytest_plugins = ("fixtures_uet",)

REPO = pathlib.Path(__file__).resolve().parent.parent
CHROMIUM = pathlib.Path("/usr/bin/chromium")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "requirements(*ids): the catalogue statements (spec/catalogue.yaml) a wire check covers; they "
        "reach the JUnit XML as the `requirements` property, which harness/results/coverage.py counts")
    config.addinivalue_line(
        "markers", "alone: a test that looks at the whole host (every namespace, process or container, whoever made "
        "it); ./uet test runs these after the parallel workers, one at a time")


@pytest.fixture(autouse=True)
def _requirements_property(request):
    marker = request.node.get_closest_marker("requirements")
    if marker:  # what record_property does; the junit writer puts user_properties into <properties>
        request.node.user_properties.append(("requirements", ",".join(marker.args)))


def _gone(pid: int, timeout: float = 10.0) -> bool:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


@pytest.fixture(scope="session")
def wait_gone():
    """wait_gone(pid, timeout=10) -> True once `pid` no longer runs (a bounded wait on its pidfd)."""
    return _gone


@pytest.fixture(scope="session")
def repo_root():
    return REPO


@pytest.fixture(scope="session")
def traits_line(build_dir):
    """A built case binary's answer to --uet-traits (its area's traits, one JSON line), for a fake case binary
    to give: the harness asks every binary of a build for its traits before it plans a run."""
    from harness.run.run_cases import case_binaries
    binary = next(iter(case_binaries(build_dir).values()), None)
    if binary is None:
        pytest.fail(f"no case binaries in {build_dir / 'cases'}: run ./uet build")
    return subprocess.run([str(binary), "--uet-traits"], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="session")
def build_dir():
    path = pathlib.Path(os.environ.get("UET_BUILD", REPO / "build"))
    if not (path / "bin" / "uet-decode").exists():
        pytest.fail(f"uet-decode is not built in {path}: run ./uet build (or set UET_BUILD)")
    return path


@pytest.fixture(scope="session")
def make_run():
    """make_run(runs, name, results, ci=None, **assemble) -> a run folder runs/name written by the run's own
    writers (harness/run/outputs.py assemble and write_report) for `results` (harness.results.results.Result,
    cell 'udp'); `assemble` overrides assemble's arguments, ci(doc) adds the nightly-CI parts before it is
    written (harness/trends/ci_summary.py add)."""
    import datetime
    from harness.inputs import manifest as manifest_mod
    from harness.run import outputs
    from harness.run.run_cases import Cell

    def make(runs: pathlib.Path, name: str, results: list, ci=None, **assemble) -> pathlib.Path:
        folder = runs / name
        folder.mkdir(parents=True)
        udp = manifest_mod.load(REPO / "cases" / "manifests" / "udp.yaml")
        doc = outputs.assemble(**dict(
            run_id=name, command="./uet run --provider udp.yaml", mode="provider", seed=7, spec_version="1.0.1",
            started=datetime.datetime(2026, 11, 28, 12, tzinfo=datetime.timezone.utc), cells=[Cell(udp, udp, ["msg"])],
            results=results, versions={"udp": "1.0"}, placement="none", partial=False, decode={}, run_dir=folder,
            timings={}, losses={}) | assemble)
        if ci:
            ci(doc)
        outputs.write_report(doc, folder, runs)
        return folder
    return make


def _closed(node):
    """A copy of a JSON schema whose objects that list their properties, and say nothing of others, take no
    other key: what a writer of the suite must keep to (the reader takes the keys of a newer suite)."""
    if isinstance(node, list):
        return [_closed(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _closed(v) for k, v in node.items()}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


@pytest.fixture(scope="session")
def closed_schema_problems():
    """closed_schema_problems(schema, doc) -> every way a document a writer of the suite made breaks its format's
    schema (results.json: harness.results.results.schema(); the conformance statement: harness.results.
    conformance_statement.schema()) or carries a key the schema does not declare; [] when it keeps to it."""
    import jsonschema

    def problems(schema, doc):
        validator = jsonschema.Draft202012Validator(_closed(schema))
        return ["%s: %s" % (".".join(map(str, e.absolute_path)) or "(top level)", e.message[:200])
                for e in validator.iter_errors(doc)]
    return problems


@pytest.fixture(scope="session")
def cmd_uet_decode(build_dir):
    """Run uet-decode with arguments; returns the CompletedProcess (text), never raises on exit status."""
    binary = build_dir / "bin" / "uet-decode"

    def run(*args, timeout=120):
        return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=timeout)

    return run


def write_pcap(path, frames, linktype=1, snaplen=65535):
    """A classic pcap file of (bytes, wirelen or None) frames with fixed timestamps, as text2pcap would."""
    with open(path, "wb") as fh:
        fh.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype))
        for i, frame in enumerate(frames):
            data, wirelen = frame if isinstance(frame, tuple) else (frame, None)
            fh.write(struct.pack("<IIII", 1700000000 + i, i, len(data), wirelen or len(data)))
            fh.write(data)
    return path


@pytest.fixture
def capture_file(tmp_path):
    """capture_file(frames, linktype=1) -> path of a pcap holding those frames."""
    counter = iter(range(1000))

    def make(frames, linktype=1, name=None):
        return write_pcap(tmp_path / (name or f"capture{next(counter)}.pcap"), frames, linktype)

    return make


@pytest.fixture(scope="session")
def cmd_chromium(tmp_path_factory):
    """cmd_chromium(*args, url) -> CompletedProcess: headless Chromium with a fresh profile each call, so no
    state of an earlier run (or of a desktop session) changes what it renders."""
    if not CHROMIUM.exists():
        pytest.fail("%s is not installed (Debian package chromium, which the set-up installs): the rendered-page "
                    "checks need it" % CHROMIUM)

    def run(*args, timeout=60):
        profile = tmp_path_factory.mktemp("chromium-profile")
        cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=%s" % profile,
               *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return run


@pytest.fixture
def hand_made_package(tmp_path):
    """hand_made_package(*members, name="p.tar.zst") -> a .tar.zst of members a hostile sender chose, GNU format
    as ./uet certify writes: each (name, data) or (name, data, tar type, link name)."""
    def make(*members, name="p.tar.zst"):
        raw = tmp_path / name.removesuffix(".zst")
        with tarfile.open(raw, "w", format=tarfile.GNU_FORMAT) as tar:
            for member_name, data, *kind in members:
                info = tarfile.TarInfo(member_name)
                info.type, info.linkname = (kind + [""])[:2] if kind else (tarfile.REGTYPE, "")
                info.size = len(data) if info.isfile() else 0
                tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
        subprocess.run(["zstd", "-q", "-f", "--rm", str(raw), "-o", str(tmp_path / name)], check=True)
        return tmp_path / name
    return make


@pytest.fixture
def confined_verify(tmp_path):
    """confined_verify(package, build=None, file_bytes=64 MiB, memory_bytes=None, cpu_seconds=None) -> the
    CompletedProcess (text) of ./uet verify's module in a process of its own, confined so that a package that
    would fill the disk or the memory or take hours fails fast: no file it writes may grow past file_bytes
    (RLIMIT_FSIZE, with SIGXFSZ ignored: the write fails), its address space is at most memory_bytes
    (RLIMIT_AS), its CPU time cpu_seconds (RLIMIT_CPU: CPU time, not the wall clock of a busy host), its
    TMPDIR is the test's own."""
    def run(package, build=None, file_bytes=64 << 20, memory_bytes=None, cpu_seconds=None):
        tmp = tmp_path / "verify-tmp"
        tmp.mkdir(exist_ok=True)

        def confine():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
            if memory_bytes:
                resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
            if cpu_seconds:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
        env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp))
        return subprocess.run([sys.executable, "-m", "harness.certify.verify", str(package), "--report", str(tmp_path / "report"),
                               "--build", str(build or tmp_path / "no-build")], cwd=REPO, env=env, preexec_fn=confine,
                              capture_output=True, text=True, timeout=1800)
    return run


@pytest.fixture(scope="session")
def resolved_side():
    """resolved_side(ref="softuet.yaml", port=4793) -> the resolved record of a manifest of cases/manifests, made
    by the harness's own writer (what a cell plan carries for a side)."""
    from harness.inputs import manifest as manifest_mod

    def make(ref="softuet.yaml", port=4793):
        return manifest_mod.load(REPO / "cases" / "manifests" / ref).resolve(build=REPO / "build", port=port)
    return make
