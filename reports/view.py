"""What the report pages show, computed from a results.json dict (reports/RESULTS-FORMAT.md).

Every grouping, count and lookup happens here so the templates only loop and print. The functions read
the optional parts of the format (negotiation, coverage, evidence, ...) with defaults, so a partial run's
results.json still renders.
"""
import collections
import hashlib
import pathlib
import re

from harness.results.conformance_terms import JUDGED_BY_LABELS
from harness.results.verdicts import FAILING, LABELS as VERDICT_LABELS, VERDICTS, Verdict, rank as verdict_rank
from reports import ci_view

SIDES = ("initiator", "target")
PROFILE_ORDER = ("ai_base", "ai_full", "hpc")
MISSING = "—"
PAGE_NAME_MAX = 120

# The interoperability matrix's letter per area, one per verdict rank (harness/results/verdicts.py), the worst
# of the area's verdicts deciding: a broken rule outranks a check that could not conclude, which outranks one the
# infrastructure kept from running, which outranks a SHOULD not met.
AREA_CODES = (
    ("F", "any fail or flaky"),
    ("E", "any error or timeout"),
    ("I", "an infrastructure error (not run: the placement was lost), no fail, error or timeout"),
    ("W", "a warning, the rest pass or not applicable"),
    ("P", "all pass (not-applicable checks aside)"),
    ("N", "all not applicable"),
)


def verdict_counts(results):
    counts = collections.Counter(r.get("verdict") for r in results)
    return {v: counts.get(v, 0) for v in VERDICTS}


def counts_row(counts):
    """[(verdict, label, n)] in the taxonomy's order, then ("total", "total", n)."""
    row = [(v, VERDICT_LABELS[v], counts.get(v, 0)) for v in VERDICTS]
    total = counts["total"] if "total" in counts else sum(n for _, _, n in row)
    return row + [("total", "total", total)]


def _counts_text(counts):
    """'3 pass, 1 fail': the non-zero verdict counts, for a title attribute."""
    return ", ".join("%d %s" % (counts[v], VERDICT_LABELS[v]) for v in VERDICTS if counts.get(v))


def area_code(verdicts):
    return AREA_CODES[min(map(verdict_rank, verdicts), default=Verdict.NOT_APPLICABLE.rank)][0]


def _value(mapping, key, fmt="%s"):
    value = mapping.get(key)
    return MISSING if value is None or value == "" else fmt % (value,)


def _short(digest, n=12):
    return digest[:n] if digest else MISSING


def safe_file_name(name):
    """`name` as one file name: manifest names are [A-Za-z0-9_.-] already; the replacement only keeps an odd
    one from leaving its folder or hiding as a dot file, and a long one within a file name's 255 bytes (the hash
    keeps long names apart)."""
    safe = re.sub(r"[^A-Za-z0-9_.+=-]", "_", name).lstrip(".") or "_"
    if len(safe) > PAGE_NAME_MAX:
        safe = "%s-%s" % (safe[:PAGE_NAME_MAX - 17], hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16])
    return safe


def page_of(cell_id):
    """The cell page's path relative to the run folder."""
    return "cells/%s.html" % safe_file_name(cell_id)


def manifests_by_name(doc):
    return {m.get("name"): m for m in doc.get("run_info", {}).get("manifests", [])}


def side_libfabric(lf):
    """What a side ran with, in words: its libfabric's version and prefix, and the tree of its case binaries
    (absent from runs before sides could name a libfabric)."""
    if not lf:
        return {"text": MISSING, "build": ""}
    whose = "the suite's own" if lf.get("source") == "suite" else "named"
    return {"text": "%s (%s) at %s" % (_value(lf, "version"), whose, _value(lf, "prefix")),
            "build": _value(lf, "build")}


