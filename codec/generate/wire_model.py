"""Load spec/wire.yaml into a checked model of the parse graph.

The model is what the C++ generator emits from. Every check that could make the generated decoder
read outside a header, or read a field that was not decoded on the current path, is made here, at
build time, so the generated code needs no such checks at run time.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any

import yaml

KINDS = {"uint", "int", "reserved", "bytes", "mac", "ipv4", "ipv6"}
BYTE_KINDS = {"bytes", "mac", "ipv4", "ipv6"}


class SpecError(Exception):
    """wire.yaml is inconsistent; the message names the node and field."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys without a word; in a spec file that is a lost entry."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise SpecError(f"line {key_node.start_mark.line + 1}: {key} appears twice in one mapping")
            seen.add(key)
        return super().construct_mapping(node, deep)


def ident(name: str) -> str:
    """A C++ identifier for a dotted spec name."""
    return re.sub(r"[^A-Za-z0-9]", "_", name)


@dataclasses.dataclass
class When:
    field: str
    op: str            # eq, in, not_in
    values: list[int]


@dataclasses.dataclass
class FieldUse:
    """One field as laid out in one node."""
    name: str          # global field name; reserved fields get a descriptive name
    at: int
    bit: int
    bits: int          # 0 for byte strings
    nbytes: int        # 0 for bit fields
    kind: str
    enum: str | None
    emit: bool
    when: When | None
    uncertain: str | None
    invalid: list[int]
    require: int | None
    aggregate: bool = False

    @property
    def start_bit(self) -> int:
        return self.at * 8 + self.bit

    @property
    def end_byte(self) -> int:
        """One past the last byte the field occupies."""
        if self.nbytes:
            return self.at + self.nbytes
        return (self.start_bit + self.bits + 7) // 8


@dataclasses.dataclass
class Versions:
    """The spec versions something holds in, as indices into Model.versions: since <= v < before."""
    since: int | None = None
    before: int | None = None

    def __bool__(self) -> bool:
        return self.since is not None or self.before is not None


@dataclasses.dataclass
class Case:
    op: str            # eq, in, range, param
    values: list[int]
    param: str | None
    to: str
    versions: Versions = dataclasses.field(default_factory=Versions)


# The diagnostic kinds a check may report (codec/DECODE-OUTPUT.md): invalid_value for what the spec rules out,
# a kind of its own for what only a choice rules out (the decoders' diagnostic lists know each).
CHECK_DIAGNOSTICS = ("invalid_value", "job_id_zero")


@dataclasses.dataclass
class Check:
    """A validity rule of a node that emits nothing: `field` must not be one of `invalid` (or must be
    `require`) where `when` and the spec version hold. Reported as `diag` (invalid_value unless the YAML
    names another kind of CHECK_DIAGNOSTICS), naming `choice` when the rule rests on one."""
    field: str
    invalid: list[int]
    require: int | None
    when: When | None
    versions: Versions
    diag: str = "invalid_value"
    choice: str | None = None


# Where an edge can lead besides a node: decoding ends (`end`), reports the select field as unknown
# (`error`, default only), or ends at an IP fragment (`fragment`). The number is the edge's code in the
# generated tables (CaseInfo::to, NodeInfo::default_to).
PSEUDO_TARGETS = {"end": -1, "error": -2, "fragment": -3}


# Decoder options a `clear_text` edge may name (DecodeOptions members, uet-decode and scapy_uet options).
CLEAR_TEXT_OPTIONS = ("tss_conf_offset",)


@dataclasses.dataclass
class ClearText:
    """An edge taken only when the decoder option `option` (a byte count) is non-zero: that many bytes
    after the node are clear text and are decoded from `to`, the rest (ciphertext and the ICV of
    `icv_bytes`) never is. Choice tss-coverage: a secure domain's confidentiality offset."""
    option: str
    to: str
    icv_bytes: int


@dataclasses.dataclass
class Select:
    field: str | None  # None = always
    cases: list[Case]
    default: str       # node id or a pseudo-target (PSEUDO_TARGETS)
    clear_text: ClearText | None = None

    def targets(self) -> list[str]:
        """Every place this edge can lead, the clear-text edge included."""
        return [c.to for c in self.cases] + [self.default] + ([self.clear_text.to] if self.clear_text else [])


