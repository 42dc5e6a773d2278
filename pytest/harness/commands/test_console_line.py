"""Issue 26, part 4: a failing case's console line shows its first failure, with how many follow; later
failures often follow from the first ("Actual: it does." says nothing alone)."""
import io
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.run.progress import Progress, first_failure  # noqa: E402
from harness.results.results import Result  # noqa: E402

# Two failures as cases/common/claims/verdict.cpp joins them: "<file>:<line>: " and googletest's message.
TWO = ("../../cases/transfer/wire_cases.cpp:120: Expected equality of these values:\n  f->get(w::Field::uet_ses_message_id)\n"
       "    Which is: 0\n  1\nrequests carry a nonzero message_id\n"
       "../../cases/transfer/wire_cases.cpp:131: Value of: malformed\n  Actual: true\nExpected: false\n"
       "Actual: it does.")


class TestFirstFailure:
    def test_the_first_failure_s_own_words_and_how_many_follow(self):
        assert first_failure(TWO) == "requests carry a nonzero message_id (and 1 more failure)"

    def test_one_failure(self):
        assert first_failure("a.cpp:1: Failed\nsend 27 did not complete") == "send 27 did not complete"

    def test_a_message_without_a_location_is_its_last_line(self):
        assert first_failure("something\nwent wrong") == "went wrong"
        assert first_failure("") == ""

    def test_the_console_line_shows_it(self):
        stream = io.StringIO()
        Progress(1, {"cell": 1.0}, stream=stream).case(
            Result("cell", "wire", "uet-cases-wire", "Wire.Case", "fail", message=TWO, blamed_side="initiator"))
        assert stream.getvalue() == ("    FAIL [initiator]: cell/wire: Wire.Case: requests carry a nonzero message_id "
                                     "(and 1 more failure)\n")


class TestProgressLine:
    """Issue 35, item 11: the progress line counted timeouts as errors; they are their own verdict."""

    def line(self, verdicts):
        out = io.StringIO()
        p = Progress(1, {"cell": 1.0}, stream=out)
        for v in verdicts:
            p.case(Result("cell", "msg", "uet-cases-msg", "Msg.Case", v))
        p.cell("cell", {"total": len(verdicts)}, 1.0)
        return out.getvalue().splitlines()[-1]

    def test_a_timeout_is_counted_apart_from_errors(self):
        assert "| so far 1 pass, 0 fail, 0 n/a, 1 error, 2 timeout |" in self.line(["pass", "error", "timeout", "timeout"])

    def test_no_timeout_no_word_of_it(self):
        assert "| so far 1 pass, 0 fail, 0 n/a, 1 error |" in self.line(["pass", "error"])
