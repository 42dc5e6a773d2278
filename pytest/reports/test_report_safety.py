"""A hostile provider's names, messages and log lines reach the report and the history site as text only:
rendered in headless Chromium, no element or script came from them, no link carries a javascript: URL, and
terminal escape sequences are shown (\\x1b), not written."""
import html.parser
import json
import pathlib

import pytest

import synthetic_results as syn

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.trends import history_index  # noqa: E402

from harness.run import outputs
from reports.history_site import render_site  # noqa: E402

CHROMIUM = pathlib.Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="headless Chromium (/usr/bin/chromium, Debian package "
                                "chromium) renders the pages; it is not installed")

# Each payload would change the page's title if it ran; none may.
PWN = "document.title='PWNED'"
MARKUP = ("<script>%s</script><img src=x onerror=\"%s\">\"><svg onload=\"%s\">' onmouseover='%s"
          % (PWN, PWN, PWN, PWN))
ESCAPES = "\x1b[31mred\x1b[0m\x1b]0;title\x07\x1b[2J"
HOSTILE_NAME = "evil" + MARKUP + ESCAPES
JS_URL = "javascript:" + PWN
RUN_ID = "20261125-0217-s4242" + MARKUP + ESCAPES
SHOWN_RUN_ID = RUN_ID.replace("\x1b", "\\x1b").replace("\x07", "\\x07")   # as results.json writes it


class DomScan(html.parser.HTMLParser):
    """The tags, attributes and title text (the page's: the head's first <title>, not an SVG tooltip's) of a
    dumped DOM."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.title, self._in_title = [], [], "", False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend((tag, k, v or "") for k, v in attrs)
        self._in_title = tag == "title" and self.tags.count("title") == 1

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def hostile_run(run_dir):
    """The synthetic run with the ai-base manifest renamed to HOSTILE_NAME, markup and escapes in a failure's
    message and in a log line an error's reason quotes, and a javascript: URL as the fail's log path (a file of
    that name is in the run folder, so the page links it)."""
    text = json.dumps(syn.results_document())
    text = text.replace(syn.BASE, json.dumps(HOSTILE_NAME)[1:-1])
    doc = json.loads(text)
    doc["run_info"]["command"] = "./uet run " + MARKUP
    doc["run_info"]["run_id"] = RUN_ID
    for r in doc["results"]:
        if r["verdict"] == "fail":
            r["message"] = "Expected equality " + MARKUP + ESCAPES
            r["evidence"]["log"] = JS_URL
        if r["verdict"] == "error":
            r["reason"] = "the binary died; its log's last line: " + ESCAPES + MARKUP
    (run_dir / JS_URL).write_text("a log\n")
    outputs.write_report(doc, run_dir, run_dir.parent)
    return doc


def scan(cmd_chromium, page):
    proc = cmd_chromium("--dump-dom", page.as_uri())
    assert proc.returncode == 0 and "</html>" in proc.stdout, proc.stderr[-2000:]
    dom = DomScan()
    dom.feed(proc.stdout)
    return dom, proc.stdout


def assert_inert(dom, dumped, title):
    assert dom.title == title                                      # no injected script ran
    assert "script" not in dom.tags and "img" not in dom.tags      # the pages have neither of their own
    assert [(t, k) for t, k, _ in dom.attrs if k.startswith("on")] == []
    assert [v for t, k, v in dom.attrs if k in ("href", "src") and v.strip().lower().startswith("javascript:")] == []
    assert "\x1b" not in dumped and "\x07" not in dumped


@pytest.fixture(scope="module")
def runs(tmp_path_factory, monkeypatch_module):
    """A folder of runs: the hostile run, in a folder named like a javascript: URL."""
    # The synthetic coverage block has only what the pages show; summary.txt is not what this reads.
    monkeypatch_module.setattr(outputs.coverage_mod, "format_text", lambda coverage: "")
    out = tmp_path_factory.mktemp("history")
    run_dir = out / JS_URL
    run_dir.mkdir()
    hostile_run(run_dir)
    return out, run_dir


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


class TestRunReport:
    def test_the_index_is_inert(self, runs, cmd_chromium):
        _, run_dir = runs
        raw = (run_dir / "index.html").read_text()
        assert "\x1b" not in raw and "\\x1b[31mred" in raw
        dom, dumped = scan(cmd_chromium, run_dir / "index.html")
        assert_inert(dom, dumped, "UET conformance run " + SHOWN_RUN_ID)
        assert dumped.count("PWNED") >= 4 * 3   # the payloads are there, as text
        # the log link is there, relative and percent-encoded: a file of the run folder, never a script
        assert ("a", "href", "javascript%3Adocument.title%3D%27PWNED%27") in dom.attrs

    def test_the_conformance_statement_page_is_inert(self, runs, cmd_chromium):
        _, run_dir = runs
        dom, dumped = scan(cmd_chromium, run_dir / "conformance.html")
        assert_inert(dom, dumped, "UET conformance run " + SHOWN_RUN_ID + ": conformance statement")
        assert "PWNED" in dumped

    def test_every_cell_page_is_inert(self, runs, cmd_chromium):
        _, run_dir = runs
        doc = json.loads((run_dir / "results.json").read_text())
        # the cell ids hold the hostile name (printable: \x1b for ESC); a title shows it as it is, as text
        expected = {"UET conformance run %s: %s" % (SHOWN_RUN_ID, c["id"]) for c in doc["cells"]}
        assert sum(HOSTILE_NAME[:20] in t for t in expected) == 3
        pages = sorted((run_dir / "cells").glob("*.html"))
        assert len(pages) == 4
        titles, shown = set(), 0
        for page in pages:
            dom, dumped = scan(cmd_chromium, page)
            assert_inert(dom, dumped, dom.title)
            titles.add(dom.title)
            shown += "PWNED" in dumped
        assert titles == expected
        assert shown == 4   # every page shows the payloads (the run id's at least), as text


class TestHistorySite:
    @pytest.fixture(scope="class")
    def site(self, runs):
        # The site is written in the folder of runs itself: the relative link to the run starts with its
        # folder's name, 'javascript:...', which must not become a scheme.
        out, _ = runs
        db = history_index.connect(out / "history.sqlite")
        assert history_index.index_run(db, out / JS_URL) == "added"
        site_runs = history_index.runs(db)
        db.close()
        return render_site(site_runs, out)

    def test_the_trend_pages_are_inert(self, site, cmd_chromium):
        for page in (site, site.parent / "cells.html"):
            dom, dumped = scan(cmd_chromium, page)
            assert_inert(dom, dumped, "UET conformance history")
            assert "PWNED" in dumped
            assert "svg" in dom.tags   # the plots are there (their own SVG, not the payload's: no onload)

    def test_the_run_link_is_a_relative_path(self, site, cmd_chromium):
        dom, _ = scan(cmd_chromium, site)
        links = {v for t, k, v in dom.attrs if t == "a" and k == "href" and v.endswith("/index.html")}
        assert links == {"./javascript%3Adocument.title%3D%27PWNED%27/index.html"}
