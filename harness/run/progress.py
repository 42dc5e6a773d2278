"""Progress of a run on the terminal: one line per cell as it ends (its verdicts, the running counts, the
time so far and an estimate of what is left), failures as they happen; --quiet keeps only failures and
the summary, --verbose adds a line per case."""
from __future__ import annotations

import re
import sys
import threading
import time

from harness.results.results import Result
from harness.results.verdicts import FAILING, INFRA, VERDICTS
from harness.files.untrusted import printable


# A failure of a case's message begins "<file>:<line>: " (cases/common/claims/verdict.cpp joins them in order).
_FAILURE_START = re.compile(r"^\S+:\d+: ")


def first_failure(message: str) -> str:
    """The first failure of a case's message, as one line: its last line (the case's own words, after
    googletest's expected/actual lines), and how many failures follow it. The first is shown first: later
    ones often follow from it ("Actual: it does." says nothing alone)."""
    failures: list[list[str]] = []
    for line in message.strip().splitlines():
        if _FAILURE_START.match(line) or not failures:
            failures.append([])
        failures[-1].append(_FAILURE_START.sub("", line, count=1))
    if not failures:
        return ""
    words = [l.strip() for l in failures[0] if l.strip()]
    more = f" (and {len(failures) - 1} more failure{'s' if len(failures) > 2 else ''})" if len(failures) > 1 else ""
    return (words[-1] if words else "") + more


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    def __init__(self, total_cells: int, weights: dict[str, float], *, quiet=False, verbose=False, stream=None):
        self.total_cells, self.weights = total_cells, weights  # weight: expected share of the work per cell
        # sys.stdout as it is when the run starts (a caller of execute may have redirected it), not at import
        self.quiet, self.verbose, self.stream = quiet, verbose, sys.stdout if stream is None else stream
        self.start = time.monotonic()
        self.done_weight = 0.0
        self.cells_done = 0
        self.totals = dict.fromkeys(VERDICTS, 0)
        self.lock = threading.Lock()

    def say(self, line: str) -> None:
        # Lines carry what binaries printed (a failure's reason, a case name): no escape sequence or carriage
        # return of theirs reaches the terminal.
        with self.lock:
            print(printable(line), file=self.stream, flush=True)

    def case(self, r: Result) -> None:
        with self.lock:
            self.totals[r.verdict] = self.totals.get(r.verdict, 0) + 1
        if r.verdict in FAILING or r.verdict in INFRA:
            why = r.reason or r.detail or first_failure(r.message or "")
            blame = f" [{r.blamed_side}]" if r.blamed_side else ""
            self.say(f"    {r.verdict.upper()}{blame}: {r.cell}/{r.area}: {r.case}: {why}"[:300])
        elif self.verbose:
            self.say(f"    {r.verdict}: {r.cell}/{r.area}: {r.case}")

    def cell(self, cell_id: str, counts: dict, seconds: float) -> None:
        with self.lock:
            self.cells_done += 1
            self.done_weight += self.weights.get(cell_id, 1.0)
            elapsed = time.monotonic() - self.start
            total_weight = sum(self.weights.values()) or 1.0
            left = elapsed * (total_weight - self.done_weight) / self.done_weight if self.done_weight else 0.0
            t = self.totals
        if self.quiet:
            return
        mine = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items() if n and k != "total")
        self.say(f"[{self.cells_done}/{self.total_cells}] {cell_id}: {mine or 'no checks'} ({seconds:.1f} s) | "
                 f"so far {t['pass']} pass, {t['fail']} fail, {t['not_applicable']} n/a, "
                 f"{t['error']} error" + (f", {t['timeout']} timeout" if t["timeout"] else "") +
                 f" | {_clock(elapsed)} elapsed, ~{_clock(left)} left")
