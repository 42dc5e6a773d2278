"""What the failure sections of index.html and of each cell's page, and conformance.html's head, show of
harness/results/causes.py's ranking: each cause with the cases it explains, linked to their failure blocks."""
from harness.results import causes
from reports.view import result_anchor

SHOWN_CASES = 5   # case links per cause; the count says how many there are


def rows(doc: dict, statement_text) -> list[dict]:
    return [{"cases": c["cases"], "kind": c["kind"], "cause": c["cause"],
             "statements": [(s, statement_text(s)) for s in c["statements"]],
             "links": [(rid, result_anchor(rid)) for rid in c["results"][:SHOWN_CASES]],
             "more": max(0, c["cases"] - SHOWN_CASES)} for c in causes.rank(doc)]
