"""What the nightly-CI options add to a run's results.json once its checks are in (reports/RESULTS-FORMAT.md):
the attempts block, each result's expectation and the stale entries, the comparison with a baseline, and the
exit status, which counts only the failures no expectation excuses. Each part is also said on the console."""
from __future__ import annotations

import datetime

from harness.commands.run import EXIT_INFRA
from harness.trends import compare as compare_mod
from harness.results import expectations as expectations_mod
from harness.results.verdicts import INFRA


def exit_status(summary: dict, failed: bool) -> int:
    """A finished run's: 1 when `failed` (a provider's check failed, or the decoders disagreed), else EXIT_INFRA
    when the infrastructure kept checks from running (a CI retries the job rather than blame the provider), else 0."""
    return 1 if failed else EXIT_INFRA if any(summary.get(v) for v in INFRA) else 0


def add(doc: dict, *, attempts: dict, expectations, baseline: dict | None, say, today: datetime.date | None = None) -> None:
    if len(attempts.get("passes") or []) > 1 or attempts.get("repeat", 1) > 1 or attempts.get("rerun_failures"):
        doc["attempts"] = {k: v for k, v in attempts.items() if k != "results"}
    if expectations is not None:
        block = expectations_mod.apply(expectations, doc["results"], today or datetime.date.today())
        doc["expectations"] = block
        say_expectations(block, doc["results"], say)
    summary = doc["summary"]
    unexpected = expectations_mod.unexpected(doc["results"])
    summary["unexpected"] = len(unexpected)
    decode = doc.get("decode_crosscheck") or {}
    if summary["exit_status"] != 130:
        summary["exit_status"] = exit_status(summary, bool(unexpected or decode.get("disagreements") or decode.get("error")))
    if baseline is not None:
        comparison = compare_mod.compare(baseline, dict(doc, _path="this run"))
        doc["comparison"] = comparison
        c = comparison["counts"]
        say(f"uet run: against the baseline {comparison['old']['path']}: {c['regressions']} regression(s), "
            f"{c['fixes']} fix(es), {c['new_checks']} new and {c['removed_checks']} removed check(s)"
            + "".join(f"\n    REGRESSION: {r['id']}: {r['old']} -> {r['new']}" for r in comparison["regressions"]))


def say_expectations(block: dict, results: list[dict], say) -> None:
    say(f"uet run: expectations {block['file']}: {block['expected_fail']} expected fail, {block['expected_flaky']} "
        f"expected flaky, {block['unexpected_pass']} unexpected pass, {block['unexpected_fail']} unexpected fail, "
        f"{block['quarantined']} quarantined, {len(block['stale'])} stale entr{'y' if len(block['stale']) == 1 else 'ies'}; "
        f"{block['unexpected']} unexpected result(s) count in the exit status")
    for r in results:
        e = r.get("expectation")
        if e and e["status"] != "expected_flaky":
            say(f"    {e['status'].upper().replace('_', ' ')}{' (quarantined)' if e['quarantine'] else ''}: {r['id']}: "
                f"{r['verdict']}, expected {e['expect']} ({e['reason']}; {e['owner']}, {e['link']})"[:400])
    for s in block["stale"]:
        say(f"    STALE: expectations[{s['entry']}] (match {s['match']!r}): {s['why']} ({s['owner']}, {s['link']})")
