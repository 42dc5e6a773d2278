"""Several attempts at the same checks (./uet run --rerun-failures N, --repeat N): the seeds they run with,
which checks a rerun takes, and one result per check from all its attempts, `flaky` where they disagree; and
within each attempt, the cells the infrastructure kept from running set up again (--infra-retries N).

A rerun starts with the seed that failed (a deterministic failure fails again), then takes new seeds drawn
from the run's, so the same command gives the same seeds (each is printed).
"""
from __future__ import annotations

import dataclasses
import random

from harness.results.results import Result
from harness.results import verdicts
from harness.results.verdicts import HELD, INFRA, Verdict

# What a case binary reports as failing; flaky is this module's own conclusion from several of them, made when
# one attempt's MUSTs held (HELD) and another's did not.
FAILING = tuple(v for v in verdicts.FAILING if v != Verdict.FLAKY)
NOTE_CHARS = 200


def seeds(seed: int, attempts: int, seed_max: int, *, again: bool) -> list[int]:
    """The seed of each attempt: the run's; with `again` (a rerun first tries what failed) the run's once more;
    then new ones, drawn from the run's."""
    draw = random.Random(seed)
    out = [seed, seed] if again else [seed]
    while len(out) < attempts:
        s = draw.randrange(1, seed_max)
        if s not in out:
            out.append(s)
    return out[:attempts]


def rerunnable(r: Result) -> bool:
    """A failing case a gtest filter can name again: not the harness's own records ('(cell)', '(verdict file)',
    '(whole binary)')."""
    return r.verdict in FAILING and r.area != "harness" and " (" not in r.case


def filters(results: list[Result]) -> dict[str, dict[str, list[str]]]:
    """{cell id: {area: [case, ...]}} of the failing results a rerun takes."""
    out: dict[str, dict[str, list[str]]] = {}
    for r in results:
        if rerunnable(r):
            out.setdefault(r.cell, {}).setdefault(r.area, []).append(r.case)
    return out


def _note(r: Result) -> str | None:
    text = r.reason or r.detail or (r.message or "").strip().split("\n", 1)[0]
    return text[:NOTE_CHARS] or None


def record(r: Result, attempt: int, seed: int) -> dict:
    return {"attempt": attempt, "seed": seed, "verdict": r.verdict, "seconds": r.seconds, "note": _note(r)}


def classify(verdicts: list[str]) -> str:
    """One verdict from all attempts: flaky when its MUSTs held in one and failed in another; otherwise the
    first attempt's (a check that failed, then timed out stays the failure it first was). An attempt the
    infrastructure kept from running says nothing of the check: the others decide, if any ran."""
    verdicts = [v for v in verdicts if v not in INFRA] or verdicts
    if any(v in HELD for v in verdicts) and any(v in FAILING for v in verdicts):
        return Verdict.FLAKY.value
    return verdicts[0]


def merge(tries: list[tuple[int, list[Result], int]]) -> list[Result]:
    """tries: (attempt number, results, seed) in order, the first holding every check. One result per check
    of the first attempt: the first failing attempt's record (its evidence is what to look at), else the
    first one's, with the classified verdict, every attempt and the pass rate."""
    by_id: dict[str, list[tuple[int, int, Result]]] = {}
    for attempt, results, seed in tries:
        for r in results:
            by_id.setdefault(r.id, []).append((attempt, seed, r))
    merged = []
    for _, first, _ in tries[:1]:
        for r in first:
            seen = by_id[r.id]
            if len(seen) == 1:
                merged.append(r)
                continue
            shown = next((x for _, _, x in seen if x.verdict in FAILING), r)
            out = dataclasses.replace(shown, verdict=classify([x.verdict for _, _, x in seen]))
            out.attempts = [record(x, a, s) for a, s, x in seen]
            checked = [x for _, _, x in seen if x.verdict != Verdict.NOT_APPLICABLE]  # n/a checked nothing
            out.pass_rate = round(sum(x.verdict in HELD for x in checked) / len(checked), 3) if checked else None
            merged.append(out)
    return merged


