"""The reason codes of not-applicable results (spec/not-applicable-reasons.yaml), read strictly for
./uet verify: a list (or a mapping whose `reasons` is the list) of entries with
`id`, `class` (not-claimed | no-such-combination), `description` and `allowed_in_submission`. A submission
may hold a not-applicable result only under a code that allows it."""
from __future__ import annotations

import pathlib

import yaml

REPO = pathlib.Path(__file__).resolve().parent.parent
REASONS_PATH = REPO / "spec" / "not-applicable-reasons.yaml"
CLASSES = ("not-claimed", "no-such-combination")


class ReasonsError(ValueError):
    """The reason code list is missing or malformed."""


def load(path: pathlib.Path = REASONS_PATH) -> dict[str, dict]:
    """{id: entry}; raises ReasonsError naming the file and the bad entry."""
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ReasonsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise ReasonsError(f"{path}: not YAML ({exc})") from None
    if isinstance(doc, dict) and "reasons" in doc:  # the list may also sit under a top-level `reasons:`
        doc = doc["reasons"]
    if not isinstance(doc, list):
        raise ReasonsError(f"{path}: a list of reason codes was expected, not {type(doc).__name__}")
    out = {}
    for i, entry in enumerate(doc):
        where = f"{path}: entry {i + 1}"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise ReasonsError(f"{where}: needs an `id` (a string)")
        if entry.get("class") not in CLASSES:
            raise ReasonsError(f"{where} ({entry['id']}): class {entry.get('class')!r} is not one of {', '.join(CLASSES)}")
        if not isinstance(entry.get("allowed_in_submission"), bool):
            raise ReasonsError(f"{where} ({entry['id']}): allowed_in_submission must be true or false")
        if entry["id"] in out:
            raise ReasonsError(f"{where}: id {entry['id']!r} is listed twice")
        out[entry["id"]] = entry
    return out


def problem(result: dict, reasons: dict[str, dict] | None) -> str | None:
    """Why a not-applicable result is not allowed in a submission, or None when it is (reasons None: no list
    could be read, so no code is allowed)."""
    code = result.get("reason_code")
    if not code:
        return f"{result.get('id')}: not applicable without a reason code (reason: {result.get('reason')!r})"
    if reasons is None:
        return f"{result.get('id')}: not applicable under reason code {code!r}, which no reason code list allows"
    entry = reasons.get(code)
    if entry is None:
        return f"{result.get('id')}: not applicable under reason code {code!r}, which spec/not-applicable-reasons.yaml does not list"
    if not entry["allowed_in_submission"]:
        return f"{result.get('id')}: not applicable under reason code {code!r} ({entry['class']}), not allowed in a submission"
    return None
