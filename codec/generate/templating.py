"""The Jinja2 environment both generators render their templates (codec/generate/templates/) with."""
from __future__ import annotations

import os
from typing import Callable

import jinja2


def environment(filters: dict[str, Callable]) -> jinja2.Environment:
    """Templates of this folder; an undefined name is an error, not an empty string."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(os.path.dirname(__file__), "templates")),
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters.update(filters)
    return env
