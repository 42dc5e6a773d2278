"""What the history site shows, computed from the index's runs (harness.trends.history_index.runs): the run table
and the geometry of every plot, so the templates only loop and print (and escape).

The x axis of every plot is the run's place in the history (oldest left), shared by all plots so a column
is the same run on every chart; a provider that missed a run has a gap there.
"""
from __future__ import annotations

import os
import urllib.parse

from harness.results.verdicts import BY_RANK, FAILING, LABELS
from reports import view

# Bottom to top, worst first: what to act on sits on the baseline, where a change in it is easiest to see.
STACK = BY_RANK
PLOT = {"width": 660, "height": 180, "left": 48, "right": 36, "top": 14, "bottom": 40}
NUMBER_MIN_SLOT = 12   # a run's column narrower than this marks its failing results without the number
MAX_X_LABELS = 6
MISSING = view.MISSING


def run_href(folder: str, out_dir: os.PathLike) -> str | None:
    """The run's index.html relative to the site, percent-encoded segment by segment so no folder name
    (e.g. one called 'javascript:...') can become a scheme or leave the path; None when it has no report."""
    index = os.path.join(folder, "index.html")
    if not os.path.isfile(index):
        return None
    rel = os.path.relpath(index, os.path.abspath(out_dir))
    quoted = "/".join(urllib.parse.quote(part, safe="") for part in rel.split(os.sep))
    return quoted if quoted.startswith("../") else "./" + quoted


def _label(run: dict, versions: int) -> tuple[str, str]:
    """A short x-axis label in two lines: month-day and time of the start ('11-27 20:03', else the run id),
    then the seed, and the spec version when the history holds more than one."""
    started = run.get("started") or ""
    when = "%s %s" % (started[5:10], started[11:16]) if len(started) >= 16 and started[4] == "-" else run["run_id"][:14]
    second = [] if run.get("seed") is None else ["s%s" % run["seed"]]
    if versions > 1:
        second.append(run.get("spec_version") or view.MISSING)
    return when, " · ".join(second)


