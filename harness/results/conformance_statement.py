#!/usr/bin/python3
"""The conformance statement of a run: the claim (PICS) and the test report in one document.

    /usr/bin/python3 -m harness.results.conformance_statement RUN_DIR [--catalogue PATH]

For each side of each manifest that ran and each profile that manifest claims, every catalogue statement of
that profile: its level, the claim, the checks that name it with their verdict in every cell and placement,
their evidence, the spec choices they rest on, and a status (met, not met, inconclusive, not observed, not
applicable) totalled per level. Written into RUN_DIR/conformance/ as statement.json, statement.csv and
statement.xlsx; the format is reports/CONFORMANCE-STATEMENT.md.

Exit status: 0 written; 2 RUN_DIR has no readable results.json, or the statement cannot be written;
3 the catalogue is invalid.
"""
import argparse
import collections
import functools
import hashlib
import json
import os
import pathlib
import sys

import yaml

from harness.files import input_files
from harness.inputs import catalogue as catalogue_mod
from harness.inputs import not_applicable
from harness.inputs.manifest import read_resolved, resolved_path
from harness.files import output_files
from harness.results.conformance_terms import LEVEL_GROUPS, STATUSES
from harness.results.results import claimed_unsupported
from harness.results.verdicts import HELD, INFRA, UNDECIDED, Verdict

FORMAT = 1
FOLDER = "conformance"
SCHEMA_PATH = pathlib.Path(__file__).resolve().parents[2] / "reports" / "conformance-statement.schema.yaml"
SIDES = ("initiator", "target")
SHOULD_LEVELS = LEVEL_GROUPS["SHOULD"]


class RunFolderError(ValueError):
    """RUN_DIR cannot give a statement; the message names the file and what is wrong with it."""


def status_of(level, verdicts):
    """One statement's status from the verdicts of the checks that name it (one side, one profile).

    A fail anywhere is not met; a warning is a SHOULD not met, so it is not met for a SHOULD and met for
    a MUST (the case's MUSTs held). A check that could not run (error, timeout) leaves the statement
    inconclusive unless another check already showed it not met: one cell's pass does not vouch for a cell
    that never concluded. Checks that are all not applicable make it not applicable; no check at all, not
    observed. A flaky check alone leaves it inconclusive: its failing attempt may have been an error. A check the
    infrastructure kept from running (infra_error) tested nothing: alone, the statement is not observed; beside
    others, it is a cell that never concluded; never not met."""
    seen = set(verdicts)
    if Verdict.FAIL in seen or (Verdict.WARNING in seen and level in SHOULD_LEVELS):
        return "not_met"
    if seen and seen <= set(INFRA):
        return "not_observed"
    if seen & set(UNDECIDED + INFRA):
        return "inconclusive"
    if seen & set(HELD):
        return "met"
    if seen:
        return "not_applicable" if seen == {Verdict.NOT_APPLICABLE} else "inconclusive"
    return "not_observed"


def _sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def _evidence(result):
    """The files behind a check, as paths of the run folder: every capture with its decode, then the log."""
    ev = result.get("evidence") or {}
    captures = [{"capture": c.get("capture"), "decoded": c.get("decoded")} for c in ev.get("captures") or []]
    if not captures and (ev.get("capture") or ev.get("decoded")):
        captures = [{"capture": ev.get("capture"), "decoded": ev.get("decoded")}]
    return {"captures": captures, "log": ev.get("log")}


def _check(result, cell, run_placement, reasons):
    placement = cell.get("placement")
    code = result.get("reason_code")
    declared = reasons.get(code) or {}
    return {"cell": result.get("cell"), "initiator": cell.get("initiator"), "target": cell.get("target"),
            "placement": (placement or {}).get("placement") or run_placement,
            "area": result.get("area"), "case": result.get("case"), "verdict": result.get("verdict"),
            "judged_by": result.get("judged_by"),
            "detail": result.get("detail"), "reason": result.get("reason"), "reason_code": code,
            "reason_class": declared.get("class"), "blamed_side": result.get("blamed_side"),
            "choices": list(result.get("choices") or []), "evidence": _evidence(result),
            "repro": result.get("repro")}


def _manifest_facts(info, cell_ids_of, run_dir):
    """What each manifest claims: run_info's record, with endpoint types and JobID methods from the side's
    resolved manifest in the run folder (cells/<cell>/<side>.manifest.json) when it is there."""
    out = {}
    for m in info.get("manifests") or []:
        facts = {k: m.get(k) for k in ("name", "ref", "provider", "provider_version", "sha256", "uet")}
        facts["profiles"] = list(m.get("profiles") or [])
        facts["spec_versions"] = list(m.get("spec_versions") or [])
        for cell_id, side in cell_ids_of.get(m.get("name"), []):
            resolved = read_resolved(resolved_path(pathlib.Path(run_dir) / "cells" / cell_id, side)) if run_dir else None
            if resolved:
                for key in ("endpoint_types", "job_id_methods", "address_layout", "features"):
                    facts[key] = resolved.get(key)
                break
        out[m.get("name")] = facts
    return out


