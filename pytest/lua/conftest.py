"""Fixtures of the Wireshark checks: tshark (Debian package tshark) and the generated uet.lua."""
import shutil
import subprocess

import pytest


@pytest.fixture(scope="session")
def uet_lua(build_dir):
    path = build_dir / "share" / "uet" / "uet.lua"
    if not path.exists():
        pytest.fail(f"{path} is not built: run ./uet build (CMake target uet_lua)")
    return path


@pytest.fixture(scope="session")
def cmd_tshark(uet_lua):
    """cmd_tshark(*args) -> CompletedProcess of tshark with uet.lua loaded (text; never raises on exit status)."""
    binary = shutil.which("tshark")
    if binary is None:
        pytest.fail("tshark is not installed (Debian package tshark, which the set-up installs)")

    def run(*args, timeout=120):
        return subprocess.run([binary, "-n", "-X", f"lua_script:{uet_lua}", *map(str, args)],
                              capture_output=True, text=True, timeout=timeout)
    return run