def run_info(doc):
    info = doc.get("run_info", {})
    started = _value(info, "started")
    seconds = _value(info, "seconds", "%.1f s")
    rows = [
        ("command", _value(info, "command")),
        ("run id", _value(info, "run_id")),
        ("mode", _value(info, "mode")),
        ("seed", _value(info, "seed")),
        ("spec version", _value(info, "spec_version")),
        ("libfabric", _value(info, "libfabric")),
        ("kernel", _value(info, "kernel")),
        ("host", _value(info, "host")),
        ("suite commit", _value(info, "suite_commit")),
        ("placement", _value(info, "placement")),
        ("started", "%s (%s)" % (started, seconds)),
        ("finished", _value(info, "finished")),
    ]
    spec_data = info.get("spec_data") or {}
    rows += [("wire.yaml sha256", _short(spec_data.get("wire_yaml_sha256"))),
             ("catalogue sha256", _short(spec_data.get("catalogue_sha256")))]
    crosscheck = doc.get("decode_crosscheck")
    if crosscheck:
        rows.append(("decoder cross-check", "%s captures, %s frames, %s disagreements" % (
            crosscheck.get("captures", MISSING), crosscheck.get("frames", MISSING),
            crosscheck.get("disagreements", MISSING))))
    checked = info.get("spec_version")
    manifests = [{"name": _value(m, "name"), "ref": _value(m, "ref"), "provider": _value(m, "provider"),
                  "provider_version": _value(m, "provider_version"),
                  "spec_versions": ", ".join(m.get("spec_versions") or []) or MISSING,
                  # a provider checked against a version it does not say it implements: marked, not hidden
                  "other_version": bool(checked) and checked not in (m.get("spec_versions") or [checked]),
                  "profiles": ", ".join(m.get("profiles") or []) or MISSING,
                  "uet": "yes" if m.get("uet") else "no",
                  "sha256": _short(m.get("sha256")), "sha256_full": m.get("sha256") or "",
                  "libfabric": side_libfabric(m.get("libfabric"))}
                 for m in info.get("manifests", [])]
    choices = [{"id": _value(c, "id"), "status": _value(c, "status"), "confidence": _value(c, "confidence"),
                "chose": _value(c, "chose"), "agree": ", ".join(c.get("agree") or []) or "none",
                "disagree": ", ".join(c.get("disagree") or []) or "none", "note": c.get("evidence_note") or "",
                "contested": ["%s (%s)" % (r.get("reading"), ", ".join(r.get("sources") or []) or "no source")
                              for r in c.get("contested") or []]}
               for c in info.get("choices", [])]
    return {"title": info.get("run_id") or "run", "partial": bool(info.get("partial")), "rows": rows,
            "manifests": manifests, "choices": choices}


def cells(doc):
    """The cells that ran, each with its page and counts (from its results, so a partial run adds up)."""
    by_cell = collections.defaultdict(list)
    for r in doc.get("results", []):
        by_cell[r.get("cell")].append(r)
    return [{"id": c["id"], "page": page_of(c["id"]), "initiator": _value(c, "initiator"),
             "target": _value(c, "target"), "kind": _value(c, "kind"), "seconds": _value(c, "seconds", "%.1f s"),
             "counts": counts_row(verdict_counts(by_cell.get(c["id"], [])))}
            for c in doc.get("cells", [])]


def summary(doc):
    """The run's counts as results.json states them, and a note when the results list disagrees."""
    stated = doc.get("summary") or verdict_counts(doc.get("results", []))
    counted = verdict_counts(doc.get("results", []))
    mismatch = [v for v in VERDICTS if stated.get(v, 0) != counted[v]]
    note = None
    if mismatch:
        note = "the summary disagrees with the results list on %s (the list holds %s)" % (
            ", ".join(VERDICT_LABELS[v] for v in mismatch),
            ", ".join("%d %s" % (counted[v], VERDICT_LABELS[v]) for v in mismatch))
    return {"counts": counts_row(stated), "exit_status": _value(stated, "exit_status"), "note": note,
            "by_profile": by_side_and_profile(doc), "by_manifest": by_side_and_manifest(doc),
            "oracle": oracle_view(doc.get("wire_oracle"))}


