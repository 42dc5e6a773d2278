"""Every not-applicable verdict carries a declared reason code (spec/not-applicable-reasons.yaml): the file
follows its schema, the C++ codes are generated from it (an undeclared one does not compile: ctest's
cases_reason_code_*), every code the case sources use is declared (and every declared code is used), a
skip the sources make any other way is a bug found here, a verdict line with an undeclared code becomes an
error, and results.json's summary counts the not-applicable results by code and by class."""
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.inputs import not_applicable as na  # noqa: E402
from harness.results.results import Result, result_of_line, write_junit  # noqa: E402
from harness.run.run_cases import run_manifest  # noqa: E402

sys.path.insert(0, str(REPO / "cases" / "generate"))
import generate_reason_codes as generator  # noqa: E402

SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
# The build's own test of the generated codes writes wrong ones on purpose (they must not compile).
SNIPPET = REPO / "cases" / "test" / "reason_code_snippet.cpp"
CASE_SOURCES = sorted(p for p in (REPO / "cases").rglob("*") if p.suffix in (".cpp", ".hpp") and p != SNIPPET)
DEFINITION = REPO / "cases" / "common" / "claims" / "not_applicable.hpp"
CONSTANT_RE = re.compile(r"(?:::uet::cases::)?reason::(k[A-Za-z0-9]+)")
# The verdict probe (cases/test/) skips by hand on purpose: the recorder must make such a skip an error.
PROBES = REPO / "cases" / "test"


def macro_calls(text: str, name: str):
    """(line, [arguments]) of each call of macro `name` in C++ text: arguments split at top-level commas, with
    string literals and brackets respected (a condition such as std::find(a, b, c) is one argument)."""
    for m in re.finditer(r"\b%s\(" % name, text):
        args, depth, start, i, quoted = [], 0, m.end(), m.end(), False
        while True:
            c = text[i]
            if quoted:
                if c == "\\":
                    i += 1
                elif c == '"':
                    quoted = False
            elif c == '"':
                quoted = True
            elif c in "([{":
                depth += 1
            elif c in ")]}" and depth:
                depth -= 1
            elif c == ")" or (c == "," and depth == 0):
                args.append(text[start:i].replace("\\\n", " ").strip())  # a macro's line continuations
                start = i + 1
                if c == ")":
                    break
            i += 1
        yield text.count("\n", 0, m.start()) + 1, args


def written_codes():
    """{code: ["file:line", ...]} of every skip the case sources make (a constant no code declares under its own
    name), and the calls whose code is not a reason constant."""
    found, bad = {}, []
    code_of = {generator.constant(c): c for c in na.codes()}
    for path in CASE_SOURCES:
        text = path.read_text()
        for name, code_at in (("UET_NOT_APPLICABLE_IF", 1), ("UET_NOT_APPLICABLE", 0)):
            for line, args in macro_calls(text, name):
                where = f"{path.relative_to(REPO)}:{line}"
                if path == DEFINITION and args[code_at] == "code":
                    continue  # the macros' own definitions
                constant = CONSTANT_RE.fullmatch(args[code_at]) if len(args) > code_at else None
                if constant:
                    found.setdefault(code_of.get(constant[1], constant[1]), []).append(where)
                else:
                    bad.append((where, args))
    return found, bad


class TestTheFile:
    def test_it_follows_the_schema_with_one_of_the_two_classes(self):
        codes = na.load()
        assert len(codes) > 10  # a code is added in the file alone: no count of them here
        assert {c["class"] for c in codes.values()} == set(na.CLASSES) == {"not-claimed", "no-such-combination"}
        assert all(isinstance(c["allowed_in_submission"], bool) and "\n" not in c["description"]
                   for c in codes.values())

    def test_what_hides_a_claimed_feature_is_not_allowed_in_a_submission(self):
        codes = na.load()
        assert {c for c, v in codes.items() if not v["allowed_in_submission"]} >= \
            {"address-not-expressible", "manifest-lacks-hook", "no-loss-applied"}

    @pytest.mark.parametrize("text, where", [
        ("codes:\n  x-y:\n    class: maybe\n    description: d\n    allowed_in_submission: true\n",
         "codes.x-y.class: not one of not-claimed, no-such-combination"),
        ("codes:\n  x-y:\n    class: not-claimed\n    description: d\n",
         "codes.x-y: 'allowed_in_submission' is a required property"),
        ("codes:\n  Bad_Code:\n    class: not-claimed\n    description: d\n    allowed_in_submission: true\n",
         "codes: key 1 of 1 is not a name this mapping allows"),
        ("codes: [a]\n", "codes: a list where a mapping is wanted"),
        ("codes: {a: [\n", "not valid YAML at line 2, column 1"),
    ])
    def test_a_broken_file_is_an_error_naming_the_file_and_the_key(self, tmp_path, text, where):
        bad = tmp_path / "reasons.yaml"
        bad.write_text(text)
        with pytest.raises(na.ReasonsError) as e:
            na.load(bad)
        assert str(e.value).startswith(f"{bad}: {where}"), str(e.value)


