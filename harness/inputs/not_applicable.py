"""The declared reasons a check can be not applicable (spec/not-applicable-reasons.yaml): the file checked
against its schema, a not_applicable result whose code is not declared turned into an error (a skip nobody
declared is a bug of the suite), and the counts by code and by class that results.json's summary carries."""
from __future__ import annotations

import collections
import functools
import pathlib

from harness.files import input_files

REPO = pathlib.Path(__file__).resolve().parents[2]
REASONS_PATH = REPO / "spec" / "not-applicable-reasons.yaml"
CLASSES = ("not-claimed", "no-such-combination")

SCHEMA = {
    "type": "object", "required": ["codes"], "additionalProperties": False,
    "properties": {"codes": {
        "type": "object", "minProperties": 1,
        "propertyNames": {"pattern": "^[a-z][a-z0-9]*(-[a-z0-9]+)*$"},
        "additionalProperties": {
            "type": "object", "additionalProperties": False,
            "required": ["class", "description", "allowed_in_submission"],
            "properties": {"class": {"enum": list(CLASSES)},
                           "description": {"type": "string", "minLength": 1, "pattern": "^[^\n]*$"},
                           "allowed_in_submission": {"type": "boolean"}}}}},
}


class ReasonsError(ValueError):
    """The reasons file is missing, not YAML, or does not follow SCHEMA; the message names the file and the key."""


def load(path: pathlib.Path = REASONS_PATH) -> dict[str, dict]:
    """{code: {class, description, allowed_in_submission}} of a reasons file, validated."""
    try:  # ./uet verify --reasons names a file of the user's: read as untrusted input
        doc, _ = input_files.load_yaml(pathlib.Path(path), "reasons file")
    except input_files.InputError as e:
        raise ReasonsError(str(e)) from None
    problems = input_files.schema_problems(doc, SCHEMA, input_files.shown_path(path))
    if problems:
        raise ReasonsError("\n".join(problems))
    return doc["codes"]


@functools.cache
def codes() -> dict[str, dict]:
    return load()


def check_code(result) -> None:
    """A not_applicable result must carry a declared reason_code; without one it becomes an error that says so
    (its reason kept), so an undeclared skip shows in the run's failing counts."""
    if result.verdict != "not_applicable" or result.reason_code in codes():
        return
    what = f"an undeclared reason code '{result.reason_code}'" if result.reason_code else "no reason code"
    result.verdict = "error"
    result.reason = (f"not applicable with {what} (declared codes: {REASONS_PATH.relative_to(REPO)}): "
                     f"{result.reason or ''}")


def breakdown(results) -> dict[str, dict[str, int]]:
    """The not_applicable results counted by reason code and by class, each in a fixed order (the file's,
    CLASSES): the same run gives the same JSON."""
    by_code = collections.Counter(r.reason_code for r in results if r.verdict == "not_applicable")
    table = codes()
    return {"not_applicable_by_code": {c: by_code[c] for c in table if by_code[c]},
            "not_applicable_by_class": {k: sum(n for c, n in by_code.items() if table.get(c, {}).get("class") == k)
                                        for k in CLASSES}}


def submission_problem(result: dict, table: dict[str, dict] | None) -> str | None:
    """Why a not-applicable result of a submission package is not allowed there, or None when it is (`table`
    None: no reasons file could be read, so no code is allowed)."""
    code = result.get("reason_code")
    if not code:
        return f"{result.get('id')}: not applicable without a reason code (reason: {result.get('reason')!r})"
    if table is None:
        return f"{result.get('id')}: not applicable under reason code {code!r}, which no reason code list allows"
    entry = table.get(code)
    if entry is None:
        return f"{result.get('id')}: not applicable under reason code {code!r}, which spec/not-applicable-reasons.yaml does not list"
    if not entry["allowed_in_submission"]:
        return f"{result.get('id')}: not applicable under reason code {code!r} ({entry['class']}), not allowed in a submission"
    return None
