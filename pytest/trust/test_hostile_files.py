"""Issue 34: the files a user hands the suite and the folders a user points it at.

- Finding 5: a manifest's `extends:`, `--provider` and `--pair` named a root-only file and the schema error
  printed its lines. A problem now names the file, the key and what is wrong, never the content.
- Finding 9: `./uet history --out` and `./uet compare --html` wrote through links planted in a folder of
  another user. Every page is now written to a private temporary file and renamed into place
  (harness/files/output_files.py), and a folder another user controls is refused (exit 2, naming it).
- Low: hostile expectations files and run folders (an alias bomb, deep nesting, /dev/zero, a FIFO, ids that
  are lists, a view in the history database) are exit 2 or a skipped folder naming the problem; escapes
  from a run folder reach the terminal and the pages written visibly; `manifest init --force` no longer
  writes through a temporary name another user can guess; a full disk at report time is exit 3 naming the
  file and the disk and leaves an index.html that says the report is partial; two runs of one seed in one
  second get folders of their own.
"""
import datetime
import json
import os
import pathlib
import re
import resource
import sqlite3
import types

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.inputs import fi_info_text, manifest_init, provider_probe  # noqa: E402

from harness.trends import history_index
from harness.inputs import manifest as manifest_mod  # noqa: E402
from harness.run import execute, run_suite  # noqa: E402
from harness.commands import manifest as manifest_options  # noqa: E402
from harness.results.results import Result  # noqa: E402

# Lines as /etc/shadow and /etc/passwd hold them; the secret parts must never reach the output.
SHADOW = ("root:$y$j9T$SecretSaltOfRoot$SecretHashOfRootSecretHashOfRoot:20228:0:99999:7:::\n"
          "svc:$y$j9T$SecretSaltOfSvc$SecretHashOfSvc:20263:0:99999:7:::\n")
PASSWD = "root:x:0:0:SecretGecosOfRoot:/root:/bin/bash\nsvc:x:1:1:SecretGecosOfSvc:/srv:/bin/sh\n"
SECRET = "Secret"
ROOT_ONLY = 0o600
NOT_PLAIN = "unknown keys: 2 keys that are not plain names"
PAIR_KEYS = "(keys: provider | initiator and target | matrix, and placement)"
NOBODY_OWNS = "belongs to nobody (uid 65534), another user: the suite does not write into a folder someone else " \
              "controls (choose a folder of your own)"


@pytest.fixture
def root_only(tmp_path):
    """root_only(name, text) -> a file only root may read."""
    def make(name, text):
        path = tmp_path / name
        path.write_text(text)
        path.chmod(ROOT_ONLY)
        return path
    return make


class TestNoContentInProblems:
    """Finding 5. Before: every line of the file in the schema error ("Additional properties are not allowed
    ('root:$y$...' ...)"), or the value and the YAML line around a syntax error."""

    def test_extends_names_a_root_only_file_not_its_lines(self, root_only, tmp_path, cmd_guarded):
        shadow = root_only("shadow", SHADOW)
        manifest = tmp_path / "vendor.yaml"
        manifest.write_text(f"extends: {shadow}\nprovider: udp\n")
        run = cmd_guarded("./uet manifest", "harness.inputs.manifest", "check", manifest)
        assert (run.returncode, run.stdout, run.stderr) == (1, "", f"{shadow}: (top level): {NOT_PLAIN}\n")

    def test_provider_names_a_root_only_file_not_its_lines(self, root_only, cmd_guarded):
        shadow = root_only("shadow", SHADOW)
        run = cmd_guarded("./uet run", "harness.run.run_suite", "--check-usage", "--provider", shadow)
        assert (run.returncode, run.stderr) == (2, f"uet run: bad manifest:\n  {shadow}: (top level): {NOT_PLAIN}\n")

    def test_pair_names_the_file_not_its_lines(self, root_only, cmd_guarded):
        passwd = root_only("passwd", PASSWD)
        run = cmd_guarded("./uet run", "harness.run.run_suite", "--check-usage", "--pair", passwd)
        assert run.returncode == 2 and SECRET not in run.stderr
        assert run.stderr.splitlines()[-1] == (
            f"./uet run: error: the pair file {passwd}: (top level): a string where a mapping is wanted; (top level): "
            f"a string that is none of the forms the schema allows here {PAIR_KEYS}")

    def test_a_wrong_value_is_described_by_its_type(self, root_only, tmp_path, cmd_guarded):
        base = root_only("base.yaml", "provider: udp\nuet: SecretTokenOfRoot\nprofiles: []\nendpoint_types: [rdm]\n")
        manifest = tmp_path / "vendor.yaml"
        manifest.write_text(f"extends: {base}\n")
        run = cmd_guarded("./uet manifest", "harness.inputs.manifest", "check", manifest)
        assert (run.returncode, run.stderr) == (1, f"{base}: uet: a string where true or false is wanted\n")

    def test_a_yaml_error_says_where_not_what(self, root_only, tmp_path, cmd_guarded):
        base = root_only("base.yaml", "provider: udp\nuet: [SecretTokenOfRoot\n")
        manifest = tmp_path / "vendor.yaml"
        manifest.write_text(f"extends: {base}\n")
        run = cmd_guarded("./uet manifest", "harness.inputs.manifest", "check", manifest)
        assert (run.returncode, run.stderr) == (
            1, f"{base}: not valid YAML at line 3, column 1: expected … or …, but got …\n")


