"""The requirement catalogue (spec/catalogue.yaml): load it, validate it, query it.

    from harness.inputs import catalogue
    cat = catalogue.load()                 # the suite's catalogue; raises CatalogueError if it is invalid
    cat.get("2.2.4.4-b").level             # 'MUST'
    cat.by_section("2.2.4"), cat.by_level("MUST"), cat.by_profile("hpc"), cat.observable()

Validation names the file, the line and the entry of every problem, and reports all of them at once.
Conventions of the file: spec/catalogue.md.
"""
import collections
import dataclasses
import pathlib
import re

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
CATALOGUE_PATH = REPO / "spec" / "catalogue.yaml"

LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY", "NOT REQUIRED", "INFO")
ABSOLUTE_LEVELS = ("MUST", "MUST NOT")
LEVEL_UNCONFIRMED = "level?"
PROFILES = ("ai_base", "ai_full", "hpc")
ACTORS = ("provider", "kernel_driver", "privileged_entity", "deployment", "vendor")
CHECKS = ("api", "wire", "both", "control", "not_observable")
OBSERVABLE_CHECKS = ("api", "wire", "both", "control")
TABLE_STATUSES = ("complete", "partial", "rebuilt", "missing")
ID_RE = re.compile(r"^2\.2(\.\d+)*-[a-z]+$")
REF_RE = re.compile(r"^2-\d+$")

REQUIRED_KEYS = ("id", "level", "profiles", "actor", "clause", "text", "check", "cases")
OPTIONAL_KEYS = ("level_note", "applies_to", "other_actors", "condition", "tables", "figures",
                 "depends_on_missing", "missing", "check_reason", "note")
TOP_KEYS = ("format", "source", "spec_tables", "statements")


class CatalogueError(ValueError):
    """The catalogue is invalid. `errors` lists every problem, each naming the file, line and entry."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("invalid requirement catalogue (%d problem%s):\n  %s" % (
            len(self.errors), "" if len(self.errors) == 1 else "s", "\n  ".join(self.errors)))


@dataclasses.dataclass(frozen=True)
class Statement:
    id: str
    level: str
    profiles: tuple
    actor: str
    clause: str
    text: str
    check: str
    cases: tuple = ()
    level_note: str = None
    applies_to: str = None
    other_actors: tuple = ()
    condition: str = None
    tables: tuple = ()
    figures: tuple = ()
    missing: tuple = ()
    check_reason: str = None
    note: str = None
    line: int = None

    @property
    def section(self):
        return section_of(self.clause)

    @property
    def observable(self):
        return self.check in OBSERVABLE_CHECKS

    @property
    def depends_on_missing(self):
        return bool(self.missing)

    @property
    def level_unconfirmed(self):
        return self.level_note == LEVEL_UNCONFIRMED

    @property
    def level_label(self):
        """The level as a report should print it: 'MUST NOT (level?)' when the digest is unsure."""
        return self.level + (" (level?)" if self.level_unconfirmed else "")


def section_of(ident_or_clause):
    """'2.2.5.3.4.1-b' or '2.2.5.3.4.1' -> '2.2.5'; '2.2-a' -> '2.2'."""
    clause = ident_or_clause.split("-", 1)[0]
    return ".".join(clause.split(".")[:3])


def _section_key(section):
    return tuple(int(part) for part in section.split("."))


class Catalogue:
    def __init__(self, statements, spec_tables, path):
        self.statements = tuple(statements)
        self.spec_tables = spec_tables
        self.path = path
        self._by_id = {s.id: s for s in self.statements}

    def __len__(self):
        return len(self.statements)

    def __iter__(self):
        return iter(self.statements)

    def __contains__(self, ident):
        return ident in self._by_id

    @property
    def ids(self):
        return [s.id for s in self.statements]

    def get(self, ident):
        try:
            return self._by_id[ident]
        except KeyError:
            raise KeyError("no statement %r in %s" % (ident, self.path)) from None

    def by_level(self, *levels):
        unknown = [lv for lv in levels if lv not in LEVELS]
        if unknown:
            raise ValueError("unknown level %r (one of %s)" % (unknown[0], ", ".join(LEVELS)))
        return [s for s in self.statements if s.level in levels]

    def by_section(self, section):
        """Statements of a clause and its sub-clauses: by_section('2.2.4') includes 2.2.4.3.3-g."""
        return [s for s in self.statements if s.clause == section or s.clause.startswith(section + ".")]

    def by_clause(self, clause):
        return [s for s in self.statements if s.clause == clause]

    def by_profile(self, profile):
        if profile not in PROFILES:
            raise ValueError("unknown profile %r (one of %s)" % (profile, ", ".join(PROFILES)))
        return [s for s in self.statements if profile in s.profiles]

    def by_actor(self, actor):
        if actor not in ACTORS:
            raise ValueError("unknown actor %r (one of %s)" % (actor, ", ".join(ACTORS)))
        return [s for s in self.statements if s.actor == actor]

    def by_check(self, *checks):
        unknown = [c for c in checks if c not in CHECKS]
        if unknown:
            raise ValueError("unknown check %r (one of %s)" % (unknown[0], ", ".join(CHECKS)))
        return [s for s in self.statements if s.check in checks]

    def observable(self):
        return [s for s in self.statements if s.observable]

    def not_observable(self):
        return [s for s in self.statements if not s.observable]

    def sections(self):
        return sorted({s.section for s in self.statements}, key=_section_key)

    def count_by_level(self):
        counts = collections.Counter(s.level for s in self.statements)
        return {lv: counts[lv] for lv in LEVELS}

    def count_by_check(self):
        counts = collections.Counter(s.check for s in self.statements)
        return {c: counts[c] for c in CHECKS}


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """PyYAML's safe loader (libyaml's when there, several times faster on the whole catalogue), but a key
    repeated in one mapping is an error instead of a silent overwrite."""


def _construct_mapping(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                "found duplicate key %r (first at line %d)" % (key, seen[key]), key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _statement_lines(root):
    """Line number of each item of the top-level `statements` list (for error messages), from the composed
    document."""
    if not isinstance(root, yaml.MappingNode):
        return []
    for key, value in root.value:
        if key.value == "statements" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def _parse(text):
    """The data and the composed tree of a YAML text, parsed once for both."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        return (loader.construct_document(root) if root is not None else None), root
    finally:
        loader.dispose()


