"""The wire oracle: the verdict of a wire check re-derived from its kept capture, by rules that are data
(spec/wire-oracle.yaml), decoded by the suite's own uet-decode. The provider under test runs inside the case
binary and can reach all of its memory, the key that signs its verdict lines too (harness/run/verdict_channel.py):
what the binary says of a check is the provider process's own report. The capture, once kept, is judged
here, in the harness at run time and in ./uet verify afterwards, where the provider cannot reach.

Each result gets `judged_by`:
  wire_oracle  a rule re-derived the statements it names from the capture and agrees with the binary
  case_binary  the binary's own word (SELF_REPORTED): an API check, a wire check no rule states
               ("judged by the case binary only", with why), or a fail the rule's wire part does not show
  harness      a verdict the harness made (a crash, a timeout, a decoder cross-check, a contradiction)
and, for a wire check, `oracle`: what the rule found. A binary's pass (or a warning where a MUST is broken)
that the capture contradicts is an error naming both: the binary's word is not the verdict.
"""
from __future__ import annotations

import dataclasses
import functools
import pathlib
import re

import yaml

from harness.results.conformance_terms import JUDGED_BY_LABELS
from harness.wire.decode_compare import DecoderError, decode_cpp
from harness.results.results import short_case
from harness.results.verdicts import HELD, Verdict
from harness.inputs.manifest import JOB_ID_METHODS, claimed_job_methods, read_resolved, resolved_path
from harness.inputs.spec_versions import wire_data

REPO = pathlib.Path(__file__).resolve().parents[2]
RULES_PATH = REPO / "spec" / "wire-oracle.yaml"
SELF_REPORTED = JUDGED_BY_LABELS["case_binary"]
BINARY_ONLY = "judged by the case binary only"
KINDS = ("rdm", "dgram")
SIDES = ("initiator", "target")
PICKS = ("first", "some", "every")
FRAME_KINDS = {"requests": "uet.ses.opcode", "responses": "uet.ses.rsp.return_code", "any": None}
OPS = ("eq", "ne", "in", "le", "present", "absent")
CONDITIONS = ("uet", "kind", "both_claim_job_method", "target_chose_port")
MAX_LEARNED_PORTS = 4  # the initiator's `auto` port: the destination ports of the frames not to the target
HEX = re.compile(r"[0-9a-f]+")


class RulesError(ValueError):
    """spec/wire-oracle.yaml is not what the evaluator reads; the message names the rule and key."""


@dataclasses.dataclass(frozen=True)
class Expect:
    fields: tuple[str, ...]  # alternatives: the first the frame carries ("ip.dsfield.dscp|ipv6.tclass.dscp")
    op: str
    operand: object          # a value spelling (resolved against the context), a list of them, or True

    @property
    def name(self) -> str:
        return "|".join(self.fields)


@dataclasses.dataclass(frozen=True)
class Check:
    what: str
    sender: str
    frames: str
    pick: str
    expects: tuple[Expect, ...]
    where: tuple[tuple[str, object], ...] = ()
    should: bool = False
    when: tuple[tuple[str, object], ...] = ()


@dataclasses.dataclass(frozen=True)
class Rule:
    case: str
    statements: tuple[str, ...]
    checks: tuple[Check, ...]
    when: tuple[tuple[str, object], ...] = ()


@dataclasses.dataclass(frozen=True)
class Rules:
    rules: dict
    binary_only: dict  # case -> why the capture alone cannot give (part of) its verdict


@dataclasses.dataclass
class Frame:
    sender: str
    number: int
    capture: str
    fields: dict