def oracle_view(oracle):
    """results.json's wire_oracle as the summary shows it: whose word the verdicts are, and the wire checks
    only the case binary judged, each with why; None for a results.json written before the oracle."""
    if not isinstance(oracle, dict):
        return None
    by = oracle.get("judged_by") or {}
    return {"judged_by": [(k, JUDGED_BY_LABELS[k], by.get(k, 0)) for k in JUDGED_BY_LABELS],
            "contradicted": (oracle.get("outcomes") or {}).get("contradicted", 0),
            "binary_only": [(_value(b, "case"), _value(b, "why")) for b in oracle.get("binary_only") or []]}


def _side_manifest(doc):
    """result -> {side: manifest name} through the result's cell."""
    cell_of = {c["id"]: c for c in doc.get("cells", [])}

    def sides(result):
        cell = cell_of.get(result.get("cell"), {})
        return {side: cell.get(side, "(no cell record)") for side in SIDES}
    return sides


def by_side_and_manifest(doc):
    sides_of = _side_manifest(doc)
    groups = collections.OrderedDict()
    order = list(manifests_by_name(doc))
    for r in doc.get("results", []):
        for side, name in sides_of(r).items():
            groups.setdefault((side, name), []).append(r)
    keys = sorted(groups, key=lambda k: (SIDES.index(k[0]), order.index(k[1]) if k[1] in order else len(order), k[1]))
    manifests = manifests_by_name(doc)
    return [{"side": side, "manifest": name,
             "profiles": ", ".join(manifests.get(name, {}).get("profiles") or []) or MISSING,
             "counts": counts_row(verdict_counts(groups[(side, name)]))} for side, name in keys]


def by_side_and_profile(doc):
    """A result counts under every profile its side's manifest claims."""
    sides_of = _side_manifest(doc)
    manifests = manifests_by_name(doc)
    groups = collections.defaultdict(list)
    for r in doc.get("results", []):
        for side, name in sides_of(r).items():
            for profile in manifests.get(name, {}).get("profiles") or ["(no profile)"]:
                groups[(side, profile)].append(r)

    def key(k):
        side, profile = k
        rank = PROFILE_ORDER.index(profile) if profile in PROFILE_ORDER else len(PROFILE_ORDER)
        return (SIDES.index(side), rank, profile)
    return [{"side": side, "profile": profile, "counts": counts_row(verdict_counts(groups[(side, profile)]))}
            for side, profile in sorted(groups, key=key)]


def _ordered_names(names, order):
    names = set(names)
    return [n for n in order if n in names] + sorted(names - set(order))


def interop_matrix(doc):
    """Initiator rows × target columns of area letters; None when only one manifest ran."""
    run_cells = doc.get("cells", [])
    initiators = [c.get("initiator") for c in run_cells]
    targets = [c.get("target") for c in run_cells]
    if len(set(initiators) | set(targets)) <= 1:
        return None
    order = list(manifests_by_name(doc))
    results_of = collections.defaultdict(list)
    for r in doc.get("results", []):
        results_of[r.get("cell")].append(r)
    grid = {}
    for c in run_cells:
        by_area = collections.defaultdict(list)
        for r in results_of[c["id"]]:
            by_area[r.get("area") or "?"].append(r)
        grid[(c.get("initiator"), c.get("target"))] = {
            "id": c["id"], "page": page_of(c["id"]),
            "areas": [{"area": area, "code": area_code(r.get("verdict") for r in rs),
                       "counts": _counts_text(verdict_counts(rs))} for area, rs in sorted(by_area.items())]}
    rows = _ordered_names(initiators, order)
    cols = _ordered_names(targets, order)
    return {"columns": cols,
            "rows": [{"initiator": i, "cells": [grid.get((i, t)) for t in cols]} for i in rows],
            "legend": AREA_CODES}


