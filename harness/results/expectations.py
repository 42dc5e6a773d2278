"""Known failures as data (./uet run --expectations FILE): load and validate an expectations file
(cases/expectations/expectations.schema.yaml), match its entries to a run's results, and tell the
unexpected (what the exit status counts) from the expected, the quarantined and the stale entries.

The verdict stays what the check did; the match is recorded beside it, in the result's `expectation`
(reports/RESULTS-FORMAT.md).
"""
from __future__ import annotations

import dataclasses
import datetime
import fnmatch
import hashlib
import pathlib

import yaml

from harness.files import input_files
from harness.results.verdicts import FAILING, Verdict  # what fails a run unless an expectation excuses it

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA_PATH = REPO / "cases" / "expectations" / "expectations.schema.yaml"
# What each `expect` accepts: a flaky check may also simply fail or pass on a run without reruns.
ACCEPTS = {Verdict.FAIL: {Verdict.FAIL}, Verdict.ERROR: {Verdict.ERROR}, Verdict.TIMEOUT: {Verdict.TIMEOUT},
           Verdict.FLAKY: {Verdict.FLAKY, Verdict.FAIL, Verdict.PASS}}


class ExpectationsError(Exception):
    """A file that cannot be read or breaks the schema; the message names each bad entry and field."""


@dataclasses.dataclass
class Entry:
    index: int
    match: str
    expect: str
    reason: str
    link: str
    owner: str
    expires: datetime.date
    quarantine: bool = False

    def matches(self, result: dict) -> bool:
        return any(fnmatch.fnmatchcase(result.get(key) or "", self.match) for key in ("id", "case"))

    def record(self) -> dict:
        return {"entry": self.index, "match": self.match, "expect": self.expect, "reason": self.reason,
                "link": self.link, "owner": self.owner, "expires": self.expires.isoformat(),
                "quarantine": self.quarantine}


@dataclasses.dataclass
class Expectations:
    path: str
    sha256: str
    entries: list[Entry]


def _dates_as_text(node):
    # YAML reads an unquoted 2027-01-31 as a date; the schema checks the text either way.
    if isinstance(node, dict):
        return {k: _dates_as_text(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_dates_as_text(v) for v in node]
    return node.isoformat() if isinstance(node, datetime.date) else node


def load(path: pathlib.Path) -> Expectations:
    """The file read as untrusted input (harness/files/input_files.py: a regular file, its size, nesting and YAML
    aliases bounded); ExpectationsError names each problem by its key, never the file's content."""
    path = pathlib.Path(path)
    try:
        raw, text = input_files.load_yaml(path, "expectations file")
    except input_files.InputError as exc:
        raise ExpectationsError(str(exc)) from None
    doc = _dates_as_text(raw)
    schema = yaml.safe_load(SCHEMA_PATH.read_text())
    where = input_files.shown_path(path)
    problems = input_files.schema_problems(doc, schema, where)
    entries = []
    for i, item in enumerate((doc or {}).get("expectations") or [] if not problems else []):
        try:
            expires = datetime.date.fromisoformat(item["expires"])
        except ValueError:
            problems.append(f"{where}: expectations.{i}.expires: not a day of the calendar")
            continue
        entries.append(Entry(i, item["match"], item["expect"], item["reason"], item["link"], item["owner"], expires,
                             bool(item.get("quarantine", False))))
    if problems:
        raise ExpectationsError("\n".join(problems))
    return Expectations(str(path), hashlib.sha256(text.encode()).hexdigest(), entries)


def status(entry: Entry, verdict: str) -> str:
    """expected_fail, unexpected_pass (the check did not fail), unexpected_fail (it failed otherwise than
    expected) or expected_flaky (a check expected flaky that passed or was classified flaky)."""
    if verdict in ACCEPTS[entry.expect]:
        return "expected_flaky" if entry.expect == Verdict.FLAKY and verdict != Verdict.FAIL else "expected_fail"
    return "unexpected_fail" if verdict in FAILING else "unexpected_pass"


def apply(expectations: Expectations, results: list[dict], today: datetime.date) -> dict:
    """Sets each result's `expectation` (None where no live entry matches; the first live entry wins; never on
    a not-applicable result) and
    returns the run's `expectations` block. An entry past its expiry date is not applied."""
    live = [e for e in expectations.entries if e.expires >= today]
    used: dict[int, int] = {}
    tally = {"expected_fail": 0, "expected_flaky": 0, "unexpected_pass": 0, "unexpected_fail": 0, "quarantined": 0}
    for r in results:
        # A not-applicable check checked nothing: it neither fails as expected nor passes unexpectedly.
        entry = None if r.get("verdict") == Verdict.NOT_APPLICABLE else next((e for e in live if e.matches(r)), None)
        if entry is not None and r.get("verdict") == Verdict.INFRA_ERROR:
            # Not run tonight (the infrastructure's doing): the entry still names a check, so it is not stale,
            # and it says nothing of a check that did not run.
            used[entry.index] = used.get(entry.index, 0)
            entry = None
        if entry is None:
            r["expectation"] = None
            continue
        used[entry.index] = used.get(entry.index, 0) + 1
        r["expectation"] = dict(entry.record(), status=status(entry, r.get("verdict")))
        tally[r["expectation"]["status"]] += 1
        tally["quarantined"] += entry.quarantine
    stale = []
    for e in expectations.entries:
        why = (f"expired on {e.expires.isoformat()}" if e.expires < today else
               "matched no result (not-applicable ones aside)" if e.index not in used else None)
        if why:
            stale.append(dict(e.record(), why=why))
    return {"file": expectations.path, "sha256": expectations.sha256, "entries": len(expectations.entries),
            "today": today.isoformat(), "matched": {str(k): v for k, v in sorted(used.items())},
            **tally, "stale": stale, "unexpected": len(unexpected(results))}


def excused(result: dict) -> bool:
    e = result.get("expectation")
    return bool(e) and (e.get("quarantine") or e.get("status") in ("expected_fail", "expected_flaky"))


def unexpected(results: list[dict]) -> list[dict]:
    """What the exit status counts: the failing results no live expectation excuses, and the unexpected passes
    (a known failure that passed leaves its entry wrong: CI says so until someone removes it, as wpt does)."""
    def counts(r: dict) -> bool:
        e = r.get("expectation") or {}
        if e.get("quarantine"):
            return False
        return e.get("status") == "unexpected_pass" or (r.get("verdict") in FAILING and not excused(r))
    return [r for r in results if counts(r)]
