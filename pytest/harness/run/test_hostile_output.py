"""Issue 24, finding 7 (output): what a case binary or its provider prints cannot break the run. Control
characters reach JUnit XML, results.json and the terminal escaped visibly (ESC as \\x1b), so the JUnit file
always parses; each log a cell's processes write is capped, keeping its head and tail, with the cut said
in the log and in the report."""
import io
import json
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest


REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.results import coverage as coverage_mod  # noqa: E402
from harness.inputs import catalogue as catalogue_mod  # noqa: E402
from harness.run import logcap  # noqa: E402
from harness.inputs import manifest as manifest_mod  # noqa: E402
from harness.run.progress import Progress  # noqa: E402
from harness.results.results import Result, write_junit, write_results_json  # noqa: E402
from harness.run.run_cases import Cell, CellRun  # noqa: E402
from harness.files.untrusted import printable  # noqa: E402

# A coloured log line, a NUL, a bell, a carriage return, a form feed, DEL, CSI (C1), a lone surrogate (what
# json.loads makes of "\udc80") and a noncharacter: each one XML 1.0 forbids or a terminal acts on.
HOSTILE = "\x1b[31mred\x1b[0m \x00\x07\r\x0c\x7f\x9b\udc80\ufffe tab\tand\nnewline"
ESCAPED = "\\x1b[31mred\\x1b[0m \\x00\\x07\\x0d\\x0c\\x7f\\x9b\\udc80\\ufffe tab\tand\nnewline"


def hostile_results():
    return [Result("cell", "msg", "uet-cases-msg", "Msg.Colour\x1b[1m", "fail", statements=["2.2.6-a"],
                   message=HOSTILE, detail="claimed \x1b but unsupported"),
            Result("cell", "msg", "uet-cases-msg", "Msg.Crash", "error", reason=HOSTILE, message=HOSTILE),
            Result("cell", "msg", "uet-cases-msg", "Msg.Skip", "not_applicable", reason="n/a \x1b[0m")]


class TestPrintable:
    def test_every_forbidden_character_is_escaped_and_the_rest_kept(self):
        assert printable(HOSTILE) == ESCAPED

    def test_plain_text_and_other_unicode_are_unchanged(self):
        text = "Msg.SendUsesTheTable2_22Opcode/rdm: expected 0x02 — seen ü 😀"
        assert printable(text) == text


class TestJunit:
    def test_a_coloured_log_in_a_message_leaves_the_junit_file_xml(self, tmp_path):
        # Before: the escape went raw into junit.xml, which was then not XML; the coverage step raised.
        junit = tmp_path / "junit.xml"
        write_junit(hostile_results(), junit)
        root = ET.parse(junit).getroot()
        cases = {tc.get("name"): tc for tc in root.iter("testcase")}
        assert sorted(cases) == ["Msg.Colour\\x1b[1m", "Msg.Crash", "Msg.Skip"]
        failure = cases["Msg.Colour\\x1b[1m"].find("failure")
        assert (failure.get("message"), failure.text) == ("claimed \\x1b but unsupported", ESCAPED)
        error = cases["Msg.Crash"].find("error")
        assert error.text == ESCAPED
        assert error.get("message") == "error: " + ESCAPED
        assert cases["Msg.Skip"].find("skipped").get("message") == "n/a \\x1b[0m"

    def test_the_coverage_step_reads_it(self, tmp_path):
        junit = tmp_path / "junit.xml"
        write_junit(hostile_results(), junit)
        coverage = coverage_mod.compute(catalogue_mod.load(None), [junit])
        assert coverage["observable"] > 0


class TestResultsJson:
    def test_strings_and_keys_are_escaped_and_the_file_is_written(self, tmp_path):
        # Before: a lone surrogate made write_text raise (no results.json); an escape went raw to the reader.
        path = tmp_path / "results.json"
        write_results_json({"results": [dict(hostile_results()[1].as_dict(), notes={"key\x1b": HOSTILE})]}, path)
        doc = json.loads(path.read_text())
        result = doc["results"][0]
        assert (result["reason"], result["message"], result["notes"]) == (ESCAPED, ESCAPED, {"key\\x1b": ESCAPED})


