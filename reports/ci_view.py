"""What the report shows of the nightly-CI parts of results.json (reports/RESULTS-FORMAT.md): expectations
and stale entries, attempts and pass rates, the comparison with a baseline. None for a part the run lacks,
so a run without them renders as before."""
import re

from harness.results.compare_categories import CATEGORIES, TITLES
from harness.results.verdicts import HELD, Verdict

SAFE_LINK = re.compile(r"^(https?|mailto):", re.IGNORECASE)
STATUS_LABELS = {"expected_fail": "expected fail", "expected_flaky": "expected flaky",
                 "unexpected_pass": "unexpected pass", "unexpected_fail": "unexpected fail"}


def link(url):
    """A URL the page may make a link of; anything else (javascript:, data:) is shown as text only."""
    return url if isinstance(url, str) and SAFE_LINK.match(url) else None


def expectation(e):
    if not e:
        return None
    return {"status": e.get("status"), "label": STATUS_LABELS.get(e.get("status"), e.get("status")),
            "expect": e.get("expect"), "reason": e.get("reason"), "owner": e.get("owner"), "expires": e.get("expires"),
            "link": e.get("link"), "href": link(e.get("link")), "quarantine": bool(e.get("quarantine")),
            "entry": e.get("entry"), "match": e.get("match")}


def pass_rate(result):
    runs = [a for a in result.get("attempts") or [] if a.get("verdict") != Verdict.NOT_APPLICABLE]
    if not runs:
        return None
    held = sum(1 for a in runs if a.get("verdict") in HELD)
    return "%d/%d (%d%%)" % (held, len(runs), round(100.0 * held / len(runs)))


def attempts(result):
    return [{"attempt": a.get("attempt"), "seed": a.get("seed"), "verdict": a.get("verdict"),
             "note": a.get("note") or ""} for a in result.get("attempts") or []]


def failure_extras(result):
    """What a failure block adds: the expectation that matched it and its attempts."""
    return {"expectation": expectation(result.get("expectation")), "attempts": attempts(result),
            "pass_rate": pass_rate(result)}


def expectations_part(doc):
    block = doc.get("expectations")
    if not block:
        return None
    matched = [dict(expectation(r["expectation"]), id=r.get("id"), verdict=r.get("verdict"))
               for r in doc.get("results", []) if r.get("expectation")]
    stale = [dict(expectation(s), why=s.get("why")) for s in block.get("stale") or []]
    counts = [(key, STATUS_LABELS.get(key, key), block.get(key, 0)) for key in
              ("expected_fail", "expected_flaky", "unexpected_pass", "unexpected_fail", "quarantined", "unexpected")]
    return {"file": block.get("file"), "entries": block.get("entries"), "today": block.get("today"),
            "counts": counts, "matched": matched, "stale": stale}


def attempts_part(doc):
    block = doc.get("attempts")
    if not block:
        return None
    with_attempts = [r for r in doc.get("results", []) if r.get("attempts")]
    # Under --repeat every check has attempts: the table lists those that did not pass every time.
    uneven = [r for r in with_attempts if any(a.get("verdict") not in HELD for a in r["attempts"])]
    rows = [{"id": r.get("id"), "verdict": r.get("verdict"), "pass_rate": pass_rate(r), "attempts": attempts(r)}
            for r in uneven]
    return {"repeat": block.get("repeat"), "rerun_failures": block.get("rerun_failures"),
            "passes": block.get("passes") or [], "rows": rows, "steady": len(with_attempts) - len(uneven),
            "flaky": sum(1 for r in doc.get("results", []) if r.get("verdict") == Verdict.FLAKY)}


def comparison_part(comparison):
    if not comparison:
        return None
    return {"old": comparison.get("old") or {}, "new": comparison.get("new") or {},
            "categories": [(c, TITLES[c], comparison.get(c) or []) for c in CATEGORIES],
            "areas": comparison.get("areas") or [], "exit_status": comparison.get("exit_status")}


def ci(doc):
    """The CI section of the index page; None when the run used none of the CI options."""
    parts = {"expectations": expectations_part(doc), "attempts": attempts_part(doc),
             "comparison": comparison_part(doc.get("comparison"))}
    return parts if any(parts.values()) else None