def negotiation_matrix(doc):
    """The profile-set × profile-set table; None when the run has no negotiation block."""
    neg = doc.get("negotiation")
    if not neg:
        return None
    failing = {r["id"] for r in doc.get("results", []) if r.get("verdict") in FAILING and "id" in r}
    grid = {(c.get("initiator"), c.get("target")): c for c in neg.get("cells", [])}
    sets = neg.get("profile_sets", [])
    rows = []
    for i in sets:
        row = []
        for t in sets:
            c = grid.get((i, t))
            if c is None:
                row.append(None)
                continue
            verdict = c.get("verdict") or "error"
            # Link the first failing result the failures section shows, so a red cell leads to its evidence.
            first_failing = next((rid for rid in c.get("results", []) if rid in failing), None)
            row.append({"common": c.get("common") or "none", "verdict": verdict,
                        "label": VERDICT_LABELS.get(verdict, verdict),
                        "counts": _counts_text(c.get("counts") or {}),
                        "anchor": result_anchor(first_failing) if first_failing else None})
        rows.append({"initiator": i, "cells": row})
    choice_id = neg.get("priority_choice")
    choice = next((c for c in doc.get("run_info", {}).get("choices", []) if c.get("id") == choice_id), {})
    return {"profile_sets": sets, "rows": rows, "priority_choice": choice_id or MISSING,
            "choice_status": _value(choice, "status"), "choice_confidence": _value(choice, "confidence"),
            "choice_chose": _value(choice, "chose")}


def _pct(n, d):
    return "%d%%" % round(100.0 * n / d) if d else MISSING


def _tally_rows(tallies, label=lambda k: k):
    return [{"name": label(k), "covered_observable": t.get("covered_observable", 0),
             "observable": t.get("observable", 0), "total": t.get("total", 0),
             "not_observable": t.get("not_observable", 0),
             "percent": _pct(t.get("covered_observable", 0), t.get("observable", 0))}
            for k, t in tallies.items()]


def statement_rows(doc):
    """Every catalogue statement: its level, check kind, whether a check covers it and by how many of
    this run's results with which verdicts (coverage by statement)."""
    statements = ((doc.get("coverage") or {}).get("statements")) or {}
    verdicts = collections.defaultdict(collections.Counter)
    for r in doc.get("results", []):
        for ident in r.get("statements") or []:
            verdicts[ident][r.get("verdict")] += 1
    return [{"id": ident, "level": _value(st, "level"), "check": _value(st, "check"),
             "covered": bool(st.get("covered")), "text": st.get("text") or "",
             "verdicts": ", ".join("%d %s" % (n, VERDICT_LABELS.get(v, v)) for v, n in sorted(verdicts[ident].items()))}
            for ident, st in statements.items()]


def coverage(doc):
    """harness.results.coverage.compute()'s dict, as tables; None when the run computed none."""
    cov = doc.get("coverage")
    if not cov:
        return None
    uncovered = []
    for section, entries in (cov.get("uncovered_observable_musts") or {}).items():
        for s in entries:
            flags = []
            if s.get("level_unconfirmed"):
                flags.append("level unconfirmed")
            if s.get("missing"):
                flags.append("MISSING " + ", ".join(s["missing"]))
            if s.get("condition"):
                flags.append("if " + s["condition"])
            uncovered.append({"section": section, "id": s.get("id", MISSING), "level": s.get("level", MISSING),
                              "check": s.get("check", MISSING), "text": s.get("text") or MISSING,
                              "profiles": ", ".join(s.get("profiles") or []) or MISSING, "flags": "; ".join(flags)})
    return {"by_level": _tally_rows(cov.get("by_level") or {}),
            "by_section": _tally_rows(cov.get("by_section") or {}, lambda k: "§" + k),
            "covered_observable": cov.get("covered_observable", 0), "observable": cov.get("observable", 0),
            "covered": cov.get("covered", 0), "total": cov.get("total", 0),
            "percent": _pct(cov.get("covered_observable", 0), cov.get("observable", 0)),
            "uncovered": uncovered}


def result_anchor(result_id):
    """The id attribute of a result's failure block (ids may hold any character but whitespace)."""
    return "result-" + re.sub(r"\s", "_", result_id)