@dataclasses.dataclass
class Context:
    """What a rule may take from the plan: the instance's kind and each side's resolved manifest (the
    harness writes cells/<cell>/<side>.manifest.json before it starts any binary)."""
    kind: str | None
    manifests: dict  # side -> the resolved manifest (a dict; empty when it could not be read)

    def why_not(self, when) -> str | None:
        """None when every condition holds, else the first that does not, in words."""
        for key, want in when:
            i, t = self.manifests.get("initiator") or {}, self.manifests.get("target") or {}
            if key == "uet" and not (i.get("uet") is True and (want == "initiator" or t.get("uet") is True)):
                return "the manifests do not claim UET" if want == "both" else "the initiator's manifest does not claim UET"
            if key == "kind" and self.kind != want:
                return f"the case runs on {self.kind or 'no'} endpoints, the check on {want}"
            if key == "both_claim_job_method" and not all(
                    want in claimed_job_methods(m) for m in (i, t)):
                return f"a side does not claim the {want} JobID method"
            if key == "target_chose_port" and ((t.get("wire") or {}).get("udp_port_chosen_by") in (None, "suite")) == want:
                return "the suite gave the target its UET port" if want else "the target chose its UET port"
        return None

    def value(self, spelling):
        """An int or a lowercase hex string from a value spelling of spec/wire-oracle.yaml."""
        if isinstance(spelling, bool) or not isinstance(spelling, (int, str)):
            raise RulesError(f"a value must be an integer or a name, not {spelling!r}")
        if isinstance(spelling, int):
            return spelling
        head, _, rest = spelling.partition(".")
        if head in ("manifest", "env"):
            side, _, key = rest.partition(".")
            m = self.manifests.get(side) or {}
            raw = (m.get("environment") or {}).get(key) if head == "env" else m.get(key)
            if isinstance(raw, bool) or not isinstance(raw, (int, str)):
                raise LookupError(f"{spelling} is not in the {side}'s resolved manifest")
            return raw if isinstance(raw, int) else int(raw, 0)
        return static_value(spelling)


@functools.lru_cache(maxsize=None)
def static_value(spelling: str):
    """A value spec/wire.yaml names (ENUM.NAME, constants.NAME) or a lowercase hex byte string."""
    head, _, name = spelling.partition(".")
    wire = wire_data()
    if head == "constants" and name in wire["constants"]:
        return int(wire["constants"][name]["value"])
    if head in wire["enums"] and name:
        for value, known in (wire["enums"][head].get("values") or {}).items():
            if known == name:
                return int(value)
        raise RulesError(f"{spelling}: enum {head} of spec/wire.yaml has no value {name}")
    if not name and HEX.fullmatch(spelling) and len(spelling) % 2 == 0:
        return spelling
    raise RulesError(f"{spelling!r} is no value: an integer, ENUM.NAME or constants.NAME of spec/wire.yaml, "
                     "manifest.SIDE.KEY, env.SIDE.VARIABLE, or lowercase hex")


@functools.lru_cache(maxsize=1)
def field_names() -> frozenset:
    """Every field a decode record can carry: the `fields` of spec/wire.yaml's nodes and fragments."""
    wire = wire_data()
    return frozenset(str(f["name"]) for part in (wire["nodes"], wire["fragments"]) for item in part.values()
                     for f in ((item.get("fields") or []) if isinstance(item, dict) else item) if "name" in f)


def plan_facts(rules: Rules) -> tuple[str, ...]:
    """The keys of a resolved manifest the rules read ("wire.udp_port_chosen_by", "environment.VARIABLE", ...):
    what ./uet verify holds against the package's own manifests, since a rule believes the cell's files."""
    facts = {"uet", "job_id_methods", "wire.udp_port_chosen_by"}  # the conditions of `when`
    for rule in rules.rules.values():
        for check in rule.checks:
            for e in check.expects:
                for spelling in e.operand if isinstance(e.operand, list) else [e.operand]:
                    head, _, rest = str(spelling).partition(".")
                    if head in ("manifest", "env"):
                        key = rest.partition(".")[2]
                        facts.add(key if head == "manifest" else f"environment.{key}")
    return tuple(sorted(facts))


