"""A submission package's archive (.tar.zst): written deterministically, and read as something a hostile
sender made. It is read as one stream (zstd's output is never kept whole) and each member is judged from its
header before a byte of it is written: a relative path that stays inside (no `..`, not absolute), regular
files and folders only (no symbolic or hard links, devices, FIFOs), no name given twice or as both a file and
a folder. What would go over a limit of harness/certify/package_limits.py (sizes, counts, names), and what
./uet certify never writes and tarfile would expand before it could be judged (sparse files, pax headers,
chained long names), is refused (PackageRefused). Python's tarfile has no zstd before 3.14, so the zstd
command decompresses.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import tarfile

from harness.certify.package_limits import Limits, PackageRefused, over

__all__ = ["Limits", "PackageRefused", "UnreadablePackage", "extract", "read_member", "write"]


class UnreadablePackage(Exception):
    """The file is not a zstd-compressed tar that can be read (exit 2)."""


def write(staging: pathlib.Path, names: list[str], package: pathlib.Path, mtime: int) -> None:
    """package: the files `names` (relative to staging) as a .tar.zst, in name order, owned by 0:0, all with
    `mtime`: the same files give the same bytes."""
    listing = package.with_suffix(".list")
    listing.write_text("".join(n + "\n" for n in sorted(names)))
    try:
        subprocess.run(["tar", "--zstd", "-cf", str(package), "-C", str(staging), "--no-recursion",
                        "--owner=0", "--group=0", "--numeric-owner", f"--mtime=@{mtime}", "--format=gnu",
                        "--verbatim-files-from", "-T", str(listing)], check=True, capture_output=True, timeout=3600)
    finally:
        listing.unlink()


class _Stream:
    """zstd's output, read at most limits.tar_bytes of it."""

    def __init__(self, proc: subprocess.Popen, package: pathlib.Path, limits: Limits):
        self.proc, self.package, self.limits, self.read_bytes, self.ended = proc, package, limits, 0, False

    def read(self, size: int = -1) -> bytes:
        block = self.proc.stdout.read(size if size >= 0 else 1 << 20)
        self.ended = self.ended or (size != 0 and not block)
        self.read_bytes += len(block)
        if self.read_bytes > self.limits.tar_bytes:
            raise over(self.limits, "tar_bytes", f"{self.package.name}: bytes of its tar stream so far", self.read_bytes)
        return block

    def zstd_problem(self) -> str | None:
        """Why zstd failed, when its output ended before the tar did; None when it did not fail (or has more
        to give: then the tar is what is wrong)."""
        if not self.ended or self.proc.wait() == 0:
            return None
        return self.proc.stderr.read().decode(errors="replace").strip() or "zstd failed"


class _Header(tarfile.TarInfo):
    """Refuses, before tarfile reads their data into memory, the header records ./uet certify never writes
    (it writes GNU-format tar of regular files): a pax header or a sparse map could be gigabytes, a chain of
    long-name records would recurse without end."""
    limits = Limits()

    def _proc_member(self, tar):
        if self.type in (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE):
            raise PackageRefused(f"a pax extended header (before member {len(tar.members) + 1}): a package is a "
                                 "GNU-format tar, as ./uet certify writes it")
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise PackageRefused(f"member {self.name!r}: a sparse file ({self._sparse_structs[2]} bytes once written "
                                 f"out, {self.size} in the archive): ./uet certify never writes one")
        if self.type not in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK):
            return super()._proc_member(tar)
        if self.size > self.limits.name_bytes:
            raise over(self.limits, "name_bytes", f"a GNU long-name record (before member {len(tar.members) + 1}) "
                                                  "of more bytes", self.size)
        chained = getattr(tar, "_uet_long_names", 0)
        if chained >= 2:  # GNU tar writes at most a long name and a long link name before a member
            raise PackageRefused(f"a chain of GNU long-name records (before member {len(tar.members) + 1})")
        tar._uet_long_names = chained + 1
        try:
            return super()._proc_member(tar)
        finally:
            tar._uet_long_names = chained


def _refusal(m: tarfile.TarInfo, limits: Limits) -> PackageRefused | None:
    """What puts this member over a limit, before anything of it is read."""
    raw = os.fsencode(m.name)
    if len(raw) > limits.name_bytes:
        return over(limits, "name_bytes", f"member {m.name[:80]!r}...: a name of more bytes", len(raw))
    part = max(raw.split(b"/"), key=len)
    if len(part) > limits.name_part_bytes:
        return over(limits, "name_part_bytes", f"member {m.name!r}: a file or folder name of more bytes", len(part))
    if m.size > limits.member_bytes:
        return over(limits, "member_bytes", f"member {m.name!r}: its size in bytes", m.size)
    return None


