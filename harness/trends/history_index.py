"""The run history's SQLite index: one row per run folder's results.json, its verdict counts per provider,
cell and profile, and every result's verdict; and the plugfest's submission packages (./uet plugfest,
harness/plugfest/), kept in the same history (the schema: reports/HISTORY-INDEX.md).

Indexing is idempotent: a run is keyed by its run_id, and a results.json whose hash is already stored is
left alone; one whose hash changed (a re-rendered or finished run) replaces its rows in one transaction.
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import pathlib
import sqlite3
import stat

from harness.files import output_files
from harness.files.input_files import InputError, read_json_bytes
from harness.results.results import parse_results_json
from harness.files.untrusted import printable
from reports import view

SCHEMA_VERSION = 2

RUN_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, folder TEXT NOT NULL, results_sha256 TEXT NOT NULL,
    started TEXT, seconds REAL, seed INTEGER, spec_version TEXT, mode TEXT, command TEXT,
    suite_commit TEXT, partial INTEGER NOT NULL, exit_status INTEGER,
    covered_observable INTEGER, observable INTEGER, flaky INTEGER NOT NULL);
CREATE TABLE counts (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    scope TEXT NOT NULL CHECK (scope IN ('run', 'provider', 'cell', 'profile')), key TEXT NOT NULL,
    verdict TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (run_id, scope, key, verdict));
CREATE TABLE results (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    result_id TEXT NOT NULL, cell TEXT, area TEXT, verdict TEXT NOT NULL, flaky INTEGER NOT NULL,
    expectation TEXT, PRIMARY KEY (run_id, result_id));
CREATE INDEX runs_by_start ON runs (started, run_id);
"""

# Version 2 added these, and nothing else: a version-1 index of exactly version 1's objects is upgraded in place.
PLUGFEST_SCHEMA = """
CREATE TABLE plugfest_packages (
    content_sha256 TEXT PRIMARY KEY, name TEXT NOT NULL, lab TEXT NOT NULL,
    lab_source TEXT NOT NULL CHECK (lab_source IN ('package', 'ingest option')),
    suite_commit TEXT NOT NULL, suite_commit_time INTEGER NOT NULL, certified TEXT NOT NULL, ingested TEXT NOT NULL,
    verdict TEXT NOT NULL, evidence TEXT NOT NULL, supersede_key TEXT NOT NULL,
    superseded_by TEXT REFERENCES plugfest_packages(content_sha256));
CREATE TABLE plugfest_cells (
    content_sha256 TEXT NOT NULL REFERENCES plugfest_packages(content_sha256) ON DELETE CASCADE,
    cell TEXT NOT NULL, initiator TEXT NOT NULL, target TEXT NOT NULL,
    initiator_build TEXT NOT NULL, target_build TEXT NOT NULL, page TEXT NOT NULL,
    PRIMARY KEY (content_sha256, cell));
CREATE TABLE plugfest_counts (
    content_sha256 TEXT NOT NULL, cell TEXT NOT NULL, verdict TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (content_sha256, cell, verdict),
    FOREIGN KEY (content_sha256, cell) REFERENCES plugfest_cells(content_sha256, cell) ON DELETE CASCADE);
CREATE INDEX plugfest_by_key ON plugfest_packages (supersede_key);
"""
SCHEMA = RUN_SCHEMA + PLUGFEST_SCHEMA
UPGRADES = {"1": (RUN_SCHEMA, PLUGFEST_SCHEMA)}   # version -> (its objects' schema, what upgrades it to this one)


class BrokenRun(ValueError):
    """A run folder whose results.json cannot be indexed; the message names the file and what is wrong."""


class SchemaMismatch(RuntimeError):
    """The database was written by another schema version of this index."""


def _objects(db: sqlite3.Connection) -> list[tuple]:
    return sorted(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"), key=repr)


def _expected_objects(schema: str = SCHEMA) -> list[tuple]:
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema)
        return _objects(db)
    finally:
        db.close()


def _upgraded(db: sqlite3.Connection, version: str, objects: list[tuple]) -> bool:
    """Upgrades an index of an older version in place, in one transaction, when its objects are exactly that
    version's (an upgrade only adds tables, so every row it held stays as it was); False when it cannot."""
    if version not in UPGRADES or objects != _expected_objects(UPGRADES[version][0]):
        return False
    # sqlite3 opens no transaction before a CREATE on its own (executescript commits first): an explicit one,
    # so a crash half-way leaves version 1 as it was
    db.execute("BEGIN")
    try:
        for statement in filter(str.strip, UPGRADES[version][1].split(";")):
            db.execute(statement)
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        db.commit()
    except BaseException:
        db.rollback()
        raise
    return True


