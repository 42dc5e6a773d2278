"""The HTML report (reports/): rendered from a synthetic results.json with known values, read back as XML,
then opened in headless Chromium."""
import html.parser
import re
import struct
import urllib.parse
import xml.etree.ElementTree as ET

import pytest
import yaml

import synthetic_results as syn
from reports import render_html

SECTIONS = ("run-info", "summary", "interop-matrix", "negotiation-matrix", "coverage", "failures", "not-applicable")


# ---------------------------------------------------------------- reading the pages back

def parse(path):
    """The page as an element tree: the templates write well-formed markup, so a parse error is a bug."""
    return ET.parse(path).getroot()


def has_class(el, name):
    return name in (el.get("class") or "").split()


def by_class(root, name):
    return [el for el in root.iter() if has_class(el, name)]


def section(root, ident):
    found = [el for el in root.iter("section") if el.get("id") == ident]
    assert len(found) == 1, "section %s: %d found" % (ident, len(found))
    return found[0]


def text(el):
    return " ".join("".join(el.itertext()).split())


def rows(table):
    """[[cell text]] of a table's body rows."""
    return [[text(td) for td in tr if td.tag in ("td", "th")] for tr in table.find("tbody")]


def ids_in(root):
    return {el.get("id") for el in root.iter() if el.get("id")}


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The synthetic run folder, rendered once: (run_dir, results dict, index root)."""
    run_dir = tmp_path_factory.mktemp("run")
    doc = syn.write_run(run_dir)
    index = render_html(doc, run_dir)
    return run_dir, doc, parse(index)


@pytest.fixture
def render(tmp_path):
    """render(doc) -> index root, in a fresh folder."""
    def go(doc):
        return parse(render_html(doc, tmp_path))
    return go


# ---------------------------------------------------------------- the page, area by area

class TestRunInfo:
    def test_fields_of_the_run(self, run):
        _, _, root = run
        table = section(root, "run-info").find("table")
        fields = {text(tr[0]): text(tr[1]) for tr in table}
        assert fields["command"] == "./uet run --matrix --seed 4242"
        assert fields["mode"] == "matrix"
        assert fields["seed"] == "4242"
        assert fields["spec version"] == "1.0.1"
        assert fields["libfabric"] == "2.1.0"
        assert fields["kernel"] == "Linux 6.1.0-27-amd64"
        assert fields["suite commit"] == "9d47e3f"
        assert fields["placement"] == "namespaces"
        assert fields["started"] == "2026-11-25T02:17:00Z (312.5 s)"
        assert fields["decoder cross-check"] == "12 captures, 900 frames, 0 disagreements"

    def test_manifests_with_short_sha256(self, run):
        _, _, root = run
        table = [t for t in section(root, "run-info").iter("table") if has_class(t, "manifests")][0]
        assert rows(table) == [
            ["softuet", "cases/manifests/softuet.yaml", "softuet", "0.3", "1.0.1, 1.0.3", "ai_base, ai_full, hpc",
             "yes", "2.2.0a1 (named) at /opt/vendor/libfabric", "/src/uet/build-libfabric/2.2.0a1-0123456789",
             "a1b2c3d4e5f6"],
            ["softuet-ai-base", "cases/manifests/softuet.yaml#ai-base", "softuet", "0.3",
             "1.0.3 (not the checked version)", "ai_base", "yes", "—", "", "ffeeddccbbaa"]]

    def test_spec_choices(self, run):
        _, _, root = run
        table = [t for t in section(root, "run-info").iter("table") if has_class(t, "choices")][0]
        assert [r[:5] for r in rows(table)] == [["profile-priority", "MISSING", "low", "none", "RP"],
                                                 ["job-id-width", "rebuilt", "high", "RP, X2", "none"]]
        contested = [text(el) for el in by_class(table, "contested")]
        assert contested == ["contested: 24 bits (kept) (RP, X2); 32 bits (no source)"]

    def test_a_failure_names_the_confidence_of_its_choices(self, run):
        _, _, root = run
        fail = {el.get("data-result-id"): el for el in by_class(section(root, "failures"), "failure")}[syn.FAIL_ID]
        fields = {text(tr[0]): text(tr[1]) for tr in fail.find("table")}
        assert fields["rests on choices"] == "profile-priority (confidence low)"

    def test_complete_run_has_no_partial_banner(self, run):
        _, _, root = run
        assert not [el for el in root.iter() if el.get("data-partial")]

    def test_partial_run_says_so_on_every_page(self, tmp_path):
        doc = syn.write_run(tmp_path, partial=True)
        root = parse(render_html(doc, tmp_path))
        banners = by_class(section(root, "run-info"), "partial-banner")
        assert len(banners) == 1 and text(banners[0]).startswith("PARTIAL RUN")
        assert "(PARTIAL)" in text(root.find(".//h1"))
        for page in (tmp_path / "cells").iterdir():
            assert len(by_class(parse(page), "partial-banner")) == 1, page.name


class TestSummary:
    def test_exact_counts(self, run):
        _, _, root = run
        counts = {el.get("data-count"): int(text(el)) for el in section(root, "summary").iter()
                  if el.get("data-count")}
        assert counts == syn.EXPECTED_COUNTS

    def test_verdicts_per_side_and_profile(self, run):
        _, _, root = run
        table = [t for t in section(root, "summary").iter("table") if has_class(t, "by-profile")][0]
        verdicts = list(syn.EXPECTED_COUNTS)   # the column order: the taxonomy, then total
        got = {(tr.get("data-side"), tr.get("data-profile")): dict(zip(verdicts, map(int, r[2:])))
               for tr, r in zip(table.find("tbody"), rows(table))}
        assert got == syn.EXPECTED_BY_PROFILE

    def test_every_cell_listed_with_its_page(self, run):
        _, _, root = run
        table = [t for t in section(root, "summary").iter("table") if has_class(t, "cells")][0]
        links = {text(a): a.get("href") for a in table.iter("a")}
        assert links == {cid: "cells/%s.html" % cid for cid in syn.EXPECTED_CODES}


class TestInteropMatrix:
    def test_letters_per_area_in_every_cell(self, run):
        _, _, root = run
        tds = [td for td in section(root, "interop-matrix").iter("td") if td.get("data-cell")]
        got = {td.get("data-cell"): {s.get("data-area"): s.get("data-code") for s in td.iter("span")}
               for td in tds}
        assert got == syn.EXPECTED_CODES

    def test_rows_are_initiators_and_columns_targets(self, run):
        _, _, root = run
        table = section(root, "interop-matrix").find(".//table")
        assert [text(th) for th in table.find("thead/tr")][1:] == [syn.FULL, syn.BASE]
        body = table.find("tbody")
        assert [text(tr[0]) for tr in body] == [syn.FULL, syn.BASE]
        # row softuet-ai-base, column softuet: the cell whose initiator is the ai_base manifest
        assert body[1][1].get("data-cell") == "softuet-ai-base__softuet"

    def test_each_cell_links_to_its_page(self, run):
        _, _, root = run
        tds = [td for td in section(root, "interop-matrix").iter("td") if td.get("data-cell")]
        assert {td.get("data-cell"): td.find("a").get("href") for td in tds} == {
            cid: "cells/%s.html" % cid for cid in syn.EXPECTED_CODES}

    def test_legend_names_every_letter(self, run):
        _, _, root = run
        legend = [t for t in section(root, "interop-matrix").iter("table") if has_class(t, "legend")][0]
        assert [r[0] for r in (([text(td) for td in tr]) for tr in legend.iter("tr"))] == ["F", "E", "I", "W", "P", "N"]

    def test_absent_when_one_manifest_ran(self, render):
        doc = syn.results_document()
        doc["cells"] = [c for c in doc["cells"] if c["id"] == "softuet__softuet"]
        doc["results"] = [r for r in doc["results"] if r["cell"] == "softuet__softuet"]
        del doc["negotiation"]
        root = render(doc)
        present = {s.get("id") for s in root.iter("section")}
        assert "interop-matrix" not in present and "negotiation-matrix" not in present
        assert text(by_class(section(root, "failures"), "none")[0]) == "No failures."


class TestNegotiationMatrix:
    def cells(self, root):
        return [td for td in section(root, "negotiation-matrix").iter("td") if td.get("data-verdict")]

    def test_seven_by_seven_with_common_profile_and_verdict(self, run):
        _, _, root = run
        tds = self.cells(root)
        assert len(tds) == syn.EXPECTED_NEGOTIATION["cells"]
        assert sum(td.get("data-common") == "none" for td in tds) == syn.EXPECTED_NEGOTIATION["none"]
        for verdict in ("pass", "fail", "warning"):
            assert sum(td.get("data-verdict") == verdict for td in tds) == syn.EXPECTED_NEGOTIATION[verdict]
        assert all(has_class(td, "v-" + td.get("data-verdict")) for td in tds)   # coloured by verdict

    def test_cell_at_row_initiator_and_column_target(self, run):
        _, _, root = run
        body = section(root, "negotiation-matrix").find(".//tbody")
        row = syn.PROFILE_SETS.index(syn.NEGOTIATION_FAIL[0])
        col = syn.PROFILE_SETS.index(syn.NEGOTIATION_FAIL[1])
        td = body[row][col + 1]
        assert (td.get("data-common"), td.get("data-verdict")) == ("ai_full", "fail")
        # a failing cell leads to the failure block of its result
        assert urllib.parse.unquote(td.find("a").get("href")) == "#result-" + syn.FAIL_ID

    def test_note_names_the_priority_choice(self, run):
        _, _, root = run
        note = text(by_class(section(root, "negotiation-matrix"), "note")[0])
        assert "profile-priority" in note and "status MISSING, confidence low" in note


class TestCoverage:
    def table(self, root, kind):
        return [t for t in section(root, "coverage").iter("table") if t.get("data-coverage") == kind][0]

    @pytest.mark.parametrize("kind", ["level", "section"])
    def test_tables_covered_observable_against_observable(self, run, kind):
        _, _, root = run
        assert [tuple(r[:4]) for r in rows(self.table(root, kind))] == syn.EXPECTED_COVERAGE_ROWS[kind]

    def test_total_line(self, run):
        _, _, root = run
        total = by_class(section(root, "coverage"), "total")[0]
        assert text(total) == "4 of 8 observable statements have a check (50%); 5 of 12 statements in all."

    def test_uncovered_observable_musts(self, run):
        _, _, root = run
        table = next(t for t in section(root, "coverage").iter("table") if t.get("class") == "uncovered")
        listed = [tr.get("data-statement") for tr in table.iter("tr") if tr.get("data-statement")]
        assert listed == syn.EXPECTED_UNCOVERED

    def test_every_statement_has_a_row_with_its_verdicts(self, run):
        _, doc, root = run
        table = next(t for t in section(root, "coverage").iter("table") if t.get("class") == "statements")
        rows = {tr.get("data-statement"): tr.get("data-covered") for tr in table.iter("tr") if tr.get("data-statement")}
        statements = doc["coverage"]["statements"]
        assert rows == {k: "yes" if v["covered"] else "no" for k, v in statements.items()}

    def test_absent_coverage_is_said(self, render):
        doc = syn.results_document()
        del doc["coverage"]
        assert text(section(render(doc), "coverage")) == "Requirement coverage This run computed no coverage."


class TestFailures:
    def blocks(self, root):
        return {el.get("data-result-id"): el for el in by_class(section(root, "failures"), "failure")}

    def test_one_block_per_fail_error_and_timeout(self, run):
        _, _, root = run
        assert [el.get("data-result-id") for el in by_class(section(root, "failures"), "failure")] == \
            syn.EXPECTED_FAILURE_IDS

    def test_statement_text_from_coverage_then_catalogue(self, run, repo_root):
        _, _, root = run
        catalogue = yaml.safe_load((repo_root / "spec" / "catalogue.yaml").read_text(encoding="utf-8"))
        catalogue_text = {s["id"]: s["text"] for s in catalogue["statements"]}["2.2.4.4-a"]
        fail = self.blocks(root)[syn.FAIL_ID]
        statements = [tr for tr in fail.find("table") if text(tr[0]) == "statements"][0]
        assert [text(div) for div in statements[1].iter("div")] == [
            "2.2.4.4-b " + syn.COVERAGE_TEXT, "2.2.4.4-a " + catalogue_text,
            "9.9.9-z (not in the requirement catalogue)"]

    def test_expected_seen_blame_and_repro(self, run):
        _, doc, root = run
        fail = self.blocks(root)[syn.FAIL_ID]
        fields = {text(tr[0]): text(tr[1]) for tr in fail.find("table")}
        assert fields["expected"] == "uet.ses.job_id == 0x123 (the endpoint's auth_key)"
        assert fields["seen"] == "uet.ses.job_id == 0x5a5a01"
        assert fields["blamed side"] == "initiator"
        assert fields["detail"] == "claimed but unsupported: " + syn.UNSUPPORTED
        repro = [c for c in fail.iter("code") if has_class(c, "repro")]
        assert [text(c) for c in repro] == [
            "./uet run --initiator softuet --target softuet-ai-base --only 'Authz.DirectJobIdIsOnTheWire' --seed 4242"]

    def test_decoded_frames_table(self, run):
        _, _, root = run
        table = by_class(self.blocks(root)[syn.FAIL_ID], "frames")[0]
        assert rows(table) == [
            ["3", "initiator", "RUD_REQ psn=7 ses.std UET_SEND job_id=5921281",
             "uet.pds.psn = 7 uet.ses.opcode = 5 uet.ses.job_id = 5921281 (0x5a5a01)"],
            ["4", "target", "ACK psn=7", "uet.pds.type = 6 uet.pds.ack_psn = 7"]]

    def test_malformed_frames_with_the_statements_they_break(self, run):
        _, _, root = run
        table = by_class(self.blocks(root)[syn.FAIL_ID], "malformed")[0]
        assert rows(table) == [
            ["initiator", "invalid_value in uet.ses.message_id (212 frames, first #3)", "60", "0", "2.2.10.4-a", "uet.ses.message_id=0x0"],
            ["target", "inconsistent_length in udp.length", "38", "9", "no statement of §2.2", "uet.pds.type=0x6"]]

    def test_capture_link_and_missing_log_not_linked(self, run):
        _, _, root = run
        blocks = self.blocks(root)
        assert [urllib.parse.unquote(a.get("href")) for a in blocks[syn.FAIL_ID].iter("a")] == [
            syn.FAIL_CAPTURE, syn.FAIL_DECODED, syn.FAIL_LOG]
        error = blocks[syn.ERROR_ID]
        assert not list(error.iter("a"))
        assert [text(el) for el in by_class(error, "missing-file")] == [syn.ERROR_LOG + " (missing)"]

    def test_markup_in_a_message_is_text(self, run):
        _, _, root = run
        assert not list(root.iter("script"))
        message = by_class(self.blocks(root)[syn.ERROR_ID], "message")[0]
        assert "".join(message.itertext()) == syn.HOSTILE


class TestNotApplicable:
    def test_grouped_by_reason_with_counts(self, run):
        _, _, root = run
        table = by_class(section(root, "not-applicable"), "na-reasons")[0]
        got = [(text(tr[1].find("details/summary")), int(text(tr[0]))) for tr in table.find("tbody")]
        assert got == syn.EXPECTED_NA_GROUPS

    def test_the_summary_says_the_count_by_class_and_code(self, run):
        _, _, root = run
        assert [text(p) for p in by_class(section(root, "summary"), "na-sentence")] == [syn.EXPECTED_NA_SENTENCE]

    def test_each_code_with_its_class_description_and_whether_a_submission_may_hold_it(self, run, repo_root):
        _, _, root = run
        reasons = yaml.safe_load((repo_root / "spec" / "not-applicable-reasons.yaml").read_text())["codes"]
        table = by_class(section(root, "not-applicable"), "na-codes")[0]
        got = [(tr.get("data-na-class"), tr.get("data-na-code"), int(text(tr[0])), text(tr[3]), text(tr[4]))
               for tr in table.find("tbody")]
        assert got == [(k, c, n, reasons[c]["description"], "allowed") for k, c, n in syn.EXPECTED_NA_CODES]

    def test_an_undeclared_code_is_counted_as_a_suite_bug(self, render):
        doc = syn.results_document()
        doc["results"][-1]["reason_code"] = "<made-up>"
        root = render(doc)
        assert [text(p) for p in by_class(section(root, "summary"), "na-sentence")] == [
            "3 not applicable: 2 not claimed by a manifest (2 not-claimed-profile); 1 with no declared reason code "
            "(a suite bug) (1 <made-up>)"]
        rows = by_class(section(root, "not-applicable"), "na-codes")[0].find("tbody")
        assert [(tr.get("data-na-code"), text(tr[4])) for tr in rows][-1] == ("<made-up>", "unknown")


class TestCellPages:
    def test_one_page_per_cell_with_its_counts(self, run):
        run_dir, doc, _ = run
        assert sorted(p.name for p in (run_dir / "cells").iterdir()) == sorted(
            "%s.html" % cid for cid in syn.EXPECTED_CODES)
        fail_cell = parse(run_dir / "cells" / "softuet__softuet-ai-base.html")
        counts = {el.get("data-count"): int(text(el)) for el in fail_cell.iter() if el.get("data-count")}
        assert counts == {"pass": 1, "fail": 1, "not_applicable": 2, "warning": 0, "error": 0, "timeout": 0,
                          "flaky": 0, "infra_error": 0, "total": 4}
        assert [el.get("data-result-id") for el in by_class(fail_cell, "failure")] == [syn.FAIL_ID]


class TestLinks:
    def pages(self, run_dir):
        sheets = sorted((run_dir / "conformance").glob("*.html"))
        assert sheets    # the run claims profiles, so the statement has sheets and each its page
        return [run_dir / "index.html", run_dir / "conformance.html", *sheets, *sorted((run_dir / "cells").iterdir())]

    def test_every_local_link_resolves(self, run):
        run_dir, _, _ = run
        checked = 0
        for page in self.pages(run_dir):
            for el in parse(page).iter():
                ref = el.get("href") or el.get("src")
                if ref is None:
                    continue
                url = urllib.parse.urlsplit(ref)
                assert not url.scheme and not url.netloc, "%s: not a local link: %s" % (page.name, ref)
                target = (page.parent / urllib.parse.unquote(url.path)).resolve() if url.path else page
                assert target.is_file(), "%s: %s does not resolve" % (page.name, ref)
                if url.fragment:
                    assert urllib.parse.unquote(url.fragment) in ids_in(parse(target)), \
                        "%s: no id for %s" % (page.name, ref)
                checked += 1
        assert checked > 30   # the nav, the cells, the matrix, the evidence: a page with none is broken

    def test_no_external_resources(self, run):
        run_dir, _, _ = run
        for page in self.pages(run_dir):
            root = parse(page)
            assert not list(root.iter("script")) and not list(root.iter("link")), page.name
            assert not re.search(r"(?i)(https?:)?//|@import|url\(", text(root.find("head/style")) or ""), page.name


class TestRobustness:
    def test_bare_results_still_render(self, render):
        root = render({"format": 1, "run_info": {"run_id": "r1", "partial": True}, "summary": {}, "cells": [],
                       "results": []})
        assert {s.get("id") for s in root.iter("section")} == {"run-info", "summary", "coverage", "failures",
                                                              "not-applicable"}


    def test_odd_cell_id_stays_inside_cells(self, tmp_path):
        doc = {"format": 1, "run_info": {"manifests": [{"name": "../m x", "profiles": ["../p"]}]}, "summary": {},
               "results": [], "cells": [{"id": "../../escape me", "initiator": "../m x", "target": "b"}]}
        render_html(doc, tmp_path / "run")
        assert [p.relative_to(tmp_path).as_posix() for p in sorted(tmp_path.rglob("*.html"))] == [
            "run/cells/_.._escape_me.html", "run/conformance/initiator-.._m_x-.._p.html", "run/conformance.html",
            "run/index.html"]


# ---------------------------------------------------------------- in a browser

class DomIndex(html.parser.HTMLParser):
    """The ids and the data-count values of a serialised DOM."""

    def __init__(self):
        super().__init__()
        self.ids, self.counts, self._count = set(), {}, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        self._count = attrs.get("data-count")

    def handle_data(self, data):
        if self._count and data.strip():
            self.counts[self._count] = int(data)
            self._count = None


class TestInChromium:
    def test_rendered_dom_has_sections_and_counts(self, run, cmd_chromium):
        run_dir, _, _ = run
        proc = cmd_chromium("--dump-dom", (run_dir / "index.html").as_uri())
        assert proc.returncode == 0, proc.stderr[-2000:]
        dom = DomIndex()
        dom.feed(proc.stdout)
        assert set(SECTIONS) <= dom.ids
        assert dom.counts == syn.EXPECTED_COUNTS

    def test_screenshot_is_a_real_png(self, run, cmd_chromium):
        run_dir, _, _ = run
        shot = run_dir / "report.png"
        proc = cmd_chromium("--screenshot=%s" % shot, "--window-size=1280,4000", (run_dir / "index.html").as_uri())
        assert proc.returncode == 0, proc.stderr[-2000:]
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">II", data[16:24]) == (1280, 4000)
        assert len(data) > 100_000   # a blank page of that size compresses to about 23 KB; this one to ~500


# ---------------------------------------------------------------- the command

class TestCommandLine:
    def test_rerenders_a_run_folder(self, tmp_path, cmd_reports):
        syn.write_run(tmp_path)
        proc = cmd_reports(tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == str(tmp_path / "index.html")
        assert "data-count" in (tmp_path / "index.html").read_text(encoding="utf-8")

    def test_missing_results_json_exits_2_naming_it(self, tmp_path, cmd_reports):
        proc = cmd_reports(tmp_path)
        assert proc.returncode == 2
        assert str(tmp_path / "results.json") in proc.stderr
        assert not (tmp_path / "index.html").exists()

    def test_invalid_json_exits_2_naming_it(self, tmp_path, cmd_reports):
        (tmp_path / "results.json").write_text('{"format": 1,', encoding="utf-8")
        proc = cmd_reports(tmp_path)
        assert proc.returncode == 2
        assert str(tmp_path / "results.json") in proc.stderr and "not valid JSON" in proc.stderr

    def test_json_of_another_shape_exits_2_naming_it(self, tmp_path, cmd_reports):
        (tmp_path / "results.json").write_text('{"format": 1, "cells": [{"initiator": "a"}]}', encoding="utf-8")
        proc = cmd_reports(tmp_path)
        assert proc.returncode == 2
        assert str(tmp_path / "results.json") in proc.stderr and "RESULTS-FORMAT.md" in proc.stderr
