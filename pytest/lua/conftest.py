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
    """cmd_tshark(*args, load_first=()) -> CompletedProcess of tshark with uet.lua loaded, after the Lua scripts
    of load_first (text; never raises on exit status)."""
    binary = shutil.which("tshark")
    if binary is None:
        pytest.fail("tshark is not installed (Debian package tshark, which the set-up installs)")

    def run(*args, load_first=(), timeout=120):
        scripts = [x for script in (*load_first, uet_lua) for x in ("-X", f"lua_script:{script}")]
        return subprocess.run([binary, "-n", *scripts, *map(str, args)], capture_output=True, text=True,
                              timeout=timeout)
    return run
