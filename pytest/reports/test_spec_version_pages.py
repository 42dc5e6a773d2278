"""The run's permanent name (run_info.run_id) on its pages and in its JUnit XML, and the matrices split into
one page per UEC spec version when a run's cells were checked against several."""
import xml.etree.ElementTree as ET

import synthetic_results as syn
from harness.results.results import Result, write_junit
from reports import render_html

RUN_ID = "20261125-0217-s4242"
NEWER = {syn.cell_id(syn.BASE, syn.FULL), syn.cell_id(syn.BASE, syn.BASE)}   # checked against 1.0.3


def text(el):
    return " ".join("".join(el.itertext()).split())


def two_versions():
    doc = syn.results_document()
    for cell in doc["cells"]:
        if cell["id"] in NEWER:
            cell["spec_version"] = "1.0.3"
    return doc


def matrix_cells(root, table_class):
    table = next(t for t in root.iter("table") if table_class in (t.get("class") or "").split())
    return {td.get("data-cell") for td in table.iter("td") if td.get("data-cell")}


class TestRunName:
    def test_the_page_title_and_heading_carry_the_run_id(self, tmp_path):
        root = ET.parse(render_html(syn.results_document(), tmp_path)).getroot()
        assert text(root.find("head/title")) == "UET conformance run " + RUN_ID
        assert text(root.find("body/header/h1")) == "UET conformance run " + RUN_ID
        cell = ET.parse(tmp_path / "cells" / "softuet__softuet.html").getroot()
        assert text(cell.find("head/title")) == "UET conformance run %s: softuet__softuet" % RUN_ID

    def test_the_junit_root_is_named_after_the_run(self, tmp_path):
        junit = tmp_path / "junit.xml"
        write_junit([Result("c", "authz", "uet-cases-authz", "A.b", "pass")], junit, run_id=RUN_ID)
        assert ET.parse(junit).getroot().get("name") == RUN_ID
        write_junit([Result("c", "authz", "uet-cases-authz", "A.b", "pass")], junit)
        assert ET.parse(junit).getroot().get("name") is None


class TestOneSpecVersion:
    def test_the_index_keeps_its_matrices_and_writes_no_version_page(self, tmp_path):
        root = ET.parse(render_html(syn.results_document(), tmp_path)).getroot()
        ids = {el.get("id") for el in root.iter() if el.get("id")}
        assert {"interop-matrix", "negotiation-matrix"} <= ids and "spec-versions" not in ids
        assert list(tmp_path.glob("spec-*.html")) == []


class TestSeveralSpecVersions:
    def test_each_version_gets_a_page_with_its_own_cells(self, tmp_path):
        index = ET.parse(render_html(two_versions(), tmp_path)).getroot()
        ids = {el.get("id") for el in index.iter() if el.get("id")}
        assert "interop-matrix" not in ids and "negotiation-matrix" not in ids
        rows = {tr.get("data-spec-version"): [text(td) for td in tr.findall("td")]
                for tr in index.iter("tr") if tr.get("data-spec-version")}
        # 1.0.1: the FULL initiator's cells (3 + 4 results); 1.0.3: the BASE initiator's (3 + 3)
        # pass, fail, not applicable, warning, error, timeout, flaky, infrastructure error, total
        assert rows["1.0.1"] == ["1.0.1", "4", "1", "2", "0", "0", "0", "0", "0", "7"]
        assert rows["1.0.3"] == ["1.0.3", "2", "0", "1", "1", "1", "1", "0", "0", "6"]
        old = ET.parse(tmp_path / "spec-1.0.1.html").getroot()
        new = ET.parse(tmp_path / "spec-1.0.3.html").getroot()
        assert matrix_cells(old, "interop") == {"softuet__softuet", "softuet__softuet-ai-base"}
        assert matrix_cells(new, "interop") == NEWER
        assert text(new.find("head/title")) == "UET conformance run %s: spec 1.0.3" % RUN_ID

    def test_a_negotiation_cell_goes_with_its_results_version_and_links_to_the_index(self, tmp_path):
        render_html(two_versions(), tmp_path)
        old = ET.parse(tmp_path / "spec-1.0.1.html").getroot()
        # the failing negotiation cell's result (FAIL_ID) is a 1.0.1 cell's: its link leads to the index's failure
        links = [a.get("href") for a in old.iter("a") if (a.get("href") or "").startswith("index.html#result-")]
        assert len(links) == 1 and syn.FAIL_ID.split("/")[0] in links[0]
        new = ET.parse(tmp_path / "spec-1.0.3.html").getroot()
        assert not any(el.get("id") == "negotiation-matrix" for el in new.iter())
