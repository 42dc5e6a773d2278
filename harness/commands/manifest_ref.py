"""Where a manifest reference (FILE or FILE#VARIANT; a bare name is one of cases/manifests/) points, and
whether there is a file to read: answered before the set-up, so a mistyped path costs no install."""
from __future__ import annotations

import os
import pathlib

MANIFESTS = pathlib.Path(__file__).resolve().parents[2] / "cases" / "manifests"


def split(ref: str) -> tuple[pathlib.Path, str | None]:
    path, _, variant = str(ref).partition("#")
    return pathlib.Path(path), (variant or None)


def path_of(ref: str) -> pathlib.Path:
    """The file `ref` names: as given, or a bare name of the suite's own manifests."""
    path, _ = split(ref)
    if not path.exists() and not path.is_absolute() and (MANIFESTS / path).exists():
        return MANIFESTS / path
    return path


def unreadable(ref: str) -> str | None:
    """The problem, worded as harness.inputs.manifest words it, when there is no file to read at all."""
    path = path_of(ref)
    try:
        os.stat(path)
    except OSError as exc:
        return f"{path}: cannot read: {exc.strerror or exc}"
    return None
