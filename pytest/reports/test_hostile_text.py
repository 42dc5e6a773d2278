"""Issue 24, finding 7 (output): what a binary printed reaches the HTML report escaped visibly, as it reaches
results.json: the pages stay well-formed markup (they are read back as XML) and show \\x1b where the log had
an escape character."""
import pathlib
import xml.etree.ElementTree as ET

import synthetic_results as syn

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.run import outputs  # noqa: E402

COLOURED = "\x1b[31mExpected equality\x1b[0m\r\x00"
SHOWN = "\\x1b[31mExpected equality\\x1b[0m\\x0d\\x00"


def text(el):
    return "".join(el.itertext())


class TestReportPages:
    def test_an_escape_in_a_failure_message_is_shown_not_written(self, tmp_path, monkeypatch):
        # Before: the pages carried the raw characters (not XML: the parse below raised).
        doc = syn.results_document()
        failing = next(r for r in doc["results"] if r["id"] == syn.FAIL_ID)
        failing["message"] = COLOURED
        failing["reason"] = COLOURED
        # The synthetic coverage block has only what the pages show; summary.txt is not what this reads.
        monkeypatch.setattr(outputs.coverage_mod, "format_text", lambda coverage: "")
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        outputs.write_report(doc, run_dir, tmp_path)
        for page in [run_dir / "index.html", *sorted((run_dir / "cells").glob("*.html")), run_dir / "conformance.html",
                     *sorted((run_dir / "conformance").glob("*.html"))]:
            raw = page.read_text()
            assert "\x1b" not in raw and "\x00" not in raw, page
            ET.parse(page)
        index = ET.parse(run_dir / "index.html").getroot()
        assert any(SHOWN in text(el) for el in index.iter())
        assert "\\x1b[31mExpected equality" in (run_dir / "results.json").read_text()