@dataclasses.dataclass
class Node:
    id: str
    header: str
    dispatch: bool
    min_len: int
    size: int | None            # fixed size, or None when size_rule is used
    size_rule: dict | None      # {field, scale, min}
    bounds: dict | None         # {field, includes_header}
    payload_length: str | None
    payload_none: bool          # `payload: none`: an `end` taken here ends the UET packet
    uncertain: str | None
    fields: list[FieldUse]
    next: Select
    uet: bool
    checks: list[Check] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class FieldInfo:
    name: str
    kind: str
    enum: str | None
    nbytes: int
    emit: bool


@dataclasses.dataclass
class LibfabricMap:
    """One map of `libfabric:`: libfabric names against the value names of one wire enum."""
    name: str
    source: str
    confidence: str
    enum: str
    pairs: list[tuple[str, str]]   # (left, right) in file order
    choice: str | None
    default: str | None


# The maps the generator emits code for: which side names values of which wire enum, and the form
# of the libfabric names on the other side. Fixed, because each map becomes specific C++ functions.
LIBFABRIC_MAPS = {
    "atomic_op": ("right", "amo_opcode", re.compile(r"FI_[A-Z0-9_]+")),
    "atomic_datatype": ("right", "amo_datatype", re.compile(r"FI_[A-Z0-9_]+")),
    "ses_return_code_errno": ("left", "ses_return_code", re.compile(r"FI_E[A-Z0-9_]+")),
}


@dataclasses.dataclass
class Model:
    constants: dict[str, Any]
    choices: dict[str, dict]
    enums: dict[str, dict]
    links: dict[int, dict]
    nodes: dict[str, Node]
    fields: dict[str, FieldInfo]
    headers: list[str]
    libfabric: dict[str, LibfabricMap] = dataclasses.field(default_factory=dict)
    versions: list[str] = dataclasses.field(default_factory=list)   # known spec versions, oldest first
    default_version: int = 0
    sources: dict[str, dict] = dataclasses.field(default_factory=dict)
    rules: dict[str, VersionRule] = dataclasses.field(default_factory=dict)   # spec_versions.rules


def _when(raw: dict | None, where: str) -> When | None:
    if raw is None:
        return None
    for op in ("eq", "in", "not_in"):
        if op in raw:
            vals = raw[op] if isinstance(raw[op], list) else [raw[op]]
            return When(raw["field"], op, [int(v) for v in vals])
    raise SpecError(f"{where}: `when` needs eq, in or not_in")


def _fields(raw_fields: list, fragments: dict, node_id: str, header: str, base: int = 0) -> list[FieldUse]:
    out: list[FieldUse] = []
    for raw in raw_fields:
        if "include" in raw:
            frag = fragments.get(raw["include"])
            if frag is None:
                raise SpecError(f"{node_id}: unknown fragment {raw['include']}")
            out += _fields(frag, fragments, node_id, header, base + int(raw.get("at", 0)))
            continue
        kind = raw.get("kind", "uint")
        if kind not in KINDS:
            raise SpecError(f"{node_id}: field {raw.get('name')} has unknown kind {kind}")
        at = base + int(raw["at"])
        bit = int(raw.get("bit", 0))
        name = raw.get("name") or f"{header}.reserved@{at}.{bit}"
        nbytes = int(raw.get("bytes", 0))
        bits = int(raw.get("bits", 0))
        if kind in BYTE_KINDS and not nbytes:
            raise SpecError(f"{node_id}: {name} of kind {kind} needs `bytes`")
        if not nbytes and not (1 <= bits <= 64):
            raise SpecError(f"{node_id}: {name} needs 1..64 `bits` or `bytes`")
        if nbytes and bit:
            raise SpecError(f"{node_id}: byte string {name} must start on a byte boundary")
        out.append(FieldUse(
            name=name, at=at, bit=bit, bits=bits, nbytes=nbytes,
            kind="bytes" if (nbytes and kind in ("uint",)) else kind,
            enum=raw.get("enum"), emit=bool(raw.get("emit", True)) and kind != "reserved",
            when=_when(raw.get("when"), f"{node_id}.{name}"), uncertain=raw.get("uncertain"),
            invalid=[int(v) for v in raw.get("invalid", [])],
            require=int(raw["require"]) if "require" in raw else None,
            aggregate=bool(raw.get("aggregate", False))))
    return out


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


