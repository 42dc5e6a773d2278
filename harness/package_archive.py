"""A submission package's archive (.tar.zst): written deterministically, and read as something a hostile
sender made. Reading checks every member before any byte is written out: a relative path that stays inside
(no `..`, not absolute), regular files and folders only (no symbolic or hard links, devices, FIFOs), and
limits on the decompressed size, each member's size and the number of members (zstd and tar bombs).
Python's tarfile has no zstd before 3.14, so the zstd command decompresses, into a bounded temporary file.
"""
from __future__ import annotations

import dataclasses
import pathlib
import shutil
import subprocess
import tarfile

MAX_ARCHIVE_BYTES = 8 << 30      # the decompressed tar
MAX_MEMBER_BYTES = 2 << 30
MAX_MEMBERS = 200_000


class UnreadablePackage(Exception):
    """The file is not a zstd-compressed tar that can be read (exit 2)."""


@dataclasses.dataclass(frozen=True)
class Limits:
    archive_bytes: int = MAX_ARCHIVE_BYTES
    member_bytes: int = MAX_MEMBER_BYTES
    members: int = MAX_MEMBERS


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


def decompress(package: pathlib.Path, into: pathlib.Path, limits: Limits) -> pathlib.Path:
    """The tar inside `package`, as a file in `into`; stops at limits.archive_bytes."""
    if not package.is_file():
        raise UnreadablePackage(f"{package}: " + ("not a regular file" if package.exists() else "no such file"))
    tar_path = into / "package.tar"
    with open(tar_path, "wb") as out:
        proc = subprocess.Popen(["zstd", "-dcq", "--", str(package)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        written = 0
        while block := proc.stdout.read(1 << 20):
            written += len(block)
            if written > limits.archive_bytes:
                proc.kill()
                proc.wait()
                raise UnreadablePackage(f"{package}: decompresses to more than {limits.archive_bytes} bytes "
                                        "(the limit of a package)")
            out.write(block)
        err = proc.stderr.read().decode(errors="replace").strip()
        if proc.wait() != 0:
            raise UnreadablePackage(f"{package}: not zstd-compressed data ({err or 'zstd failed'})")
    return tar_path


def _member_problem(m: tarfile.TarInfo, limits: Limits) -> str | None:
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
    if m.size > limits.member_bytes:
        return f"{m.size} bytes (more than the limit of {limits.member_bytes})"
    return None


def unsafe_members(tar: tarfile.TarFile, limits: Limits) -> list[str]:
    """One line per member that must not be extracted, naming it and why."""
    problems, count = [], 0
    seen: set[str] = set()
    for m in tar:
        count += 1
        if count > limits.members:
            return problems + [f"more than {limits.members} members (the limit of a package)"]
        why = _member_problem(m, limits)
        if why:
            problems.append(f"member {m.name!r}: {why}")
        elif m.isfile():
            clean = str(pathlib.PurePosixPath(m.name))
            if clean in seen:
                problems.append(f"member {m.name!r}: appears twice (the second would replace the first)")
            seen.add(clean)
    return problems


def extract_files(tar: tarfile.TarFile, dest: pathlib.Path) -> list[str]:
    """Writes the regular members (already found safe) under dest; returns their names. Folders come from the
    files' paths, never from the archive's modes."""
    names = []
    for m in tar.getmembers():
        if not m.isfile():
            continue
        name = str(pathlib.PurePosixPath(m.name))
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with tar.extractfile(m) as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out)
        names.append(name)
    return names


def open_tar(tar_path: pathlib.Path) -> tarfile.TarFile:
    try:
        return tarfile.open(tar_path, mode="r:")
    except (tarfile.TarError, OSError) as exc:
        raise UnreadablePackage(f"not a tar archive inside the zstd stream ({exc})") from None