class TestTerminal:
    def test_a_failure_line_shows_escapes_instead_of_acting_on_them(self):
        stream = io.StringIO()
        progress = Progress(1, {"cell": 1.0}, stream=stream)
        progress.case(Result("cell", "msg", "uet-cases-msg", "Msg.Case", "fail", reason="\x1b[2J\rwiped \x9b31m"))
        assert stream.getvalue() == "    FAIL: cell/msg: Msg.Case: \\x1b[2J\\x0dwiped \\x9b31m\n"

    def test_a_cell_line_with_an_escape_in_the_cell_name(self):
        stream = io.StringIO()
        Progress(1, {}, stream=stream).say("[1/1] a\x1b]0;title\x07: 1 pass")
        assert stream.getvalue() == "[1/1] a\\x1b]0;title\\x07: 1 pass\n"


def numbered(n: int, start: int = 0) -> bytes:
    return b"".join(b"line %07d\n" % i for i in range(start, start + n))


@pytest.fixture
def collapsing(tmp_path):
    """tmp_path, on a file system that can collapse a range (ext4, xfs): the cap's lossless cut."""
    probe = tmp_path / "probe"
    probe.write_bytes(bytes(3 * 4096))
    fd = os.open(probe, os.O_RDWR)
    try:
        if not logcap.collapse(fd, 0, 4096):
            pytest.skip(f"{tmp_path}'s file system cannot collapse a range: the cap falls back to truncating")
    finally:
        os.close(fd)
        probe.unlink()
    return tmp_path