def alias_bomb() -> str:
    """A "billion laughs" where the expectations list belongs: 10^9 values from a few hundred bytes."""
    lines = ["expectations:", "  - &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"  - &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def hostile_file(tmp_path):
    """hostile_file(kind, name) -> path of a file of that kind (a FIFO, /dev/zero behind a link, ...)."""
    def make(kind, name):
        path = tmp_path / name
        if kind == "an alias bomb":
            path.write_text(alias_bomb())
        elif kind == "100,000 nested [":
            path.write_text("[" * 100_000 + "]" * 100_000)
        elif kind == "/dev/zero":
            path.symlink_to("/dev/zero")
        elif kind == "a FIFO":
            os.mkfifo(path)
        else:
            raise AssertionError(kind)
        return path
    return make


class TestExpectationsFiles:
    """Before: the alias bomb was still being checked after 60 s, the nesting a RecursionError (exit 3),
    /dev/zero and a FIFO never ended. Now the manifests' reader reads them (harness/files/input_files.py)."""

    @pytest.mark.parametrize("kind,problem", [
        ("an alias bomb", f"expectations: more than {manifest_mod.MAX_VALUES} values or {manifest_mod.MAX_DEPTH} levels "
                          "of nesting once YAML aliases are expanded (an alias bomb, or an alias inside itself)"),
        ("100,000 nested [", "(top level): nested too deeply to read"),
        ("/dev/zero", "(top level): not a regular file: an expectations file is a YAML file"),
        ("a FIFO", "(top level): not a regular file: an expectations file is a YAML file"),
    ])
    def test_the_run_answers_exit_2_naming_the_problem(self, hostile_file, cmd_guarded, kind, problem):
        path = hostile_file(kind, "expectations.yaml")
        run = cmd_guarded("./uet run", "harness.run.run_suite", "--check-usage", "--expectations", path, timeout=60)
        assert run.returncode == 2
        assert run.stderr.splitlines()[-2:] == ["./uet run: error: bad expectations file:", f"  {path}: {problem}"]


def results(*pairs):
    return [Result("udp", "msg", "uet-cases-msg", case, verdict, reason=f"{verdict} because") for case, verdict in pairs]


RUN_PROBLEMS = [
    ("100,000 nested [", "(top level): nested too deeply to read"),
    ("a FIFO", "(top level): not a regular file: a results.json is a JSON file"),
    ("/dev/zero", "(top level): not a regular file: a results.json is a JSON file"),
    ("ids that are lists", "results.0.id: a list where a string is wanted: not a results.json "
                           "(reports/RESULTS-FORMAT.md)"),
]


@pytest.fixture
def runs(tmp_path, make_run, hostile_file):
    """runs(kind) -> (folder of runs, a good run, the hostile run): the good one written by the run's writers,
    the hostile one a run folder whose results.json is of `kind`."""
    def make(kind):
        folder = tmp_path / "runs"
        good = make_run(folder, "20261128-120000-s7", results(("Msg.A", "pass"), ("Msg.B", "pass")))
        if kind == "ids that are lists":
            bad = make_run(folder, "20261128-130000-s8", results(("Msg.A", "pass")))
            doc = json.loads((bad / "results.json").read_text())
            doc["results"][0]["id"] = ["udp", "msg", "Msg.A"]
            (bad / "results.json").write_text(json.dumps(doc))
        else:
            bad = folder / "20261128-130000-s8"
            bad.mkdir()
            hostile_file(kind, "hostile").rename(bad / "results.json")
        return folder, good, bad
    return make


class TestHostileRunFolders:
    """Before: compare raised (TypeError on a list id: exit 3) or never ended (a FIFO, /dev/zero until memory
    ran out), and history the same; now one reader of results.json (harness/results/results.py) names the problem."""

    @pytest.mark.parametrize("kind,problem", RUN_PROBLEMS)
    def test_compare_exits_2_naming_the_problem(self, runs, cmd_guarded, kind, problem):
        _, good, bad = runs(kind)
        run = cmd_guarded("./uet compare", "harness.trends.compare", good, bad, timeout=60)
        assert (run.returncode, run.stdout, run.stderr) == (
            2, "", f"uet compare: {bad / 'results.json'}: {problem} (give a run folder or its results.json)\n")

    @pytest.mark.parametrize("kind,problem", RUN_PROBLEMS)
    def test_history_skips_the_folder_naming_the_problem(self, runs, cmd_guarded, tmp_path, kind, problem):
        folder, good, bad = runs(kind)
        run = cmd_guarded("./uet history", "harness.trends.history", "--out", tmp_path / "site", folder, timeout=60)
        assert (run.returncode, run.stderr) == (0, f"history: skipped {bad}: {bad / 'results.json'}: {problem}\n")
        assert run.stdout.splitlines()[0] == f"history: added: {good}"
        assert (tmp_path / "site" / "index.html").is_file()

    def test_a_view_in_the_database_is_never_run(self, runs, cmd_guarded, tmp_path):
        # Before: "view runs is circularly defined" (OperationalError, exit 3) on the first query of runs.
        folder, _, _ = runs("ids that are lists")
        db = tmp_path / "h.sqlite"
        con = sqlite3.connect(db)
        con.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                          f"INSERT INTO meta VALUES ('schema_version', '{history_index.SCHEMA_VERSION}');"
                          "CREATE VIEW runs AS SELECT * FROM runs;")
        con.close()
        run = cmd_guarded("./uet history", "harness.trends.history", "--db", db, "--out", tmp_path / "site", folder,
                          timeout=60)
        assert (run.returncode, run.stderr) == (
            2, f"history: {db}: its tables, views or triggers are not those of schema version "
               f"{history_index.SCHEMA_VERSION} (reports/HISTORY-INDEX.md): not an index this suite wrote\n")

    def test_a_fifo_as_the_database_is_refused(self, runs, cmd_guarded, tmp_path):
        folder, _, _ = runs("ids that are lists")
        db = tmp_path / "h.sqlite"
        os.mkfifo(db)
        run = cmd_guarded("./uet history", "harness.trends.history", "--db", db, "--out", tmp_path / "site", folder,
                          timeout=60)
        assert (run.returncode, run.stderr) == (2, f"history: {db}: not a history database: not a regular file\n")


