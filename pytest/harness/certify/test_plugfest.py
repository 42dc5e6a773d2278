"""./uet plugfest: real submission packages of two providers (softuet and its personality extended-address,
standing in for a second vendor) in both directions, plus softuet claiming HPC alone, ingested into a history database
one step after another; the site each step leaves, read in headless Chromium; and what a lab might send
wrongly: a package altered by one byte, one sent twice, a file that is no package.

The packages are made once per session (pytest/fixtures_uet.py certify_package: a whole mustpass run each)
and are valid only when made from a clean checkout: commit your changes first. Two more are made from one
of them the way a lab would send them: certified at an older suite commit of this history (a verifier's
caveat, not a finding), and certified again later with the same builds (it supersedes the first).
"""
import argparse
import dataclasses
import datetime
import hashlib
import html.parser
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys

import pytest

from harness.certify import package_archive, package_sums
from harness.files import suite_identity
from harness.trends import history_index
from reports import plugfest_view

REPO = pathlib.Path(__file__).resolve().parents[3]
SOFTUET = "cases/manifests/softuet.yaml"
PERSONALITY = "cases/manifests/personalities/extended-address.yaml"
SOFTUET_HPC = "cases/manifests/softuet.yaml#hpc"   # test_certify.py's package: softuet claiming HPC alone
SEED = 4242
I_SOFT, I_PERS, I_HPC = "softuet", "extended-address", "softuet-hpc"
SCRIPT_PAGE = "<!DOCTYPE html><script>document.title = 'a lab ran this'</script>\n"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="certify runs the suite in namespace pairs, which needs root")


@dataclasses.dataclass
class Step:
    proc: subprocess.CompletedProcess
    rows: dict          # table -> its rows after the step


def rows_of(db: pathlib.Path) -> dict:
    con = sqlite3.connect(db)
    try:
        return {"packages": con.execute(
                    "SELECT content_sha256, name, lab, lab_source, suite_commit, certified, verdict, evidence, "
                    "superseded_by FROM plugfest_packages ORDER BY rowid").fetchall(),
                "cells": con.execute("SELECT * FROM plugfest_cells ORDER BY content_sha256, cell").fetchall(),
                "counts": con.execute("SELECT * FROM plugfest_counts ORDER BY content_sha256, cell, verdict").fetchall(),
                "runs": con.execute("SELECT count(*) FROM runs").fetchall()}
    finally:
        con.close()


def members_of(package: pathlib.Path, dest: pathlib.Path) -> pathlib.Path:
    dest.mkdir(parents=True)
    subprocess.run(["tar", "--zstd", "-xf", str(package), "-C", str(dest)], check=True, timeout=600)
    return dest


def packed(tree: pathlib.Path, package: pathlib.Path, sealed: bool = True) -> pathlib.Path:
    """A package of `tree`'s files as certify writes one (SHA256SUMS made again unless `sealed` is False)."""
    names = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file() and p.name != package_sums.NAME)
    if sealed:
        package_sums.write(tree, names)
    package_archive.write(tree, names + [package_sums.NAME], package, 0)
    return package


def edit_json(path: pathlib.Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=1) + "\n")


def started_text(package_tree: pathlib.Path) -> str:
    """run_info.started, as the run wrote it."""
    return json.loads((package_tree / "run" / "results.json").read_text())["run_info"]["started"]


def started(package_tree: pathlib.Path) -> datetime.datetime:
    return datetime.datetime.fromisoformat(started_text(package_tree))


def cells_of(package_tree: pathlib.Path) -> list[dict]:
    """The run's cells, in results.json's order (a pair's run has the pair and each side alone)."""
    return json.loads((package_tree / "run" / "results.json").read_text())["cells"]


