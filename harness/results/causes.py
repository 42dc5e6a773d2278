"""What to fix first: a run's failures grouped by cause, the causes ranked by how many cases they explain.

A cause is one thing a side did, read from the fields the case binaries write (reports/RESULTS-FORMAT.md),
never from a failure's text:
- a diagnostic: frames a side sent with one decoder diagnostic (kind, and the field or header it names);
- a claim a side cannot keep: "claimed but unsupported" (evidence `claimed_unsupported`), the profile or
  feature it claims and lacks;
- a refused call: an fi_* call a side's provider refused, with its return code (evidence `refused`);
- a statement: a catalogue statement a side's checks broke, for the failures of the case's own checks
  (`own_failures`: those neither a diagnostic nor a refused call accounts for).
A case counts once under each of its causes: a case whose every request carries message_id 0 and whose own
check also saw the wrong PIDonFEP is under both. The console, index.html and conformance.html all show
rank()'s list."""
from __future__ import annotations

import collections

from harness.results.results import claimed_unsupported
from harness.results.verdicts import NOT_HELD

KIND_ORDER = {"diagnostic": 0, "unsupported": 1, "refused": 2, "statement": 3, "unexplained": 4}
SHOWN_VALUES = 3


def _sides(doc: dict) -> dict[str, dict]:
    """cell id -> {"initiator": manifest name, "target": manifest name}, and {None: its name} for a cell whose
    sides are one manifest (a result that names no side is still that manifest's)."""
    out = {}
    for c in (c for c in doc.get("cells") or [] if isinstance(c, dict)):
        sides = {"initiator": str(c.get("initiator") or "initiator"), "target": str(c.get("target") or "target")}
        out[str(c.get("id"))] = sides | ({None: sides["initiator"]} if sides["initiator"] == sides["target"] else {})
    return out


def _list(value) -> list:
    return value if isinstance(value, list) else []


def causes_of(result: dict, sides: dict[str, str]) -> list[tuple]:
    """The causes of one failing result, each a key (kind, manifest, what, statements) and a value shown
    beside it (a diagnostic's value), in the order the result holds them (a key may come more than once)."""
    def who(side) -> str:
        return sides.get(side, str(side or "an unknown side"))

    evidence = result.get("evidence") if isinstance(result.get("evidence"), dict) else {}
    out = []
    diag_statements: set[str] = set()
    for d in (d for d in _list(evidence.get("diagnostics")) if isinstance(d, dict)):
        statements = tuple(map(str, _list(d.get("statements"))))
        diag_statements.update(statements)
        what = f"{d.get('kind')} in {d.get('field') or d.get('header')}"
        out.append((("diagnostic", who(d.get("sender")), what, statements), d.get("value")))
    if unsupported := claimed_unsupported(result):
        out.append((("unsupported", who(result.get("blamed_side")), unsupported, ()), None))
    refused = [r for r in _list(evidence.get("refused")) if isinstance(r, dict)]
    for r in refused:
        out.append((("refused", who(r.get("side")), f"{r.get('call')}: {r.get('rc')} ({r.get('error')})", ()), None))
    own = result.get("own_failures")
    if isinstance(own, int):  # the binary counted the failures of the case's own checks
        own_checks_failed = own > len(refused)
    else:  # a verdict the harness made, or a binary's that predates the count: the statements, if nothing else
        own_checks_failed = not any(k[0] in ("diagnostic", "refused") for k, _ in out)
    if own_checks_failed:
        statements = [str(s) for s in _list(result.get("statements"))]
        for s in [s for s in statements if s not in diag_statements] or statements:
            out.append((("statement", who(result.get("blamed_side")), s, (s,)), None))
    if not out:
        out.append((("unexplained", who(result.get("blamed_side")), str(result.get("case")), ()), None))
    return out


def label(kind: str, side: str, what: str, values: list) -> str:
    """A cause as one line."""
    if kind == "diagnostic":
        shown = sorted({str(v) for v in values if v is not None})
        return f"{side} sends frames with {what}" + (f" (value {', '.join(shown)})" if 0 < len(shown) <= SHOWN_VALUES else "")
    if kind == "unsupported":
        return f"{side} claims what it lacks: {what}"
    if kind == "refused":
        return f"{side} refuses {what}"
    if kind == "statement":
        return f"{side} breaks {what}"
    return f"{side}: {what} failed with no statement, diagnostic or refused call recorded"


def explain(result: dict, doc: dict) -> str:
    """One failing result's causes, as rank() words them ("; " between them)."""
    found = causes_of(result, _sides(doc).get(str(result.get("cell")), {}))
    broken: dict[str, list[str]] = {}   # a side's statements, on one line
    for (kind, side, what, _), _ in found:
        if kind == "statement":
            broken.setdefault(side, []).append(what)
    words = [label(k[0], k[1], k[2], [v for key, v in found if key == k]) for k, _ in found if k[0] != "statement"]
    words += [label("statement", side, ", ".join(dict.fromkeys(ids)), []) for side, ids in broken.items()]
    return "; ".join(dict.fromkeys(words))


def rank(doc: dict) -> list[dict]:
    """The causes of the run's failures (verdict fail or flaky), most cases first: each with its kind, the
    manifest of the side at fault, its label, the statements it breaks, how many cases it explains and
    their result ids."""
    sides = _sides(doc)
    ids: dict[tuple, list[str]] = collections.defaultdict(list)
    values: dict[tuple, list] = collections.defaultdict(list)
    for r in doc.get("results") or []:
        if not isinstance(r, dict) or r.get("verdict") not in NOT_HELD:
            continue
        for key, value in causes_of(r, sides.get(str(r.get("cell")), {})):
            if str(r.get("id")) not in ids[key]:
                ids[key].append(str(r.get("id")))
            values[key].append(value)
    ranked = sorted(ids, key=lambda k: (-len(ids[k]), KIND_ORDER[k[0]], k[1], k[2]))
    return [{"kind": k[0], "side": k[1], "cause": label(k[0], k[1], k[2], values[k]), "statements": list(k[3]),
             "cases": len(ids[k]), "results": ids[k]} for k in ranked]


def console_lines(ranking: list[dict], shown: int = 10) -> list[str]:
    """The ranking for the end of a run: a heading and a line per cause, the first `shown` of them."""
    if not ranking:
        return []
    lines = [f"uet run: what to fix first: {len(ranking)} cause(s) of the failures, most cases first:"]
    for c in ranking[:shown]:
        statements = f" [{', '.join(c['statements'])}]" if c["statements"] and c["kind"] != "statement" else ""
        lines.append(f"    {c['cases']} case(s): {c['cause']}{statements}")
    if len(ranking) > shown:
        lines.append(f"    ... and {len(ranking) - shown} more cause(s) in the report")
    return lines