ESCAPES = "\x1b[2J\x1b]0;owned\x07"
SHOWN = "\\x1b[2J\\x1b]0;owned\\x07"


def with_escapes(folder: pathlib.Path) -> None:
    """Puts raw escapes into a run folder's results.json, as someone who made the folder could."""
    doc = json.loads((folder / "results.json").read_text())
    doc["run_info"]["run_id"] += ESCAPES
    for r in doc["results"]:
        r["id"] += ESCAPES
        r["reason"] = ESCAPES
    (folder / "results.json").write_text(json.dumps(doc))


class TestTerminalEscapes:
    """Before: the escapes went raw to the terminal (clearing it, retitling it) and into the pages."""

    def test_compare_shows_them_visibly(self, tmp_path, make_run, cmd_guarded):
        old = make_run(tmp_path / "runs", "old", results(("Msg.A", "pass")))
        new = make_run(tmp_path / "runs", "new", results(("Msg.A", "fail")))
        with_escapes(old)
        with_escapes(new)
        page = tmp_path / "compare.html"
        run = cmd_guarded("./uet compare", "harness.trends.compare", old, new, "--html", page)
        assert run.returncode == 1
        assert "\x1b" not in run.stdout
        assert f"  udp/msg/Msg.A{SHOWN}: pass -> fail: {SHOWN}" in run.stdout.splitlines()
        assert "\x1b" not in page.read_text() and f"udp/msg/Msg.A{SHOWN}" in page.read_text()

    def test_history_shows_them_visibly(self, tmp_path, make_run, cmd_guarded):
        runs = tmp_path / "runs"
        run_folder = make_run(runs, "20261128-120000-s7" + ESCAPES, results(("Msg.A", "pass")))
        with_escapes(run_folder)
        run = cmd_guarded("./uet history", "harness.trends.history", "--out", tmp_path / "site", runs)
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines()[0] == f"history: added: {runs}/20261128-120000-s7{SHOWN}"
        for page in ("index.html", "cells.html"):
            text = (tmp_path / "site" / page).read_text()
            assert "\x1b" not in text and "\x07" not in text
        assert f"20261128-120000-s7{SHOWN}{SHOWN}" in (tmp_path / "site" / "index.html").read_text()


