"""Fixtures of the trust-boundary tests that need a run against a hostile provider."""
import json
import pathlib
import subprocess
import sys
import types

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from harness.capture_cap import CAPTURE_CAP_BYTES  # noqa: E402

CHATTY_CASE = "Wire.NumberedRequestsCarryANonzeroMessageId"


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