def fact(manifest: dict, key: str):
    value = manifest
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _conditions(raw, where: str) -> tuple:
    if raw is None:
        return ()
    if not isinstance(raw, dict) or set(raw) - set(CONDITIONS):
        raise RulesError(f"{where}: `when` takes {', '.join(CONDITIONS)}")
    for key, value in raw.items():
        allowed = {"uet": ("both", "initiator"), "kind": KINDS, "target_chose_port": (True, False),
                   "both_claim_job_method": JOB_ID_METHODS}[key]
        if value not in allowed:
            raise RulesError(f"{where}: when.{key} is one of {', '.join(map(str, allowed))}, not {value!r}")
    return tuple(sorted(raw.items()))


def _expect(field: str, raw, where: str) -> Expect:
    fields = tuple(field.split("|"))
    if unknown := [f for f in fields if f not in field_names()]:
        raise RulesError(f"{where}: no header of spec/wire.yaml has field {unknown[0]}")
    if isinstance(raw, dict):
        if len(raw) != 1 or next(iter(raw)) not in OPS[1:]:
            raise RulesError(f"{where}: {field}: one of {', '.join(OPS[1:])}")
        op, operand = next(iter(raw.items()))
        if op in ("present", "absent") and operand is not True:
            raise RulesError(f"{where}: {field}: {op}: true")
        if op == "in" and not (isinstance(operand, list) and operand):
            raise RulesError(f"{where}: {field}: in: a list of values")
    else:
        op, operand = "eq", raw
    for spelling in (operand if isinstance(operand, list) else [operand] if op not in ("present", "absent") else []):
        if not (isinstance(spelling, str) and spelling.partition(".")[0] in ("manifest", "env")):
            Context(None, {}).value(spelling)  # a name spec/wire.yaml lacks is an error now, not at judging
    return Expect(fields, op, operand)


def _check(raw, where: str) -> Check:
    keys = {"what", "from", "frames", "pick", "expect", "where", "should", "when"}
    if not isinstance(raw, dict) or set(raw) - keys or not {"what", "from", "frames", "pick", "expect"} <= set(raw):
        raise RulesError(f"{where}: a check has what, from, frames, pick, expect (and where, should, when)")
    if raw["from"] not in SIDES or raw["frames"] not in FRAME_KINDS or raw["pick"] not in PICKS:
        raise RulesError(f"{where}: from is {'|'.join(SIDES)}, frames {'|'.join(FRAME_KINDS)}, pick {'|'.join(PICKS)}")
    if not isinstance(raw["expect"], dict) or not raw["expect"]:
        raise RulesError(f"{where}: expect is a mapping of fields")
    filters = raw.get("where") or {}
    if not isinstance(filters, dict):
        raise RulesError(f"{where}: where is a mapping of fields")
    return Check(str(raw["what"]), raw["from"], raw["frames"], raw["pick"],
                 tuple(_expect(str(f), v, where) for f, v in raw["expect"].items()),
                 tuple((str(f), v) for f, v in filters.items() if _expect(str(f), v, where)),
                 raw.get("should") is True, _conditions(raw.get("when"), where))


def from_data(doc) -> Rules:
    if not isinstance(doc, dict) or doc.get("format") != 1 or not isinstance(doc.get("rules"), dict):
        raise RulesError("spec/wire-oracle.yaml: format 1 with a rules mapping")
    rules = {}
    for case, raw in doc["rules"].items():
        where = f"rule {case}"
        if not isinstance(raw, dict) or set(raw) - {"statements", "when", "checks"} or not raw.get("checks") \
                or not raw.get("statements"):
            raise RulesError(f"{where}: statements, checks (and when)")
        rules[case] = Rule(case, tuple(map(str, raw["statements"])),
                           tuple(_check(c, f"{where}, check {n}") for n, c in enumerate(raw["checks"], 1)),
                           _conditions(raw.get("when"), where))
    binary_only = doc.get("binary_only") or {}
    if not isinstance(binary_only, dict) or not all(isinstance(v, str) for v in binary_only.values()):
        raise RulesError("spec/wire-oracle.yaml: binary_only maps a case to why")
    return Rules(rules, dict(binary_only))


