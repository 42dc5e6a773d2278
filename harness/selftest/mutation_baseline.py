"""The mutation run's baselines (harness/selftest/mutation.py): each cell without a knob, and what one failing case in
it does to the knobs.

A case that fails (or errors, or times out) in a baseline is run again on its own, with the same seed. If it
then passes it is flaky: named as such, and it counts as passing. If it fails again it failed twice: named,
and no knob is tried against it. While the reruns go on, a knob waits only for the cases it needs (a case
that covers its statement, or that fep/src/faults.def names beside it); the other knobs run. A binary that
gave no verdict (it could not start) leaves its whole area unknown: every knob waits for that area's rerun.
"""
from __future__ import annotations

import threading
import typing

from harness.results.results import Result, short_case
from harness.run.attempts import FAILING as PROBLEM   # one attempt's failing verdicts



def stands_for_a_binary(result: Result) -> bool:
    """A result of the binary, not of a case ('uet-cases-x (whole binary)', '(verdict file)'): only a run of
    its whole area can say what became of it."""
    return result.case.startswith(f"{result.binary} (")


class Baseline:
    """One cell without a knob: its verdicts (the reruns' in place of the first run's failures, once they
    ended), and the statements each passing case covers."""

    def __init__(self, cell, results: list[Result], areas: list[str]):
        self.cell = cell
        silent = sorted(set(areas) - {r.area for r in results})
        self.results = list(results) + [
            Result(getattr(cell, "label", str(cell)), a, f"uet-cases-{a}", f"uet-cases-{a} (whole binary)", "error",
                   reason=f"uet-cases-{a} gave no verdict (see its log): its cases are unknown") for a in silent]
        self.passing = {r.case: r for r in self.results if r.verdict == "pass"}
        self.pending = {r.case: r for r in self.problems()}   # the cases run again, until `settled`
        self.unknown_areas = {r.area for r in self.pending.values() if stands_for_a_binary(r)}
        self.reruns: list[dict] = []   # per case run again: its first verdict and its rerun's
        self.settled = threading.Event()
        if not self.pending:
            self.settled.set()

    def covering(self, statement: str) -> list[Result]:
        return [r for r in self.passing.values() if statement in r.statements]

    def problems(self) -> list[Result]:
        return [r for r in self.results if r.verdict in PROBLEM]

    @property
    def flaky(self) -> list[dict]:
        return [x for x in self.reruns if x["rerun_verdict"] not in PROBLEM]

    @property
    def failed_twice(self) -> list[dict]:
        return [x for x in self.reruns if x["rerun_verdict"] in PROBLEM]

    def _needs(self, case: Result, statement: str | None, named: set[str]) -> bool:
        return (statement is not None and statement in case.statements) or bool({case.case, short_case(case.case)} & named) \
            or case.area in self.unknown_areas

    def wait(self, statement: str | None, named: set[str], everything: bool = False) -> list[str]:
        """The failed cases a knob of `statement` (None: its statement is caught already) with the cases
        `named` for it needs (`everything`: every case of the cell); waits for their reruns, if any, to end."""
        needed = [c for c, r in self.pending.items() if everything or self._needs(r, statement, named)]
        if needed:
            self.settled.wait()
        return sorted(needed)

    def failed_twice_needed(self, statement: str | None, named: set[str]) -> list[dict]:
        """The cases a knob needs that failed twice without any knob: it cannot be tried against them."""
        return [x for x in self.failed_twice if self._needs(self.pending[x["case"]], statement, named)]

    def rerun(self, run: typing.Callable[[str, str], list[Result]]) -> None:
        """Runs the failed cases again, an area at a time (`run(area, gtest filter)` -> results, with the seed
        of the first run), and takes their new verdicts. Whatever happens, the waiting knobs are released."""
        results = list(self.results)
        try:
            for area in sorted({r.area for r in self.pending.values()}):
                whole = area in self.unknown_areas
                mine = [r for r in self.pending.values() if r.area == area]
                try:
                    again = run(area, "*" if whole else ":".join(sorted(r.case for r in mine)))
                except Exception as err:  # noqa: BLE001 - a rerun that could not run leaves the failures as they were
                    again, why = [], f"the rerun could not run: {err}"
                else:
                    why = "the rerun gave it no verdict"
                by_case = {r.case: r for r in again}
                if whole and again:
                    results = [r for r in results if r.area != area] + list(again)
                else:
                    results = [by_case.get(r.case, r) if r.case in self.pending else r for r in results]
                for r in mine:
                    now = by_case.get(r.case)
                    if now is None and whole and again and not any(stands_for_a_binary(a) for a in again):
                        # the binary ran this time: its cases, each seen once, are what the area's rerun says
                        bad = [a for a in again if a.verdict in PROBLEM]
                        verdict, reason = (bad[0].verdict, "its rerun ran, and failed: " + ", ".join(a.case for a in bad)) \
                            if bad else ("pass", "the binary ran its cases this time")
                    else:
                        verdict, reason = (now.verdict, now.reason) if now else ("error", why)
                    self.reruns.append({"cell": getattr(self.cell, "label", str(self.cell)), "area": area,
                                        "case": r.case, "first_verdict": r.verdict, "first_reason": r.reason,
                                        "rerun_verdict": verdict, "rerun_reason": reason})
        finally:
            self.results = results
            self.passing = {r.case: r for r in results if r.verdict == "pass"}
            self.settled.set()