class KnownVersions(list):
    """The known spec versions, oldest first, and the named rules (`spec_versions.rules`): where each
    behaviour that differs between versions holds, as its raw `since`/`before`."""
    rules: dict[str, dict]


@dataclasses.dataclass
class VersionRule:
    id: str
    what: str
    versions: Versions


def _versions(raw: dict, known: KnownVersions, where: str) -> Versions:
    """`since:` / `before:` of an entry, as indices into the known versions; `rule: X` stands for the
    versions of rule X, `unless: X` for the others (X must then hold from or until one version)."""
    if "rule" in raw or "unless" in raw:
        if any(k in raw for k in ("since", "before")) or ("rule" in raw and "unless" in raw):
            raise SpecError(f"{where}: names a rule and versions; give one of rule, unless, since/before")
        name = str(raw.get("rule", raw.get("unless")))
        if name not in known.rules:
            raise SpecError(f"{where}: unknown spec-version rule {name} (spec_versions.rules)")
        held = known.rules[name]
        if "rule" in raw:
            raw = held
        elif ("since" in held) == ("before" in held):
            raise SpecError(f"{where}: unless {name}: the rule holds over a bounded range, its complement is not one")
        else:
            raw = {"before": held["since"]} if "since" in held else {"since": held["before"]}
    out = Versions()
    for key in ("since", "before"):
        if key in raw:
            text = str(raw[key])
            if text not in known:
                raise SpecError(f"{where}: {key} {text} is not a known spec version ({', '.join(known)})")
            setattr(out, key, known.index(text))
    if out.since is not None and out.before is not None and out.since >= out.before:
        raise SpecError(f"{where}: holds in no version (since {known[out.since]}, before {known[out.before]})")
    return out


def _select(raw: dict, node_id: str, known: list[str], constants: dict) -> Select:
    sel = raw.get("select")
    cases = []
    for c in raw.get("cases", []):
        if "eq" in c:
            cases.append(Case("eq", [int(c["eq"])], None, c["to"]))
        elif "in" in c:
            cases.append(Case("in", [int(v) for v in c["in"]], None, c["to"]))
        elif "range" in c:
            lo, hi = (int(v) for v in c["range"])
            cases.append(Case("range", [lo, hi], None, c["to"]))
        elif "param" in c:
            cases.append(Case("param", [], c["param"], c["to"]))
        else:
            raise SpecError(f"{node_id}: a case needs eq, in, range or param")
        cases[-1].versions = _versions(c, known, f"{node_id}: case to {c['to']}")
    clear = raw.get("clear_text")
    clear_text = None
    if clear is not None:
        if set(clear) != {"option", "to", "icv"} or clear["option"] not in CLEAR_TEXT_OPTIONS:
            raise SpecError(f"{node_id}: clear_text needs `option` (one of {', '.join(CLEAR_TEXT_OPTIONS)}), "
                            "`to` and `icv` (a constant's name)")
        if clear["icv"] not in constants:
            raise SpecError(f"{node_id}: clear_text icv {clear['icv']} is not a constant")
        clear_text = ClearText(clear["option"], clear["to"], int(constants[clear["icv"]]["value"]))
    return Select(None if sel in (None, "always") else sel, cases, raw.get("default", "end"), clear_text)


def _checks(raw: list, node_id: str, known: list[str]) -> list[Check]:
    out = []
    for c in raw or []:
        where = f"{node_id}: check of {c.get('field')}"
        if "field" not in c or ("invalid" in c) == ("require" in c):
            raise SpecError(f"{where}: a check names a `field` and one of `invalid` or `require`")
        diag = str(c.get("diag", "invalid_value"))
        if diag not in CHECK_DIAGNOSTICS:
            raise SpecError(f"{where}: diag {diag} is not one the decoders report ({', '.join(CHECK_DIAGNOSTICS)})")
        if diag != "invalid_value" and not c.get("choice"):
            raise SpecError(f"{where}: a check reporting {diag} names the `choice` it rests on")
        out.append(Check(c["field"], [int(v) for v in c.get("invalid", [])],
                         int(c["require"]) if "require" in c else None, _when(c.get("when"), where),
                         _versions(c, known, where), diag, c.get("choice")))
    return out


