"""./uet merge SHARD_DIR... (options and help: harness/commands/merge.py): checks the shards (checks.py), brings
their evidence into a new run folder (evidence.py), joins their results in the whole plan's order and writes
the report with the run's own writers (harness/run/outputs.py)."""
from __future__ import annotations

import datetime
import pathlib
import shlex
import sys
import types

from harness.commands import merge as merge_options
from harness.files.untrusted import printable
from harness.merge import checks, evidence
from harness.results import expectations as expectations_mod
from harness.results.results import Result
from harness.run import execute as execute_mod
from harness.run import outputs
from harness.trends import ci_summary


def _result(d: dict) -> Result:
    return Result(**{k: v for k, v in d.items() if k != "id"})


def _plan_cells(shards: list[checks.Shard]) -> list[dict]:
    """The whole plan's cell rows in plan order, a cell whose areas ran in several shards joined into one."""
    rows_of: dict[str, list[dict]] = {}
    for s in shards:
        for row in s.doc.get("cells") or []:
            rows_of.setdefault(row["id"], []).append(row)
    areas_of: dict[str, list[str]] = {}
    for unit in shards[0].record["all_units"]:
        cell, _, area = (unit, "", "") if unit in rows_of else unit.rpartition("/")
        areas_of.setdefault(cell, []).extend([area] if area else [])
    return [rows_of[cell][0] if not areas else _joined_row(rows_of[cell], areas)
            for cell, areas in areas_of.items() if cell in rows_of]


def _joined_row(rows: list[dict], areas: list[str]) -> dict:
    """One cell's row from the rows of the shards that each ran some of its areas."""
    row = dict(rows[0])
    row["areas"] = [a for a in areas if any(a in r.get("areas", []) for r in rows)]
    timings = [r["timing"] for r in rows if r.get("timing")]
    row["timing"] = {"wall": round(sum(t.get("wall") or 0 for t in timings), 2),
                     "binaries": {a: b for t in timings for a, b in (t.get("binaries") or {}).items()}} if timings else None
    for key in ("loss", "logs_capped"):
        joined = {k: v for r in rows for k, v in (r.get(key) or {}).items()}
        row[key] = joined or None
    row["placement"] = next((r["placement"] for r in rows if r.get("placement")), None)
    # the most set-ups any of its shards needed: the cell's areas were lost to the infrastructure that often
    row["infra_attempts"] = max(r.get("infra_attempts", 1) for r in rows)
    return row


def _stand_ins(rows: list[dict], manifests: dict[str, dict]) -> list:
    """Cells as harness/run's functions read them (id, areas, initiator and target with name and profiles)."""
    def side(name):
        return types.SimpleNamespace(name=name, profiles=list((manifests.get(name) or {}).get("profiles") or []))
    return [types.SimpleNamespace(id=r["id"], areas=list(r.get("areas") or []), initiator=side(r.get("initiator")),
                                  target=side(r.get("target"))) for r in rows]


def placement_of(infos: list[dict]) -> str:
    """The merged run's placements: each shard's, without the "none" of a shard that placed no cell (every
    cell of it lost to the infrastructure) beside shards that did, as the whole run would say it."""
    used = {p for i in infos for p in (i.get("placement") or "none").split(",")}
    return ",".join(sorted(used - {"none"} or used))


def _run_info(shards: list[checks.Shard], rows: list[dict], run_id: str, command: str) -> dict:
    infos = [s.doc["run_info"] for s in shards]
    info = {k: v for k, v in infos[0].items() if k != "shard"}
    records = {}
    for i in infos:
        for m in i.get("manifests") or []:
            records.setdefault(m.get("name"), m)
    order = dict.fromkeys([r.get("initiator") for r in rows] + [r.get("target") for r in rows])
    started = min(i.get("started") or "" for i in infos)
    finished = max(i.get("finished") or "" for i in infos)
    try:
        seconds = round((datetime.datetime.fromisoformat(finished) - datetime.datetime.fromisoformat(started)).total_seconds(), 1)
    except ValueError:
        seconds = round(sum(i.get("seconds") or 0 for i in infos), 1)
    opt_ins: dict[str, list] = {}
    for i in infos:
        for o in i.get("opt_ins") or []:
            opt_ins.setdefault(o["option"], [])
            opt_ins[o["option"]] += [x for x in o.get("let_through") or [] if x not in opt_ins[o["option"]]]
    info.update(
        run_id=run_id, command=checks.command_without(infos[0].get("command") or "", "--shard"), started=started, finished=finished,
        seconds=seconds, partial=False,
        host=", ".join(dict.fromkeys(i.get("host") or "" for i in infos)),
        kernel=", ".join(dict.fromkeys(i.get("kernel") or "" for i in infos)),
        placement=placement_of(infos),
        manifests=[records[n] for n in order if n in records],
        opt_ins=[{"option": k, "let_through": v} for k, v in opt_ins.items()],
        merged={"command": command, "fingerprint": shards[0].record["fingerprint"], "count": len(shards),
                "shards": [{"index": s.record["index"], "run_id": s.doc["run_info"].get("run_id", ""),
                            "folder": str(s.folder.resolve()), "host": s.doc["run_info"].get("host", ""),
                            "started": s.doc["run_info"].get("started", ""),
                            "finished": s.doc["run_info"].get("finished", ""),
                            "seconds": s.doc["run_info"].get("seconds", 0), "units": s.record["units"]}
                           for s in shards]})
    return info


