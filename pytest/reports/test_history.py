"""./uet history (harness/trends/history.py): the SQLite index of run folders and the trend site, from synthetic
results.json files with known values."""
import os
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import synthetic_results as syn
from harness.results.results import read_results_json, write_results_json
from harness.trends import history_index
REPO = syn.pathlib.Path(__file__).resolve().parents[2]
FLIPPED = syn.cell_id(syn.FULL, syn.FULL) + "/mr/Mr.KeyFormat/rdm"   # pass in run 1 and 3, fail in run 2


def write_run(runs_dir, n, flip=False, spec="1.0.1"):
    """Run n of a history: the synthetic run started n hours in, taking 100 × n seconds."""
    doc = syn.results_document()
    run_id = "20261125-%02d00-s%d" % (n, n)
    doc["run_info"].update(run_id=run_id, seed=n, started="2026-11-25T%02d:00:00Z" % n, seconds=100.0 * n,
                           spec_version=spec)
    doc["coverage"] = dict(doc["coverage"], covered_observable=n, observable=8)
    if flip:
        next(r for r in doc["results"] if r["id"] == FLIPPED)["verdict"] = "fail"
    folder = runs_dir / run_id
    folder.mkdir(parents=True)
    write_results_json(doc, folder / "results.json")
    (folder / "index.html").write_text("<html><title>%s</title></html>" % run_id)
    return folder