def run_more(results: list[Result], plan: list, *, seed: int, repeat: int, rerun: int, seed_max: int, stop, run_pass,
             progress, say) -> dict:
    """The attempts after the first: `repeat` - 1 passes of the whole `plan` ((index, cell, gtest filter) as the
    first ran), or up to `rerun` passes of the checks still failing. run_pass(attempt, seed, plan, progress)
    runs one; progress(cells) makes its progress printer. Returns the run's `attempts` block with the merged
    results under "results"."""
    tries = [(1, results, seed)]
    passes = [{"attempt": 1, "seed": seed, "kind": "first", "checks": len(results)}]
    if repeat > 1:
        for attempt, s in enumerate(seeds(seed, repeat, seed_max, again=False)[1:], start=2):
            if stop.is_set():
                break
            say(f"uet run: repeat {attempt} of {repeat}, seed {s}")
            tries.append((attempt, run_pass(attempt, s, plan, progress(len(plan))), s))
            passes.append({"attempt": attempt, "seed": s, "kind": "repeat", "checks": len(tries[-1][1])})
    for attempt, s in enumerate(seeds(seed, 1 + rerun, seed_max, again=True)[1:], start=2):
        failing = filters(merge(tries))
        if stop.is_set() or not failing:
            break
        cells = {c.id: (i, c) for i, c, _ in plan}
        again = [(cells[cid][0], dataclasses.replace(cells[cid][1], areas=sorted(by_area)),
                  ":".join(case for cases in by_area.values() for case in cases)) for cid, by_area in failing.items()]
        n = sum(len(cases) for by_area in failing.values() for cases in by_area.values())
        say(f"uet run: rerun {attempt - 1} of {rerun}, seed {s}" + (" (the run's again)" if s == seed else "")
            + f": {n} failing check(s) in {len(again)} cell(s)")
        tries.append((attempt, run_pass(attempt, s, again, progress(len(again))), s))
        passes.append({"attempt": attempt, "seed": s, "kind": "rerun", "checks": len(tries[-1][1])})
    merged = merge(tries)
    if len(tries) > 1:
        flaky = [r.id for r in merged if r.verdict == Verdict.FLAKY]
        say(f"uet run: {len(tries)} attempts (seeds {', '.join(str(p['seed']) for p in passes)}): {len(flaky)} flaky"
            + "".join(f"\n    FLAKY: {i}" for i in flaky))
    return {"repeat": repeat, "rerun_failures": rerun, "passes": passes, "results": merged}


def infra_lost(results: list[Result]) -> dict[str, set[str]]:
    """{cell id: {area, ...}} of the areas the infrastructure kept from running (an infra_error)."""
    out: dict[str, set[str]] = {}
    for r in results:
        if r.verdict in INFRA:
            out.setdefault(r.cell, set()).add(r.area)
    return out


def retry_infra(results: list[Result], plan: list, *, retries: int, stop, run_again, say) -> tuple[list[Result], dict]:
    """The areas of `plan` ((index, cell, gtest filter) as the attempt ran them) that the infrastructure kept
    from running, run again up to `retries` times: run_again(entries) runs them as the attempt did (its seed, its
    folder) and returns their results, which replace that area's. Returns the results and {cell id: how many
    times it was set up} for every cell of `plan`. What is still lost after the last try stays infra_error."""
    tries = {c.id: 1 for _, c, _ in plan}
    for n in range(1, retries + 1):
        lost = infra_lost(results)
        again = [(i, dataclasses.replace(c, areas=[a for a in c.areas if a in lost[c.id]]), f)
                 for i, c, f in plan if c.id in lost]
        again = [entry for entry in again if entry[1].areas]
        if stop.is_set() or not again:
            break
        say(f"uet run: infrastructure retry {n} of {retries}: {len(again)} cell(s) lost before their cases ran "
            f"({', '.join(c.id for _, c, _ in again)}), set up again with the same seed")
        redo = {(c.id, a) for _, c, _ in again for a in c.areas}
        results = [r for r in results if (r.cell, r.area) not in redo] + run_again(again)
        for _, c, _ in again:
            tries[c.id] += 1
    return results, tries
