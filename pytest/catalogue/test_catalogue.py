"""spec/catalogue.yaml and its tools: the real catalogue matches the digest's part K row for row, the loader
rejects broken catalogues with messages that name the entry, and harness.results.coverage counts the checks that
JUnit files link to statements."""
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.inputs import catalogue  # noqa: E402
from harness.results import coverage  # noqa: E402
from harness.results.results import Result, write_junit  # noqa: E402
DIGEST = REPO.parent / "shared" / "spec" / "uet-spec-digest.md"

UNCONFIRMED = ["2.2.5-b", "2.2.5.4.2-a", "2.2.5.4.3-a", "2.2.5.4.4-a"]
ROW_RE = re.compile(r"^(MUST NOT|MUST|SHOULD NOT|SHOULD|MAY|NOT REQUIRED|—)\s*(?:\((.*)\))?$")


def digest_rows():
    """[(id, level, level_note, applies_to, text)] from the table of part K."""
    if not DIGEST.exists():
        pytest.skip("the spec digest is not at %s" % DIGEST)
    lines = DIGEST.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("## K."))
    end = next(i for i, line in enumerate(lines) if line.startswith("## L."))
    rows = []
    for line in lines[start:end]:
        if line.startswith("| 2.2"):
            ident, level, applies, text = [c.strip() for c in line.split("|")[1:-1]]
            m = ROW_RE.match(level)
            assert m, "unreadable level %r in row %s" % (level, ident)
            rows.append((ident, "INFO" if m.group(1) == "—" else m.group(1), m.group(2), applies, text))
    return rows


def observable_musts(cat, section):
    """The observable MUST / MUST NOT statements of a section, by the catalogue's queries."""
    return [s for s in cat.by_section(section) if s.level in catalogue.ABSOLUTE_LEVELS and s.observable]


@pytest.fixture(scope="module")
def cat():
    return catalogue.load()


