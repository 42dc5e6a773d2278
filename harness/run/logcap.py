"""A cap on the logs a cell's processes write: a provider that prints without end (378 MB in 90 s was seen)
must not fill the disk or the report. The processes write their logs themselves (opened O_APPEND, here or
by an agent on another node), so the harness cannot stand in the pipe: a thread looks at the cell's
``*.log`` files a few times a second and cuts any past the cap down to its head and its tail, with a line
in the middle saying how much was dropped. A file may pass the cap by what is written between two looks.

The middle is cut out in place with fallocate's collapse range, which holds the inode lock an O_APPEND write
also takes: nothing the writer appends during a cut is lost. Collapsing needs offsets on file system blocks,
so the tail kept is between TAIL_BYTES and one block more. Where the file system cannot collapse (tmpfs), the
file is cut by reading its tail and truncating, and what is written in between is lost.
"""
from __future__ import annotations

import ctypes
import errno
import os
import pathlib
import threading

LOG_CAP_BYTES = 16 << 20      # per log file
TAIL_BYTES = 1 << 20          # what is kept of a capped log's end (a crash's last words)
INTERVAL_S = 0.25
FALLOC_FL_COLLAPSE_RANGE = 0x08  # linux/falloc.h
MARKER_PREFIX = b"\n[uet: this log passed the cap of "

_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)


def marker(cap: int, dropped: int) -> bytes:
    """Always as long as the marker for the largest count, so a later cut writes its marker over the first."""
    def text(n: int) -> str:
        return (f"\n[uet: this log passed the cap of {cap} bytes: {n} bytes were dropped here; the head "
                f"and the last {TAIL_BYTES} bytes are kept]")
    return (text(dropped).ljust(len(text(1 << 62))) + "\n").encode()


def collapse(fd: int, offset: int, length: int) -> bool:
    """Removes [offset, offset+length) from the file; False where this file system or alignment cannot."""
    if _libc.fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, offset, length) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
        return False
    raise OSError(err, os.strerror(err))


class LogCap:
    """Keeps every ``*.log`` directly in `folder` at most about `cap` bytes while it runs (a context manager);
    `dropped` says, per file name, how many bytes were cut."""

    def __init__(self, folder: pathlib.Path, cap: int | None = None, interval: float = INTERVAL_S):
        self.folder, self.cap, self.interval = pathlib.Path(folder), cap or LOG_CAP_BYTES, interval
        try:
            self.block = os.statvfs(self.folder).f_bsize or 4096
        except OSError:
            self.block = 4096
        self.tail = min(TAIL_BYTES, self.cap // 4)
        self.slot = len(marker(self.cap, 0))
        # The head and the marker end on a block, where the collapsed range starts; the tail may be a block
        # longer than `tail`, so the head leaves room for it.
        self.cut_at = (self.cap - self.tail - self.block) // self.block * self.block
        self.head = self.cut_at - self.slot
        if self.head <= 0:
            raise ValueError(f"a log cap of {self.cap} bytes leaves no room for a head")
        self.dropped: dict[str, int] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"logcap-{self.folder.name}", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        self.check()  # what was written after the last look
        return False

    def _loop(self) -> None:
        while not self._done.wait(self.interval):
            self.check()

    def check(self) -> None:
        for path in self.folder.glob("*.log"):
            try:
                self._cut(path)
            except OSError:
                continue  # gone or replaced between the look and the cut: the next look sees it again

    def _cut(self, path: pathlib.Path) -> None:
        # O_NOFOLLOW: the harness is root and the folder is shared with what it runs. No O_APPEND: the marker
        # is written in the middle with pwrite.
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            size = os.fstat(fd).st_size
            if size <= self.cap:
                return
            marked = os.pread(fd, len(MARKER_PREFIX), self.head) == MARKER_PREFIX
            # The writer only appends, so `end` stays before the end of the file whatever it writes meanwhile.
            end = (size - self.tail) // self.block * self.block
            if end > self.cut_at and collapse(fd, self.cut_at, end - self.cut_at):
                cut = end - self.cut_at + (0 if marked else self.slot)
                tail = None
            else:
                tail = os.pread(fd, self.tail, size - self.tail)
                cut = size - self.head - len(tail) - (self.slot if marked else 0)
                os.ftruncate(fd, self.head)
            self.dropped[path.name] = self.dropped.get(path.name, 0) + cut
            os.pwrite(fd, marker(self.cap, self.dropped[path.name]) + (tail or b""), self.head)
        finally:
            os.close(fd)