@functools.lru_cache(maxsize=4)
def load(path: pathlib.Path = RULES_PATH) -> Rules:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return from_data(yaml.load(pathlib.Path(path).read_text(), Loader=loader))


# ---------------------------------------------------------------------------------------------------------
# Frames: a capture decoded for both directions.

def _uet(record: dict) -> bool:
    return record.get("status") in ("uet", "malformed")


def _with_segments(record: dict):
    yield record.get("fields") or {}
    for seg in record.get("segments") or []:  # a GSO run's later packets: the run's IP and UDP, their own UET
        yield dict(record.get("fields") or {}, **(seg.get("fields") or {}))


# Many results may name one capture (a package may name it thousands of times): each is decoded once. The
# frames are read, never changed, by the rules.
@functools.lru_cache(maxsize=16)
def frames_of(pcap: pathlib.Path, name: str, target_port: int, initiator_port, uet_decode: pathlib.Path,
              spec_version: str | None) -> list[Frame]:
    """Every UET frame of the capture with its sender: to the target's UET port, the initiator's; decoded by
    the initiator's port (its manifest's or the one the case learned, else for `auto` each port the other frames
    went to), the target's."""
    by_target = decode_cpp(uet_decode, pcap, target_port, spec_version=spec_version)
    if isinstance(initiator_port, int) and initiator_port != target_port:
        ports = [initiator_port]
    else:
        seen = {(r.get("fields") or {}).get("udp.dstport") for r in by_target if not _uet(r)}
        ports = sorted(p for p in seen if isinstance(p, int) and p != target_port)[:MAX_LEARNED_PORTS]
    others = [decode_cpp(uet_decode, pcap, p, spec_version=spec_version) for p in ports]
    frames = []
    for i, record in enumerate(by_target):
        chosen, sender = (record, "initiator") if _uet(record) else (None, "target")
        for decoded in others:
            if chosen is None and i < len(decoded) and _uet(decoded[i]):
                chosen = decoded[i]
        if chosen is not None:
            frames += [Frame(sender, int(chosen.get("frame", i + 1)), name, f) for f in _with_segments(chosen)]
    return frames


# ---------------------------------------------------------------------------------------------------------
# Judging.

@dataclasses.dataclass
class Judgement:
    case: str
    statements: list
    outcome: str                 # holds | broken | not_judged
    why: str | None = None       # not_judged: why; else what the rule left to the binary, if anything
    findings: list = dataclasses.field(default_factory=list)
    checked: list = dataclasses.field(default_factory=list)

    @property
    def must_broken(self) -> bool:
        return any(not f["should"] for f in self.findings)

    def as_dict(self) -> dict:
        return {"rule": self.case, "statements": list(self.statements), "outcome": self.outcome, "why": self.why,
                "checked": list(self.checked), "findings": list(self.findings)}


def show(value) -> str:
    if isinstance(value, bool) or value is None:
        return "absent" if value is None else str(value).lower()
    return hex(value) if isinstance(value, int) else str(value)


def _field(frame: Frame, fields: tuple[str, ...]):
    for f in fields:
        if f in frame.fields:
            return f, frame.fields[f]
    return fields[0], None


def _meets(frame: Frame, e: Expect, ctx: Context) -> tuple[bool, str, str, str]:
    """(met, field, expected in words, captured in words)."""
    field, got = _field(frame, e.fields)
    if e.op == "present":
        return got is not None, field, "present", show(got)
    if e.op == "absent":
        return got is None, field, "absent", show(got)
    values = [ctx.value(v) for v in (e.operand if e.op == "in" else [e.operand])]
    met = {"eq": lambda: got == values[0], "ne": lambda: got is not None and got != values[0],
           "in": lambda: got in values, "le": lambda: isinstance(got, int) and got <= values[0]}[e.op]()
    spelled = " or ".join(show(v) + (f" ({s})" if isinstance(s, str) and not HEX.fullmatch(s) else "")
                          for v, s in zip(values, e.operand if e.op == "in" else [e.operand]))
    return met, field, {"eq": "", "in": "", "ne": "anything but ", "le": "at most "}[e.op] + spelled, show(got)


