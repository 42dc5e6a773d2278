"""Tools the report tests drive: `python3 -m reports` (headless Chromium: pytest/conftest.py)."""
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="session")
def cmd_reports():
    """cmd_reports(*args) -> CompletedProcess of `python3 -m reports ARGS` from the repository root."""
    def run(*args, timeout=60):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-m", "reports", *map(str, args)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=timeout)
    return run