def cell_counts(package_tree: pathlib.Path, initiator: str, target: str) -> dict:
    """The verdict counts of the package's cell of that initiator and target."""
    doc = json.loads((package_tree / "run" / "results.json").read_text())
    cell = next(c["id"] for c in doc["cells"] if (c["initiator"], c["target"]) == (initiator, target))
    out = {}
    for r in doc["results"]:
        if r["cell"] == cell:
            out[r["verdict"]] = out.get(r["verdict"], 0) + 1
    return out


def summed(*counts: dict) -> dict:
    return {v: sum(c.get(v, 0) for c in counts) for v in {v for c in counts for v in c}}


def build_text(package_tree: pathlib.Path, name: str) -> str:
    records = json.loads((package_tree / "run" / "results.json").read_text())["run_info"]["manifests"]
    m = next(r for r in records if r["name"] == name)
    return (f"{m['provider']} {m['provider_version']} · libfabric {m['libfabric']['version']} "
            f"({m['libfabric']['source']}) · manifest {m['sha256'][:12]}")


@pytest.fixture(scope="module")
def made(certify_package, tmp_path_factory):
    """The three real packages (softuet → personality from Lab A, personality → softuet from Lab B, softuet's
    own with no lab), each unpacked once to read what it holds."""
    runs = {"a": certify_package("--initiator", SOFTUET, "--target", PERSONALITY, "--seed", SEED, "--lab", "Lab A"),
            "b": certify_package("--initiator", PERSONALITY, "--target", SOFTUET, "--seed", SEED, "--lab", "Lab B"),
            "c": certify_package("--provider", SOFTUET_HPC, "--seed", SEED)}   # test_certify.py's: one run for both
    for key, run in runs.items():
        assert run.returncode == 0, (key, run.stdout[-2000:], run.stderr[-2000:])
    top = tmp_path_factory.mktemp("plugfest-packages")
    return {k: (r.package, members_of(r.package, top / k)) for k, r in runs.items()}


