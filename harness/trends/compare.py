"""./uet compare's work: what changed between two runs, check by check on the stable result ids (its options
and help: harness/commands/compare.py)."""
from __future__ import annotations

import json
import pathlib
import sys

from harness.commands import compare as compare_options
from harness.files.input_files import InputError
from harness.results.results import read_results_json
from harness.results.verdicts import FAILING, HELD, INFRA
from harness.files.untrusted import printable
from harness.results.compare_categories import CATEGORIES, TITLES


class RunError(Exception):
    """A path that is not a run: the message names it and what is wrong."""


def load_run(path: pathlib.Path) -> dict:
    """A run's results.json (its folder or the file), read by the format's one reader (harness/results/results.py)."""
    path = pathlib.Path(path)
    file = path / "results.json" if path.is_dir() else path
    try:
        _, doc = read_results_json(file)
    except InputError as exc:
        raise RunError(f"{exc} (give a run folder or its results.json)") from None
    doc.setdefault("_path", printable(str(file.resolve())))  # out/runs/latest moves on: name the run it was
    return doc


def why(r: dict) -> str | None:
    """What a result says about its verdict, in one line."""
    text = r.get("reason") or r.get("detail") or (r.get("message") or "").strip().split("\n", 1)[0]
    return text or None


def blame(r: dict) -> str | None:
    if not r.get("blamed_side"):
        return None
    return r["blamed_side"] + (f" ({r['blamed_manifest']})" if r.get("blamed_manifest") else "")


def _side(doc: dict) -> dict:
    info = doc.get("run_info") or {}
    return {"path": doc.get("_path"), "run_id": info.get("run_id"), "seed": info.get("seed"),
            "suite_commit": info.get("suite_commit"), "summary": doc.get("summary")}


def _seconds_by_area(results: list[dict]) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in results:
        out[r.get("area") or "?"] = out.get(r.get("area") or "?", 0.0) + float(r.get("seconds") or 0)
    return out


def compare(old: dict, new: dict) -> dict:
    before = {r["id"]: r for r in old["results"]}
    after = {r["id"]: r for r in new["results"]}
    out = {c: [] for c in CATEGORIES}
    for ident, n in after.items():
        o = before.get(ident)
        if o is None:
            out["new_checks"].append({"id": ident, "verdict": n["verdict"], "why": why(n)})
            continue
        row = {"id": ident, "old": o["verdict"], "new": n["verdict"], "why": why(n), "blame": blame(n)}
        if n["verdict"] in INFRA and o["verdict"] not in INFRA:  # nothing ran: it says nothing of the provider
            out["infra_errors"].append(row)
        elif o["verdict"] in HELD and n["verdict"] in FAILING:
            out["regressions"].append(row)
        elif o["verdict"] in FAILING and n["verdict"] in HELD:
            out["fixes"].append(row)
        elif o["verdict"] != n["verdict"]:
            out["changed"].append(row)
        else:
            if why(o) != why(n):
                out["reasons"].append({"id": ident, "verdict": n["verdict"], "old": why(o), "new": why(n)})
            if blame(o) != blame(n):
                out["blame"].append({"id": ident, "verdict": n["verdict"], "old": blame(o), "new": blame(n)})
    out["removed_checks"] = [{"id": i, "verdict": o["verdict"], "why": why(o)} for i, o in before.items() if i not in after]
    old_t, new_t = _seconds_by_area(old["results"]), _seconds_by_area(new["results"])
    areas = [{"area": a, "old_seconds": round(old_t.get(a, 0.0), 2), "new_seconds": round(new_t.get(a, 0.0), 2),
              "delta_seconds": round(new_t.get(a, 0.0) - old_t.get(a, 0.0), 2)} for a in sorted(set(old_t) | set(new_t))]
    return {"old": _side(old), "new": _side(new), **out, "areas": areas,
            "counts": {c: len(out[c]) for c in CATEGORIES}, "exit_status": 1 if out["regressions"] else 0}



def as_text(c: dict) -> str:
    lines = [f"uet compare: {c['old']['path']} ({c['old']['run_id']}) -> {c['new']['path']} ({c['new']['run_id']})"]
    for cat in CATEGORIES:
        rows = c[cat]
        if not rows:
            continue
        lines.append(f"{TITLES[cat]} ({len(rows)}):")
        for r in rows:
            if cat in ("new_checks", "removed_checks"):
                lines.append(f"  {r['id']}: {r['verdict']}" + (f": {r['why']}" if r["why"] else ""))
            elif cat in ("reasons", "blame"):
                lines.append(f"  {r['id']} ({r['verdict']}): {r['old']} -> {r['new']}")
            else:
                lines.append(f"  {r['id']}: {r['old']} -> {r['new']}" + (f": {r['why']}" if r["why"] else "")
                             + (f" [blamed: {r['blame']}]" if r["blame"] else ""))
    lines.append("time per area (s): " + ", ".join(f"{a['area']} {a['old_seconds']:.1f} -> {a['new_seconds']:.1f}"
                                                   for a in c["areas"]))
    lines.append("uet compare: " + ", ".join(f"{n} {cat.replace('_', ' ')}" for cat, n in c["counts"].items()))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = compare_options.parse(argv)
    try:
        result = compare(load_run(args.old), load_run(args.new))
    except RunError as exc:
        print(f"uet compare: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1, ensure_ascii=False) if args.json else as_text(result))
    if args.html:
        from reports.compare_render import render_compare
        try:
            render_compare(result, args.html)
        except OSError as exc:
            print(f"uet compare: {args.html}: cannot be written: {exc.strerror or exc}", file=sys.stderr)
            return 2
    return result["exit_status"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