def _member_problem(m: tarfile.TarInfo) -> str | None:
    name = m.name
    parts = pathlib.PurePosixPath(name).parts
    if name.startswith("/") or (parts and parts[0] == "/"):
        return "an absolute path"
    if ".." in parts:
        return "a path that climbs out (..)"
    if "\\" in name or "\0" in name or not parts:
        return "a path that is not a plain relative name"
    if m.issym():
        return f"a symbolic link (to {m.linkname!r})"
    if m.islnk():
        return f"a hard link (to {m.linkname!r})"
    if m.ischr() or m.isblk():
        return "a device"
    if m.isfifo():
        return "a FIFO"
    if not (m.isfile() or m.isdir()):
        return f"a member of tar type {m.type!r}"
    return None


class _Layout:
    """The files and folders the members so far make, to find a name given twice or as both."""

    def __init__(self):
        self.files: set[str] = set()
        self.folders: set[str] = set()

    def clash(self, m: tarfile.TarInfo) -> str | None:
        path = pathlib.PurePosixPath(m.name)
        clean, parents = str(path), [str(p) for p in path.parents if str(p) != "."]
        if m.isfile() and clean in self.files:
            return "appears twice (the second would replace the first)"
        if m.isfile() and clean in self.folders:
            return "a file, and a folder of other members"
        if m.isdir() and clean in self.files:
            return "a folder, and a file of another member"
        if under := next((p for p in parents if p in self.files), None):
            return f"inside {under!r}, which is a file of the package"
        (self.files if m.isfile() else self.folders).add(clean)
        self.folders.update(parents)
        return None


def _write(tar: tarfile.TarFile, m: tarfile.TarInfo, target: pathlib.Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    src = tar.extractfile(m)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with open(fd, "wb") as out:
        left = m.size
        while left:
            block = src.read(min(left, 1 << 20))
            if not block:
                raise tarfile.ReadError("unexpected end of data")
            out.write(block)
            left -= len(block)


def _members(tar: tarfile.TarFile, dest: pathlib.Path, limits: Limits) -> tuple[list[str], list[str]]:
    written, unsafe, layout, total = [], [], _Layout(), 0
    for count, m in enumerate(tar, 1):
        if count > limits.members:
            raise over(limits, "members", "the package: members so far", count)
        refusal = _refusal(m, limits)
        if refusal:
            raise refusal
        why = _member_problem(m) or layout.clash(m)
        if why:
            unsafe.append(f"member {m.name!r}: {why}")
        if why or not m.isfile():
            continue
        total += m.size
        if total > limits.extracted_bytes:
            raise over(limits, "extracted_bytes", f"member {m.name!r}: the members so far would write out bytes", total)
        if not unsafe:  # once one is unsafe the package is not checked further: nothing more is written
            name = str(pathlib.PurePosixPath(m.name))
            _write(tar, m, dest / name)
            written.append(name)
    return written, unsafe


def extract(package: pathlib.Path, dest: pathlib.Path, limits: Limits = Limits()) -> tuple[list[str], list[str]]:
    """(the regular members written under dest, a folder of the caller's own; one line per unsafe member, naming
    it and why). Raises UnreadablePackage, and PackageRefused before writing what would pass a limit."""
    if not package.is_file():
        raise UnreadablePackage(f"{package}: " + ("not a regular file" if package.exists() else "no such file"))
    dest.mkdir(mode=0o700, exist_ok=True)
    proc = subprocess.Popen(["zstd", "-dcq", "--", str(package)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stream = _Stream(proc, package, limits)
    try:
        try:
            with tarfile.open(fileobj=stream, mode="r|", tarinfo=type("Header", (_Header,), {"limits": limits})) as tar:
                return _members(tar, dest, limits)
        except (tarfile.TarError, EOFError) as exc:
            problem = stream.zstd_problem()
            if problem:
                raise UnreadablePackage(f"{package}: not zstd-compressed data ({problem})") from None
            raise UnreadablePackage(f"{package}: not a tar archive inside the zstd stream ({exc})") from None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def read_member(path: pathlib.Path, shown: str, limits: Limits) -> bytes:
    """The bytes of an extracted member (`shown` names it), refused before it is read when it is larger than
    limits.document_bytes: it is about to be parsed in memory."""
    size = path.stat().st_size
    if size > limits.document_bytes:
        raise over(limits, "document_bytes", f"{shown}: its size in bytes", size)
    return path.read_bytes()