def _nice_max(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k at or above value (an axis top that reads well)."""
    if value <= 0:
        return 1
    step = 10 ** (len(str(int(value))) - 1)
    for m in (1, 2, 2.5, 5, 10):
        if m * step >= value:
            return m * step
    return 10 * step


def _frame(runs: list[dict], top_value: float, unit: str) -> dict:
    p = PLOT
    inner_w = p["width"] - p["left"] - p["right"]
    inner_h = p["height"] - p["top"] - p["bottom"]
    slot = inner_w / max(len(runs), 1)
    every = max(1, -(-len(runs) // MAX_X_LABELS))
    top = _nice_max(top_value)

    def y(v):
        return round(p["top"] + inner_h * (1 - v / top), 1)
    ticks = [{"y": y(v), "label": ("%g" % v) + unit} for v in (0, top / 2, top)]
    versions = len({r.get("spec_version") for r in runs})
    # counted from the newest run, which always has its label
    labels = [{"x": round(p["left"] + slot * (i + 0.5), 1), "lines": _label(r, versions)}
              for i, r in enumerate(runs) if (len(runs) - 1 - i) % every == 0]
    return {"width": p["width"], "height": p["height"], "left": p["left"], "right": p["width"] - p["right"],
            "base": y(0), "top": p["top"], "ticks": ticks, "labels": labels, "slot": slot, "y": y,
            "label_y": p["height"] - p["bottom"] + 15}


def verdict_plot(runs: list[dict], scope: str, key: str, hrefs: dict) -> dict:
    """Stacked verdict bars of one (scope, key) over every run; a run without it leaves a gap."""
    series = [r["counts"].get((scope, key)) for r in runs]
    frame = _frame(runs, max((sum(c.values()) for c in series if c), default=0), "")
    bar_w = max(2.0, min(28.0, frame["slot"] * 0.7))
    bars = []
    for i, (run, counts) in enumerate(zip(runs, series)):
        if not counts:
            continue
        x = round(frame["left"] + frame["slot"] * (i + 0.5) - bar_w / 2, 1)
        level, parts = 0, []
        for verdict in STACK:
            n = counts.get(verdict, 0)
            if n:
                y_top = frame["y"](level + n)
                parts.append({"verdict": verdict, "y": y_top, "h": round(frame["y"](level) - y_top, 1)})
                level += n
        failing = sum(counts.get(v, 0) for v in FAILING)
        bars.append({"x": x, "w": round(bar_w, 1), "parts": parts, "href": hrefs[run["run_id"]],
                     "failing": failing, "failing_y": round(frame["y"](level) - 4, 1),
                     "number": frame["slot"] >= NUMBER_MIN_SLOT,
                     "title": "%s (spec %s): %s" % (run["run_id"], run["spec_version"] or view.MISSING,
                                                   view._counts_text(counts) or "no results")})
    last = next((i for i in range(len(series) - 1, -1, -1) if series[i]), None)
    latest = MISSING if last is None else "%s (%s)" % (view._counts_text(series[last]) or "no results", runs[last]["run_id"])
    return dict(frame, key=key, bars=bars, latest=latest)


def line_plot(runs: list[dict], values: list[float | None], unit: str, what: str, hrefs: dict,
              fmt: str = "%.1f") -> dict:
    """One value per run as a line with a point per run (a run without the value leaves it out)."""
    frame = _frame(runs, max((v for v in values if v is not None), default=0), unit)
    points = [{"x": round(frame["left"] + frame["slot"] * (i + 0.5), 1), "y": frame["y"](v),
               "href": hrefs[run["run_id"]], "title": "%s: %s%s %s" % (run["run_id"], fmt % v, unit, what)}
              for i, (run, v) in enumerate(zip(runs, values)) if v is not None]
    latest = next((fmt % v + unit for v in reversed(values) if v is not None), view.MISSING)
    return dict(frame, points=points, polyline=" ".join("%s,%s" % (p["x"], p["y"]) for p in points),
                latest=latest, radius=round(max(1.5, min(4.5, frame["slot"] / 3)), 1))


def _keys(runs: list[dict], scope: str) -> list[str]:
    keys = {k for r in runs for (s, k) in r["counts"] if s == scope}
    if scope == "profile":
        return sorted(keys, key=lambda k: (view.PROFILE_ORDER.index(k) if k in view.PROFILE_ORDER else 99, k))
    return sorted(keys)


def changes(last_seen: dict, run: dict) -> list[dict]:
    """The results whose verdict differs from that result id's in the latest earlier run that had it
    (last_seen: id -> verdict); ids new to the history are not changes."""
    return [{"id": rid, "before": last_seen[rid], "now": verdict} for rid, verdict in sorted(run["verdicts"].items())
            if rid in last_seen and last_seen[rid] != verdict]


def _when(started: str) -> str:
    """'2026-11-27T20:04:57+00:00' as '2026-11-27 20:04:57' (a table cell that does not wrap)."""
    return started[:19].replace("T", " ") if len(started) >= 19 and started[10] == "T" else started or MISSING


def _coverage_percent(run: dict) -> float | None:
    if run.get("observable"):
        return 100.0 * (run.get("covered_observable") or 0) / run["observable"]
    return None


def run_rows(runs: list[dict], hrefs: dict) -> list[dict]:
    """The run table, newest first."""
    rows, last_seen = [], {}
    for run in runs:
        counts = run["counts"].get(("run", "all"), {})
        cov = _coverage_percent(run)
        rows.append({"run_id": run["run_id"], "href": hrefs[run["run_id"]], "started": _when(run["started"] or ""),
                     "spec_version": run["spec_version"] or view.MISSING,
                     "seed": view.MISSING if run["seed"] is None else run["seed"], "mode": run["mode"] or view.MISSING,
                     "seconds": view.MISSING if run["seconds"] is None else "%.1f s" % run["seconds"],
                     "counts": view.counts_row(counts),
                     "coverage": view.MISSING if cov is None else "%.0f%%" % cov,
                     "exit_status": view.MISSING if run["exit_status"] is None else run["exit_status"],
                     "partial": bool(run["partial"]), "changes": changes(last_seen, run)})
        last_seen.update(run["verdicts"])
    return rows[::-1]


def site(runs: list[dict], out_dir: os.PathLike) -> dict:
    """Everything the site's pages print."""
    hrefs = {r["run_id"]: run_href(r["folder"], out_dir) for r in runs}

    def plots(scope):
        return [verdict_plot(runs, scope, k, hrefs) for k in _keys(runs, scope)]
    return {"runs": run_rows(runs, hrefs), "count": len(runs),
            "overall": verdict_plot(runs, "run", "all", hrefs) if runs else None,
            "seconds": line_plot(runs, [r["seconds"] for r in runs], " s", "(run time)", hrefs, "%.0f"),
            "coverage": line_plot(runs, [_coverage_percent(r) for r in runs], "%",
                                  "of the observable statements covered", hrefs, "%.0f"),
            "providers": plots("provider"), "profiles": plots("profile"), "cells": plots("cell"),
            "stack": [(v, LABELS[v]) for v in reversed(STACK)]}