def _spec_versions(doc: dict) -> tuple[KnownVersions, int]:
    raw = doc.get("spec_versions") or {}
    known = KnownVersions(sorted((str(v) for v in (raw.get("known") or {})), key=_version_key))
    if not known or str(raw.get("default")) not in known:
        raise SpecError("spec_versions: needs `known` versions and a `default` among them")
    known.rules = {}
    for name, rule in (raw.get("rules") or {}).items():
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or not isinstance(rule, dict) or not rule.get("what") \
                or set(rule) - {"since", "before", "what"} or not ({"since", "before"} & set(rule)):
            raise SpecError(f"spec_versions.rules.{name}: a rule is a snake_case name with `what` and since/before")
        known.rules[name] = rule
    return known, known.index(str(raw["default"]))


def _payload_none(raw: dict, node_id: str) -> bool:
    payload = raw.get("payload")
    if payload not in (None, "none"):
        raise SpecError(f"{node_id}: `payload` can only be `none` (got {payload!r})")
    return payload == "none"


def load(path: str) -> Model:
    with open(path, encoding="utf-8") as fh:
        doc = yaml.load(fh, Loader=_UniqueKeyLoader)
    known, default_version = _spec_versions(doc)
    fragments = doc.get("fragments", {})
    nodes: dict[str, Node] = {}
    for node_id, raw in doc["nodes"].items():
        header = raw.get("header", node_id)
        size = raw.get("size")
        size_rule = size if isinstance(size, dict) else None
        fixed = None if size_rule else (0 if raw.get("dispatch") else int(size))
        min_len = int(raw.get("min_len", size_rule["min"] if size_rule else fixed))
        fields = _fields(raw.get("fields", []), fragments, node_id, header)
        if raw.get("uncertain"):
            for f in fields:
                f.uncertain = f.uncertain or raw["uncertain"]
        nodes[node_id] = Node(
            id=node_id, header=header, dispatch=bool(raw.get("dispatch")), min_len=min_len, size=fixed,
            size_rule=size_rule, bounds=raw.get("bounds"), payload_length=raw.get("payload_length"),
            payload_none=_payload_none(raw, node_id),
            uncertain=raw.get("uncertain"), fields=fields, next=_select(raw["next"], node_id, known, doc["constants"]),
            uet=header == "uet" or header.startswith("uet."), checks=_checks(raw.get("checks"), node_id, known))
    model = Model(constants=doc["constants"], choices=doc["choices"], enums=doc["enums"],
                  links={int(k): v for k, v in doc["links"].items()}, nodes=nodes, fields={}, headers=[],
                  versions=list(known), default_version=default_version, sources=doc.get("sources") or {},
                  rules={n: VersionRule(n, str(r["what"]), _versions(r, known, f"spec_versions.rules.{n}"))
                         for n, r in known.rules.items()})
    for name, enum in model.enums.items():
        for value, raw_versions in (enum.get("versions") or {}).items():
            if int(value) not in enum.get("values", {}):
                raise SpecError(f"enum {name}: versions of {value}, which is not one of its values")
            enum.setdefault("_versions", {})[int(value)] = _versions(raw_versions, known, f"enum {name} value {value}")
    _check(model)
    _check_choices(model)
    model.libfabric = _libfabric(doc.get("libfabric") or {}, model)
    return model