class TestTheGeneratedCodes:
    def test_each_declared_code_is_a_constant_whose_text_is_the_code(self, tmp_path):
        header = tmp_path / "reason_codes_gen.hpp"
        assert generator.main(["generate_reason_codes.py", str(na.REASONS_PATH), str(header)]) == 0
        text = header.read_text()
        assert re.findall(r"^  (k\w+),$", text, re.M) == [generator.constant(c) for c in na.codes()]
        assert re.findall(r'^    case (k\w+): return "([^"]*)";$', text, re.M) == \
            [(generator.constant(c), c) for c in na.codes()]
        assert generator.constant("not-claimed-job-id-method") == "kNotClaimedJobIdMethod"

    def test_a_broken_file_stops_the_build_naming_the_file_and_the_key(self, tmp_path):
        bad = tmp_path / "reasons.yaml"
        bad.write_text("codes:\n  x-y:\n    class: maybe\n    description: d\n    allowed_in_submission: true\n")
        run = subprocess.run([sys.executable, str(REPO / "cases" / "generate" / "generate_reason_codes.py"), str(bad),
                              str(tmp_path / "out.hpp")], capture_output=True, text=True)
        assert (run.returncode, run.stdout) == (1, "")
        assert run.stderr.startswith(f"{bad}: {bad}: codes.x-y.class: ") and "Traceback" not in run.stderr
        assert not (tmp_path / "out.hpp").exists()


class TestTheSources:
    def test_every_skip_names_a_reason_constant(self):
        found, bad = written_codes()
        assert bad == []
        assert sum(len(w) for w in found.values()) > 50  # the parser does find the skips (64 when written)

    def test_every_code_written_is_declared_and_every_declared_code_is_written(self):
        found, _ = written_codes()
        assert {c: w for c, w in found.items() if c not in na.codes()} == {}
        assert sorted(set(na.codes()) - set(found)) == []

    def test_no_case_skips_but_through_the_macros(self):
        # cases/test/ holds the verdict recorder's probes, one of which skips by hand on purpose: not a case
        raw = [f"{p.relative_to(REPO)}:{i}" for p in CASE_SOURCES if PROBES not in p.parents
               for i, line in enumerate(p.read_text().splitlines(), 1) if "GTEST_SKIP" in line]
        assert raw == [f"{DEFINITION.relative_to(REPO)}:{n}" for n, line in
                       enumerate(DEFINITION.read_text().splitlines(), 1) if line.startswith("#define UET_NOT_APPLICABLE(")]

    def test_the_parser_finds_a_code_after_a_condition_with_commas(self):
        text = 'UET_NOT_APPLICABLE_IF(std::find(a.begin(), a.end(), x) == a.end(), reason::kNoSuchCombination, "why, " << f(1, 2));'
        assert list(macro_calls(text, "UET_NOT_APPLICABLE_IF")) == [
            (1, ["std::find(a.begin(), a.end(), x) == a.end()", "reason::kNoSuchCombination", '"why, " << f(1, 2)'])]


def line(verdict="not_applicable", **kw):
    return dict({"event": "end", "case": "Claimed/Ep.ScalableEndpoint/rdm", "verdict": verdict,
                 "reason": "not applicable: the provider offers no scalable endpoints", "seconds": 0.01}, **kw)


