"""Whether root may use a libfabric installation another user could have put code into (./uet run --libfabric,
a manifest's `libfabric:`, ./uet manifest init --libfabric). Root runs its bin/fi_info, loads its libraries (its
lib folder comes first in LD_LIBRARY_PATH, so any library there, and libfabric's dl providers in lib/libfabric/,
run in the case binaries), compiles its headers into the case binaries and takes compiler flags from its
pkg-config files. So, as root:
- nothing under the prefix, nor any folder on the way to it, nor a folder its .pc files name (libdir,
  includedir, -I, -L, -rpath), may be another user's or writable by group or others (containers/ownership.py, the
  test the suite makes of its lock folder); --trust-foreign-libfabric runs it anyway, and the run records it;
- whoever owns it, the flags of its .pc files (the build puts their folder first in PKG_CONFIG_PATH, so every
  .pc there is read, libpcap's and sqlite3's too) are only -I, -L, -l, -D, -pthread and -Wl,-rpath,DIR: any
  other reaches every compile and link as root (-fplugin= loads a GCC plugin, -B swaps the assembler, -specs and
  @file read more options). No option lets those through.

Standard library only: ./uet answers bad usage before any set-up.
"""
from __future__ import annotations

import os
import pathlib
import re
import shlex

from containers import ownership

OPTION = "--trust-foreign-libfabric"
MAX_ENTRIES = 100_000      # files and folders looked at under one prefix (an installation holds a few thousand)
MAX_SHOWN = 5              # problems named in a refusal
FLAG_FIELDS = ("Cflags", "Cflags.private", "Libs", "Libs.private")
# Each allowed flag, and the folders it names (checked like the prefix's own).
ALLOWED_FLAGS = (
    re.compile(r"-I(?P<dirs>.+)"),
    re.compile(r"-L(?P<dirs>.+)"),
    re.compile(r"-l:?[A-Za-z0-9_.+-]+"),
    re.compile(r"-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?"),
    re.compile(r"-pthread"),
    re.compile(r"-Wl,-rpath[,=](?P<dirs>[^,]+)"),
)


def flag_problems(fields: dict[str, str], pc: pathlib.Path) -> tuple[list[str], list[pathlib.Path]]:
    """(the flags of a .pc file the suite refuses, each named; the folders the allowed ones name)."""
    problems, folders = [], []
    for field in FLAG_FIELDS:
        try:
            tokens = shlex.split(fields.get(field, ""))
        except ValueError as exc:
            problems.append(f"{pc}: {field}: cannot be split into flags ({exc})")
            continue
        for token in tokens:
            match = next((m for m in (r.fullmatch(token) for r in ALLOWED_FLAGS) if m), None)
            if match is None:
                problems.append(f"{pc}: {field}: the flag {token!r} is refused: a .pc file's flags reach every compile "
                                "and link the suite runs as root, so it takes only -I, -L, -l, -D, -pthread and "
                                "-Wl,-rpath,DIR")
            elif match.groupdict().get("dirs"):
                folders += [pathlib.Path(d) for d in match["dirs"].split(":") if d]
    return problems, folders


def pc_files(folder: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in folder.glob("*.pc") if p.is_file())


class _Budget(Exception):
    pass


def _entries(survey: ownership.Survey, folder: pathlib.Path, count: list[int]) -> list[pathlib.Path]:
    """Looks at each entry of `folder`; returns the real folders among them (links are looked at on their way)."""
    below = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        count[0] += 1
        if count[0] > MAX_ENTRIES:
            raise _Budget
        path = pathlib.Path(entry.path)
        if entry.is_symlink():
            survey.way_to(path)  # the link itself, then where it leads
        else:
            survey.look(path, entry.stat(follow_symlinks=False))
            if entry.is_dir(follow_symlinks=False):
                below.append(path)
    return below


def foreign_parts(given: pathlib.Path, root: pathlib.Path, elsewhere: list[pathlib.Path]) -> list[str]:
    """What another user may change of the installation at `given` (resolved: `root`): everything under it and
    the folders `elsewhere` (with their entries), each with the folders on the way. Empty unless we are root."""
    if os.geteuid() != 0:
        return []
    survey, count = ownership.Survey(), [0]
    survey.way_to(given)
    try:
        stack = [root]
        while stack:
            stack += _entries(survey, stack.pop(), count)
        for folder in elsewhere:
            if not folder.is_relative_to(root):
                survey.way_to(folder)
                _entries(survey, folder, count)
    except _Budget:
        survey.problems.append(f"{root} holds more than {MAX_ENTRIES} files and folders: too many to check")
    return survey.problems


def refusal(given: pathlib.Path, problems: list[str]) -> str:
    shown = problems[:MAX_SHOWN] + ([f"and {len(problems) - MAX_SHOWN} more"] if len(problems) > MAX_SHOWN else [])
    return (f"{given} is not root's alone: root would run, load or build with what another user can change:\n  "
            + "\n  ".join(shown) + f"\n(make it root's and writable by root alone, e.g. chown -R root: and chmod -R "
            f"go-w, with every folder above it; or give {OPTION} to use it anyway, which the run's results and a "
            "certify package record)")