def _selected(check: Check, frames: list[Frame], ctx: Context) -> list[Frame]:
    kind_field = FRAME_KINDS[check.frames]
    out = []
    for f in frames:
        if f.sender != check.sender or (kind_field and kind_field not in f.fields):
            continue
        if all(_meets(f, Expect((name,), "eq", value), ctx)[0] for name, value in check.where):
            out.append(f)
    return out


def _first_miss(frame: Frame, check: Check, ctx: Context) -> dict | None:
    for e in check.expects:
        met, field, expected, captured = _meets(frame, e, ctx)
        if not met:
            return {"check": check.what, "field": field, "expected": expected, "captured": captured,
                    "frame": frame.number, "capture": frame.capture, "should": check.should}
    return None


def judge(rule: Rule, frames: list[Frame], ctx: Context, binary_only: str | None = None) -> Judgement:
    j = Judgement(rule.case, list(rule.statements), "holds", why=binary_only)
    if why := ctx.why_not(rule.when):
        return Judgement(rule.case, list(rule.statements), "not_judged", why=f"the case does not look at the wire: {why}")
    for check in rule.checks:
        if ctx.why_not(check.when):
            continue
        try:
            chosen = _selected(check, frames, ctx)
            if check.pick == "first":
                miss = _first_miss(chosen[0], check, ctx) if chosen else None
                if not chosen:
                    miss = {"check": check.what, "field": FRAME_KINDS[check.frames] or "frame", "expected": "such a frame",
                            "captured": f"none from the {check.sender} in the capture", "frame": None, "capture": None,
                            "should": check.should}
            elif check.pick == "some":
                misses = [_first_miss(f, check, ctx) for f in chosen]
                miss = None if any(m is None for m in misses) else misses[-1] if misses else {
                    "check": check.what, "field": check.expects[0].name, "expected": "a frame that carries it",
                    "captured": f"no such frame from the {check.sender} in the capture", "frame": None, "capture": None,
                    "should": check.should}
            else:
                miss = next((m for m in (_first_miss(f, check, ctx) for f in chosen) if m), None)
        except LookupError as exc:  # a value the plan does not hold: the check cannot be re-derived here
            return Judgement(rule.case, list(rule.statements), "not_judged", why=str(exc))
        j.checked.append(check.what)
        if miss:
            j.findings.append(miss)
    if j.findings:
        j.outcome = "broken"
    return j


def contradiction(verdict: str, j: Judgement) -> str | None:
    """Why the binary's verdict cannot stand beside what the capture shows, or None. Only a pass (or a
    warning where a MUST is broken) is contradicted: a fail the wire part does not show rests on what the
    binary saw through the API, which the rule does not judge."""
    if j.outcome != "broken" or not (verdict == "pass" or (verdict == "warning" and j.must_broken)):
        return None
    f = next(f for f in j.findings if not f["should"] or verdict == "pass")
    where = f" (frame {f['frame']} of {pathlib.Path(f['capture']).name})" if f["frame"] else ""
    return (f"the wire oracle contradicts the case binary: the binary says {verdict}; the capture shows "
            f"{f['field']} {f['captured']} where {f['expected']} belongs{where}, in {f['check']} "
            f"(statement{'s' if len(j.statements) > 1 else ''} {', '.join(j.statements)}; spec/wire-oracle.yaml)")


def judged_by(verdict: str, j: Judgement | None) -> str:
    """Whose word a binary's verdict is, given the oracle's judgement of it."""
    if j is None or j.outcome == "not_judged":
        return "case_binary"
    if verdict == Verdict.PASS or (verdict in (Verdict.FAIL, Verdict.WARNING) and j.outcome == "broken"):
        return "wire_oracle"
    return "case_binary"


