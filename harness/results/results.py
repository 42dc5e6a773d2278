"""The one results model of a run (reports/RESULTS-FORMAT.md): verdicts read from what the case binaries
write as each case ends (the cell plan's results file, one signed JSON line per case: harness/run/verdict_channel.py), the
crash and timeout verdicts the harness adds, and the renderers beside it: results.json, merged JUnit XML,
the closing text line; and results.json's one reader, which holds a file to its schema (reports/results.schema.yaml).
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import json
import pathlib
import xml.etree.ElementTree as ET

import yaml

from harness.results.run_delay import INCONCLUSIVE
from harness.inputs.diagnostic_statements import add_broken_statements
from harness.inputs.not_applicable import check_code
from harness.files import input_files, output_files
from harness.files.untrusted import printable, printable_tree
from harness.results.verdicts import INFRA, JUNIT, NOT_HELD, UNDECIDED, VERDICTS, Verdict


def short_case(case: str) -> str:
    """'Claimed/Authz.MrForOneJobIdRefusesAnother/rdm' -> 'Authz.MrForOneJobIdRefusesAnother' (any kind)."""
    suite, _, name = case.partition(".")
    return f"{suite.split('/')[-1]}.{name.split('/')[0]}"


def inconclusive(r) -> bool:
    """An error because the host starved the case (cases/common/claims/liveness.hpp, harness/results/run_delay.py): it could
    not tell whether the provider would have done what it waited for; never held against the provider."""
    return r.verdict == Verdict.ERROR and (r.reason or "").startswith(INCONCLUSIVE)


@dataclasses.dataclass
class Result:
    cell: str
    area: str
    binary: str
    case: str
    verdict: str
    statements: list[str] = dataclasses.field(default_factory=list)
    reason: str | None = None
    reason_code: str | None = None  # not_applicable: a code of spec/not-applicable-reasons.yaml
    message: str | None = None
    detail: str | None = None
    blamed_side: str | None = None
    blame_basis: str | None = None
    blamed_manifest: str | None = None
    # fail: the failures of the case's own checks, those neither a malformed frame's diagnostic nor a refused
    # call (evidence "refused") accounts for (harness/results/causes.py groups them under the case's statements)
    own_failures: int | None = None
    expected: str | None = None
    seen: str | None = None
    choices: list[str] = dataclasses.field(default_factory=list)
    notes: dict = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    evidence: dict = dataclasses.field(default_factory=dict)
    repro: str | None = None
    expectation: dict | None = None    # harness/results/expectations.py: the entry that matched and what came of it
    attempts: list[dict] | None = None  # harness/run/attempts.py: each attempt's seed and verdict
    pass_rate: float | None = None
    # Whose word the verdict is (harness/wire/wire_oracle.py): wire_oracle, case_binary (self-reported: the provider
    # runs in the binary) or harness; and, for a wire check, what the oracle found in its capture.
    judged_by: str = "harness"
    oracle: dict | None = None

    @property
    def id(self) -> str:
        return f"{self.cell}/{self.area}/{self.case}"

    def as_dict(self) -> dict:
        return dict(dataclasses.asdict(self), id=self.id)


def expected_and_seen(message: str | None) -> tuple[str | None, str | None]:
    """From googletest's first "Expected equality of these values" block: the cases write
    EXPECT_EQ(seen, expected), so the second operand is what the statement wants."""
    if not message or "Expected equality of these values:" not in message:
        return None, None
    lines = message.split("Expected equality of these values:", 1)[1].splitlines()[1:]
    operands, values = [], {}
    for line in lines:
        text = line.strip()
        if not text:
            continue
        if line.startswith("    Which is: ") and operands:
            values[len(operands) - 1] = text[len("Which is: "):]
        elif line.startswith("  ") and not line.startswith("    ") and len(operands) < 2:
            operands.append(text)
        elif not line.startswith("  "):
            break
    if len(operands) < 2:
        return None, None
    show = lambda i: operands[i] + (f" = {values[i]}" if i in values else "")
    return show(1), show(0)


# What a verdict line carries as evidence: each of the line's fields of these names, when it has one.
# claimed_unsupported: what a side claims and lacks, the case's first such mark (`detail` says it in words).
EVIDENCE_FIELDS = ("frames", "captures", "diagnostics", "refused", "claimed_unsupported")


def claimed_unsupported(result: dict) -> str | None:
    """What a result of results.json (a dict) found a side claims and lacks; None when it found no such claim."""
    evidence = result.get("evidence")
    what = evidence.get("claimed_unsupported") if isinstance(evidence, dict) else None
    return what if isinstance(what, str) and what else None


def result_of_line(event: dict, *, cell: str, area: str, binary: str) -> Result:
    expected, seen = expected_and_seen(event.get("message"))
    statements = event.get("statements")
    verdict, reason = event["verdict"], event.get("reason")
    if verdict in INFRA:
        # The provider runs inside the binary and can sign its lines: were its word taken, a provider could
        # call its own failure the infrastructure's (not tested, never not met). Only the harness says it.
        verdict, reason = Verdict.ERROR.value, f"the case binary reported {verdict!r}, a verdict only the harness gives"
    result = Result(expected=expected, seen=seen, cell=cell, area=area, binary=binary, case=event["case"], verdict=verdict,
                  statements=[str(s) for s in statements if s] if isinstance(statements, list) else [],
                  reason=reason, reason_code=event.get("reason_code"), message=event.get("message"), detail=event.get("detail"),
                  blamed_side=event.get("blamed_side"), blame_basis=event.get("blame_basis"),
                  choices=list(event.get("choices") or []), notes=dict(event.get("notes") or {}), seconds=round(float(event.get("seconds", 0)), 3),
                  own_failures=event.get("own_failures") if isinstance(event.get("own_failures"), int) else None,
                  evidence={k: event[k] for k in EVIDENCE_FIELDS if event.get(k)},
                  judged_by="case_binary")
    add_broken_statements(result)
    check_code(result)
    return result


def counts(results) -> dict[str, int]:
    c = collections.Counter(r.verdict for r in results)
    out = {v: c.get(v, 0) for v in VERDICTS}
    out["total"] = sum(c.values())
    return out


def junit_suites(results: list[Result]) -> dict[tuple[str, str], list[Result]]:
    """The results by JUnit testsuite, (cell, area), in the order first met."""
    groups: dict[tuple[str, str], list[Result]] = collections.defaultdict(list)
    for r in results:
        groups[(r.cell, r.area)].append(r)
    return groups


def write_junit(results: list[Result], path: pathlib.Path, run_id: str | None = None) -> None:
    """Merged JUnit XML: a testsuite per cell and area, the verdict and statements as properties; the root
    is named after the run (its run_id), so a CI that keeps many runs' files tells them apart. What a
    binary printed is made printable first: one escape character would make the file not XML."""
    root = ET.Element("testsuites", {"name": printable(run_id)} if run_id else {})
    groups = junit_suites(results)

    def element(parent, tag, text=None, **attrs):
        e = ET.SubElement(parent, tag, {k: printable(v) for k, v in attrs.items()})
        if text is not None:
            e.text = printable(text)
        return e

    for (cell, area), rs in groups.items():
        c = counts(rs)
        suite = element(root, "testsuite", name=f"{cell}.{area}", tests=str(len(rs)),
                        failures=str(sum(c[v] for v in NOT_HELD)), errors=str(sum(c[v] for v in UNDECIDED + INFRA)),
                        skipped=str(c[Verdict.NOT_APPLICABLE]), time=f"{sum(r.seconds for r in rs):.3f}")
        for r in rs:
            tc = element(suite, "testcase", classname=f"{cell}.{area}", name=r.case, time=f"{r.seconds:.3f}")
            props = element(tc, "properties")
            element(props, "property", name="verdict", value=r.verdict)
            element(props, "property", name="requirements", value=",".join(r.statements))
            if r.blamed_side:
                element(props, "property", name="blamed_side", value=r.blamed_side)
            if r.reason_code:
                element(props, "property", name="reason_code", value=r.reason_code)
            element(props, "property", name="judged_by", value=r.judged_by)
            if r.expectation:  # the verdict stays what the check did; a CI reads what the expectations made of it
                element(props, "property", name="expectation", value=r.expectation.get("status", ""))
            kind = JUNIT.get(r.verdict)
            if kind == "failure":
                element(tc, "failure", r.message or "", message=(r.detail or r.message or "")[:500])
            elif kind == "error":
                # type: the JUnit schema's attribute for the kind of an error, which CI tools show beside it; only an
                # infrastructure error has one, so a CI filter tells a lost placement from the provider's errors.
                element(tc, "error", r.message or "", message=f"{r.verdict}: {r.reason or ''}"[:500],
                        **({"type": r.verdict} if r.verdict in INFRA else {}))
            elif kind == "skipped":
                element(tc, "skipped", message=r.reason or "not applicable")
    ET.indent(root)
    output_files.write(path, ET.tostring(root, encoding="unicode") + "\n")


def write_results_json(doc: dict, path: pathlib.Path) -> None:
    # replaced whole (harness/files/output_files.py): a reader never sees half a file, also when the run is cut short
    output_files.write(path, json.dumps(printable_tree(doc), indent=1, ensure_ascii=False) + "\n")


SCHEMA_PATH = pathlib.Path(__file__).resolve().parents[2] / "reports" / "results.schema.yaml"
NOT_RESULTS = "not a results.json (reports/RESULTS-FORMAT.md)"


@functools.cache
def schema() -> dict:
    """results.json's schema (reports/results.schema.yaml), its verdict words this model's."""
    doc = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    doc["$defs"]["verdict"]["enum"] = list(VERDICTS)
    return doc


def read_results_json(path: pathlib.Path) -> tuple[bytes, dict]:
    """(bytes, document) of a run's results.json (the file, or the run folder that holds it), read as
    untrusted input: a regular file of bounded size and nesting (harness/files/input_files.py) that follows
    the schema, every string made printable. input_files.InputError names the file and the key that is wrong."""
    path = pathlib.Path(path)
    file = path / "results.json" if path.is_dir() else path
    raw = input_files.read_json_bytes(file, "results.json")
    return raw, parse_results_json(file, raw)


def parse_results_json(file: pathlib.Path, raw: bytes) -> dict:
    """The document of results.json's bytes, checked as read_results_json says."""
    return checked_results(input_files.parse_json(file, raw, "results.json"), file)


def checked_results(doc, file) -> dict:
    """`doc`, a results.json's parsed JSON (read by whoever holds the file: a package's member is read within
    the package's limits), once it follows the schema: printable; InputError naming `file`, the key and what
    is wrong (the first problem in key order) when it does not."""
    problems = input_files.schema_problems(doc, schema(), input_files.shown_path(file))
    if problems:
        raise input_files.InputError([f"{problems[0]}: {NOT_RESULTS}"])
    return printable_tree(doc)