def connect(path: pathlib.Path) -> sqlite3.Connection:
    """The index at `path`, created with the current schema when new; SchemaMismatch when it holds another.
    A database is read only once its tables, indexes, views and triggers are exactly this schema's: a view
    or trigger of someone else's making (a recursive view never ends) is never run. `path`'s folder is one
    only trusted users control, not even /tmp (harness/files/output_files.py: SQLite writes its journal beside it),
    and the file, a regular file, one of theirs."""
    os.close(output_files.open_folder(path.parent, shared_ok=False))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise sqlite3.DatabaseError("not a regular file")
    if st is not None and st.st_uid not in output_files.trusted_users():
        raise output_files.UnsafeFolder(f"{path} belongs to another user (uid {st.st_uid}): the suite does not "
                                        "write into a file someone else controls")
    db = sqlite3.connect(str(path))
    try:
        objects = _objects(db)
        if not objects:
            with db:
                db.executescript(SCHEMA)
                db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        else:
            expected = _expected_objects()
            meta = next(o for o in expected if o[:2] == ("table", "meta"))
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() \
                if meta in objects else None   # read only from a table of this schema's shape, never a view
            version = printable(str(row[0])) if row else "unknown"
            if version != str(SCHEMA_VERSION) and _upgraded(db, version, objects):
                objects, version = _objects(db), str(SCHEMA_VERSION)
            if version != str(SCHEMA_VERSION):
                raise SchemaMismatch(f"{path}: schema version {version}, this suite reads {SCHEMA_VERSION} (index "
                                     "into a new --db, or delete it to rebuild from the run folders)")
            if objects != expected:
                raise SchemaMismatch(f"{path}: its tables, views or triggers are not those of schema version "
                                     f"{SCHEMA_VERSION} (reports/HISTORY-INDEX.md): not an index this suite wrote")
    except BaseException:
        db.close()
        raise
    db.execute("PRAGMA foreign_keys = ON")
    return db


class IndexRefused(Exception):
    """The index cannot be opened for a reason of the user's to fix; the message names the file and why."""


def open_index(path: pathlib.Path) -> sqlite3.Connection:
    """connect(path), every refusal an IndexRefused whose message names the file and the problem."""
    try:
        return connect(path)
    except SchemaMismatch as exc:
        raise IndexRefused(str(exc)) from None
    except output_files.UnsafeFolder as exc:
        raise IndexRefused(f"cannot write the database {printable(str(path))}: {printable(str(exc))}") from None
    except (sqlite3.DatabaseError, OSError) as exc:
        raise IndexRefused(f"{printable(str(path))}: not a history database: {printable(str(exc))}") from None


def _is_flaky(result: dict) -> bool:
    # --rerun-failures/--repeat make a result's verdict flaky; a flag or classification says so in other runs
    return result.get("verdict") == "flaky" or bool(result.get("flaky")) or result.get("classification") == "flaky"


def read(folder: pathlib.Path) -> bytes:
    try:
        return read_json_bytes(folder / "results.json", "results.json")
    except InputError as exc:
        raise BrokenRun(str(exc)) from None


def parse(folder: pathlib.Path, raw: bytes) -> dict:
    """The run folder's results.json, read by the format's one reader (harness/results/results.py); BrokenRun naming
    the file when it is unusable."""
    source = folder / "results.json"
    try:
        doc = parse_results_json(source, raw)
    except InputError as exc:
        raise BrokenRun(str(exc)) from None
    if not isinstance(doc.get("run_info"), dict):
        raise BrokenRun(f"{printable(str(source))}: not a run's results.json (no run_info object; "
                        "reports/RESULTS-FORMAT.md)")
    return doc