def _libfabric(raw: dict, model: Model) -> dict[str, LibfabricMap]:
    """Check `libfabric:`: every wire-side name is a value of the map's enum, every libfabric name has
    the libfabric form, a map onto wire values is one-to-one (it is also looked up in reverse)."""
    for name in raw:
        if name not in LIBFABRIC_MAPS:
            raise SpecError(f"libfabric: unknown map {name} (known: {', '.join(LIBFABRIC_MAPS)})")
    out: dict[str, LibfabricMap] = {}
    for name, (wire_side, enum_name, fi_form) in LIBFABRIC_MAPS.items():
        where = f"libfabric.{name}"
        m = raw.get(name)
        if not isinstance(m, dict):
            raise SpecError(f"{where}: missing (the generator emits lookups for it)")
        for key in ("source", "confidence", "enum", "pairs"):
            if key not in m:
                raise SpecError(f"{where}: needs `{key}`")
        if m["enum"] != enum_name:
            raise SpecError(f"{where}: enum must be {enum_name}, not {m['enum']}")
        labels = {str(v) for v in model.enums[enum_name].get("values", {}).values()}
        if not isinstance(m["pairs"], dict) or not m["pairs"]:
            raise SpecError(f"{where}: `pairs` must be a non-empty mapping")
        pairs: list[tuple[str, str]] = []
        rights: set[str] = set()
        for left, right in m["pairs"].items():
            left, right = str(left), str(right)
            wire, fi = (right, left) if wire_side == "right" else (left, right)
            entry = f"{where}: {left} -> {right}"
            if not fi_form.fullmatch(fi):
                raise SpecError(f"{entry}: {fi} is not a libfabric name of the form {fi_form.pattern}")
            if wire not in labels:
                raise SpecError(f"{entry}: {wire} is not a value of enum {enum_name}")
            if wire_side == "right" and right in rights:
                raise SpecError(f"{entry}: {right} is mapped twice, so its reverse lookup is ambiguous")
            rights.add(right)
            pairs.append((left, right))
        choice, default = m.get("choice"), m.get("default")
        if choice is not None and choice not in model.choices:
            raise SpecError(f"{where}: cites unknown choice {choice}")
        if wire_side == "left":
            # Values are this suite's choice (the spec table is MISSING) and unlisted codes need a value.
            if choice is None:
                raise SpecError(f"{where}: needs `choice` (the spec gives no table)")
            if default is None or not fi_form.fullmatch(str(default)):
                raise SpecError(f"{where}: needs `default`, a libfabric name of the form {fi_form.pattern}")
        out[name] = LibfabricMap(name, str(m["source"]), str(m["confidence"]), enum_name, pairs, choice,
                                 None if default is None else str(default))
    return out


def _check(model: Model) -> None:
    nodes = model.nodes
    headers: list[str] = []
    for node in nodes.values():
        if node.header not in headers:
            headers.append(node.header)
        for f in node.fields:
            if f.end_byte > node.min_len:
                raise SpecError(f"{node.id}: {f.name} ends at byte {f.end_byte}, beyond the node's {node.min_len} bytes")
            if f.enum and f.enum not in model.enums:
                raise SpecError(f"{node.id}: {f.name} uses unknown enum {f.enum}")
            if f.uncertain and f.uncertain not in model.choices:
                raise SpecError(f"{node.id}: {f.name} cites unknown choice {f.uncertain}")
            if f.kind == "reserved":
                continue
            info = model.fields.get(f.name)
            nbytes = f.nbytes
            if info is None:
                model.fields[f.name] = FieldInfo(f.name, f.kind, f.enum, nbytes, f.emit)
            elif (info.kind, info.enum, info.nbytes, info.emit) != (f.kind, f.enum, nbytes, f.emit):
                raise SpecError(f"{node.id}: {f.name} is declared differently in another node")
        if node.uncertain and node.uncertain not in model.choices:
            raise SpecError(f"{node.id}: cites unknown choice {node.uncertain}")
        for chk in node.checks:
            if chk.choice and chk.choice not in model.choices:
                raise SpecError(f"{node.id}: the check of {chk.field} cites unknown choice {chk.choice}")
        for t in node.next.targets():
            if t not in PSEUDO_TARGETS and t not in nodes:
                raise SpecError(f"{node.id}: next node {t} does not exist")
        for c in node.next.cases:
            if c.param and c.param not in ("udp_port",):
                raise SpecError(f"{node.id}: unknown select parameter {c.param}")
    for name, enum in model.enums.items():
        labels = list(enum.get("values", {}).values())
        bad = [label for label in labels if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(label))]
        if bad or len(set(labels)) != len(labels):
            raise SpecError(f"enum {name}: value names must be distinct identifiers (bad: {bad or 'duplicates'})")
    model.headers = headers
    for link in model.links.values():
        if link["root"] not in nodes:
            raise SpecError(f"link {link['name']}: root {link['root']} does not exist")
    _check_paths(model)


