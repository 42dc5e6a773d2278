"""Runs one ./uet command's main() so that no traceback ever reaches a user: an unexpected exception is one
line naming the command and what failed, the traceback goes to a log the line names, and the exit status
is 3. A missing Debian Python package is named with the package that provides it.

    python3 -m harness.commands.guard "./uet run" harness.run.run_suite [ARGS...]
    python3 -m harness.commands.guard "./uet bench decode" bench/decode_bench.py [ARGS...]   (a script: run as __main__)

Standard library only (see harness/commands/__init__.py): it runs before the set-up.
"""
from __future__ import annotations

import datetime
import importlib
import os
import pathlib
import runpy
import sys
import tempfile
import traceback

REPO = pathlib.Path(__file__).resolve().parents[2]
UNEXPECTED = 3  # ./uet's exit status for "set-up, build or the suite itself failed"
INTERRUPTED = 130
# The Python modules the set-up installs from Debian (setup/packages.txt), by the package that provides them.
DEBIAN_PACKAGES = {"yaml": "python3-yaml", "jsonschema": "python3-jsonschema", "jinja2": "python3-jinja2",
                   "openpyxl": "python3-openpyxl", "scapy": "python3-scapy", "pytest": "python3-pytest",
                   "xdist": "python3-pytest-xdist", "markupsafe": "python3-markupsafe"}


def crash_log(command: str, text: str) -> pathlib.Path:
    """Writes the traceback to out/logs/ of this clone, else (a clone this user cannot write) to a new private
    file of the temporary folder; never to a path another user could have prepared."""
    stamp = f"{datetime.datetime.now(datetime.timezone.utc):%Y%m%d-%H%M%S}-{os.getpid()}"
    name = "crash-" + "-".join(command.replace("./", "").split()) + f"-{stamp}.log"
    try:
        folder = REPO / "out" / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        path = folder / name
    except OSError:
        fd, where = tempfile.mkstemp(prefix=name.removesuffix(".log") + "-", suffix=".log")
        path = pathlib.Path(where)
    with os.fdopen(fd, "w") as out:
        out.write(f"{command} {' '.join(sys.argv[3:])}\n\n{text}")
    return path


def shown(path: pathlib.Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def run(command: str, module_name: str, argv: list[str]) -> int:
    try:
        if module_name.endswith(".py"):
            sys.argv = [module_name, *argv]
            runpy.run_path(module_name, run_name="__main__")
            return 0
        module = importlib.import_module(module_name)
        return module.main(argv) or 0
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the reader went away (./uet compare ... | head): nothing left to say
        sys.stderr.close()
        return 1
    except ModuleNotFoundError as exc:
        package = DEBIAN_PACKAGES.get((exc.name or "").partition(".")[0])
        if package:
            print(f"{command}: Debian's {package} is not installed (./uet setup installs it; "
                  f"Python is /usr/bin/python3)", file=sys.stderr)
            return UNEXPECTED
        return unexpected(command, exc)
    except Exception as exc:  # noqa: BLE001 -- the one place that turns any failure into a line and a log
        return unexpected(command, exc)


def unexpected(command: str, exc: BaseException) -> int:
    text = "".join(traceback.format_exception(exc))
    try:
        log = shown(crash_log(command, text))
    except OSError as err:
        log = f"not written: {err}"
    what = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300] if str(exc) else type(exc).__name__
    print(f"{command}: failed unexpectedly: {what} (the traceback: {log})", file=sys.stderr)
    return UNEXPECTED


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: python3 -m harness.commands.guard COMMAND MODULE [ARGS...]", file=sys.stderr)
        return 2
    return run(sys.argv[1], sys.argv[2], sys.argv[3:])


if __name__ == "__main__":
    sys.exit(main())
