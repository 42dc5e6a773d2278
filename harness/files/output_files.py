"""The one writer of the files a report is made of (a run's report, the history site and its index, a
comparison page, a starter manifest). The harness often runs as root and writes where a user pointed it,
so a file is never written through: it is written to a private temporary file made with O_EXCL in the same
folder and renamed over its name, which replaces a planted link instead of following it. A folder on the
way that another user controls (owned by a user other than root, this user or the one who ran sudo, or
writable by every user without the sticky bit) or a link on the way that another user owns is refused
with UnsafeFolder, before anything is written, as is a link inside the folder (cells/ in a run folder).
"""
from __future__ import annotations

import os
import pathlib
import pwd
import secrets
import stat

MODE = 0o644        # reports are read by everyone on the host, whatever the umask
MAX_LINKS = 40      # links followed on one path, as the kernel's limit


class UnsafeFolder(OSError):
    """A folder (or link) on the way to an output that another user controls; the message names it. An
    OSError, so every caller's "cannot write" answer (exit 2) covers it."""


def trusted_users() -> set[int]:
    """Root, this process's user, and the user who ran sudo: the users whose folders and links it may use."""
    users = {0, os.geteuid(), os.getuid()}
    if os.environ.get("SUDO_UID", "").isdigit():
        users.add(int(os.environ["SUDO_UID"]))
    return users


def _who(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _check_folder(path: pathlib.Path, st: os.stat_result, users: set[int], shared_ok: bool = True) -> None:
    """`shared_ok`: a folder every user may write with the sticky bit (/tmp) will do, as nobody can replace
    what another user made in it."""
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeFolder(f"{path} is not a folder")
    if st.st_uid not in users:
        raise UnsafeFolder(f"{path} belongs to {_who(st.st_uid)}, another user: the suite does not write into a "
                           "folder someone else controls (choose a folder of your own)")
    if st.st_mode & stat.S_IWOTH and not (shared_ok and st.st_mode & stat.S_ISVTX):
        raise UnsafeFolder(f"{path} may be written by every user (mode {stat.S_IMODE(st.st_mode):o}"
                           f"{', no sticky bit' if shared_ok else ''}): the suite does not write into a folder "
                           "someone else controls")


def _walk(path: pathlib.Path, users: set[int]) -> tuple[pathlib.Path, list[str]]:
    """(the deepest existing folder on the way to `path`, as resolved; the names still to make below it),
    checking each folder and link the way passes as the kernel would follow it."""
    pending = list(pathlib.Path(os.path.abspath(path)).parts[1:])
    current = pathlib.Path("/")
    _check_folder(current, os.stat(current), users)
    links = 0
    while pending:
        name = pending.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            current = current.parent  # a folder already checked on the way here
            continue
        step = current / name
        try:
            st = os.lstat(step)
        except FileNotFoundError:
            return current, [name] + [p for p in pending if p not in ("", ".")]
        if stat.S_ISLNK(st.st_mode):
            if st.st_uid not in users:
                raise UnsafeFolder(f"{step} is a link that belongs to {_who(st.st_uid)}, another user: the suite "
                                   "does not follow it")
            links += 1
            if links > MAX_LINKS:
                raise UnsafeFolder(f"{path}: more than {MAX_LINKS} links on the way")
            target = pathlib.Path(os.readlink(step))
            if target.is_absolute():
                current = pathlib.Path("/")
            pending = list(target.parts[1:] if target.is_absolute() else target.parts) + pending
            continue
        _check_folder(step, st, users)
        current = step
    return current, []


def open_folder(folder: pathlib.Path, shared_ok: bool = True) -> int:
    """A descriptor of `folder`, made (0755) where missing, once every folder and link on the way is one
    only trusted users control; UnsafeFolder otherwise. `shared_ok` False: not even /tmp will do as `folder`
    itself (SQLite makes its journal beside the database, under a name anyone could take). The caller
    closes it."""
    users = trusted_users()
    while True:
        existing, missing = _walk(folder, users)
        if not missing:
            break
        try:
            os.mkdir(existing / missing[0], 0o755)
        except FileExistsError:
            pass  # made meanwhile: walked again and checked like the rest
    # Every folder and link on the way is one only trusted users may change, so it is still the one checked.
    fd = os.open(existing, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _check_folder(existing, os.fstat(fd), users, shared_ok)
    except UnsafeFolder:
        os.close(fd)
        raise
    return fd


def _subfolder(fd: int, names: list[str], shown: pathlib.Path) -> int:
    """A descriptor of fd/names..., each made where missing and never reached through a link."""
    for name in names:
        try:
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        except OSError as exc:
            raise UnsafeFolder(f"{shown / name} is not a folder of the report (a link?): {exc.strerror}") from None
        finally:
            os.close(fd)
        fd = inner
        shown = shown / name
        try:  # a folder someone else made in a shared one (/tmp/x/cells)
            _check_folder(shown, os.fstat(fd), trusted_users())
        except UnsafeFolder:
            os.close(fd)
            raise
    return fd


def write(path: pathlib.Path, data: str | bytes, *, replace: bool = True, base: pathlib.Path | None = None) -> None:
    """Writes `data` (text as UTF-8) to `path` whole or not at all: a new file renamed over its name (replace),
    or linked to it only when the name is free (not replace: FileExistsError). `base`: the output folder
    `path` is inside, checked as the way to it; the folders between are made and never followed as links.
    An OSError of the write carries `path` as its filename (a full disk names the file)."""
    path = pathlib.Path(path)
    base = pathlib.Path(base) if base is not None else path.parent
    inside = path.parent.relative_to(base).parts
    fd = _subfolder(open_folder(base), list(inside), base)
    body = data.encode("utf-8") if isinstance(data, str) else data
    try:
        while True:
            tmp = f".{path.name[:100]}.{secrets.token_hex(6)}.tmp"
            try:
                out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                              dir_fd=fd)
                break
            except FileExistsError:
                continue
        try:
            try:
                view = memoryview(body)
                while view:
                    view = view[os.write(out, view):]
                os.fchmod(out, MODE)
            finally:
                os.close(out)
            if replace:
                os.replace(tmp, path.name, src_dir_fd=fd, dst_dir_fd=fd)
            else:
                os.link(tmp, path.name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, str(path)) from None
        finally:
            try:
                os.unlink(tmp, dir_fd=fd)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)