def history(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "harness.trends.history", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def runs_dir(tmp_path):
    runs = tmp_path / "runs"
    for n, flip in ((1, False), (2, True), (3, False)):
        write_run(runs, n, flip)
    return runs


def rows(db, sql):
    con = sqlite3.connect(str(db))
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


class TestIndex:
    def test_counts_per_provider_cell_and_profile(self):
        counts = history_index.scoped_counts(syn.results_document())
        total = lambda c: sum(c.values())   # noqa: E731
        assert counts[("run", "all")] == {k: v for k, v in syn.EXPECTED_COUNTS.items() if k != "total"}
        # a manifest counts the cells it is on either side of: FULL 3 + 4 + 3, BASE 4 + 3 + 3
        assert total(counts[("provider", syn.FULL)]) == 10 and total(counts[("provider", syn.BASE)]) == 10
        assert counts[("provider", syn.FULL)]["fail"] == 1 and counts[("provider", syn.BASE)]["error"] == 1
        assert total(counts[("cell", syn.cell_id(syn.BASE, syn.BASE))]) == 3
        # every cell has a side claiming ai_base; ai_full and hpc only FULL's cells
        assert total(counts[("profile", "ai_base")]) == 13 and total(counts[("profile", "hpc")]) == 10

    def test_reindexing_is_idempotent_and_a_changed_run_is_replaced(self, runs_dir, tmp_path):
        db = tmp_path / "h.sqlite"
        first = history("--db", db, "--out", tmp_path / "site", runs_dir)
        assert first.returncode == 0, first.stderr
        assert "3 run(s) indexed (3 added, 0 updated, 0 unchanged, 0 skipped)" in first.stdout
        before = rows(db, "SELECT * FROM counts ORDER BY run_id, scope, key, verdict")
        site = (tmp_path / "site" / "index.html").read_text()
        again = history("--db", db, "--out", tmp_path / "site", runs_dir, runs_dir / "20261125-0200-s2")
        assert "(0 added, 0 updated, 4 unchanged, 0 skipped)" in again.stdout
        assert rows(db, "SELECT * FROM counts ORDER BY run_id, scope, key, verdict") == before
        assert (tmp_path / "site" / "index.html").read_text() == site   # deterministic
        doc = read_results_json(runs_dir / "20261125-0300-s3")[1]
        doc["results"][0]["verdict"] = "error"
        write_results_json(doc, runs_dir / "20261125-0300-s3" / "results.json")
        third = history("--db", db, "--out", tmp_path / "site", runs_dir)
        assert "(0 added, 1 updated, 2 unchanged, 0 skipped)" in third.stdout
        assert rows(db, "SELECT n FROM counts WHERE run_id = '20261125-0300-s3' AND scope = 'run' "
                        "AND verdict = 'error'") == [(2,)]
        assert rows(db, "SELECT value FROM meta") == [(str(history_index.SCHEMA_VERSION),)]

    def test_a_broken_run_folder_is_named_and_skipped(self, runs_dir, tmp_path):
        (runs_dir / "cut-short").mkdir()
        (runs_dir / "cut-short" / "results.json").write_text('{"format": 1, "run_info": ')
        (runs_dir / "not-results").mkdir()
        (runs_dir / "not-results" / "results.json").write_text('[1, 2]')
        (runs_dir / "odd-shape").mkdir()
        (runs_dir / "odd-shape" / "results.json").write_text(
            '{"run_info": {"run_id": "x", "manifests": [7]}, "results": [{"cell": ["a"]}]}')
        (runs_dir / "empty").mkdir()
        (runs_dir / "latest").symlink_to("20261125-0100-s1")
        proc = history("--db", tmp_path / "h.sqlite", "--out", tmp_path / "site", runs_dir)
        assert proc.returncode == 0
        assert "3 run(s) indexed (3 added, 0 updated, 0 unchanged, 4 skipped)" in proc.stdout
        err = proc.stderr.splitlines()
        assert len(err) == 4
        assert any("odd-shape/results.json: results.0: 'id' is a required property: not a results.json" in line
                   for line in err)
        assert any("cut-short/results.json: not valid JSON" in line for line in err)
        assert any("not-results/results.json: (top level): a list where a mapping is wanted" in line for line in err)
        assert any("empty/results.json: cannot read: No such file or directory" in line for line in err)
        assert rows(tmp_path / "h.sqlite", "SELECT count(*) FROM runs WHERE run_id = 'x'") == [(0,)]

    def test_bad_usage_exits_2_naming_the_thing(self, tmp_path, runs_dir):
        proc = history("--out", tmp_path / "site", tmp_path / "nowhere")
        assert proc.returncode == 2 and "no such folder: %s" % (tmp_path / "nowhere") in proc.stderr
        db = tmp_path / "old.sqlite"
        con = sqlite3.connect(str(db))
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        con.execute("INSERT INTO meta VALUES ('schema_version', '0')")
        con.commit()
        con.close()
        proc = history("--db", db, "--out", tmp_path / "site", runs_dir)
        assert proc.returncode == 2 and "%s: schema version 0, this suite reads %d" % (db, history_index.SCHEMA_VERSION) in proc.stderr
        (tmp_path / "junk.sqlite").write_text("not a database at all, just text" * 10)
        proc = history("--db", tmp_path / "junk.sqlite", "--out", tmp_path / "site", runs_dir)
        assert proc.returncode == 2 and "junk.sqlite: not a history database" in proc.stderr

    def test_flaky_and_expectation_fields_are_kept_when_present(self, tmp_path):
        folder = write_run(tmp_path / "runs", 4)
        doc = read_results_json(folder)[1]
        doc["results"][0]["flaky"] = True
        doc["results"][1]["classification"] = "flaky"
        doc["results"][2]["expectation"] = {"verdict": "fail", "why": "known"}
        doc["results"][3]["verdict"] = "flaky"                 # --rerun-failures' verdict
        doc["results"][4]["expectation"] = {"entry": 0, "match": "*", "expect": "fail",  # --expectations' outcome
                                            "status": "expected_fail"}
        write_results_json(doc, folder / "results.json")
        db = tmp_path / "h.sqlite"
        con = history_index.connect(db)
        assert history_index.index_run(con, folder) == "added"
        con.close()
        assert rows(db, "SELECT flaky FROM runs") == [(3,)]
        assert rows(db, "SELECT n FROM counts WHERE scope = 'run' AND verdict = 'flaky'") == [(1,)]
        assert sorted(rows(db, "SELECT expectation FROM results WHERE expectation IS NOT NULL")) == [
            ('{"entry": 0, "expect": "fail", "match": "*", "status": "expected_fail"}',),
            ('{"verdict": "fail", "why": "known"}',)]


class TestSite:
    @pytest.fixture
    def site(self, runs_dir, tmp_path):
        proc = history("--db", tmp_path / "h.sqlite", "--out", tmp_path / "site", runs_dir)
        assert proc.returncode == 0, proc.stderr
        return tmp_path / "site"

    def test_every_bar_and_point_links_to_its_run_relatively(self, site):
        root = ET.parse(site / "index.html").getroot()
        hrefs = [a.get("href") for a in root.iter("{http://www.w3.org/2000/svg}a")]
        # overall, coverage and time: 3 runs each; 2 providers and 3 profiles: 3 bars each
        assert len(hrefs) == 3 * 3 + 5 * 3
        assert set(hrefs) == {"../runs/20261125-0%d00-s%d/index.html" % (n, n) for n in (1, 2, 3)}
        for href in set(hrefs):
            assert (site / href).is_file()

    def test_the_bars_titles_carry_the_counts(self, site):
        root = ET.parse(site / "index.html").getroot()
        titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
        assert "20261125-0200-s2 (spec 1.0.1): 5 pass, 2 fail, 3 not applicable, 1 warning, 1 error, 1 timeout" \
            in titles
        assert "20261125-0300-s3: 300 s (run time)" in titles
        assert "20261125-0100-s1: 12% of the observable statements covered" in titles   # 1 of 8

    def test_the_run_table_lists_runs_newest_first_with_the_changed_verdict(self, site):
        root = ET.parse(site / "index.html").getroot()
        runs = [tr for tr in root.iter("tr") if tr.get("data-run")]
        assert [tr.get("data-run") for tr in runs] == ["20261125-0300-s3", "20261125-0200-s2", "20261125-0100-s1"]
        changes = lambda tr: [" ".join("".join(li.itertext()).split()) for li in tr.iter("li")]   # noqa: E731
        assert changes(runs[0]) == ["%s: fail → pass" % FLIPPED]
        assert changes(runs[1]) == ["%s: pass → fail" % FLIPPED]
        assert changes(runs[2]) == []

    def test_a_change_is_against_the_latest_run_that_had_the_result(self, tmp_path):
        runs = tmp_path / "runs"
        write_run(runs, 1, flip=True)
        other = write_run(runs, 2)   # a run of other cells between: none of run 1's result ids
        doc = read_results_json(other)[1]
        for r in doc["results"]:
            r["id"] = "other/" + r["id"]
        write_results_json(doc, other / "results.json")
        write_run(runs, 3)
        assert history("--db", tmp_path / "h.sqlite", "--out", tmp_path / "site", runs).returncode == 0
        root = ET.parse(tmp_path / "site" / "index.html").getroot()
        changed = {tr.get("data-run"): [" ".join("".join(li.itertext()).split()) for li in tr.iter("li")]
                   for tr in root.iter("tr") if tr.get("data-run")}
        assert changed == {"20261125-0100-s1": [], "20261125-0200-s2": [],
                           "20261125-0300-s3": ["%s: fail → pass" % FLIPPED]}

    def test_the_cells_page_has_a_plot_per_cell(self, site):
        root = ET.parse(site / "cells.html").getroot()
        keys = [f.get("data-key") for f in root.iter("figure")]
        assert keys == sorted(syn.cell_id(i, t) for i, t in syn.CELL_RESULTS)