def _link(run_dir, path):
    """A path of the run folder as a link, or as plain text when the file is not there; a path that leads
    out of the run folder (absolute, '..') is never a link: the page is read elsewhere, by others."""
    if not path:
        return None
    run_dir = pathlib.Path(run_dir).resolve()
    inside = run_dir in (run_dir / path).resolve().parents
    return {"path": path, "exists": inside and (run_dir / path).is_file()}


def _format_field(value):
    if isinstance(value, int) and not isinstance(value, bool) and value > 9:
        return "%d (0x%x)" % (value, value)
    return str(value)


def choice_label_lookup(doc):
    """A function choice id -> "id (confidence X, contested)", from the run's choices in force."""
    known = {c.get("id"): c for c in doc.get("run_info", {}).get("choices", [])}

    def label(cid):
        c = known.get(cid)
        if not c:
            return cid
        return "%s (confidence %s%s)" % (cid, c.get("confidence", "unknown"), ", contested" if c.get("contested") else "")
    return label


def _frames_with(diagnostic) -> str:
    """" (212 frames, first #3)": how many of the capture's frames had a diagnostic, and where it first was."""
    n, first = diagnostic.get("frames"), diagnostic.get("first_frame")
    if not isinstance(n, int) or isinstance(n, bool):
        return ""
    return " (%d frame%s%s)" % (n, "" if n == 1 else "s", ", first #%d" % first if isinstance(first, int) and first else "")


def failure(result, run_dir, statement_text, choice_label=str):
    evidence = result.get("evidence") or {}
    frames = [{"index": _value(f, "index"), "sender": _value(f, "sender"), "summary": _value(f, "summary"),
               "fields": [(k, _format_field(v)) for k, v in (f.get("fields") or {}).items()]}
              for f in evidence.get("frames") or []]
    malformed = [{"sender": _value(d, "sender"), "offset": _value(d, "offset"), "value": _value(d, "value"),
                  "diagnostic": "%s in %s%s" % (_value(d, "kind"), d.get("field") or _value(d, "header"), _frames_with(d)),
                  "statements": ", ".join(d.get("statements") or []) or "no statement of §2.2",
                  "frame": _value(d, "frame")}
                 for d in evidence.get("diagnostics") or []]
    verdict = result.get("verdict")
    return {"id": result.get("id", MISSING), "anchor": result_anchor(result.get("id", "")),
            "verdict": verdict, "label": VERDICT_LABELS.get(verdict, verdict),
            "cell": _value(result, "cell"), "area": _value(result, "area"), "case": _value(result, "case"),
            "binary": _value(result, "binary"), "detail": result.get("detail"), "reason": result.get("reason"),
            "message": result.get("message"), "expected": _value(result, "expected"),
            "seen": _value(result, "seen"),
            "blamed_side": _value(result, "blamed_side") + (f" ({result['blamed_manifest']})" if result.get("blamed_manifest") else "")
            + (f": {result['blame_basis']}" if result.get("blame_basis") else ""),
            "choices": ", ".join(choice_label(c) for c in result.get("choices") or []) or MISSING,
            "statements": [(s, statement_text(s)) for s in result.get("statements") or []],
            "frames": frames, "malformed": malformed, "capture": _link(run_dir, evidence.get("capture")),
            "decoded": _link(run_dir, evidence.get("decoded")), "log": _link(run_dir, evidence.get("log")),
            "repro": result.get("repro") or MISSING,
            "judged_by": JUDGED_BY_LABELS.get(result.get("judged_by"), MISSING), "judged_by_id": result.get("judged_by") or "",
            **ci_view.failure_extras(result)}


def failures(results, run_dir, statement_text, choice_label=str):
    return [failure(r, run_dir, statement_text, choice_label) for r in results if r.get("verdict") in FAILING]


NA_CLASS_LABELS = {"not-claimed": "not claimed by a manifest",
                   "no-such-combination": "combinations that do not exist or this run could not make",
                   "undeclared": "with no declared reason code (a suite bug)"}