# ---------------------------------------------------------------------------------------------------------
# A result: the rule for its case, its captures and manifests.

def kind_of(case: str) -> str | None:
    last = case.rsplit("/", 1)[-1]
    return last if "/" in case and last in KINDS else None


def cell_folder(capture: pathlib.Path) -> pathlib.Path | None:
    """cells/<cell>/ of a capture at cells/<cell>/captures/<area>/<name>.pcap."""
    return capture.parent.parent.parent if capture.parent.parent.name == "captures" else None


def manifests_beside(folder: pathlib.Path | None) -> dict:
    """Each side's resolved record in a cell's folder ({} where it cannot be read)."""
    return {side: (read_resolved(resolved_path(folder, side)) if folder else None) or {} for side in SIDES}


def judge_result(result: dict, run_dir: pathlib.Path, uet_decode: pathlib.Path, spec_version: str | None,
                 rules: Rules | None = None) -> Judgement | None:
    """The oracle's judgement of a result (a results.json entry), or None when no rule states its case. Its
    captures are the paths results.json records, relative to `run_dir` (a path that leaves it is none)."""
    rules = rules or load()
    case = short_case(str(result.get("case", "")))
    rule = rules.rules.get(case)
    if rule is None:
        return None
    left = rules.binary_only.get(case)
    verdict = result.get("verdict")
    if verdict not in (*HELD, Verdict.FAIL):   # the binary concluded
        return Judgement(case, list(rule.statements), "not_judged", why=f"the case binary's verdict is {verdict}")
    captures = [c for c in ((result.get("evidence") or {}).get("captures") or []) if isinstance(c, dict)]
    frames, ctx = [], None
    for cap in captures:
        named = str(cap.get("capture") or "")
        pcap = (run_dir / named).resolve()
        if not named or not pcap.is_relative_to(run_dir.resolve()) or not pcap.is_file():
            return Judgement(case, list(rule.statements), "broken", findings=[{
                "check": "the kept capture", "field": "capture", "expected": "the capture the result names",
                "captured": f"{named or cap.get('file')!r} is not in the run folder", "frame": None, "capture": None,
                "should": False}])
        if ctx is None:
            ctx = Context(kind_of(str(result.get("case", ""))), manifests_beside(cell_folder(pcap)))
        if (why := ctx.why_not(rule.when)) is None:
            init_port = ((ctx.manifests["initiator"].get("wire") or {}).get("udp_port"))
            if not isinstance(init_port, int) and isinstance(cap.get("initiator_port"), int):
                init_port = cap["initiator_port"]  # an `auto` port: the one the case learned
            port = int(cap.get("port") or 0)
            if not port:
                return Judgement(case, list(rule.statements), "not_judged",
                                 why="the case learned no UET port of the target: the capture alone does not tell its frames")
            if init_port == port:
                return Judgement(case, list(rule.statements), "not_judged",
                                 why="both sides take UET on one UDP port: the capture alone does not tell who sent a frame")
            try:
                frames += frames_of(pcap, str(cap.get("capture")), port, init_port, uet_decode, spec_version)
            except DecoderError as exc:
                return Judgement(case, list(rule.statements), "not_judged", why=f"uet-decode could not read it: {exc}")
        else:
            return Judgement(case, list(rule.statements), "not_judged", why=f"the case does not look at the wire: {why}")
    if ctx is None:
        return Judgement(case, list(rule.statements), "broken", findings=[{
            "check": "the kept capture", "field": "capture", "expected": "a capture of the case's frames",
            "captured": "none kept", "frame": None, "capture": None, "should": False}]) \
            if verdict == "pass" and _looks_at_wire(rule, result, run_dir) else \
            Judgement(case, list(rule.statements), "not_judged", why="no capture was kept")
    return judge(rule, frames, ctx, left)


