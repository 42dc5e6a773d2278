"""A run's outputs: the results document assembled from what ran (harness/run/execute.py calls assemble), and
write_outputs, which writes the report of an outcome into its run's folder: results.json, the JUnit,
summary.txt, the pages and the conformance statement; and what the console says of it at the end."""
from __future__ import annotations

import dataclasses
import datetime
import os
import pathlib

from harness.files import output_files
from harness.files.untrusted import printable_tree
from harness.inputs import catalogue as catalogue_mod
from harness.inputs import run_info as run_info_mod
from harness.results import causes
from harness.results import coverage as coverage_mod
from harness.inputs import not_applicable as not_applicable_mod
from harness.results.conformance_statement import write as write_statement
from harness.results.results import Result, counts, write_junit, write_results_json
from harness.results.verdicts import FAILING
from harness.run import negotiation as negotiation_mod
from harness.run import plan as plan_mod
from harness.run.logcap import LOG_CAP_BYTES
from harness.run.run_plan import RunPlan
from harness.trends.ci_summary import exit_status
from harness.wire import wire_oracle
from harness.wire.capture_cap import CAPTURE_CAP_BYTES
from reports.render import render_html


@dataclasses.dataclass
class RunOutcome:
    """What execute(plan) returns: the results document and what the outputs and the exit status need."""
    plan: RunPlan
    run_id: str
    run_dir: pathlib.Path
    doc: dict                   # results.json's content
    results: list[Result]       # the same verdicts, as the JUnit is written from them
    interrupted: bool           # Ctrl-C or SIGTERM: the report is partial
    matched_nothing: bool       # --only named cases, and no check of the run is one

    @property
    def exit_status(self) -> int:
        return 130 if self.interrupted else 2 if self.matched_nothing else self.doc["summary"]["exit_status"]


class NotWritten(Exception):
    """The report could not be written whole (a full disk): where, and what is left of it."""

    def __init__(self, exc: OSError, run_dir: pathlib.Path):
        written = sorted(p.name for p in run_dir.iterdir() if not p.name.startswith("."))
        super().__init__(f"the report could not be written: {exc.filename or run_dir}: {exc.strerror or exc} "
                         f"({free_space(run_dir)}); the partial report is in {run_dir} ({', '.join(written)}; its "
                         "index.html says the report is partial)")


def free_space(folder: pathlib.Path) -> str:
    """'N bytes free on the file system mounted at M' of the file system that holds `folder`."""
    mount = pathlib.Path(folder).resolve()
    while mount != mount.parent and os.stat(mount.parent).st_dev == os.stat(mount).st_dev:
        mount = mount.parent
    fs = os.statvfs(folder)
    return f"{fs.f_bavail * fs.f_frsize} bytes free on the file system mounted at {mount}"


def assemble(*, run_id, command, mode, seed, spec_version, started, cells, results, versions, placement, partial, decode,
             run_dir, timings, losses, placements=None, logs_capped=None, sides=None, opt_ins=(), infra=(0, {}),
             shard=None) -> dict:
    """results.json's content. The JUnit is written to the run's folder here: the coverage is read from it."""
    finished = datetime.datetime.now(datetime.timezone.utc)
    manifests = plan_mod.manifests_of(cells)
    info = run_info_mod.collect(command=command, mode=mode, seed=seed, spec_version=spec_version, manifests=manifests,
                                provider_versions=versions, placement=placement, sides=sides)
    info.update(run_id=run_id, started=started.isoformat(timespec="seconds"),
                finished=finished.isoformat(timespec="seconds"),
                seconds=round((finished - started).total_seconds(), 1), partial=partial, log_cap_bytes=LOG_CAP_BYTES,
                capture_cap_bytes=CAPTURE_CAP_BYTES, opt_ins=list(opt_ins), infra_retries=infra[0])
    if shard:
        info["shard"] = shard
    # counts and seconds are results_doc's (None until then: their place in the row is kept)
    cell_rows = [{"id": c.id, "initiator": c.initiator.name, "target": c.target.name,
                  "kind": "single" if c.solo else "pair", "areas": c.areas, "counts": None, "seconds": None,
                  "page": f"cells/{c.id}.html", "timing": timings.get(c.id), "loss": losses.get(c.id) or None,
                  "logs_capped": (logs_capped or {}).get(c.id) or None,
                  "placement": (placements or {}).get(c.id), "infra_attempts": infra[1].get(c.id, 1)} for c in cells]
    return results_doc(info, cells, cell_rows, results, decode, partial, run_dir)