def _check_paths(model: Model) -> None:
    """Every field read by `when`, `select`, a size rule or `bounds` must be decoded on every path to
    the reader, earlier than it; no field may be decoded twice on one path. Checked by walking every
    path from every root (the graph is small and acyclic)."""
    nodes = model.nodes

    def walk(node_id: str, seen: frozenset[str], path: tuple[str, ...]) -> None:
        if node_id in path:
            raise SpecError(f"cycle in the parse graph through {node_id}")
        node = nodes[node_id]
        decoded = set(seen)

        def need(name: str, what: str) -> None:
            if name not in decoded:
                raise SpecError(f"{node_id}: {what} reads {name}, not decoded on path {' > '.join(path + (node_id,))}")

        for f in node.fields:
            if f.when:
                need(f.when.field, f"`when` of {f.name}")
            if f.kind != "reserved":
                if f.name in decoded and not f.when:
                    # a field may appear under exclusive `when`s of one node, never twice on a path
                    raise SpecError(f"{node_id}: {f.name} decoded twice on path {' > '.join(path + (node_id,))}")
                decoded.add(f.name)
        if node.size_rule:
            need(node.size_rule["field"], "the size rule")
        if node.bounds:
            need(node.bounds["field"], "`bounds`")
        if node.payload_length:
            need(node.payload_length, "`payload_length`")
        for chk in node.checks:
            need(chk.field, "a check")
            if chk.when:
                need(chk.when.field, f"the `when` of a check of {chk.field}")
        if node.next.field:
            need(node.next.field, "`select`")
        for t in node.next.targets():
            if t not in PSEUDO_TARGETS:
                walk(t, frozenset(decoded), path + (node_id,))

    for link in model.links.values():
        walk(link["root"], frozenset(), ())


CONFIDENCE = ("high", "medium", "low", "unknown")


def confidence_of(agree: list[str], disagree: list[str], sources: dict[str, dict]) -> str:
    """The confidence a choice's evidence gives (the rule stated above `choices:` in wire.yaml)."""
    def families(names: list[str]) -> set[str]:
        return {sources[n]["family"] for n in names if not sources[n].get("superseded_by")}
    pro = families(agree)
    con = families(disagree) - pro
    if not pro and not con:
        return "unknown"
    if len(pro) >= 2 and not con:
        return "high"
    return "medium" if len(pro) > len(con) else "low"


def _check_choices(model: Model) -> None:
    """Every choice cites known sources and declares the confidence its evidence gives, so a certifier who
    adds a source sees at build time which confidence changes."""
    for name, src in model.sources.items():
        if "family" not in src:
            raise SpecError(f"sources.{name}: needs `family`")
        if src.get("superseded_by") and src["superseded_by"] not in model.sources:
            raise SpecError(f"sources.{name}: superseded by unknown source {src['superseded_by']}")
    for cid, c in model.choices.items():
        where = f"choices.{cid}"
        ev = c.get("evidence")
        if not isinstance(ev, dict) or "agree" not in ev or "disagree" not in ev:
            raise SpecError(f"{where}: needs `evidence` with `agree` and `disagree` source lists")
        cited = list(ev["agree"]) + list(ev["disagree"])
        for reading in c.get("contested") or []:
            cited += list(reading.get("sources") or [])
        unknown = [s for s in cited if s not in model.sources]
        if unknown:
            raise SpecError(f"{where}: cites unknown sources {unknown} (known: {', '.join(model.sources)})")
        want = confidence_of(list(ev["agree"]), list(ev["disagree"]), model.sources)
        if c.get("confidence") != want:
            raise SpecError(f"{where}: confidence is {c.get('confidence')}, but its evidence gives {want}")
        if c.get("contested") is not None and len(c["contested"]) < 2:
            raise SpecError(f"{where}: a contested choice records at least two readings")


def version_holds(versions: Versions, version: int) -> bool:
    return ((versions.since is None or version >= versions.since)
            and (versions.before is None or version < versions.before))


def enum_valid(enum: dict, value: int, version: int | None = None) -> bool:
    held = enum.get("_versions", {}).get(value)
    if held is not None and version is not None and not version_holds(held, version):
        return False
    if value in enum.get("values", {}):
        return True
    return any(r["from"] <= value <= r["to"] for r in enum.get("vendor", []))