def _claim(manifest, profile, st, checks, unsupported):
    """unsupported: a check of the statement found the side claims what it lacks (its result's
    claimed_unsupported)."""
    text = "%s claims %s" % (manifest, profile)
    if st.condition:
        text += "; applies if: %s" % st.condition
    if unsupported:
        text += "; claimed but unsupported"
    codes = {c["reason_class"] for c in checks if c["verdict"] == "not_applicable"}
    if checks and codes == {"not-claimed"} and all(c["verdict"] == "not_applicable" for c in checks):
        text += "; the feature it needs is not claimed"
    return text


def _not_applicable_reasons(checks, reasons):
    out = []
    for c in checks:
        if c["verdict"] != "not_applicable":
            continue
        code = c["reason_code"]
        text = (code + ": " + (reasons.get(code) or {}).get("description", "") if code in reasons else code) \
            if code else (c["reason"] or "(no reason given)")
        if text not in out:
            out.append(text)
    return out


def _statement_row(st, manifest, profile, checks, check_ids, reasons, unsupported_ids):
    verdicts = collections.Counter(c["verdict"] for c in checks)
    status = status_of(st.level, verdicts)
    if status == "not_observed" and checks:
        why = "not tested: the infrastructure kept its checks from running (infra_error)"
    elif status == "not_observed":
        why = ("not observable: %s" % st.check_reason) if not st.observable else \
            "observable (%s), but no check of this run names it" % st.check
    else:
        why = None
    choices = []
    for c in checks:
        for choice in c["choices"]:
            if choice not in choices:
                choices.append(choice)
    return {"id": st.id, "level": st.level, "level_unconfirmed": st.level_unconfirmed, "clause": st.clause,
            "actor": st.actor, "check": st.check, "text": st.text, "condition": st.condition,
            "claim": _claim(manifest, profile, st, checks, any(i in unsupported_ids for i in check_ids)), "status": status,
            "verdicts": {v: n for v, n in sorted(verdicts.items())}, "checks": check_ids,
            "not_observed_reason": why, "not_applicable_reasons": _not_applicable_reasons(checks, reasons),
            "choices": choices}


def _totals(rows):
    totals = {}
    for group, levels in list(LEVEL_GROUPS.items()) + [("ALL", catalogue_mod.LEVELS)]:
        counts = collections.Counter(r["status"] for r in rows if r["level"] in levels)
        totals[group] = dict({s: counts.get(s, 0) for s in STATUSES}, total=sum(counts.values()))
    return totals


def compute(results, cat, run_dir=None, reasons=None):
    """The statement as a dict (reports/CONFORMANCE-STATEMENT.md) from a results.json dict and a Catalogue."""
    reasons = not_applicable.codes() if reasons is None else reasons
    info = results.get("run_info") or {}
    cells = {c["id"]: c for c in results.get("cells") or [] if isinstance(c, dict) and "id" in c}
    cell_ids_of = collections.defaultdict(list)
    for c in cells.values():
        for side in SIDES:
            cell_ids_of[c.get(side)].append((c["id"], side))
    manifests = _manifest_facts(info, cell_ids_of, run_dir)

    checks = {}
    unsupported = set()   # the ids of the results that found a claim their side cannot keep
    # (side, manifest) -> statement id -> [result id]: a single cell's manifest plays both sides. A fail
    # blamed on one side is that side's: the other side's provider did not break the rule.
    named = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in results.get("results") or []:
        cell = cells.get(r.get("cell"), {})
        rid = r.get("id") or "%s/%s/%s" % (r.get("cell"), r.get("area"), r.get("case"))
        checks[rid] = _check(r, cell, info.get("placement"), reasons)
        if claimed_unsupported(r):
            unsupported.add(rid)
        blamed = r.get("blamed_side") if r.get("verdict") == "fail" else None
        for side in (blamed,) if blamed in SIDES else SIDES:
            for ident in r.get("statements") or []:
                if rid not in named[(side, cell.get(side))][ident]:
                    named[(side, cell.get(side))][ident].append(rid)

    unknown = sorted({i for by in named.values() for i in by if i not in cat})
    sheets = []
    for side in SIDES:
        for name, facts in manifests.items():
            if not cell_ids_of.get(name) or not any(s == side for _, s in cell_ids_of[name]):
                continue
            by_statement = named.get((side, name), {})
            for profile in facts["profiles"]:
                rows = [_statement_row(st, name, profile, [checks[i] for i in by_statement.get(st.id, [])],
                                       by_statement.get(st.id, []), reasons, unsupported)
                        for st in cat if profile in st.profiles]
                sheets.append({"side": side, "manifest": name, "profile": profile, "totals": _totals(rows),
                               "statements": rows})

    run_sha = (info.get("spec_data") or {}).get("catalogue_sha256")
    current_sha = _sha256(cat.path) if pathlib.Path(str(cat.path)).is_file() else None
    used = {c for ch in checks.values() for c in ch["choices"]}
    return {
        "format": FORMAT,
        "run": {k: info.get(k) for k in ("run_id", "command", "mode", "seed", "spec_version", "started", "finished",
                                         "placement", "partial", "suite_commit", "libfabric")},
        "catalogue": {"path": catalogue_mod.display_path(cat.path), "statements": len(cat), "sha256": current_sha,
                      "run_sha256": run_sha, "matches_run": bool(run_sha) and run_sha == current_sha},
        "manifests": manifests,
        "sheets": sheets,
        "checks": checks,
        "choices": {c.get("id"): {k: c.get(k) for k in ("status", "confidence", "chose")}
                    | {"contested": bool(c.get("contested"))}
                    for c in info.get("choices") or [] if c.get("id") in used},
        "unknown_statements": unknown,
    }