def planted(folder: pathlib.Path, as_nobody, victim, *names: str) -> None:
    for name in names:
        as_nobody("ln", "-s", victim.path, folder / name)


class TestOutputFolders:
    """Finding 9. Before: root followed the links nobody planted and overwrote the victim."""

    def test_history_refuses_a_site_folder_nobody_owns(self, nobody_folder, as_nobody, victim, tmp_path, make_run,
                                                        cmd_guarded):
        planted(nobody_folder, as_nobody, victim, "index.html", "cells.html")
        make_run(tmp_path / "runs", "20261128-120000-s7", results(("Msg.A", "pass")))
        run = cmd_guarded("./uet history", "harness.trends.history", "--db", tmp_path / "h.sqlite", "--out", nobody_folder,
                          tmp_path / "runs")
        assert victim.untouched()
        assert (run.returncode, run.stderr) == (
            2, f"history: cannot write the site into {nobody_folder}: {nobody_folder} {NOBODY_OWNS}\n")

    def test_history_refuses_a_database_in_a_folder_nobody_owns(self, nobody_folder, tmp_path, make_run,
                                                                 cmd_guarded):
        make_run(tmp_path / "runs", "20261128-120000-s7", results(("Msg.A", "pass")))
        db = nobody_folder / "h.sqlite"
        run = cmd_guarded("./uet history", "harness.trends.history", "--db", db, "--out", tmp_path / "site",
                          tmp_path / "runs")
        assert (run.returncode, run.stderr) == (
            2, f"history: cannot write the database {db}: {nobody_folder} {NOBODY_OWNS}\n")
        assert os.listdir(nobody_folder) == []

    def test_compare_refuses_a_page_in_a_folder_nobody_owns(self, nobody_folder, as_nobody, victim, tmp_path,
                                                           make_run, cmd_guarded):
        planted(nobody_folder, as_nobody, victim, "compare.html")
        run_folder = make_run(tmp_path / "runs", "r", results(("Msg.A", "pass")))
        run = cmd_guarded("./uet compare", "harness.trends.compare", run_folder, run_folder, "--html",
                          nobody_folder / "compare.html")
        assert victim.untouched()
        assert (run.returncode, run.stderr) == (
            2, f"uet compare: {nobody_folder / 'compare.html'}: cannot be written: {nobody_folder} {NOBODY_OWNS}\n")

    def test_a_report_is_not_rendered_into_a_run_folder_nobody_owns(self, nobody_folder, as_nobody, victim,
                                                                      tmp_path, make_run, cmd_guarded):
        made = make_run(tmp_path / "runs", "r", results(("Msg.A", "pass")))
        (nobody_folder / "results.json").write_bytes((made / "results.json").read_bytes())
        planted(nobody_folder, as_nobody, victim, "index.html", "conformance.html")
        run = cmd_guarded("python3 -m reports", "reports.__main__", nobody_folder)
        assert victim.untouched()
        assert (run.returncode, run.stderr) == (
            2, f"reports: cannot write the report into {nobody_folder}: {nobody_folder} {NOBODY_OWNS}\n")

    def test_links_planted_in_a_shared_folder_are_replaced_not_followed(self, shared_folder, as_nobody, victim,
                                                                          tmp_path, make_run, cmd_guarded):
        planted(shared_folder, as_nobody, victim, "index.html", "cells.html", "compare.html")
        run_folder = make_run(tmp_path / "runs", "20261128-120000-s7", results(("Msg.A", "pass")))
        history = cmd_guarded("./uet history", "harness.trends.history", "--db", tmp_path / "h.sqlite", "--out",
                              shared_folder, tmp_path / "runs")
        compare = cmd_guarded("./uet compare", "harness.trends.compare", run_folder, run_folder, "--html",
                              shared_folder / "compare.html")
        assert victim.untouched()
        assert (history.returncode, history.stderr, compare.returncode, compare.stderr) == (0, "", 0, "")
        for name in ("index.html", "cells.html", "compare.html"):
            st = os.lstat(shared_folder / name)
            assert (st.st_uid, oct(st.st_mode)) == (0, "0o100644"), name

    def test_the_database_is_not_kept_in_a_shared_folder(self, shared_folder, tmp_path, make_run, cmd_guarded):
        # SQLite makes its journal beside the database, under a name anyone could take first
        make_run(tmp_path / "runs", "20261128-120000-s7", results(("Msg.A", "pass")))
        db = shared_folder / "h.sqlite"
        run = cmd_guarded("./uet history", "harness.trends.history", "--db", db, "--out", tmp_path / "site",
                          tmp_path / "runs")
        assert (run.returncode, run.stderr) == (
            2, f"history: cannot write the database {db}: {shared_folder} may be written by every user (mode 1777): "
               "the suite does not write into a folder someone else controls\n")