class TestVerdictLines:
    def test_a_declared_code_is_kept(self):
        r = result_of_line(line(reason_code="not-claimed-feature"), cell="c", area="ep", binary="uet-cases-ep")
        assert (r.verdict, r.reason_code, r.reason) == (
            "not_applicable", "not-claimed-feature", "not applicable: the provider offers no scalable endpoints")
        assert r.as_dict()["reason_code"] == "not-claimed-feature"

    @pytest.mark.parametrize("code, words", [("not-a-code", "an undeclared reason code 'not-a-code'"),
                                             (None, "no reason code")])
    def test_an_undeclared_or_missing_code_is_an_error_that_says_so(self, code, words):
        r = result_of_line(line(reason_code=code), cell="c", area="ep", binary="uet-cases-ep")
        assert r.verdict == "error"
        assert r.reason == (f"not applicable with {words} (declared codes: spec/not-applicable-reasons.yaml): "
                            "not applicable: the provider offers no scalable endpoints")

    def test_the_junit_xml_carries_the_code(self, tmp_path):
        r = result_of_line(line(reason_code="not-claimed-feature"), cell="c", area="ep", binary="uet-cases-ep")
        write_junit([r], tmp_path / "junit.xml")
        case = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite/testcase")
        assert {p.get("name"): p.get("value") for p in case.find("properties")}["reason_code"] == "not-claimed-feature"
        assert case.find("skipped").get("message") == "not applicable: the provider offers no scalable endpoints"

    def test_other_verdicts_need_no_code(self):
        r = result_of_line(line("pass", reason=None), cell="c", area="ep", binary="uet-cases-ep")
        assert (r.verdict, r.reason_code) == ("pass", None)


class TestSummaryCounts:
    def test_by_code_in_the_file_s_order_and_by_class(self):
        results = [Result("c", "a", "b", f"case{i}", "not_applicable", reason_code=code) for i, code in
                   enumerate(["no-such-combination", "not-claimed-profile", "no-such-combination", "not-uet-provider",
                              "no-loss-applied"])]
        results += [Result("c", "a", "b", "passes", "pass"), Result("c", "a", "b", "errs", "error", reason_code=None)]
        got = na.breakdown(results)
        assert got == {"not_applicable_by_code": {"not-uet-provider": 1, "not-claimed-profile": 1,
                                                  "no-such-combination": 2, "no-loss-applied": 1},
                       "not_applicable_by_class": {"not-claimed": 2, "no-such-combination": 3}}
        assert list(got["not_applicable_by_code"]) == ["not-uet-provider", "not-claimed-profile",
                                                       "no-such-combination", "no-loss-applied"]

    def test_none_not_applicable_gives_zero_classes(self):
        assert na.breakdown([Result("c", "a", "b", "x", "pass")]) == {
            "not_applicable_by_code": {}, "not_applicable_by_class": {"not-claimed": 0, "no-such-combination": 0}}


@pytest.mark.skipif(os.geteuid() != 0, reason="a cell's sides run in network namespaces (root)")
def test_a_case_binary_writes_the_code_of_its_skip_and_leaves_out_impossible_instances(build_dir, tmp_path):
    """End to end: softuet lists no predefined service names and offers no scalable endpoints (not claimed:
    allowed), each said with its code and the reason without it; fi_rma on a DGRAM endpoint exists for no
    provider, so Ep.MaxRmaSizeStaysWithinItsRange has no DGRAM instance (UET_RDM_ONLY) and its RDM one runs."""
    results = run_manifest(SOFTUET, build_dir, tmp_path, areas=["ep"])
    assert not [r for r in results if r.verdict not in ("pass", "not_applicable")]
    got = {r.case: (r.reason_code, r.reason) for r in results if r.verdict == "not_applicable"}
    names = "not applicable: the manifest lists no predefined service names (predefined_service_names); "
    scalable = "not applicable: the provider offers no scalable endpoints (rc == -FI_ENOSYS || rc == -FI_EOPNOTSUPP)"
    assert {c: (code, why[:len(names)] if "Service" in c else why) for c, (code, why) in got.items()} == {
        f"Claimed/Ep.{case}/{kind}": ("not-claimed-feature", why) for kind in ("rdm", "dgram")
        for case, why in (("ServiceFileWinsOverAPredefinedName", names),
                          ("ScalableEndpointsGiveEachReceiveContextAnIndex", scalable))}
    cases = {r.case: r.verdict for r in results}
    assert cases["Claimed/Ep.MaxRmaSizeStaysWithinItsRange/rdm"] == "pass"
    assert "Claimed/Ep.MaxRmaSizeStaysWithinItsRange/dgram" not in cases
