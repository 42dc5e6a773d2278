"""The Jinja2 environment the generators render their templates with (codec/generate/templates/ unless told
another folder), and how they write what they render."""
from __future__ import annotations

import os
import sys
from typing import Callable

import jinja2


def environment(filters: dict[str, Callable], folder: str | None = None) -> jinja2.Environment:
    """Templates of `folder` (default: this folder's templates/); an undefined name is an error, not an empty string."""
    folder = folder or os.path.join(os.path.dirname(__file__), "templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder),
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters.update(filters)
    return env


def write_if_changed(path: str, text: str) -> None:
    """Write `text` to `path` only when it differs, so that a rebuild does not recompile what did not change."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
    if old != text:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)


def generator_main(argv: list[str], usage: str, make_text: Callable[[str], str], errors: tuple) -> int:
    """The command of a generator `NAME SPEC_YAML OUT_FILE`: exit 2 on bad usage, 1 (the problem named with
    the spec file) when make_text(SPEC_YAML) raises one of `errors`, else 0 with OUT_FILE written."""
    if len(argv) != 3:
        print(usage, file=sys.stderr)
        return 2
    try:
        text = make_text(argv[1])
    except errors as err:
        print(f"{argv[1]}: {err}", file=sys.stderr)
        return 1
    write_if_changed(argv[2], text)
    return 0