# The counts below are the digest's, recounted from its rows here (its own count line is inconsistent): the
# catalogue holds no copy of them, so a new row of part K is one new entry of spec/catalogue.yaml.
class TestRealCatalogue:
    def test_one_statement_per_row_of_the_digest(self, cat):
        rows = digest_rows()
        assert len(rows) > 200
        assert len(cat) == len(rows) == len(set(cat.ids))

    def test_level_counts_are_the_digest_rows(self, cat):
        rows = digest_rows()
        recount = collections.Counter(r[1] for r in rows)
        assert set(recount) == set(catalogue.LEVELS)
        assert cat.count_by_level() == {level: recount[level] for level in catalogue.LEVELS}
        assert len(cat.by_level("MUST", "MUST NOT")) == recount["MUST"] + recount["MUST NOT"]
        assert [s.id for s in cat.by_section("2.2.4")] == [r[0] for r in rows if r[0].startswith(("2.2.4-", "2.2.4."))]

    def test_rows_match_the_digest_in_order(self, cat):
        rows = digest_rows()
        assert [r[0] for r in rows] == cat.ids
        for (ident, level, note, applies, text), st in zip(rows, cat):
            assert (st.level, st.level_note, st.applies_to, st.text) == (level, note, applies, text), ident
            assert st.clause == ident.rsplit("-", 1)[0]

    def test_unconfirmed_levels_keep_their_flag(self, cat):
        flagged = [s.id for s in cat if s.level_unconfirmed]
        assert flagged == UNCONFIRMED
        assert cat.get("2.2.5.4.2-a").level_label == "MUST NOT (level?)"
        assert cat.get("2.2.5-b").level_label == "SHOULD (level?)"

    def test_profiles_and_actors_follow_applies_to(self, cat):
        assert cat.get("2.2-a").profiles == ("ai_base", "ai_full", "hpc")
        assert cat.get("2.2.5.4.2-b").profiles == ("ai_full", "hpc")
        assert cat.get("2.2.6-f").profiles == ("ai_base",)
        assert cat.get("2.2.4-a").actor == "privileged_entity"
        assert cat.get("2.2.4.1-h").actor == "kernel_driver"
        assert cat.get("2.2-b").actor == "vendor"
        assert cat.get("2.2.7-b").actor == "deployment"
        assert cat.get("2.2.2-e").condition == "scalable RX contexts supported"
        assert cat.get("2.2.4.2-b").condition == "fallback JobID allocation enabled"
        assert cat.get("2.2.5.4.4-b").condition.startswith("with atomics")
        for st in cat:
            if st.applies_to.startswith(("KMD", "PE")):
                assert st.actor in ("kernel_driver", "privileged_entity"), st.id

    def test_missing_tables_are_flagged(self, cat):
        assert cat.get("2.2.5.3.7-b").missing == ("Table 2-20",)
        for ident, table in (("2.2.6-f", "Table 2-29"), ("2.2.6-g", "Table 2-30"), ("2.2.6-h", "Table 2-31")):
            assert cat.get(ident).depends_on_missing and cat.get(ident).missing == (table,)
        assert not cat.get("2.2.5.3.4.1-a").depends_on_missing      # Table 2-13 is complete
        assert cat.get("2.2.5.3.4.1-a").tables == ("2-13",)
        assert "Figure 2-8" in cat.get("2.2.5.1-c").missing

    def test_check_kinds(self, cat):
        assert {cat.get(i).check for i in ("2.2.4.4-a", "2.2.4.4-b", "2.2.4.4-c")} == {"both"}
        assert cat.get("2.2.5.3.4.1-a").check == "api"
        assert {s.check for s in cat.by_clause("2.2.6") if s.level == "MUST"} == {"wire"}
        for st in cat:
            if st.actor in ("kernel_driver", "privileged_entity") and not st.observable:
                assert st.check_reason, st.id
            if st.actor == "kernel_driver" and "provider" not in st.other_actors:
                # A kernel driver's rule shows at the Control API (the provider's kernel-driver side talking to
                # the entity), or on the wire where it decides what the NIC sends (the keys of 2.2.9); one the
                # provider may apply instead (2.2.5.3.5.1-h/i) shows through libfabric too.
                assert st.check in ("not_observable", "control", "wire"), st.id
                if st.check == "wire":
                    assert st.clause == "2.2.9", st.id
            if st.level == "INFO":
                assert st.check == "not_observable", st.id
        # 2.2.4-a/b and 2.2.4.1-a/b/e are checked through the manifest's privileged entity (uet-cases-entity);
        # the Control API rows through the entity's trace (ControlApi.*).
        counts = cat.count_by_check()
        assert counts == {c: len(cat.by_check(c)) for c in catalogue.CHECKS} and sum(counts.values()) == len(cat)
        assert all(counts[c] for c in catalogue.CHECKS), counts
        assert {s.id for s in cat if s.check == "control"} == {
            "2.2-d", "2.2.11-a", "2.2.11-b", *(f"2.2.5.3.5.1-{x}" for x in "abdefgo"), *(f"2.2.9-{x}" for x in "dehi")}
        assert not any("later issue" in (s.check_reason or "") + (s.note or "") for s in cat)
        assert {cat.get(i).check for i in ("2.2.4-a", "2.2.4-b", "2.2.4.1-b", "2.2.4.1-e")} == {"api"}

    def test_queries(self, cat):
        assert all(s.section == "2.2.5" for s in cat.by_section("2.2.5"))
        assert [s.id for s in cat.by_clause("2.2.4.4")] == ["2.2.4.4-a", "2.2.4.4-b", "2.2.4.4-c"]
        hpc = {s.id for s in cat.by_profile("hpc")}
        assert "2.2.5.4.2-f" in hpc and "2.2.5.4.1.2-a" not in hpc
        assert cat.sections()[:3] == ["2.2", "2.2.2", "2.2.3"] and cat.sections()[-1] == "2.2.11"
        assert catalogue.section_of("2.2.10.4-m") == "2.2.10"
        with pytest.raises(KeyError, match="2.2.99-z"):
            cat.get("2.2.99-z")
        with pytest.raises(ValueError, match="unknown level"):
            cat.by_level("SHALL")
        with pytest.raises(ValueError, match="unknown profile"):
            cat.by_profile("ai_min")

    def test_cases_are_empty_lists_until_cases_exist(self, cat):
        data = yaml.safe_load((REPO / "spec" / "catalogue.yaml").read_text(encoding="utf-8"))
        assert all(entry["cases"] == [] for entry in data["statements"])


