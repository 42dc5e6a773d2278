"""Whether two run folders decided the same, result by result, the facts of a run's moment aside: what a test
compares a merged run of shards (./uet merge) with the one run of the same plan and seed by.

A result's decision is its verdict, reason code, reason, statements, blame, detail and judged_by; its reason
and detail with their numbers masked (a capture's frame count, an ephemeral port, a pid differ between two
runs of the same commit and seed, and are no decision). The conformance statement is compared whole but for
the run's own facts (its id, command, times, host)."""
import pathlib
import re

from harness.results.conformance_statement import read_statement
from harness.results.results import read_results_json

# The run's moment: its name, the command that made it, when and where it ran.
RUN_FACTS = ("run_id", "command", "started", "finished", "seconds", "host", "kernel", "suite_commit", "placement")
# A run's id in a path or a name, and the names placements give a cell's sides (namespaces, containers).
RUN_ID = re.compile(r"\d{8}-\d{6}-s\d+(-\d+)?")
PLACE = re.compile(r"uet-\d+-\d+-([ab])|uetv\d+([ab])|uet\d+-\d+")


def _masked(text):
    return re.sub(r"\d+", "N", text) if isinstance(text, str) else text


def decisions(folder: pathlib.Path) -> dict[str, tuple]:
    """{result id: (verdict, reason_code, reason, statements, blamed_side, blamed_manifest, detail, judged_by)}
    of a run folder's results.json (the one reader), in its order."""
    doc = read_results_json(folder)[1]
    return {r["id"]: (r["verdict"], r.get("reason_code"), _masked(r.get("reason")), tuple(r.get("statements") or ()),
                      r.get("blamed_side"), r.get("blamed_manifest"), _masked(r.get("detail")), r.get("judged_by"))
            for r in doc["results"]}


def _statement_without_run_facts(value, runs: list[str]):
    if isinstance(value, dict):
        return {k: _statement_without_run_facts(v, runs) for k, v in value.items() if k not in RUN_FACTS}
    if isinstance(value, list):
        return [_statement_without_run_facts(v, runs) for v in value]
    if isinstance(value, str):
        for run in runs:
            value = value.replace(run, "RUNS")
        return PLACE.sub("PLACE", RUN_ID.sub("RUNID", value))
    return value


def statement(folder: pathlib.Path) -> dict:
    """The run's conformance/statement.json (read by its one reader) without the run's own facts (names of runs and places masked)."""
    folder = pathlib.Path(folder).resolve()
    return _statement_without_run_facts(read_statement(folder), [str(folder.parent), str(folder)])


def differences(a: pathlib.Path, b: pathlib.Path) -> list[str]:
    """What two run folders decided differently: '<id>: <a's> != <b's>', ids only in one, then the statement's
    differing top-level keys; [] when they decided the same, in the same order."""
    da, db = decisions(a), decisions(b)
    out = [f"{i}: {da.get(i)} != {db.get(i)}" for i in dict.fromkeys([*da, *db]) if da.get(i) != db.get(i)]
    if not out and list(da) != list(db):
        out.append("the same results in another order")
    sa, sb = statement(a), statement(b)
    out += [f"statement.json {k} differs" for k in sorted(sa.keys() | sb.keys()) if sa.get(k) != sb.get(k)]
    return out
