"""The plugfest's rows in the history database (tables plugfest_*: reports/HISTORY-INDEX.md): a package is
recorded in one transaction with its cells and counts, and the supersede rule applied there.

The supersede rule: a package of the same lab, suite commit and cells (each cell's initiator and target with
the builds of both sides) as one recorded before measures the same thing again; the one certified later (its
run's start; the one recorded later when they started at the same time) is the one the site counts, and
the other stays in the history, marked superseded_by it and linked from the cell. Packages of other labs,
another suite commit or other builds sit beside each other in their cell.
"""
from __future__ import annotations

import dataclasses
import datetime
import sqlite3

from harness.files.untrusted import printable
from harness.plugfest.provenance import Provenance


@dataclasses.dataclass(frozen=True)
class Recorded:
    supersedes: str | None       # the package this one replaced
    superseded_by: str | None    # the package that replaces this one at once (it was certified later)


class AlreadyRecorded(Exception):
    """The package's content hash is recorded already."""


def _instant(text: str) -> tuple:
    """An ISO 8601 time to compare (offsets taken into account); one that does not parse sorts first."""
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        return (0, text)
    return (1, (when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)).timestamp())


def known(db: sqlite3.Connection, content_sha256: str) -> dict | None:
    """The package recorded with that content hash (name, lab, ingested), or None."""
    row = db.execute("SELECT name, lab, ingested FROM plugfest_packages WHERE content_sha256 = ?",
                     (content_sha256,)).fetchone()
    return dict(zip(("name", "lab", "ingested"), row)) if row else None


def record(db: sqlite3.Connection, content_sha256: str, name: str, prov: Provenance, ingested: str, verdict: str,
           evidence: str) -> Recorded:
    """Records the package, its cells and counts, and the supersede rule's outcome, in one transaction;
    AlreadyRecorded when its hash is recorded (by another ingest since this one looked)."""
    key = prov.supersede_key()
    # the rule reads and writes under one write lock: two ingests at once cannot both find no current package
    db.execute("BEGIN IMMEDIATE")
    try:
        if known(db, content_sha256):
            raise AlreadyRecorded(content_sha256)
        current = db.execute("SELECT content_sha256, certified FROM plugfest_packages WHERE supersede_key = ? AND "
                             "superseded_by IS NULL", (key,)).fetchone()
        later = current is not None and _instant(current[1]) > _instant(prov.certified)
        db.execute("INSERT INTO plugfest_packages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (
            content_sha256, name, prov.lab, prov.lab_source, prov.suite_commit, prov.suite_commit_time, prov.certified,
            ingested, verdict, evidence, key, current[0] if later else None))
        if current is not None and not later:
            db.execute("UPDATE plugfest_packages SET superseded_by = ? WHERE content_sha256 = ?",
                       (content_sha256, current[0]))
        for c in prov.cells:
            db.execute("INSERT INTO plugfest_cells VALUES (?, ?, ?, ?, ?, ?, ?)", (
                content_sha256, c.cell, c.initiator, c.target, c.initiator_build, c.target_build, c.page))
            db.executemany("INSERT INTO plugfest_counts VALUES (?, ?, ?, ?)",
                           [(content_sha256, c.cell, v, n) for v, n in sorted(c.counts.items())])
        db.commit()
    except BaseException:
        db.rollback()
        raise
    if current is None:
        return Recorded(None, None)
    return Recorded(None, current[0]) if later else Recorded(current[0], None)


def packages(db: sqlite3.Connection) -> list[dict]:
    """Every recorded package with its cells (each with its counts), in the order they were recorded."""
    db.row_factory = sqlite3.Row
    # what the pages show came from packages, anyone's: escapes written visibly
    db.text_factory = lambda b: printable(b.decode("utf-8", "replace"))
    try:
        out = [dict(r, cells=[]) for r in db.execute("SELECT * FROM plugfest_packages ORDER BY rowid")]
        by_hash = {p["content_sha256"]: p for p in out}
        cells = {}
        for r in db.execute("SELECT * FROM plugfest_cells ORDER BY content_sha256, cell"):
            cells[(r["content_sha256"], r["cell"])] = dict(r, counts={})
            by_hash[r["content_sha256"]]["cells"].append(cells[(r["content_sha256"], r["cell"])])
        for r in db.execute("SELECT * FROM plugfest_counts"):
            cells[(r["content_sha256"], r["cell"])]["counts"][r["verdict"]] = r["n"]
    finally:
        db.row_factory = None
        db.text_factory = str
    return out
