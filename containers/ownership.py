"""Whether a user other than root can change a file or folder: the one test the suite makes wherever root
keeps, runs, loads or reads what lies in a place (its host lock's folder, a libfabric prefix). The entity's C++
makes the same test of its files' folders (entity/src/private_file.cpp, others_may_replace).

Standard library only: ./uet answers bad usage with it before any set-up.
"""
from __future__ import annotations

import os
import pathlib
import pwd
import stat


def _user(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def others_may_change(st: os.stat_result) -> str:
    """How another user may change what `st` describes, in words, or "" when only root (and we) can: owned by
    another user, or writable by its group or by others. A sticky folder (/tmp) lets others add names but not
    rename or remove another's, so its write bits alone do not hand over what is in it."""
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid not in (0, os.geteuid()):
        return f"owned by {_user(st.st_uid)}, mode {mode:04o}"
    writers = [who for who, bit in (("its group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if mode & bit]
    if writers and not (stat.S_ISDIR(st.st_mode) and mode & stat.S_ISVTX):
        return f"writable by {' and '.join(writers)} (owner {_user(st.st_uid)}, gid {st.st_gid}, mode {mode:04o})"
    return ""


class Survey:
    """What another user may change among many paths, each stat'ed once: "PATH is owned by ..." lines, in the
    order the paths were first seen."""

    def __init__(self):
        self.seen: set[pathlib.Path] = set()
        self.problems: list[str] = []

    def look(self, path: pathlib.Path, st: os.stat_result | None = None) -> None:
        if path in self.seen:
            return
        self.seen.add(path)
        try:
            why = others_may_change(st or os.stat(path))
        except OSError:
            return  # gone, or a dangling link: nothing there to run or read
        if why:
            self.problems.append(f"{path} is {why}")

    def way_to(self, path: str | os.PathLike) -> None:
        """`path` and everything the kernel passes through to reach it, from / down: each folder, each link
        (whose owner may point it elsewhere even in a sticky folder) and what each link leads to."""
        parts = pathlib.Path(path).absolute().parts
        for i in range(2, len(parts) + 1):
            here = pathlib.Path(os.path.realpath(os.path.join(*parts[:i - 1]))) / parts[i - 1]
            self._link(here)
            real = pathlib.Path(os.path.realpath(here))
            for p in reversed([real, *real.parents]):
                self.look(p)

    def _link(self, path: pathlib.Path) -> None:
        if path in self.seen:
            return
        try:
            st = os.lstat(path)
        except OSError:
            return
        if stat.S_ISLNK(st.st_mode):  # a link's own mode means nothing: only its owner may change it
            self.seen.add(path)
            if st.st_uid not in (0, os.geteuid()):
                self.problems.append(f"{path} is a link owned by {_user(st.st_uid)}")