# A small valid catalogue; each test of the loader breaks one thing in it.
SMALL = textwrap.dedent("""\
    spec_tables:
      "Table 2-13": {status: complete}
      "Table 2-20": {status: missing}
    statements:
    - id: 2.2.4.4-b
      level: MUST
      profiles: [ai_base, ai_full, hpc]
      actor: provider
      clause: "2.2.4.4"
      text: "Direct method: ses.JobID is taken from the endpoint auth_key."
      check: both
      cases: []
    - id: 2.2.5.3.7-b
      level: MUST
      profiles: [ai_base, ai_full, hpc]
      actor: provider
      clause: "2.2.5.3.7"
      text: "Completion-counter support follows Table 2-20."
      tables: ["2-20"]
      depends_on_missing: true
      missing: ["Table 2-20"]
      check: api
      cases: []
    - id: 2.2.4.1-a
      level: MAY
      profiles: [ai_base, ai_full, hpc]
      actor: privileged_entity
      clause: "2.2.4.1"
      text: "The JobID may be allocated at job initialization."
      check: not_observable
      check_reason: "needs the privileged entity of a later issue"
      cases: []
    """)


def write(tmp_path, text):
    path = tmp_path / "catalogue.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def errors_of(tmp_path, text):
    with pytest.raises(catalogue.CatalogueError) as info:
        catalogue.load(write(tmp_path, text))
    return info.value.errors


class TestLoaderRejects:
    def test_the_small_catalogue_is_valid(self, tmp_path):
        cat = catalogue.load(write(tmp_path, SMALL))
        assert cat.ids == ["2.2.4.4-b", "2.2.5.3.7-b", "2.2.4.1-a"]
        assert cat.get("2.2.4.4-b").line == 5

    def test_duplicate_id(self, tmp_path):
        text = SMALL.replace("- id: 2.2.4.1-a", "- id: 2.2.4.4-b").replace('clause: "2.2.4.1"', 'clause: "2.2.4.4"')
        errors = errors_of(tmp_path, text)
        assert len(errors) == 1
        assert re.search(r"catalogue\.yaml:24: statement 2\.2\.4\.4-b \(entry 3\): duplicate id: "
                         r"already used by entry 1 \(line 5\)", errors[0]), errors

    def test_unknown_level(self, tmp_path):
        errors = errors_of(tmp_path, SMALL.replace("level: MAY", "level: SHALL"))
        assert errors == ["%s:24: statement 2.2.4.1-a (entry 3): unknown level 'SHALL' (allowed: %s)"
                          % (tmp_path / "catalogue.yaml", ", ".join(catalogue.LEVELS))]

    def test_not_observable_without_reason(self, tmp_path):
        text = SMALL.replace('  check_reason: "needs the privileged entity of a later issue"\n', "")
        errors = errors_of(tmp_path, text)
        assert errors == [e for e in errors if "2.2.4.1-a" in e] and len(errors) == 1
        assert "statement 2.2.4.1-a (entry 3): check is not_observable but check_reason is missing" in errors[0]

    def test_a_summary_of_counts_is_refused(self, tmp_path):
        # the counts are the statements' own (count_by_level): a hand-kept copy would be one more edit per row
        errors = errors_of(tmp_path, "summary: {total: 3, by_level: {MUST: 2, MAY: 1}}\n" + SMALL)
        assert errors == ["%s: unknown top-level key 'summary' (allowed: format, source, spec_tables, statements)"
                          % (tmp_path / "catalogue.yaml")]

    def test_bad_id_and_clause(self, tmp_path):
        errors = errors_of(tmp_path, SMALL.replace("- id: 2.2.4.4-b", "- id: 2.2.4.4-B"))
        assert any("statement 2.2.4.4-B (entry 1): id '2.2.4.4-B' does not match" in e for e in errors), errors
        errors = errors_of(tmp_path, SMALL.replace('clause: "2.2.4.4"', 'clause: "2.2.4"'))
        assert any("clause '2.2.4' does not match the id (expected '2.2.4.4')" in e for e in errors), errors

    def test_unknown_values_and_keys(self, tmp_path):
        text = SMALL.replace("actor: provider\n  clause: \"2.2.4.4\"", "actor: nic\n  clause: \"2.2.4.4\"", 1)
        text = text.replace("profiles: [ai_base, ai_full, hpc]\n  actor: privileged_entity",
                            "profiles: [ai_min]\n  actor: privileged_entity")
        text = text.replace("check: api", "check: api\n  check_reson: typo")
        errors = errors_of(tmp_path, text)
        assert any("2.2.4.4-b (entry 1): unknown actor 'nic'" in e for e in errors), errors
        assert any("2.2.4.1-a (entry 3): profiles: unknown value 'ai_min'" in e for e in errors), errors
        assert any("2.2.5.3.7-b (entry 2): unknown key 'check_reson'" in e for e in errors), errors

    def test_missing_disagrees_with_spec_tables(self, tmp_path):
        text = SMALL.replace('  depends_on_missing: true\n  missing: ["Table 2-20"]\n', "")
        errors = errors_of(tmp_path, text)
        assert any("2.2.5.3.7-b (entry 2): missing [] disagrees with spec_tables" in e for e in errors), errors

    def test_duplicate_yaml_key(self, tmp_path):
        errors = errors_of(tmp_path, SMALL.replace("level: MAY", "level: MAY\n  level: MUST"))
        assert len(errors) == 1 and "found duplicate key 'level'" in errors[0]

    def test_reason_on_an_observable_row(self, tmp_path):
        errors = errors_of(tmp_path, SMALL.replace("check: both", "check: both\n  check_reason: because"))
        assert any("2.2.4.4-b (entry 1): check_reason is only for not_observable rows" in e for e in errors)