def read_results(run_dir):
    """RUN_DIR/results.json, read by the format's one reader (harness/results/results.py)."""
    from harness.files.input_files import InputError
    from harness.results.results import read_results_json
    source = pathlib.Path(run_dir) / "results.json"
    if not os.path.lexists(source):
        raise RunFolderError("%s: no such file (is %s a run folder?)" % (source, run_dir))
    try:
        return read_results_json(source)[1]
    except InputError as exc:
        raise RunFolderError(str(exc)) from None


@functools.cache
def schema():
    """statement.json's schema (reports/conformance-statement.schema.yaml), its statuses this module's words."""
    doc = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    doc["$defs"]["status"]["enum"] = list(STATUSES)
    return doc


def read_statement(run_dir):
    """RUN_DIR/conformance/statement.json, the statement's one reader: None when the run wrote none;
    input_files.InputError naming the file and the key when it is not a statement of this format."""
    path = pathlib.Path(run_dir) / FOLDER / "statement.json"
    if not os.path.lexists(path):
        return None
    doc = input_files.parse_json(path, input_files.read_json_bytes(path, "statement.json"), "statement.json")
    if problems := input_files.schema_problems(doc, schema(), input_files.shown_path(path)):
        raise input_files.InputError([f"{problems[0]}: not a conformance statement (reports/CONFORMANCE-STATEMENT.md)"])
    return doc


def write(results, run_dir, cat=None, reasons=None):
    """Compute the statement of a results dict and write RUN_DIR/conformance/statement.{json,csv,xlsx};
    returns the statement. `cat` and `reasons` default to the suite's catalogue and declared reasons."""
    from harness.results import conformance_table, conformance_workbook
    cat = catalogue_mod.load(None) if cat is None else cat
    statement = compute(results, cat, run_dir, reasons)
    folder = pathlib.Path(run_dir) / FOLDER
    output_files.write(folder / "statement.json", json.dumps(statement, indent=1, ensure_ascii=False) + "\n",
                       base=run_dir)
    conformance_table.write_csv(statement, folder / "statement.csv")
    conformance_workbook.write_xlsx(statement, folder / "statement.xlsx")
    return statement


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m harness.results.conformance_statement",
                                     description="Write a run folder's conformance statement (PICS and test "
                                                 "report) into RUN_DIR/conformance/.")
    parser.add_argument("run_dir", type=pathlib.Path, help="the run folder, e.g. out/runs/<run-id>")
    parser.add_argument("--catalogue", default=None, help="catalogue file (default: spec/catalogue.yaml)")
    args = parser.parse_args(argv)
    try:
        results = read_results(args.run_dir)
        statement = write(results, args.run_dir, catalogue_mod.load(args.catalogue))
    except catalogue_mod.CatalogueError as exc:
        print(exc, file=sys.stderr)
        return 3
    except RunFolderError as exc:
        print("conformance_statement: %s" % exc, file=sys.stderr)
        return 2
    except OSError as exc:
        print("conformance_statement: cannot write %s: %s" % (args.run_dir / FOLDER, exc), file=sys.stderr)
        return 2
    for sheet in statement["sheets"]:
        must = sheet["totals"]["MUST"]
        print("%s %s %s: MUST %d met, %d not met, %d inconclusive, %d not observed, %d not applicable" % (
            sheet["side"], sheet["manifest"], sheet["profile"], must["met"], must["not_met"], must["inconclusive"],
            must["not_observed"], must["not_applicable"]))
    print(args.run_dir / FOLDER / "statement.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