class TestLogCap:
    CAP = 256 << 10

    @staticmethod
    def cut_end(cap, size):
        """Where the kept tail starts: the collapsed range ends on a block, `tail` or more before the end."""
        return (size - cap.tail) // cap.block * cap.block

    def test_a_log_past_the_cap_keeps_its_head_a_marker_and_its_tail(self, collapsing):
        tmp_path = collapsing
        content = numbered(200_000)
        (tmp_path / "msg.log").write_bytes(content)
        cap = logcap.LogCap(tmp_path, cap=self.CAP)
        cap.check()
        end = self.cut_end(cap, len(content))
        dropped = end - cap.head
        assert (cap.block, cap.tail, cap.head) == (4096, self.CAP // 4, 188 * 1024 - cap.slot)
        assert (tmp_path / "msg.log").read_bytes() == content[:cap.head] + logcap.marker(self.CAP, dropped) + content[end:]
        assert cap.dropped == {"msg.log": dropped}
        assert (tmp_path / "msg.log").stat().st_size <= self.CAP
        assert logcap.marker(self.CAP, dropped) == (
            f"\n[uet: this log passed the cap of {self.CAP} bytes: {dropped} bytes were dropped here; the head and "
            f"the last {logcap.TAIL_BYTES} bytes are kept]").ljust(cap.slot - 1).encode() + b"\n"

    def test_a_second_cut_writes_its_marker_over_the_first_and_counts_every_byte_dropped(self, collapsing):
        tmp_path = collapsing
        first, more = numbered(100_000), numbered(100_000, start=100_000)
        log = tmp_path / "msg.target.log"
        log.write_bytes(first)
        cap = logcap.LogCap(tmp_path, cap=self.CAP)
        cap.check()
        kept = log.read_bytes()
        with open(log, "ab") as f:
            f.write(more)
        cap.check()
        end = self.cut_end(cap, len(kept) + len(more))
        dropped = len(first) + len(more) - (len(kept) + len(more) - end) - cap.head
        assert log.read_bytes() == first[:cap.head] + logcap.marker(self.CAP, dropped) + (kept + more)[end:]
        assert log.read_bytes().count(b"[uet: this log passed the cap") == 1
        assert cap.dropped == {"msg.target.log": dropped}

    def test_where_the_file_system_cannot_collapse_the_tail_is_read_and_the_file_truncated(self, tmp_path, monkeypatch):
        monkeypatch.setattr(logcap, "collapse", lambda fd, offset, length: False)
        content = numbered(200_000)
        (tmp_path / "msg.log").write_bytes(content)
        cap = logcap.LogCap(tmp_path, cap=self.CAP)
        cap.check()
        dropped = len(content) - cap.head - cap.tail
        assert (tmp_path / "msg.log").read_bytes() == \
            content[:cap.head] + logcap.marker(self.CAP, dropped) + content[-cap.tail:]
        assert cap.dropped == {"msg.log": dropped}

    def test_a_log_under_the_cap_is_left_alone(self, tmp_path):
        (tmp_path / "msg.log").write_bytes(numbered(1000))
        cap = logcap.LogCap(tmp_path, cap=self.CAP)
        cap.check()
        assert (tmp_path / "msg.log").read_bytes() == numbered(1000) and cap.dropped == {}

    def test_a_symlink_named_like_a_log_is_not_followed(self, tmp_path):
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "big").write_bytes(numbered(100_000))
        cell = tmp_path / "cell"
        cell.mkdir()
        (cell / "msg.log").symlink_to(elsewhere / "big")
        logcap.LogCap(cell, cap=self.CAP).check()
        assert (elsewhere / "big").read_bytes() == numbered(100_000)

    def test_a_process_that_writes_without_end_stays_within_the_cap(self, collapsing):
        tmp_path = collapsing
        # 32 MiB written in 64 KiB appends while the cap looks every 20 ms; the last line survives the cut.
        writer = ("import os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)\n"
                  "chunk = b'x' * 65535 + b'\\n'\nfor _ in range(512):\n    os.write(fd, chunk)\n"
                  "os.write(fd, b'the last line\\n')\n")
        with logcap.LogCap(tmp_path, cap=self.CAP, interval=0.02) as cap:
            subprocess.run([sys.executable, "-c", writer, str(tmp_path / "flood.log")], check=True, timeout=60)
        data = (tmp_path / "flood.log").read_bytes()
        assert len(data) <= self.CAP
        written = (b"x" * 65535 + b"\n") * 512 + b"the last line\n"
        assert data.startswith(written[:cap.head]) and data.endswith(written[-cap.tail:])
        assert b"[uet: this log passed the cap of 262144 bytes: " in data
        assert 0 < cap.dropped["flood.log"] <= 512 * 65536 + 14 - cap.head - cap.tail
        # Lossless: every byte written is either kept or counted as dropped (the marker stands for none).
        assert len(data) - cap.slot + cap.dropped["flood.log"] == len(written)


FLOOD_BINARY = """#!/bin/sh
# A case binary whose provider prints without end: 24 MiB of one line, then it exits.
yes 'softuet: debug: the same line again and again' | head -c 25165824
"""


class TestCellLogs:
    def test_a_flooding_binary_s_log_is_capped_and_the_cut_reported(self, tmp_path, monkeypatch):
        # Before: the log grew with what the binary printed (378 MB in 90 s in the probe).
        monkeypatch.setattr(logcap, "LOG_CAP_BYTES", 1 << 20)
        build = tmp_path / "build"
        (build / "cases").mkdir(parents=True)
        binary = build / "cases" / "uet-cases-flood"
        binary.write_text(FLOOD_BINARY)
        binary.chmod(0o755)
        manifest = manifest_mod.load(REPO / "cases" / "manifests" / "udp.yaml")
        runner = CellRun(Cell(manifest, manifest, ["flood"]), build, tmp_path / "cell", use_namespaces=False)
        runner.run()
        log = tmp_path / "cell" / "flood.log"
        data = log.read_bytes()
        assert len(data) <= 1 << 20
        assert data.startswith(f"$ {binary} --gtest_filter=".encode())
        assert list(runner.logs_capped) == ["flood.log"] and runner.logs_capped["flood.log"] > 20 << 20
        assert logcap.marker(1 << 20, runner.logs_capped["flood.log"]) in data