def scoped_counts(doc: dict) -> dict[tuple[str, str], dict[str, int]]:
    """(scope, key) -> verdict counts: the run, each provider manifest (a result counts under each side's
    manifest once), each cell, and each profile either side claims."""
    cells = {c.get("id"): c for c in doc.get("cells", []) if isinstance(c, dict)}
    manifests = view.manifests_by_name(doc)
    groups = collections.defaultdict(list)
    for r in doc["results"]:
        groups[("run", "all")].append(r)
        groups[("cell", str(r.get("cell")))].append(r)
        cell = cells.get(r.get("cell"), {})
        names = {cell.get(side) for side in view.SIDES if cell.get(side)}
        for name in names:
            groups[("provider", str(name))].append(r)
        profiles = {p for name in names for p in (manifests.get(name, {}).get("profiles") or [])}
        for profile in profiles or {"(no profile)"}:
            groups[("profile", str(profile))].append(r)
    return {k: view.verdict_counts(rs) for k, rs in groups.items()}


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def index_run(db: sqlite3.Connection, folder: pathlib.Path) -> str:
    """Index one run folder; returns "added", "updated" or "unchanged". BrokenRun when it cannot be read."""
    raw = read(folder)
    digest = hashlib.sha256(raw).hexdigest()
    # the common case, a folder indexed before and unchanged, is answered without parsing its JSON
    if db.execute("SELECT 1 FROM runs WHERE results_sha256 = ? AND folder = ?",
                  (digest, str(folder.resolve()))).fetchone():
        return "unchanged"
    doc = parse(folder, raw)
    try:
        return _index(db, folder, doc, digest)
    except (TypeError, AttributeError, ValueError) as exc:   # the transaction is rolled back
        raise BrokenRun(f"{folder / 'results.json'}: does not follow reports/RESULTS-FORMAT.md "
                        f"({type(exc).__name__}: {exc})") from None


def _index(db: sqlite3.Connection, folder: pathlib.Path, doc: dict, digest: str) -> str:
    info = doc["run_info"]
    run_id = str(info.get("run_id") or folder.name)
    old = db.execute("SELECT results_sha256, folder FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    folder_text = str(folder.resolve())
    if old and old[0] == digest and (old[1] == folder_text or (pathlib.Path(old[1]) / "results.json").exists()):
        return "unchanged"   # the same results, here or in a copy of the folder: the first folder stays
    summary = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    coverage = doc.get("coverage") if isinstance(doc.get("coverage"), dict) else {}
    seconds = info.get("seconds")
    with db:
        db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
        db.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (
            run_id, folder_text, digest, str(info.get("started") or ""),
            float(seconds) if isinstance(seconds, (int, float)) else None, _int(info.get("seed")),
            str(info.get("spec_version") or ""), str(info.get("mode") or ""), str(info.get("command") or ""),
            str(info.get("suite_commit") or ""), int(bool(info.get("partial"))), _int(summary.get("exit_status")),
            _int(coverage.get("covered_observable")), _int(coverage.get("observable")),
            sum(_is_flaky(r) for r in doc["results"])))
        db.executemany("INSERT INTO counts VALUES (?, ?, ?, ?, ?)", [
            (run_id, scope, key, verdict, n)
            for (scope, key), counts in scoped_counts(doc).items() for verdict, n in counts.items() if n])
        # INSERT OR REPLACE: a results list that repeats an id keeps its last verdict rather than failing
        db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?)", [
            (run_id, str(r.get("id") or "(no id %d)" % i), r.get("cell") if isinstance(r.get("cell"), str) else None,
             r.get("area") if isinstance(r.get("area"), str) else None, str(r.get("verdict")), int(_is_flaky(r)),
             json.dumps(r["expectation"], sort_keys=True) if r.get("expectation") is not None else None)
            for i, r in enumerate(doc["results"])])
    return "updated" if old else "added"


def run_folders(path: pathlib.Path) -> list[pathlib.Path]:
    """A run folder itself, or the run folders below a folder of runs (out/runs), by name; symlinks such as
    out/runs/latest are left out, as they name a run already listed."""
    if (path / "results.json").exists() or not path.is_dir():
        return [path]
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())


def runs(db: sqlite3.Connection) -> list[dict]:
    """Every indexed run, oldest first (by start time, then run id, so equal times sort the same way)."""
    db.row_factory = sqlite3.Row
    # what the pages show comes from run folders and the database, anyone's: escapes written visibly
    db.text_factory = lambda b: printable(b.decode("utf-8", "replace"))
    try:
        rows = [dict(r) for r in db.execute("SELECT * FROM runs ORDER BY started, run_id")]
        counts = collections.defaultdict(dict)
        for r in db.execute("SELECT run_id, scope, key, verdict, n FROM counts"):
            counts[r["run_id"]].setdefault((r["scope"], r["key"]), {})[r["verdict"]] = r["n"]
        verdicts = collections.defaultdict(dict)
        for r in db.execute("SELECT run_id, result_id, verdict FROM results"):
            verdicts[r["run_id"]][r["result_id"]] = r["verdict"]
    finally:
        db.row_factory = None
        db.text_factory = str
    for row in rows:
        row["counts"] = counts[row["run_id"]]
        row["verdicts"] = verdicts[row["run_id"]]
    return rows