def softuet_probe() -> provider_probe.Probe:
    """What fi_info said of softuet (its captured answer), as provider_probe.probe returns it."""
    sample = (REPO / "pytest" / "harness" / "inputs" / "fi_info_samples" / "softuet-v.txt").read_text()
    offer = fi_info_text.summarize(fi_info_text.parse_verbose(sample), "softuet")
    return provider_probe.Probe(offer, "2.1.0", {"FI_EP_RDM": [0x55455400]}, {}, ["fi_info -p softuet -v"])


class TestManifestInit:
    """Before: --force wrote `.vendor.yaml.<pid>.tmp` and renamed it: a link of that name, planted by
    another user in the folder, had root write the starter manifest into the file it named."""

    @pytest.fixture
    def init(self, monkeypatch, capsys):
        monkeypatch.setattr(provider_probe, "probe", lambda provider, prefix, timeout, **_: softuet_probe())

        def run(*argv):
            rc = manifest_init.run(manifest_options.parse_init(["--provider", "softuet", *map(str, argv)]))
            return rc, capsys.readouterr().err
        return run

    def test_force_does_not_write_through_the_temporary_name(self, init, shared_folder, as_nobody, victim):
        out = shared_folder / "vendor.yaml"
        out.write_text("an older manifest\n")
        planted(shared_folder, as_nobody, victim, f".vendor.yaml.{os.getpid()}.tmp")
        assert init("-o", out, "--force") == (0, "")
        assert victim.untouched()
        assert out.read_text().startswith("# A starter manifest for provider softuet") and not out.is_symlink()

    def test_a_folder_nobody_owns_is_refused(self, init, nobody_folder):
        out = nobody_folder / "vendor.yaml"
        assert init("-o", out, "--force") == (2, f"manifest init: cannot write {out}: {nobody_folder} {NOBODY_OWNS}\n")
        assert os.listdir(nobody_folder) == []


class TestReportTime:
    def test_a_full_disk_is_exit_3_naming_the_file_and_leaves_a_page_saying_so(self, fake_build, tmp_path,
                                                                               cmd_guarded):
        # Before: a traceback ("failed unexpectedly: OSError", exit 3) and no index.html at all. A file size
        # limit stands in for the full disk: results.json (about 120 KB here) cannot be written whole.
        report = tmp_path / "runs"
        run = cmd_guarded("./uet run", "harness.run.run_suite", "--provider", "udp.yaml", "--same-host",
                          "--no-decode-check", "--build", fake_build, "--report", report, "--seed", "7", "--quiet",
                          limits=[(resource.RLIMIT_FSIZE, 64 << 10)])
        (run_dir,) = [p for p in report.iterdir() if p.name != "latest"]
        assert run.returncode == 3, run.stderr
        assert re.fullmatch(
            re.escape(f"uet run: the report could not be written: {run_dir / 'results.json'}: File too large (")
            + r"\d+ bytes free on the file system mounted at /[^ ]*\)"
            + re.escape(f"; the partial report is in {run_dir} (cells, index.html, junit.xml; its index.html says "
                        "the report is partial)\n"), run.stderr)
        index = (run_dir / "index.html").read_text()
        assert f"UET conformance run {run_dir.name}: report not written" in index
        assert "This run's report was not written whole" in index

    def test_two_runs_of_one_seed_in_one_second_get_a_folder_each(self, fake_build, tmp_path, monkeypatch, capsys):
        # Before: the second run ended with FileExistsError (exit 3).
        class Fixed(datetime.datetime):
            @classmethod
            def now(cls, tz=None):
                return cls(2026, 11, 28, 12, 0, 0, tzinfo=tz)
        monkeypatch.setattr(execute, "datetime", types.SimpleNamespace(datetime=Fixed,
                                                                         timezone=datetime.timezone))
        report = tmp_path / "runs"
        argv = ["--provider", "udp.yaml", "--same-host", "--no-decode-check", "--build", str(fake_build), "--report",
                str(report), "--seed", "7", "--quiet"]
        assert [run_suite.main(argv), run_suite.main(argv)] == [0, 0]
        assert sorted(p.name for p in report.iterdir()) == ["20261128-120000-s7", "20261128-120000-s7-2", "latest"]
        doc = json.loads((report / "20261128-120000-s7-2" / "results.json").read_text())
        assert doc["run_info"]["run_id"] == "20261128-120000-s7-2"
