"""The index page's sections are reports/sections.py's table: a section is its template and a row."""
import pathlib
import re

from reports.sections import SECTIONS

TEMPLATES = pathlib.Path(__file__).resolve().parents[2] / "reports" / "templates"
# Templates under sections/ that are parts of other pages, not sections of the index.
PARTS = {"comparison_body.html"}


class TestSectionsTable:
    def test_every_row_has_its_template_and_the_template_its_anchor(self):
        ids = {}
        for s in SECTIONS:
            text = (TEMPLATES / s.template).read_text()
            ids[s.key] = re.findall(r'<section id="([^"]+)"', text)
        assert ids == {s.key: [s.anchor] for s in SECTIONS}

    def test_every_section_template_has_a_row(self):
        files = {p.name for p in (TEMPLATES / "sections").glob("*.html")} - PARTS
        assert files == {f"{s.key}.html" for s in SECTIONS}

    def test_the_index_names_no_section(self):
        # The order and the navigation come from the table, so the index template holds neither.
        index = (TEMPLATES / "index.html").read_text()
        assert re.findall(r'sections/\w+|href="#', index) == ['href="#']

    def test_keys_are_unique(self):
        assert len({s.key for s in SECTIONS}) == len(SECTIONS)