def _looks_at_wire(rule: Rule, result: dict, run_dir: pathlib.Path) -> bool:
    """Whether the binary must have captured for its pass: the rule's conditions hold for the cell's manifests."""
    ctx = Context(kind_of(str(result.get("case", ""))),
                  manifests_beside(run_dir / "cells" / str(result.get("cell", ""))))
    return bool(ctx.manifests["initiator"]) and ctx.why_not(rule.when) is None


def about_wire(result: dict, rules: Rules, wire_statements: frozenset) -> str | None:
    """For a result no rule judges: why it is the case binary's word alone, when it is a wire check (a
    capture, or a statement the catalogue checks on the wire), else None (an API check)."""
    case = short_case(str(result.get("case", "")))
    captured = bool((result.get("evidence") or {}).get("captures"))
    if not captured and case not in rules.binary_only and not set(result.get("statements") or []) & wire_statements:
        return None
    return f"{BINARY_ONLY}: " + (rules.binary_only.get(case) or "no rule of spec/wire-oracle.yaml states it")


@functools.lru_cache(maxsize=1)
def wire_statements() -> frozenset:
    from harness.inputs import catalogue as catalogue_mod
    return frozenset(s.id for s in catalogue_mod.load().statements if s.check in ("wire", "both"))


def apply(result, run_dir: pathlib.Path, uet_decode: pathlib.Path, spec_version: str | None,
          rules: Rules | None = None) -> None:
    """At run time, once the captures are kept: the oracle's word on a binary's result (a Result), its
    `judged_by`, and an error naming both where the capture contradicts the binary's verdict."""
    if result.judged_by != "case_binary":
        return  # a verdict the harness made is its own
    rules = rules or load()
    doc = result.as_dict()
    j = judge_result(doc, run_dir, uet_decode, spec_version, rules)
    if j is None:
        why = about_wire(doc, rules, wire_statements())
        result.oracle = {"outcome": "binary_only", "why": why} if why else None
        return
    result.oracle = j.as_dict()
    result.judged_by = judged_by(result.verdict, j)
    if text := contradiction(result.verdict, j):
        result.oracle["binary_verdict"] = result.verdict
        if cut := [c["cut"] for c in (doc.get("evidence") or {}).get("captures") or [] if c.get("cut")]:
            # A provider that floods the wire first pushes its frames past the cap: the pass cannot be re-derived,
            # and a verdict nobody but the binary can vouch for is not let stand (an error, never a pass).
            dropped = sum(int(c.get("frames_dropped") or 0) for c in cut)
            text = (f"the wire oracle cannot bear out the case binary's {result.verdict}: the capture was cut at the "
                    f"cap ({dropped} later frame(s) dropped), and what was kept does not hold the frame the rule "
                    f"reads ({text.split('; the capture shows ', 1)[-1]})")
        result.verdict, result.reason, result.judged_by = "error", text, "wire_oracle"


def summary(results: list[dict]) -> dict:
    """results.json's `wire_oracle`: whose word each verdict is, what the oracle made of the wire checks, and
    the honest list of those it could not judge (each case once, with why)."""
    import collections
    by = collections.Counter(r.get("judged_by") or "harness" for r in results)
    outcomes = collections.Counter(
        "contradicted" if (r.get("oracle") or {}).get("binary_verdict") else (r.get("oracle") or {}).get("outcome")
        for r in results if r.get("oracle"))
    binary_only = {}
    for r in results:
        o = r.get("oracle") or {}
        if o.get("outcome") in ("binary_only", "not_judged"):
            binary_only.setdefault(short_case(str(r.get("case", ""))), o.get("why"))
    return {"rules": len(load().rules), "judged_by": {k: by.get(k, 0) for k in ("wire_oracle", "case_binary", "harness")},
            "outcomes": {k: outcomes.get(k, 0) for k in ("holds", "broken", "contradicted", "not_judged", "binary_only")},
            "binary_only": [{"case": c, "why": w} for c, w in sorted(binary_only.items())]}
