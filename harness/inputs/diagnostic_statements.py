"""The catalogue statements a decoder diagnostic breaks (spec/diagnostic-statements.yaml): a case whose capture
held a malformed frame fails those statements too, with the frame's diagnostic as their evidence."""
from __future__ import annotations

import functools
import pathlib

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
TABLE_PATH = REPO / "spec" / "diagnostic-statements.yaml"


@functools.cache
def table() -> dict:
    return yaml.safe_load(TABLE_PATH.read_text())


def statements_of(kind: str, header: str | None, field: str | None) -> list[str]:
    """The statements a diagnostic of `kind` in `header` (and `field`, when it names one) breaks: the field's
    entry, else the longest header prefix's; none for kinds about fragments or headers outside §2.2."""
    t = table()
    if kind in t.get("kinds_without_statements", []):
        return []
    if field and field in t.get("fields", {}):
        return list(t["fields"][field])
    best = None
    for prefix in t.get("headers", {}):
        if header and (header == prefix or header.startswith(prefix + ".")) and (best is None or len(prefix) > len(best)):
            best = prefix
    return list(t["headers"][best]) if best else []


def add_broken_statements(result) -> None:
    """A result whose case reported malformed frames (evidence "diagnostics") gains, failed, the statements
    they break: each diagnostic records them, and the case's statements include them."""
    for d in result.evidence.get("diagnostics", []):
        d["statements"] = statements_of(d.get("kind", ""), d.get("header"), d.get("field"))
        for s in d["statements"]:
            if s not in result.statements:
                result.statements.append(s)
