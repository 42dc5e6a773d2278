"""A cap on the wire evidence a case keeps: each capture, and the decode kept beside it, at most
CAPTURE_CAP_BYTES. A chatty provider made one case's capture 458 MB and its decode 200 MB.

The case binary stops writing a capture at the cap its cell plan gives (capture_cap_bytes;
cases/common/sides/capture.cpp) and says how many frames it left out. What is kept is the head: a case's
negotiation and first exchanges are there. The harness holds every capture and its decode to the same cap
whatever the binary did (a provider inside the binary can write the file itself): it cuts a capture after
its last whole frame within the cap and, when the decode of what is left would pass the cap, after its last
frame whose decode still fits. A cut capture stays a valid capture of the frames before the cut, and the
decode kept is that capture's whole decode, so both decoders and ./uet verify read it like any other.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import stat

CAPTURE_CAP_BYTES = 16 << 20   # per capture file, and per decode


@dataclasses.dataclass
class Cut:
    """What the harness cut off a capture: the bytes and frames it kept, and what it dropped (frames only
    where it read that far)."""
    kept_bytes: int
    kept_frames: int
    dropped_bytes: int
    dropped_frames: int | None = None


def cut(path: pathlib.Path, *, max_bytes: int | None = None, max_frames: int | None = None) -> Cut | None:
    """Cuts the capture at `path` after its last whole frame that ends within `max_bytes` and is at most the
    `max_frames`th; None when it is within both already. A frame that cannot be read ends the frames kept:
    what follows it is no capture."""
    from scapy_uet.pcapio import PcapError, frame_ends  # imported late: the package loads Scapy

    # O_NOFOLLOW, a regular file: the captures folder is the case binary's too.
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "r+b") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PcapError(f"{path.name}: not a regular file")
        size = os.fstat(fd).st_size
        if max_frames is None and (max_bytes is None or size <= max_bytes):
            return None
        kept, frames, seen, counted = 0, 0, 0, True
        try:
            for end in frame_ends(fh, path.name):
                if max_bytes is not None and end > max_bytes:
                    counted = False  # the rest is not read: a sparse file of any size would take as long
                    break
                seen += 1
                if max_frames is None or seen <= max_frames:
                    kept, frames = end, seen
        except PcapError:
            counted = False
        if kept == size:
            return None
        fh.truncate(kept)
    return Cut(kept, frames, size - kept, seen - frames if counted else None)


def record(by_binary: dict, cuts: list[Cut], cap: int, kept_bytes: int, kept_frames: int) -> dict | None:
    """What a result's evidence says of a capture cut at the cap (the binary's cut, as its capture entry
    reports it, and the harness's `cuts`), or None when nothing was cut."""
    said = by_binary.get("frames_dropped")
    frames = said if isinstance(said, int) and not isinstance(said, bool) and said > 0 else 0
    if not frames and not cuts:
        return None
    out = {"cap_bytes": cap, "kept_bytes": kept_bytes, "kept_frames": kept_frames,
           "frames_dropped": frames + sum(c.dropped_frames or 0 for c in cuts)}
    unread = sum(c.dropped_bytes for c in cuts if c.dropped_frames is None)
    if unread:
        out["bytes_dropped_unread"] = unread
    return out


def note(cut: dict) -> str:
    """The words of a result's note for a capture cut at the cap (record())."""
    unread = cut.get("bytes_dropped_unread")
    return (f"cut at the cap of {cut['cap_bytes']} bytes: its first {cut['kept_frames']} frames ({cut['kept_bytes']} "
            f"bytes) are kept, {cut['frames_dropped']} later frames were dropped"
            + (f", and {unread} more bytes not read as frames" if unread else "")
            + "; the decode beside it is of what is kept")