def _attempts(shards: list[checks.Shard]) -> dict:
    """The attempts block of the whole run: each attempt's checks summed over the shards (a rerun's seed is
    drawn from the run's, the same in every shard)."""
    blocks = [s.doc["attempts"] for s in shards if s.doc.get("attempts")]
    if not blocks:
        return {}
    passes: dict[int, dict] = {}
    for b in blocks:
        for p in b.get("passes") or []:
            joined = passes.setdefault(p["attempt"], dict(p, checks=0))
            joined["checks"] += p.get("checks", 0)
    return {"repeat": blocks[0].get("repeat", 1), "rerun_failures": blocks[0].get("rerun_failures", 0),
            "passes": [passes[a] for a in sorted(passes)]}


def _expectations(shards: list[checks.Shard], results: list[dict]) -> dict | None:
    """The expectations block of the whole run: the shards' counts summed; an entry is stale when it is in
    every shard (an entry may match checks of one shard only)."""
    blocks = [s.doc["expectations"] for s in shards if s.doc.get("expectations")]
    if not blocks:
        return None
    out = dict(blocks[0])
    for key, value in blocks[0].items():
        if isinstance(value, int) and not isinstance(value, bool) and key != "entries":
            out[key] = sum(b.get(key, 0) for b in blocks)
    stale_in_all = set.intersection(*({s.get("entry") for s in b.get("stale") or []} for b in blocks))
    out["stale"] = [s for s in blocks[0].get("stale") or [] if s.get("entry") in stale_in_all]
    out["unexpected"] = len(expectations_mod.unexpected(results))
    return out


def merged(shards: list[checks.Shard], run_id: str, run_dir: pathlib.Path, command: str) -> tuple[dict, list[Result]]:
    """The whole run's results document and results (the JUnit written in `run_dir` on the way)."""
    rows = _plan_cells(shards)
    first: dict[str, dict] = {}  # a cell-wide record each shard of a cell made (checks.cell_wide): the first's
    for s in shards:
        for r in s.doc["results"]:
            first.setdefault(r["id"], r)
    results = [_result(r) for r in first.values()]
    info = _run_info(shards, rows, run_id, command)
    cells = _stand_ins(rows, {m.get("name"): m for m in info["manifests"]})
    results.sort(key=execute_mod.order_in(cells))
    decode = next(s.doc for s in shards if s.record["index"] == 1).get("decode_crosscheck") or \
        {"captures": 0, "frames": 0, "disagreements": 0, "skipped": True}
    doc = outputs.results_doc(info, cells, rows, results, decode, False, run_dir)
    ci_summary.add(doc, attempts=_attempts(shards), expectations=None, baseline=None, say=lambda _: None)
    expectations = _expectations(shards, doc["results"])
    if expectations:
        doc["expectations"] = expectations
    return doc, results


def merge(paths: list[pathlib.Path], report: pathlib.Path, command: str) -> tuple[int, pathlib.Path]:
    """(exit status, the merged run's folder); checks.Refused or execute.UsageError when it refuses."""
    shards = checks.check(paths)
    execute_mod.check_report_folder(report)
    now = datetime.datetime.now(datetime.timezone.utc)
    run_id, run_dir = execute_mod.make_run_dir(report, f"{now:%Y%m%d-%H%M%S}-s{shards[0].doc['run_info']['seed']}")
    for s in shards:
        for skipped in evidence.bring(s.folder, run_dir):
            print(f"uet merge: note: {s.folder / skipped}: not a regular file, not brought in", file=sys.stderr)
    doc, _ = merged(shards, run_id, run_dir, command)
    outputs.write_report(doc, run_dir, report)
    for line in outputs.closing_lines(doc, run_dir, "uet merge"):
        print(printable(line), flush=True)
    return doc["summary"]["exit_status"], run_dir


def main(argv: list[str]) -> int:
    args = merge_options.parse(argv)
    command = "./uet merge " + " ".join(shlex.quote(a) for a in argv)
    try:
        return merge(args.shards, args.report, command)[0]
    except (checks.Refused, execute_mod.UsageError) as exc:
        print(f"uet merge: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