def results_doc(info: dict, cells: list, rows: list[dict], results: list[Result], decode: dict, partial: bool,
                run_dir: pathlib.Path) -> dict:
    """results.json's content from a run's info, its cells (as harness/run reads them) with their rows, and its
    results in order: each row's counts and seconds, the summary, the JUnit (written in `run_dir`) and the
    coverage read from it, the wire oracle's and the negotiation's summaries. A run (assemble) and a merge of
    shards (harness/merge/merge_run.py) make theirs here alike."""
    for row in rows:
        mine = [r for r in results if r.cell == row["id"]]
        row["counts"], row["seconds"] = counts(mine), round(sum(r.seconds for r in mine), 1)
    doc = {"format": 1, "run_info": info, "summary": summary_of(results, decode, partial), "cells": rows,
           "results": [r.as_dict() for r in results], "coverage": junit_and_coverage(results, run_dir, info["run_id"]),
           "decode_crosscheck": decode}
    doc["wire_oracle"] = wire_oracle.summary(doc["results"])
    negotiation = negotiation_mod.matrix(cells, results)
    if negotiation:
        doc["negotiation"] = negotiation
    return doc


def summary_of(results: list[Result], decode: dict, partial: bool) -> dict:
    """results.json's summary: the counts by verdict and reason code, and the exit status."""
    summary = counts(results) | not_applicable_mod.breakdown(results)
    failing = sum(summary[v] for v in FAILING)
    summary["exit_status"] = 130 if partial else \
        exit_status(summary, bool(failing or decode.get("disagreements") or decode.get("error")))
    return summary


def junit_and_coverage(results: list[Result], run_dir: pathlib.Path, run_id: str) -> dict:
    """Writes the run's JUnit and returns its coverage, which is read from it."""
    junit = run_dir / "junit.xml"
    write_junit(results, junit, run_id=run_id)
    coverage = coverage_mod.compute(catalogue_mod.load(None), [junit], found=coverage_mod.checks_of_results(results, junit))
    coverage["junit_files"] = ["junit.xml"]  # relative to the run folder
    return coverage


def write_report(doc: dict, run_dir: pathlib.Path, report_root: pathlib.Path) -> None:
    """results.json, summary.txt, the pages and the conformance statement of `doc` in `run_dir`; `latest` in
    `report_root` names it unless something else than a link of ours is there."""
    doc = printable_tree(doc)  # the HTML too shows what binaries printed
    write_results_json(doc, run_dir / "results.json")  # first: the verdicts, whatever comes after
    latest = report_root / "latest"
    if latest.is_symlink() or not latest.exists():
        latest.unlink(missing_ok=True)
        latest.symlink_to(run_dir.name)
    output_files.write(run_dir / "summary.txt", coverage_mod.format_text(doc["coverage"]))
    render_html(doc, run_dir, statement=write_statement(doc, run_dir))


def write_outputs(outcome: RunOutcome) -> None:
    """The report of `outcome`, in its run's folder (where its cells' logs and captures already are, which the
    report points into); NotWritten when the disk refuses it."""
    try:
        if outcome.plan.expectations_doc is not None:  # the JUnit says what the expectations made of each verdict
            write_junit(outcome.results, outcome.run_dir / "junit.xml", run_id=outcome.run_id)
        write_report(outcome.doc, outcome.run_dir, outcome.plan.report)
    except OSError as exc:
        raise NotWritten(exc, outcome.run_dir) from None


def summary_lines(outcome: RunOutcome) -> list[str]:
    """What the console says at the end: the likely causes of the failures, then the counts."""
    return closing_lines(outcome.doc, outcome.run_dir)


def closing_lines(doc: dict, run_dir: pathlib.Path, command: str = "uet run") -> list[str]:
    """summary_lines of a run's results document `doc`, written in `run_dir`."""
    s = doc["summary"]
    decode = doc["decode_crosscheck"]
    return causes.console_lines(causes.rank(doc)) + [
        f"{command}: {s['pass']} pass, {s['fail']} fail, {s['not_applicable']} not applicable, {s['warning']} "
        f"warning, {s['error']} error, {s['timeout']} timeout, {s['flaky']} flaky"
        # apart, and only when there is one: the provider's counts above say nothing of what never ran
        + (f", {s['infra_error']} infrastructure error (not run: the placement was lost)" if s["infra_error"] else "")
        + f"; coverage {doc['coverage']['covered_observable']} "
        f"of {doc['coverage']['observable']} observable statements; decoders: {decode['disagreements']} "
        f"disagreements; report {run_dir / 'index.html'}"]
