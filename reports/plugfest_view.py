"""The plugfest site's matrix: implementation × implementation (initiator rows, target columns), each cell
what the packages of that pair say, from the history's plugfest rows (harness/plugfest/ledger.py packages()).

A cell rests on every package of its pair that no later one superseded: its verdict counts are their sum,
and it names each package's lab, suite commit, the builds of both sides, its age and its evidence. It says:
- stale: when one of its packages was certified more than STALE_AFTER_DAYS days before the page was made,
  or rests on a suite commit older than the newest suite commit of any package ingested (its verdicts come
  from checks that have changed since);
- mixed: when its packages differ in suite commit or in the build of a side (their counts are summed over
  what is not one suite or one pair of builds).
"""
from __future__ import annotations

import datetime
import urllib.parse

from reports import view

STALE_AFTER_DAYS = 90
# A package's evidence folder in the site (written by harness/plugfest/ingest.py): its members, verify's
# report, and the package's bytes as verified.
EVIDENCE_FOLDER = "evidence"
MEMBERS = "members"
PACKAGE_COPY = "package.tar.zst"
VERIFICATION = "verification.txt"   # the name ./uet verify gives its report (harness/certify/verify.py)


def evidence_folder(content_sha256: str) -> str:
    """Where a package's evidence lies, relative to the site."""
    return f"{EVIDENCE_FOLDER}/{content_sha256[:16]}"


def _age_days(certified: str, now: datetime.datetime) -> int | None:
    try:
        when = datetime.datetime.fromisoformat(certified)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0, (now - when).days)


def _link(folder: str, member: str) -> str:
    return urllib.parse.quote(f"{folder}/{member}")


def _entry(package: dict, cell: dict, now: datetime.datetime) -> dict:
    folder = package["evidence"]
    return {"hash": package["content_sha256"][:16], "lab": package["lab"], "lab_source": package["lab_source"],
            "commit": package["suite_commit"][:12], "commit_time": package["suite_commit_time"],
            "certified": package["certified"], "age": _age_days(package["certified"], now), "name": package["name"],
            "builds": (cell["initiator_build"], cell["target_build"]), "counts": cell["counts"],
            "report": _link(folder, f"{MEMBERS}/run/{cell['page'] or 'index.html'}"),
            "verification": _link(folder, VERIFICATION), "package": _link(folder, PACKAGE_COPY)}


def _cell(entries: list[dict], superseded: list[dict], newest: dict | None) -> dict:
    counts = {v: sum(e["counts"].get(v, 0) for e in entries) for v in view.VERDICTS}
    commits = sorted({e["commit"] for e in entries})
    builds = sorted({e["builds"] for e in entries})
    ages = [e["age"] for e in entries]
    age = None if None in ages else max(ages)
    stale = []
    if age is None:
        stale.append("a package's certification date cannot be read, so its age is unknown")
    elif age > STALE_AFTER_DAYS:
        stale.append(f"its oldest package was certified {age} days ago, more than {STALE_AFTER_DAYS}")
    older = sorted({e["commit"] for e in entries if newest and e["commit_time"] < newest["commit_time"]})
    if older:
        stale.append(f"it rests on suite commit {', '.join(older)}, older than the newest ingested, {newest['commit']}")
    mixed = []
    if len(commits) > 1:
        mixed.append(f"its packages differ in suite commit ({', '.join(commits)})")
    if len(builds) > 1:
        mixed.append(f"its packages differ in provider builds ({len(builds)} pairs of builds)")
    return {"entries": entries, "superseded": superseded, "counts": counts, "total": sum(counts.values()),
            "commits": commits, "builds": builds, "age": age, "stale": stale, "mixed": mixed}


def site(packages: list[dict], now: datetime.datetime) -> dict:
    current = [p for p in packages if p["superseded_by"] is None]
    newest = max(({"commit": p["suite_commit"][:12], "commit_time": p["suite_commit_time"]} for p in current),
                 key=lambda c: (c["commit_time"], c["commit"]), default=None)
    pairs: dict[tuple[str, str], tuple[list, list]] = {}
    for p in packages:
        for c in p["cells"]:
            slot = pairs.setdefault((c["initiator"], c["target"]), ([], []))
            slot[0 if p["superseded_by"] is None else 1].append(_entry(p, c, now))
    names = sorted({side for pair in pairs for side in pair})
    rows = [{"initiator": i, "cells": [_cell(*pairs[(i, t)], newest) if (i, t) in pairs else None for t in names]}
            for i in names]
    return {"columns": names, "rows": rows, "now": now.strftime("%Y-%m-%d %H:%M UTC"), "newest": newest,
            "stale_after_days": STALE_AFTER_DAYS, "packages": len(packages), "current": len(current),
            "labs": sorted({p["lab"] for p in current}), "verdicts": [(v, view.VERDICT_LABELS[v]) for v in view.VERDICTS]}