def not_applicable_breakdown(doc, reasons):
    """The not-applicable results by class, then by code within it (the reasons file's order), with each code's
    description, and the sentence the summary shows: what a reader needs to see that nothing that matters was
    left out. `reasons` is spec/not-applicable-reasons.yaml's codes; a code it lacks counts as undeclared."""
    by_code = collections.Counter(r.get("reason_code") or "(none)" for r in doc.get("results", [])
                                  if r.get("verdict") == "not_applicable")
    classes = []
    for klass, label in NA_CLASS_LABELS.items():
        mine = [c for c in reasons if reasons[c]["class"] == klass] if klass != "undeclared" else \
            sorted(c for c in by_code if c not in reasons)
        codes = [{"code": c, "count": by_code[c], "description": reasons.get(c, {}).get("description", MISSING),
                  "allowed": reasons.get(c, {}).get("allowed_in_submission")} for c in mine if by_code[c]]
        if codes:
            classes.append({"class": klass, "label": label, "count": sum(c["count"] for c in codes), "codes": codes})
    total = sum(by_code.values())
    sentence = "%d not applicable" % total + (": " + "; ".join(
        "%d %s (%s)" % (k["count"], k["label"], ", ".join("%d %s" % (c["count"], c["code"]) for c in k["codes"]))
        for k in classes) if classes else "")
    return {"total": total, "classes": classes, "sentence": sentence}


def not_applicable(doc):
    """Not-applicable results grouped by reason, the largest group first."""
    groups = collections.defaultdict(list)
    for r in doc.get("results", []):
        if r.get("verdict") == "not_applicable":
            groups[r.get("reason") or "(no reason given)"].append(r.get("id", MISSING))
    return [{"reason": reason, "count": len(ids), "results": ids}
            for reason, ids in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def placement_text(placement) -> str:
    """Where a cell's two sides ran, in one line: the placement, then what names its sides."""
    if not placement:
        return MISSING
    sides = placement.get("sides") or {}
    parts = [placement.get("placement", MISSING)]
    if sides:
        parts.append(f"initiator {sides.get('a', MISSING)}, target {sides.get('b', MISSING)}")
    for key in ("image", "job", "slurm", "network"):
        if placement.get(key):
            value = placement[key]
            parts.append(f"{key} " + (", ".join(f"{k}: {v}" for k, v in value.items()) if isinstance(value, dict) else str(value)))
    return "; ".join(parts)


def teardown_notes(r) -> str:
    """What went wrong as a case's sides ended (notes teardown_initiator, teardown_target): shown beside a
    verdict it does not change."""
    notes = r.get("notes") if isinstance(r.get("notes"), dict) else {}
    return "; ".join(str(v) for k, v in sorted(notes.items()) if k.startswith("teardown"))


def cell_page(doc, cell, run_dir, statement_text):
    results = [r for r in doc.get("results", []) if r.get("cell") == cell["id"]]
    failing = {r.get("id") for r in results if r.get("verdict") in FAILING}
    rows = [{"id": r.get("id", MISSING), "area": _value(r, "area"), "case": _value(r, "case"),
             "verdict": r.get("verdict"), "label": VERDICT_LABELS.get(r.get("verdict"), r.get("verdict")),
             "statements": ", ".join(r.get("statements") or []) or MISSING,
             "note": r.get("detail") or r.get("reason") or teardown_notes(r), "seconds": _value(r, "seconds", "%.2f s"),
             "judged_by": r.get("judged_by"), "judged_by_label": JUDGED_BY_LABELS.get(r.get("judged_by"), ""),
             "anchor": result_anchor(r["id"]) if r.get("id") in failing else None}
            for r in sorted(results, key=lambda r: (r.get("area") or "", r.get("case") or ""))]
    return {"id": cell["id"], "initiator": _value(cell, "initiator"), "target": _value(cell, "target"),
            "kind": _value(cell, "kind"), "seconds": _value(cell, "seconds", "%.1f s"),
            "counts": counts_row(verdict_counts(results)), "rows": rows,
            "loss": [{"area": area, "pattern": _value(l, "pattern")} for area, l in sorted((cell.get("loss") or {}).items())],
            "placement": placement_text(cell.get("placement")),
            "failures": failures(results, run_dir, statement_text, choice_label_lookup(doc))}
