"""What a case binary, its provider or a manifest hands the harness is untrusted: text is made printable
before it reaches JUnit XML, results.json, the HTML report or the terminal, and a name that becomes a
folder must stay inside the folder it is made in.
"""
from __future__ import annotations

import pathlib
import re

# XML 1.0 allows tab, newline and carriage return among the C0 controls, and no surrogates or U+FFFE/U+FFFF;
# a terminal acts on C0, DEL and C1 (ESC and CSI start colour and cursor sequences). One set serves both:
# only tab and newline are kept, so a log line cannot overwrite (\r) or recolour what the terminal shows.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every character XML 1.0 forbids or a terminal acts on written visibly (ESC: \\x1b)."""
    return _UNPRINTABLE.sub(_escape, text)


def printable_tree(value):
    """A copy of a JSON-like value (dicts, lists, strings, numbers) with every string, keys included, made
    printable."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_tree(k): printable_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_tree(v) for v in value]
    return value


class OutsideFolder(ValueError):
    """A name would make a folder outside the one it belongs in."""


def folder_inside(base: pathlib.Path, name: str) -> pathlib.Path:
    """base/name, refused unless it is one level below base once resolved (no '..', '/', NUL or a symlink
    out): the harness runs as root and writes a cell's files there."""
    if not name or "\0" in name or "/" in name or name in (".", ".."):
        raise OutsideFolder(f"{name!r} is not a folder name (it would leave {base})")
    base = pathlib.Path(base).resolve()
    folder = (base / name).resolve()
    if folder.parent != base:
        raise OutsideFolder(f"{base / name} resolves to {folder}, outside {base}")
    return folder