@pytest.fixture(scope="module")
def older_commit():
    """A commit of this history older than HEAD's (its root), as a lab certifying last month would name."""
    root = suite_identity._git("rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    assert suite_identity.commit_time(root) < suite_identity.commit_time(suite_identity.commit())
    return root


@pytest.fixture(scope="module")
def story(made, older_commit, build_dir, tmp_path_factory):
    """The ingests, one step after another, into one database and site: step -> Step."""
    top = tmp_path_factory.mktemp("plugfest")
    site, db = top / "site", top / "history.sqlite"
    a_tree = made["a"][1]
    now = max(started(t) for _, t in made.values()) + datetime.timedelta(days=3, hours=2)

    def derived(name, change, sealed=True):
        tree = top / name
        shutil.copytree(a_tree, tree)
        change(tree)
        return packed(tree, top / f"{name}.tar.zst", sealed)

    def tamper(tree):   # one byte of a member, after certify sealed it
        summary = tree / "run" / "summary.txt"
        data = bytearray(summary.read_bytes())
        data[0] ^= 0x20
        summary.write_bytes(bytes(data))

    def older(tree):
        edit_json(tree / "suite.json", lambda s: s.update(commit=older_commit))
        edit_json(tree / "mustpass.json", lambda m: m.update(lab="Lab D"))

    def later(tree):   # and a page of its own making, which the site must not publish
        at = (started(tree) + datetime.timedelta(hours=1)).isoformat()
        edit_json(tree / "run" / "results.json", lambda d: d["run_info"].update(started=at))
        (tree / "run" / "index.html").write_text(SCRIPT_PAGE)

    (top / "notes.txt").write_text("these are not the results you are looking for\n")
    env = dict(os.environ, PYTHONPATH=str(REPO), UET_BUILD=str(build_dir))

    def ingest(*args, action="ingest", out=site):
        proc = subprocess.run([sys.executable, "-m", "harness.commands.guard", "./uet plugfest", "harness.plugfest.ingest",
                               action, *map(str, args), "--out", str(out), "--db", str(db), "--now", now.isoformat()],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
        return Step(proc, rows_of(db))

    steps = {"pairs": ingest(made["a"][0], made["b"][0])}
    steps["provider"] = ingest(made["c"][0], "--lab", "Lab C")
    steps["resend"] = ingest(made["a"][0])
    steps["tampered"] = ingest(derived("tampered", tamper, sealed=False))
    steps["not a package"] = ingest(top / "notes.txt")
    steps["older commit"] = ingest(derived("older", older))
    steps["later certification"] = ingest(derived("later", later))
    aged = now + datetime.timedelta(days=88)   # every package 91 days old
    steps["render aged"] = Step(subprocess.run(
        [sys.executable, "-m", "harness.plugfest.ingest", "render", "--out", str(top / "aged"), "--db", str(db),
         "--now", aged.isoformat()], cwd=REPO, env=env, capture_output=True, text=True, timeout=600), rows_of(db))
    return {"steps": steps, "site": site, "aged": top / "aged", "db": db, "top": top, "now": now}


def sha(package: pathlib.Path) -> str:
    return suite_identity.file_sha256(package)


class Dom(html.parser.HTMLParser):
    """The matrix of a dumped DOM: its columns and rows in order, and per cell its attributes, verdict counts,
    marks (with their titles) and links."""

    def __init__(self):
        super().__init__()
        self.columns, self.rows, self.cells, self._cell = [], [], {}, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "th" and "data-column" in a:
            self.columns.append(a["data-column"])
        elif tag == "tr" and "data-row" in a:
            self.rows.append(a["data-row"])
        elif tag == "td" and "data-initiator" in a:
            self._cell = self.cells[(a["data-initiator"], a["data-target"])] = {
                "attrs": a, "counts": {}, "marks": {}, "links": {}}
        elif self._cell is not None:
            if "data-verdict" in a:
                self._cell["counts"][a["data-verdict"]] = int(a["data-count"])
            if "mark" in (a.get("class") or "").split():
                self._cell["marks"][a["class"].split()[-1].removeprefix("mark-")] = a["title"]
            if tag == "a":
                self._cell["links"].setdefault(a["class"], []).append(a["href"])

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None


@pytest.fixture(scope="module")
def dom_of(cmd_chromium):
    def read(page: pathlib.Path) -> Dom:
        proc = cmd_chromium("--dump-dom", page.as_uri())
        assert proc.returncode == 0, proc.stderr[-2000:]
        dom = Dom()
        dom.feed(proc.stdout)
        return dom
    return read


class TestIngest:
    def test_the_three_packages_are_accepted_with_their_provenance(self, story, made):
        pairs, provider = story["steps"]["pairs"], story["steps"]["provider"]
        assert (pairs.proc.returncode, pairs.proc.stderr, provider.proc.returncode, provider.proc.stderr) == (0, "", 0, "")
        out = pairs.proc.stdout.splitlines() + provider.proc.stdout.splitlines()
        commit = suite_identity.commit()
        for line, key, lab in ((out[0], "a", "Lab A"), (out[1], "b", "Lab B"), (out[3], "c", "Lab C (by --lab)")):
            package, tree = made[key]
            cells = ", ".join(f"{c['initiator']} → {c['target']}" for c in cells_of(tree))
            assert line == (f"uet plugfest: {package}: accepted: lab {lab}, suite {commit[:12]}, {cells}, certified "
                            f"{started_text(tree)}; VALID; evidence {story['site'] / 'evidence' / sha(package)[:16]}")
        assert [c["id"] for c in cells_of(made["a"][1])] == [I_SOFT, I_PERS, f"{I_SOFT}__{I_PERS}"]
        assert out[2] == f"uet plugfest: 2 package(s) in the history; site {story['site'] / 'index.html'}"
        assert out[4] == f"uet plugfest: 3 package(s) in the history; site {story['site'] / 'index.html'}"

    def test_the_database_holds_each_package_its_cells_and_counts(self, story, made):
        rows, commit = story["steps"]["provider"].rows, suite_identity.commit()
        expected = []
        for key, lab, source in (("a", "Lab A", "package"), ("b", "Lab B", "package"), ("c", "Lab C", "ingest option")):
            package, tree = made[key]
            expected.append((sha(package), package.name, lab, source, commit, started_text(tree), "VALID",
                             f"evidence/{sha(package)[:16]}", None))
        assert rows["packages"] == expected
        assert rows["cells"] == sorted(
            (sha(package), c["id"], c["initiator"], c["target"], build_text(tree, c["initiator"]),
             build_text(tree, c["target"]), f"cells/{c['id']}.html") for package, tree in made.values() for c in cells_of(tree))
        assert rows["counts"] == sorted(
            (sha(package), c["id"], v, n) for package, tree in made.values() for c in cells_of(tree)
            for v, n in cell_counts(tree, c["initiator"], c["target"]).items())
        assert rows["runs"] == [(0,)]   # the history's runs are its own; the plugfest's sit beside them

    def test_the_same_package_sent_again_is_de_duplicated_and_changes_no_row(self, story, made):
        step, before = story["steps"]["resend"], story["steps"]["provider"].rows
        package = made["a"][0]
        assert (step.proc.returncode, step.proc.stderr, step.rows) == (0, "", before)
        assert step.proc.stdout.splitlines()[0] == (
            f"uet plugfest: {package}: de-duplicated: the same package (SHA-256 {sha(package)[:16]}) as {package.name} "
            f"of lab Lab A, ingested {story['now'].isoformat(timespec='seconds')}: nothing recorded")

    def test_a_package_altered_by_one_byte_is_refused_and_nothing_is_recorded(self, story):
        step, before = story["steps"]["tampered"], story["steps"]["resend"].rows
        package = story["top"] / "tampered.tar.zst"
        assert (step.proc.returncode, step.rows) == (1, before)
        assert step.proc.stderr == (
            f"uet plugfest: refused {package}: verify: INVALID: 1 finding(s) (integrity): [integrity] member "
            f"'run/summary.txt' does not match its SHA-256 in SHA256SUMS (altered); nothing recorded\n")
        assert [p.name for p in (story["site"] / "evidence").iterdir() if p.name.startswith(".ingest-")] == []

    def test_a_file_that_is_not_a_package_exits_2_naming_it(self, story):
        step, before = story["steps"]["not a package"], story["steps"]["resend"].rows
        notes = story["top"] / "notes.txt"
        assert (step.proc.returncode, step.rows) == (2, before)
        assert step.proc.stderr.startswith(f"uet plugfest: refused {notes}: not a package: {notes}: not zstd-compressed data")
        assert step.proc.stderr.endswith("; nothing recorded\n")

    def test_an_older_suite_commit_of_another_lab_sits_beside_the_first(self, story, made, older_commit):
        step, before = story["steps"]["older commit"], story["steps"]["not a package"].rows
        package = story["top"] / "older.tar.zst"
        assert (step.proc.returncode, step.proc.stderr) == (0, "")
        assert step.proc.stdout.splitlines()[0] == (
            f"uet plugfest: {package}: accepted: lab Lab D, suite {older_commit[:12]}, {I_SOFT} → {I_SOFT}, "
            f"{I_PERS} → {I_PERS}, {I_SOFT} → {I_PERS}, certified "
            f"{started_text(made['a'][1])}; VALID, with 1 caveat(s); evidence "
            f"{story['site'] / 'evidence' / sha(package)[:16]}")
        assert step.rows["packages"] == before["packages"] + [
            (sha(package), "older.tar.zst", "Lab D", "package", older_commit, started_text(made["a"][1]),
             "VALID, with 1 caveat(s)", f"evidence/{sha(package)[:16]}", None)]

    def test_a_later_certification_of_the_same_lab_commit_and_builds_supersedes_the_first(self, story, made):
        step, before = story["steps"]["later certification"], story["steps"]["older commit"].rows
        package, first = story["top"] / "later.tar.zst", made["a"][0]
        assert (step.proc.returncode, step.proc.stderr) == (0, "")
        assert step.proc.stdout.splitlines()[0].endswith(
            f"; it supersedes {sha(first)[:16]} (the same lab, suite commit and builds, certified earlier)")
        superseded = [r for r in step.rows["packages"] if r[-1] is not None]
        assert superseded == [before["packages"][0][:-1] + (sha(package),)] and before["packages"][0][0] == sha(first)
        assert len(step.rows["packages"]) == len(before["packages"]) + 1


class TestSite:
    def test_rows_and_columns_are_the_implementations_in_order(self, story, dom_of):
        dom = dom_of(story["site"] / "index.html")
        names = [I_PERS, I_SOFT, I_HPC]
        assert (dom.columns, dom.rows, list(dom.cells)) == (names, names, [(i, t) for i in names for t in names])

    def test_each_cell_shows_its_counts_age_and_markings(self, story, made, older_commit, dom_of):
        """Lab A's package is superseded by its later certification (the same counts), which sits with Lab D's
        of an older suite commit (the same counts again) in every cell of that pair's run."""
        dom = dom_of(story["site"] / "index.html")
        head = suite_identity.commit()[:12]
        a, b, c = made["a"][1], made["b"][1], made["c"][1]
        stale = f"stale: it rests on suite commit {older_commit[:12]}, older than the newest ingested, {head}"
        mixed = f"mixed: its packages differ in suite commit ({', '.join(sorted([older_commit[:12], head]))})"
        older = {"stale": stale, "mixed": mixed}
        shown = {k: (c["attrs"].get("data-packages"), c["attrs"].get("data-stale"), c["attrs"].get("data-mixed"),
                     c["attrs"].get("data-age"), c["counts"], c["marks"]) for k, c in dom.cells.items()
                 if c["attrs"]["data-packages"] != "0"}
        twice = lambda i, t: summed(cell_counts(a, i, t), cell_counts(a, i, t))   # noqa: E731
        assert shown == {
            (I_PERS, I_PERS): ("3", "yes", "yes", "3", summed(cell_counts(b, I_PERS, I_PERS), twice(I_PERS, I_PERS)), older),
            (I_PERS, I_SOFT): ("1", "no", "no", "3", cell_counts(b, I_PERS, I_SOFT), {}),
            (I_SOFT, I_PERS): ("2", "yes", "yes", "3", twice(I_SOFT, I_PERS), older),
            (I_SOFT, I_SOFT): ("3", "yes", "yes", "3", summed(cell_counts(b, I_SOFT, I_SOFT), twice(I_SOFT, I_SOFT)), older),
            (I_HPC, I_HPC): ("1", "no", "no", "3", cell_counts(c, I_HPC, I_HPC), {})}
        assert len(dom.cells) - len(shown) == 4   # the pairs no package covers say so

    def test_every_link_resolves_to_evidence_that_exists(self, story, made, dom_of):
        dom = dom_of(story["site"] / "index.html")
        links = [(kind, href) for c in dom.cells.values() for kind, hrefs in c["links"].items() for href in hrefs]
        assert sorted({kind for kind, _ in links}) == ["evidence", "package", "verification"]
        assert len(links) == 3 * 10 + 3    # ten counted packages of cells, and the superseded one's report in 3
        missing = [href for _, href in links if not (story["site"] / href).is_file()]
        assert missing == []
        b = made["b"][0]
        assert dom.cells[(I_PERS, I_SOFT)]["links"] == {
            "evidence": [f"evidence/{sha(b)[:16]}/members/run/cells/{I_PERS}__{I_SOFT}.html"],
            "verification": [f"evidence/{sha(b)[:16]}/verification.txt"],
            "package": [f"evidence/{sha(b)[:16]}/package.tar.zst"]}
        assert (story["site"] / f"evidence/{sha(b)[:16]}/package.tar.zst").read_bytes() == b.read_bytes()

    def test_a_page_the_lab_wrote_is_not_published_but_rendered_again(self, story):
        later = sha(story["top"] / "later.tar.zst")[:16]
        page = (story["site"] / "evidence" / later / "members" / "run" / "index.html").read_text()
        assert (story["top"] / "later" / "run" / "index.html").read_text() == SCRIPT_PAGE
        assert "<script" not in page and 'id="summary"' in page

    def test_a_cell_older_than_the_threshold_is_stale_by_age(self, story, older_commit, dom_of):
        step = story["steps"]["render aged"]
        assert (step.proc.returncode, step.proc.stderr) == (0, "")
        dom = dom_of(story["aged"] / "index.html")
        by_age = f"its oldest package was certified 91 days ago, more than {plugfest_view.STALE_AFTER_DAYS}"
        head = suite_identity.commit()[:12]
        also = f"; it rests on suite commit {older_commit[:12]}, older than the newest ingested, {head}"
        assert {k: (c["attrs"].get("data-age"), c["marks"].get("stale")) for k, c in dom.cells.items()
                if c["attrs"]["data-packages"] != "0"} == {
            (I_PERS, I_PERS): ("91", f"stale: {by_age}{also}"), (I_PERS, I_SOFT): ("91", f"stale: {by_age}"),
            (I_SOFT, I_PERS): ("91", f"stale: {by_age}{also}"), (I_SOFT, I_SOFT): ("91", f"stale: {by_age}{also}"),
            (I_HPC, I_HPC): ("91", f"stale: {by_age}")}


class TestSchema:
    def test_a_version_1_history_is_upgraded_in_place_keeping_its_runs(self, tmp_path):
        db = tmp_path / "h.sqlite"
        con = sqlite3.connect(db)
        con.executescript(history_index.RUN_SCHEMA)
        con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        con.execute("INSERT INTO runs (run_id, folder, results_sha256, partial, flaky) VALUES ('r1', '/x', 'h', 0, 0)")
        con.commit()
        con.close()
        history_index.connect(db).close()
        con = sqlite3.connect(db)
        try:
            assert con.execute("SELECT value FROM meta").fetchall() == [("2",)]
            assert con.execute("SELECT run_id FROM runs").fetchall() == [("r1",)]
            assert con.execute("SELECT count(*) FROM plugfest_packages").fetchall() == [(0,)]
        finally:
            con.close()

    def test_a_version_1_history_with_objects_of_its_own_is_refused_unread(self, tmp_path):
        db = tmp_path / "h.sqlite"
        con = sqlite3.connect(db)
        con.executescript(history_index.RUN_SCHEMA + "CREATE VIEW extra AS SELECT * FROM runs;")
        con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        con.commit()
        con.close()
        with pytest.raises(history_index.SchemaMismatch) as caught:
            history_index.connect(db)
        assert str(caught.value) == (f"{db}: schema version 1, this suite reads 2 (index into a new --db, or delete it "
                                     "to rebuild from the run folders)")


class TestRefusedProvenanceAndACrashBetween:
    @pytest.fixture
    def ingest(self, build_dir, tmp_path):
        env = dict(os.environ, PYTHONPATH=str(REPO), UET_BUILD=str(build_dir))

        def run(*args, action="ingest"):
            return subprocess.run([sys.executable, "-m", "harness.commands.guard", "./uet plugfest",
                                   "harness.plugfest.ingest", action, *map(str, args), "--out", str(tmp_path / "site"),
                                   "--db", str(tmp_path / "h.sqlite")], cwd=REPO, env=env, capture_output=True,
                                  text=True, timeout=1800)
        return run

    def test_a_package_without_a_lab_needs_one(self, made, ingest, tmp_path):
        package = made["c"][0]
        run = ingest(package)
        assert (run.returncode, run.stderr) == (2, f"uet plugfest: refused {package}: it names no lab (made without "
                                                   "./uet certify --lab): give --lab NAME; nothing recorded\n")
        assert rows_of(tmp_path / "h.sqlite")["packages"] == []
        assert [p.name for p in (tmp_path / "site" / "evidence").iterdir()] == []

    def test_a_lab_given_against_the_packages_own_is_refused(self, made, ingest, tmp_path):
        package = made["a"][0]
        run = ingest(package, "--lab", "Lab Z")
        assert (run.returncode, run.stderr) == (2, f"uet plugfest: refused {package}: the package says it comes from "
                                                   "lab 'Lab A', not 'Lab Z' (--lab); nothing recorded\n")
        assert rows_of(tmp_path / "h.sqlite")["packages"] == []

    def test_accepted_means_recorded_and_the_next_render_catches_up(self, made, ingest, tmp_path, dom_of):
        """The pages cannot be written (a folder where index.html goes): the package is recorded all the same,
        and once they can be, render shows it."""
        package, site = made["c"][0], tmp_path / "site"
        (site / "index.html").mkdir(parents=True)
        run = ingest(package, "--lab", "Lab C")
        assert run.returncode == 2 and run.stdout.startswith(f"uet plugfest: {package}: accepted: lab Lab C (by --lab)")
        assert run.stderr.startswith(f"uet plugfest: cannot write the site into {site}: ")
        assert [r[0] for r in rows_of(tmp_path / "h.sqlite")["packages"]] == [sha(package)]
        (site / "index.html").rmdir()
        run = ingest(action="render")
        assert (run.returncode, run.stdout) == (0, f"uet plugfest: 1 package(s) in the history; site {site / 'index.html'}\n")
        dom = dom_of(site / "index.html")
        assert {k: c["attrs"]["data-packages"] for k, c in dom.cells.items()} == {(I_HPC, I_HPC): "1"}


class TestThePackageIsReadOnce:
    def test_a_file_replaced_while_it_is_ingested_leaves_what_was_hashed_verified_and_kept(self, made, build_dir,
                                                                                          tmp_path, monkeypatch):
        from harness.certify import verify as verify_mod
        from harness.plugfest import ingest
        package = tmp_path / "submitted.tar.zst"
        shutil.copyfile(made["a"][0], package)
        original = package.read_bytes()
        real = verify_mod.verify

        def replaced_meanwhile(args, into):
            shutil.copyfile(made["b"][0], package)   # another package under the same name, mid-ingest
            return real(args, into=into)
        monkeypatch.setattr(verify_mod, "verify", replaced_meanwhile)
        db = history_index.open_index(tmp_path / "h.sqlite")
        try:
            line = ingest.ingest_one(db, package, argparse.Namespace(out=tmp_path / "site", build=build_dir, lab=None),
                                     datetime.datetime.now(datetime.timezone.utc))
        finally:
            db.close()
        digest = hashlib.sha256(original).hexdigest()
        assert line.startswith("accepted: lab Lab A, suite ") and f"{I_SOFT} → {I_PERS}" in line, line
        assert [r[0] for r in rows_of(tmp_path / "h.sqlite")["packages"]] == [digest]
        kept = tmp_path / "site" / plugfest_view.evidence_folder(digest) / plugfest_view.PACKAGE_COPY
        assert kept.read_bytes() == original
        assert (kept.parent / plugfest_view.VERIFICATION).read_text().startswith(f"package: {package}\n")


class TestWhatTheSitePublishes:
    @pytest.mark.parametrize("name,kept", [
        ("results.json", True), ("cells/softuet/msg.log", True), ("captures/a.pcap", True), ("SHA256SUMS", True),
        ("conformance/statement.xlsx", True), ("package.tar.zst", True),
        ("run/index.html", False), ("page.shtml", False), ("a.svgz", False), ("feed.rss", False), ("a.xht", False),
        ("junit.xml", False), ("x.mht", False), ("LOOK.HTML", False)])
    def test_only_data_a_browser_shows_as_text_or_downloads(self, name, kept):
        from harness.plugfest.ingest import published
        assert published(pathlib.Path(name)) is kept
