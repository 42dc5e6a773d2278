"""The verdict channel: how a case binary tells the harness each case's start and end, and why the
harness believes it. The provider under test runs inside the case binary and could write to the same
file, so every line is signed (cases/common/claims/verdict.cpp):

    <hex HMAC-SHA-256(key, json)> <json with "seq": 0, 1, 2, ...>

with a key made here for one launch of one binary and handed over on a pipe (UET_CASES_VERDICT_KEY_FD),
never in a file or the environment. The channel keeps only lines it can verify, in order: a line with a
bad signature, a replayed or repeated line, an end for a case that is not running, a second start of a
case, is dropped and reported (``rejected``); a case whose end never came before the next one started is
``unended``. A file that grows past MAX_BYTES is not read further (``overflow``).
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import pathlib
import secrets

KEY_VARIABLE = "UET_CASES_VERDICT_KEY_FD"
MAX_BYTES = 64 << 20          # a binary's verdicts are kilobytes; more is someone writing into the file
MAX_REPORTED = 5              # rejected lines kept, each cut to EXCERPT characters
EXCERPT = 240


def sign(key: str, body: str) -> str:
    """The line a binary writes for `body` (what verdict.cpp does; for tests and fakes)."""
    return hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest() + " " + body


@dataclasses.dataclass
class VerdictChannel:
    """One launch of one binary: the file it appends to from `offset` on, and the key it signs with."""
    path: pathlib.Path
    key: str = dataclasses.field(default_factory=lambda: secrets.token_hex(32))
    done: frozenset = frozenset()     # cases with a verdict from an earlier launch
    offset: int = -1                  # -1: the file's size now (lines before are an earlier launch's)
    ended: list = dataclasses.field(default_factory=list)
    running: str | None = None
    unended: list = dataclasses.field(default_factory=list)
    rejected: list = dataclasses.field(default_factory=list)
    rejected_count: int = 0
    overflow: bool = False
    _next_seq: int = 0
    _partial: bytes = b""
    _started: set = dataclasses.field(default_factory=set)

    def __post_init__(self):
        if self.offset < 0:
            self.offset = self.path.stat().st_size if self.path.exists() else 0
        self._start = self.offset

    @property
    def inputs(self) -> dict[str, str]:
        """What the placement hands the binary: the key, on a pipe named by KEY_VARIABLE."""
        return {KEY_VARIABLE: self.key}

    @property
    def accepted(self) -> int:
        """Lines accepted so far: a case started or ended."""
        return self._next_seq

    def read(self) -> bool:
        """Takes the complete lines appended since the last read; True when one was accepted."""
        if self.overflow or not self.path.exists():
            return False
        before = self.accepted
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            chunk = fh.read(max(0, MAX_BYTES - (self.offset - self._start)) + 1)
        self.offset += len(chunk)
        if self.offset - self._start > MAX_BYTES:
            self.overflow = True
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        for raw in lines:
            self._take(raw)
        return self.accepted != before

    def _reject(self, why: str, raw: bytes) -> None:
        self.rejected_count += 1
        if len(self.rejected) < MAX_REPORTED:
            text = raw[:EXCERPT].decode("utf-8", "replace")
            self.rejected.append(f"{why}: {text!r}")

    def _take(self, raw: bytes) -> None:
        mac, sep, body = raw.partition(b" ")
        if not sep or len(mac) != 64:
            return self._reject("not a signed line", raw)
        expected = hmac.new(self.key.encode(), body, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(mac, expected):
            return self._reject("a bad signature", raw)
        try:
            event = json.loads(body)
        except ValueError:
            return self._reject("signed but not JSON", raw)
        seq, kind, case = event.get("seq"), event.get("event"), event.get("case")
        if not isinstance(seq, int) or kind not in ("start", "end") or not isinstance(case, str):
            return self._reject("signed but not a start or an end", raw)
        if seq < self._next_seq:
            return self._reject(f"a line seen before (seq {seq})", raw)
        self._next_seq = seq + 1
        if kind == "start":
            if case in self._started or case in self.done:
                return self._reject(f"a second start of {case}", raw)
            if self.running is not None:
                self.unended.append(self.running)
            self._started.add(case)
            self.running = case
        else:
            if case != self.running:
                return self._reject(f"an end of {case}, which is not running", raw)
            self.ended.append(event)
            self.running = None

    def describe_rejections(self) -> str:
        return (f"{self.rejected_count} line(s) of the verdict file were dropped: not written by the case binary "
                f"(each line is signed with a key only the binary holds) or out of order; "
                + "; ".join(self.rejected))