GTEST_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="1" name="AllTests">
  <testsuite name="JobId" tests="3" failures="1">
    <testcase name="DirectMethodCarriesAuthKey" status="run" result="completed" classname="JobId">
      <properties>
        <property name="requirements" value="2.2.4.4-b, 2.2.4.1-q"/>
      </properties>
    </testcase>
    <testcase name="AnyJobIdBuffer" status="run" result="completed" classname="JobId">
      <properties>
        <property name="requirements" value="2.2.4.3.1-d"/>
      </properties>
      <failure message="boom"/>
    </testcase>
    <testcase name="NoRequirements" status="run" result="completed" classname="JobId"/>
  </testsuite>
</testsuites>
"""
PYTEST_XML = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="2">
<testcase classname="pytest.wire.test_modes.TestDelivery" name="test_dgram_uses_uud">
<properties><property name="requirements" value="2.2.6-a,2.2.99-z"/></properties></testcase>
<testcase classname="pytest.wire.test_modes.TestDelivery" name="test_kmd" requirements="2.2.4.1-h"/>
</testsuite></testsuites>
"""


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "harness.results.coverage", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))


class TestCoverage:
    @pytest.fixture()
    def junit(self, tmp_path):
        gtest = tmp_path / "gtest.xml"
        gtest.write_text(GTEST_XML, encoding="utf-8")
        py = tmp_path / "pytest.xml"
        py.write_text(PYTEST_XML, encoding="utf-8")
        return [gtest, py]

    def test_junit_requirements_are_counted(self, cat, junit):
        report = coverage.compute(cat, junit)
        covered = {i for i, s in report["statements"].items() if s["covered"]}
        assert covered == {"2.2.4.4-b", "2.2.4.1-q", "2.2.4.3.1-d", "2.2.6-a", "2.2.4.1-h"}
        assert report["covered"] == 5 and report["covered_observable"] == 4
        assert report["by_level"]["MUST"]["covered"] == 5
        assert report["by_section"]["2.2.4"]["covered_observable"] == 3
        assert report["by_section"]["2.2.6"]["covered_observable"] == 1
        outcomes = {c["test"]: c["outcome"] for c in report["statements"]["2.2.4.3.1-d"]["checks"]}
        assert outcomes == {"JobId.AnyJobIdBuffer": "failed"}
        assert report["unknown_requirements"] == {"2.2.99-z": ["pytest.wire.test_modes.TestDelivery.test_dgram_uses_uud"]}
        assert report["covered_but_marked_not_observable"] == ["2.2.4.1-h"]
        uncovered = [r["id"] for r in report["uncovered_observable_musts"]["2.2.4"]]
        assert "2.2.4.4-a" in uncovered and "2.2.4.4-b" not in uncovered and "2.2.4.3.1-d" not in uncovered
        assert uncovered == [s.id for s in observable_musts(cat, "2.2.4") if s.id not in covered]

    def test_a_run_s_checks_are_its_results_as_its_junit_says_them(self, cat, tmp_path):
        """Issue 36: a run counts its checks from its results, whose statements are a list, not from the JUnit file
        it wrote (statement ids joined into a property, then split again); the records are the same, in the same
        order, whatever the verdict and however the cells and areas interleave."""
        results = [Result(cell, area, "b", f"Case.{v}/rdm", v, statements=ids, reason="why")
                   for (cell, area, ids) in [("c1", "av", ["2.2.4.4-b", "2.2.4.1-q"]), ("c2", "mr", ["2.2.4.4-b"]),
                                             ("c1", "mr", []), ("c1", "av", ["2.2.99-z", "2.2.4.4-b", "2.2.4.4-b"])]
                   for v in ("pass", "fail", "not_applicable", "warning", "error", "timeout", "flaky")]
        junit = tmp_path / "junit.xml"
        write_junit(results, junit)
        found = coverage.checks_of_results(results, junit)
        assert found == coverage.read_junit([junit])
        assert {r["outcome"] for _, r in found} == {"passed", "failed", "skipped", "error"}
        assert coverage.compute(cat, [junit], found=found) == coverage.compute(cat, [junit])

    def test_catalogue_cases_count_too(self, tmp_path):
        path = write(tmp_path, SMALL.replace("check: both\n  cases: []", "check: both\n  cases: [JobId.Direct]"))
        report = coverage.compute(catalogue.load(path))
        assert report["covered"] == 1 and report["statements"]["2.2.4.4-b"]["covered"]

    def test_text_lists_uncovered_2_2_4_musts(self, cat, junit):
        res = run_cli("--junit", *junit)
        assert res.returncode == 0, res.stderr
        out = res.stdout
        assert "covered: 5 of %d statements" % len(cat) in out
        covered = ("2.2.4.4-b", "2.2.4.1-q", "2.2.4.3.1-d")
        uncovered = [s for s in observable_musts(cat, "2.2.4") if s.id not in covered]
        section = out.split("Observable MUST / MUST NOT statements of §2.2.4 without a check: %d" % len(uncovered))[1]
        section = section.split("Observable MUST / MUST NOT statements of §2.2.5")[0]
        listed = re.findall(r"^  (2\.2\.4[\d.]*-[a-z]+) ", section, re.M)
        assert "2.2.4.4-a" in listed and "2.2.4.4-c" in listed and "2.2.4-c" in listed
        assert "2.2.4.4-b" not in listed and "2.2.4.1-h" not in listed  # covered; not observable
        assert "2.2.4-a" in listed  # observable through the privileged entity, not covered by these results
        assert "2.2.99-z" in out.split("catalogue does not have")[1]

    def test_unobservable_musts_are_listed_with_their_reason(self, cat):
        report = coverage.compute(cat)
        rows = {r["id"]: r for r in report["unobservable_musts"]["2.2.4"]}
        assert rows["2.2.4.1-h"]["reason"] == cat.get("2.2.4.1-h").check_reason
        assert all(r["level"] in catalogue.ABSOLUTE_LEVELS for sec in report["unobservable_musts"].values() for r in sec)
        out = run_cli().stdout
        block = out.split("MUST / MUST NOT statements of §2.2.4 no case can check (not observable): %d" % len(rows))[1]
        assert re.search(r"^  2\.2\.4\.1-h +MUST .*\[kernel driver / privileged entity internal", block, re.M)

    def test_zero_coverage_is_said_clearly(self, cat):
        res = run_cli()
        assert res.returncode == 0, res.stderr
        assert "COVERAGE IS 0: no statement has an executable check yet" in res.stdout
        for section in ("2.2.4", "2.2.5"):
            count = len(observable_musts(cat, section))
            assert "Observable MUST / MUST NOT statements of §%s without a check: %d" % (section, count) in res.stdout
        assert "MUST NOT wire An MR with IDEMPOTENT_SAFE = 0" in res.stdout
        assert "[level?]" in res.stdout

    def test_json_format(self, cat, junit):
        res = run_cli("--format", "json", "--junit", junit[0])
        assert res.returncode == 0, res.stderr
        report = json.loads(res.stdout)
        assert report["total"] == len(cat) and report["covered"] == 3
        assert report["catalogue"] == "spec/catalogue.yaml"
        assert set(report["by_level"]) == set(catalogue.LEVELS)

    def test_strict_fails_on_unknown_ids(self, junit):
        assert run_cli("--strict", "--junit", *junit).returncode == 1
        assert run_cli("--strict", "--junit", junit[0]).returncode == 0

    def test_unreadable_inputs(self, tmp_path):
        bad = tmp_path / "bad.xml"
        bad.write_text("<testsuites><testcase", encoding="utf-8")
        res = run_cli("--junit", bad)
        assert res.returncode == 3 and "cannot read JUnit XML" in res.stderr
        res = run_cli("--catalogue", write(tmp_path, SMALL.replace("level: MAY", "level: SHALL")))
        assert res.returncode == 3 and "unknown level 'SHALL'" in res.stderr
        assert run_cli("--format", "yaml").returncode == 2
