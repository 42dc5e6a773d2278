"""A cap on the logs a cell's processes write: a provider that prints without end (378 MB in 90 s was seen)
must not fill the disk or the report. The processes write their logs themselves (opened O_APPEND, here or
by an agent on another node), so the harness cannot stand in the pipe: a thread looks at the cell's
``*.log`` files a few times a second and cuts any past the cap down to its head and its tail, with a line
in the middle saying how much was dropped. A file may pass the cap by what is written between two looks.
"""
from __future__ import annotations

import os
import pathlib
import threading

LOG_CAP_BYTES = 16 << 20      # per log file
TAIL_BYTES = 1 << 20          # what is kept of a capped log's end (a crash's last words)
INTERVAL_S = 0.25


def marker(cap: int, dropped: int) -> bytes:
    return (f"\n[uet: this log passed the cap of {cap} bytes: {dropped} bytes were dropped here; the head "
            f"and the last {TAIL_BYTES} bytes are kept]\n").encode()


class LogCap:
    """Keeps every ``*.log`` directly in `folder` at most about `cap` bytes while it runs (a context manager);
    `dropped` says, per file name, how many bytes were cut."""

    def __init__(self, folder: pathlib.Path, cap: int | None = None, interval: float = INTERVAL_S):
        self.folder, self.cap, self.interval = pathlib.Path(folder), cap or LOG_CAP_BYTES, interval
        self.tail = min(TAIL_BYTES, self.cap // 4)
        self.head = self.cap - self.tail - len(marker(self.cap, 1 << 62))
        self.dropped: dict[str, int] = {}
        self._marker_len: dict[str, int] = {}
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
        # O_NOFOLLOW: the harness is root and the folder is shared with what it runs.
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            # What the writer appends between reading the tail and the truncation is lost: read the tail again
            # until the size holds still, so that window is a system call wide, not a read of the tail.
            for _ in range(8):
                size = os.fstat(fd).st_size
                if size <= self.cap:
                    return
                tail = os.pread(fd, self.tail, size - self.tail)
                if os.fstat(fd).st_size == size:
                    break
            # Bytes written after the head, less our own marker and the tail we keep, are dropped.
            self.dropped[path.name] = (self.dropped.get(path.name, 0) + size - self.head
                                       - self._marker_len.get(path.name, 0) - len(tail))
            os.ftruncate(fd, self.head)
            note = marker(self.cap, self.dropped[path.name])
            self._marker_len[path.name] = len(note)
            os.write(fd, note + tail)
        finally:
            os.close(fd)