def load(path=None):
    """Load and validate a catalogue (no path: the suite's spec/catalogue.yaml). Raises CatalogueError listing
    every problem. Its counts are the statements' own (count_by_level): no second copy of them to keep."""
    path = pathlib.Path(path or CATALOGUE_PATH)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogueError(["%s: cannot read: %s" % (path, exc.strerror or exc)]) from None
    try:
        data, root = _parse(text)
    except yaml.YAMLError as exc:
        raise CatalogueError(["%s: not valid YAML: %s" % (path, exc)]) from None
    return from_data(data, path, _statement_lines(root))


def display_path(path):
    """A path relative to the repository when it is inside it."""
    try:
        return str(pathlib.Path(path).resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def from_data(data, path="<data>", lines=()):
    """Validate already-parsed YAML data and build the Catalogue (raises CatalogueError)."""
    shown = display_path(path)
    errors = []

    def err(msg, index=None, ident=None):
        if index is None:
            errors.append("%s: %s" % (shown, msg))
            return
        line = lines[index] if index < len(lines) else None
        where = "%s:%d" % (shown, line) if line else shown
        name = "statement %s (entry %d)" % (ident, index + 1) if ident else "entry %d" % (index + 1)
        errors.append("%s: %s: %s" % (where, name, msg))

    if not isinstance(data, dict):
        raise CatalogueError(["%s: the top level must be a mapping with a `statements` list" % shown])
    for key in data:
        if key not in TOP_KEYS:
            err("unknown top-level key %r (allowed: %s)" % (key, ", ".join(TOP_KEYS)))
    spec_tables = data.get("spec_tables") or {}
    if not isinstance(spec_tables, dict):
        err("spec_tables must be a mapping of 'Table 2-N' / 'Figure 2-N' to {status, ...}")
        spec_tables = {}
    status_of = {}
    for name, info in spec_tables.items():
        m = re.match(r"^(Table|Figure) (2-\d+)$", str(name))
        if not m:
            err("spec_tables: %r is not 'Table 2-N' or 'Figure 2-N'" % (name,))
            continue
        status = info.get("status") if isinstance(info, dict) else None
        if status not in TABLE_STATUSES:
            err("spec_tables: %s has status %r (one of %s)" % (name, status, ", ".join(TABLE_STATUSES)))
            continue
        status_of[name] = status

    raw = data.get("statements")
    if not isinstance(raw, list):
        err("`statements` must be a list of statement entries")
        raise CatalogueError(errors)

    statements = []
    first_index = {}
    for index, entry in enumerate(raw):
        if not isinstance(entry, dict):
            err("must be a mapping, not %s" % type(entry).__name__, index)
            continue
        ident = entry.get("id")
        label = ident if isinstance(ident, str) else None
        problems = _check_entry(entry, status_of, bool(spec_tables))
        for msg in problems:
            err(msg, index, label)
        if isinstance(ident, str):
            if ident in first_index:
                prev = first_index[ident]
                at = " (line %d)" % lines[prev] if prev < len(lines) else ""
                err("duplicate id: already used by entry %d%s" % (prev + 1, at), index, label)
            else:
                first_index[ident] = index
        if not problems:
            statements.append(_build(entry, lines[index] if index < len(lines) else None))

    if errors:
        raise CatalogueError(errors)
    return Catalogue(statements, spec_tables, path)


def _is_str(value):
    return isinstance(value, str) and value.strip() != ""


def _check_list(entry, key, allowed=None, pattern=None, required=False):
    value = entry.get(key)
    if value is None:
        return ["%s is required (a list)" % key] if required else []
    if not isinstance(value, list):
        return ["%s must be a list, not %r" % (key, value)]
    out = []
    for item in value:
        if not _is_str(item):
            out.append("%s: %r is not a non-empty string" % (key, item))
        elif allowed is not None and item not in allowed:
            out.append("%s: unknown value %r (allowed: %s)" % (key, item, ", ".join(allowed)))
        elif pattern is not None and not pattern.match(item):
            out.append("%s: %r does not look like '2-13'" % (key, item))
    dups = sorted({x for x in value if isinstance(x, str) and value.count(x) > 1})
    if dups:
        out.append("%s: repeated %s" % (key, ", ".join(map(repr, dups))))
    return out


def _check_entry(entry, status_of, have_tables):
    out = []
    for key in entry:
        if key not in REQUIRED_KEYS and key not in OPTIONAL_KEYS:
            out.append("unknown key %r" % (key,))
    for key in REQUIRED_KEYS:
        if key not in entry:
            out.append("missing required key %r" % key)

    ident = entry.get("id")
    if "id" in entry:
        if not isinstance(ident, str) or not ID_RE.match(ident):
            out.append("id %r does not match %s (e.g. 2.2.4.3.3-g)" % (ident, ID_RE.pattern))
    clause = entry.get("clause")
    if "clause" in entry:
        if not _is_str(clause):
            out.append("clause %r must be a string such as '2.2.4.3.3'" % (clause,))
        elif isinstance(ident, str) and ID_RE.match(ident) and ident.rsplit("-", 1)[0] != clause:
            out.append("clause %r does not match the id (expected %r)" % (clause, ident.rsplit("-", 1)[0]))

    level = entry.get("level")
    if "level" in entry and level not in LEVELS:
        out.append("unknown level %r (allowed: %s)" % (level, ", ".join(LEVELS)))
    if entry.get("level_note") is not None and not _is_str(entry["level_note"]):
        out.append("level_note must be a non-empty string")

    if "profiles" in entry:
        out += _check_list(entry, "profiles", allowed=PROFILES)
        if isinstance(entry["profiles"], list) and not entry["profiles"]:
            out.append("profiles is empty (use [ai_base, ai_full, hpc] for 'All')")
    actor = entry.get("actor")
    if "actor" in entry and actor not in ACTORS:
        out.append("unknown actor %r (allowed: %s)" % (actor, ", ".join(ACTORS)))
    out += _check_list(entry, "other_actors", allowed=ACTORS)
    if isinstance(entry.get("other_actors"), list) and actor in entry["other_actors"]:
        out.append("other_actors repeats the actor %r" % actor)
    for key in ("condition", "applies_to", "note"):
        if entry.get(key) is not None and not _is_str(entry[key]):
            out.append("%s must be a non-empty string or absent" % key)
    if "text" in entry and not _is_str(entry.get("text")):
        out.append("text must be the digest's paraphrase (a non-empty string)")

    out += _check_list(entry, "tables", pattern=REF_RE)
    out += _check_list(entry, "figures", pattern=REF_RE)
    out += _check_list(entry, "missing")
    refs = ["Table " + t for t in entry.get("tables") or [] if isinstance(t, str)] + \
           ["Figure " + f for f in entry.get("figures") or [] if isinstance(f, str)]
    if have_tables:
        for ref in refs:
            if ref not in status_of:
                out.append("%s is not listed under spec_tables" % ref)
        expected_missing = [ref for ref in refs if status_of.get(ref) == "missing"]
        missing = entry.get("missing") or []
        if isinstance(missing, list) and sorted(map(str, missing)) != sorted(expected_missing):
            out.append("missing %r disagrees with spec_tables (the referenced MISSING ones are %r)"
                       % (missing, expected_missing))
    dom = entry.get("depends_on_missing", False)
    if dom not in (True, False):
        out.append("depends_on_missing must be true or false")
    elif dom != bool(entry.get("missing")):
        out.append("depends_on_missing is %s but missing is %r" % (str(dom).lower(), entry.get("missing")))

    check = entry.get("check")
    reason = entry.get("check_reason")
    if "check" in entry and check not in CHECKS:
        out.append("unknown check %r (allowed: %s)" % (check, ", ".join(CHECKS)))
    elif check == "not_observable" and not _is_str(reason):
        out.append("check is not_observable but check_reason is missing (say why it cannot be checked)")
    elif check in OBSERVABLE_CHECKS and reason is not None:
        out.append("check_reason is only for not_observable rows (check is %s)" % check)
    if level == "INFO" and check in OBSERVABLE_CHECKS:
        out.append("an INFO statement has nothing to check: use check: not_observable")

    if "cases" in entry:
        out += _check_list(entry, "cases", required=True)
    return out


def _build(entry, line):
    def tup(key):
        return tuple(entry.get(key) or ())
    return Statement(
        id=entry["id"], level=entry["level"], profiles=tup("profiles"), actor=entry["actor"],
        clause=entry["clause"], text=entry["text"], check=entry["check"], cases=tup("cases"),
        level_note=entry.get("level_note"), applies_to=entry.get("applies_to"),
        other_actors=tup("other_actors"), condition=entry.get("condition"), tables=tup("tables"),
        figures=tup("figures"), missing=tup("missing"), check_reason=entry.get("check_reason"),
        note=entry.get("note"), line=line)
