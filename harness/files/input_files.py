"""Files a user hands the harness: manifests, pair files, expectations, and the results.json of runs that
./uet compare, ./uet history and --baseline read. The harness may run as root, so each is untrusted input:
a file that is not a regular file (a FIFO, /dev/zero) is refused before it is read, its size is capped,
its nesting and YAML aliases are bounded, and a problem names the file, the key and what is wrong but never
the file's content. A manifest may name a file (`extends: /etc/shadow`) whose content the person reading
the output must not see, so a message shows only key names that are plain names, the types of values
and the schema's own words.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import stat

import yaml

from harness.files.untrusted import printable

MAX_BYTES = 1 << 20           # a YAML input (the suite's own manifests are under 8 KiB)
MAX_JSON_BYTES = 256 << 20    # a run's results.json (the default run writes 3 MB)
MAX_VALUES = 100_000          # values of one YAML file once its aliases are expanded (a "billion laughs")
MAX_DEPTH = 64                # nesting of maps and lists (a recursive alias never ends; results.json nests 7)
# A key shown in a message: the names the schemas use. Anything else (a line of /etc/shadow read as a key)
# is described, not shown.
PLAIN_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")
TYPE_WORDS = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
              "number": "a number", "boolean": "true or false", "null": "null"}


class InputError(ValueError):
    """One or more problems of an input file; str() names the file and key of each."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


def _a(what: str) -> str:
    return ("an " if what[0] in "aeiou" else "a ") + what


def shown_path(path) -> str:
    return printable(str(path))


def read_bytes(path: pathlib.Path, what: str, kind: str = "YAML", limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, checked before it is read: /dev/zero or a FIFO
    would never end."""
    where = shown_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError([f"{where}: cannot read: {exc.strerror or exc}"]) from None
    # fstat before fdopen: Python refuses to open a folder as a file (IsADirectoryError), which is no InputError
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError([f"{where}: (top level): not a regular file: {_a(what)} is a {kind} file"])
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise InputError([f"{where}: cannot read: {exc.strerror or exc}"]) from None
    if len(data) > limit:
        raise InputError([f"{where}: (top level): larger than {limit} bytes: not {_a(what)}"])
    return data


def read_text(path: pathlib.Path, what: str, limit: int = MAX_BYTES) -> str:
    data = read_bytes(path, what, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError([f"{shown_path(path)}: (top level): not UTF-8 text: byte 0x{data[exc.start]:02x} at offset "
                          f"{exc.start}"]) from None


def _count(value, depth: int, budget: list[int]) -> None:
    """Counts `value` as YAML aliases expand it, against budget[0]; raises OverflowError past a limit."""
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise OverflowError
    if isinstance(value, dict):
        for k, v in value.items():
            _count(k, depth + 1, budget)
            _count(v, depth + 1, budget)
    elif isinstance(value, list):
        for v in value:
            _count(v, depth + 1, budget)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """Where and what, without the quoted text PyYAML puts in its messages (a line of the file)."""
    mark = getattr(exc, "problem_mark", None)
    at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = re.sub(r"'[^']*'|\"[^\"]*\"", "…", getattr(exc, "problem", None) or type(exc).__name__)
    return f"not valid YAML{at}: {printable(problem)}"


def load_yaml(path: pathlib.Path, what: str):
    """(document, text) of a YAML file read as untrusted input; InputError names the file and the problem."""
    text = read_text(path, what)
    where = shown_path(path)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError([f"{where}: {_yaml_problem(exc)}"]) from None
    except RecursionError:
        raise InputError([f"{where}: (top level): nested too deeply to read"]) from None
    items = doc.items() if isinstance(doc, dict) else [("(top level)", doc)]
    budget = [MAX_VALUES]
    for key, value in items:
        try:
            _count(value, 1, budget)
        except OverflowError:
            raise InputError([f"{where}: {key_name(key)}: more than {MAX_VALUES} values or {MAX_DEPTH} levels of "
                              "nesting once YAML aliases are expanded (an alias bomb, or an alias inside itself)"]) from None
    return doc, text


def _depth_within(doc, limit: int) -> bool:
    """Whether `doc` nests no deeper than `limit` (without recursion, whatever its depth)."""
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return False
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return True


def read_json_bytes(path: pathlib.Path, what: str, limit: int = MAX_JSON_BYTES) -> bytes:
    return read_bytes(path, what, "JSON", limit)


def parse_json(path: pathlib.Path, raw: bytes, what: str):
    """The document of a JSON file's bytes, of bounded nesting; InputError names the file and the problem."""
    where = shown_path(path)
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError([f"{where}: not valid JSON: {printable(str(exc))}"]) from None
    except RecursionError:
        raise InputError([f"{where}: (top level): nested too deeply to read"]) from None
    if not _depth_within(doc, MAX_DEPTH):
        raise InputError([f"{where}: (top level): nested more than {MAX_DEPTH} levels deep: not {_a(what)}"])
    return doc


def key_name(key) -> str:
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    if isinstance(key, str) and (PLAIN_KEY.fullmatch(key) or key == "(top level)"):
        return key
    return "(a key that is not a plain name)"


def key_path(parts) -> str:
    return ".".join(key_name(p) for p in parts) or "(top level)"


def kind_of(value) -> str:
    for name, types in (("boolean", bool), ("null", type(None)), ("integer", int), ("number", float),
                        ("string", str), ("object", dict), ("array", list)):
        if isinstance(value, types):
            return TYPE_WORDS[name]
    return f"a {type(value).__name__}"


def _wanted(types) -> str:
    return " or ".join(TYPE_WORDS.get(t, t) for t in ([types] if isinstance(types, str) else types))


def _unknown_keys(err) -> str:
    allowed = err.schema.get("properties") or {}
    patterns = err.schema.get("patternProperties") or {}
    extra = [k for k in err.instance if k not in allowed and not any(re.search(p, str(k)) for p in patterns)]
    named = [k for k in extra if key_name(k) == k]
    others = len(extra) - len(named)
    parts = named + ([("1 key that is not a plain name" if others == 1 else f"{others} keys that are not plain names")]
                     if others else [])
    return f"unknown key{'s' if len(extra) > 1 else ''}: {', '.join(parts)}"


def schema_message(err, doc) -> str:
    """What a jsonschema error says, in the schema's words and the value's type only."""
    rule, want, value = err.validator, err.validator_value, err.instance
    if "propertyNames" in err.relative_schema_path:  # the value checked is a key's name
        return f"key {key_position(doc, err)} is not a name this mapping allows"
    if rule == "type":
        return f"{kind_of(value)} where {_wanted(want)} is wanted"
    if rule == "enum":
        return f"not one of {', '.join(map(str, want))}"
    if rule == "const":
        return f"not {json.dumps(want)}"
    if rule == "required":
        return err.message  # "'name' is a required property": the name is the schema's
    if rule == "additionalProperties":
        return _unknown_keys(err)
    if rule == "pattern":
        return f"does not match the pattern {want}"
    if rule in ("minItems", "maxItems"):
        return f"lists {len(value)} item(s): at {'least' if rule == 'minItems' else 'most'} {want} wanted"
    if rule in ("minLength", "maxLength"):
        return f"{len(value)} characters: at {'least' if rule == 'minLength' else 'most'} {want} wanted"
    if rule in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return {"minimum": "less than the minimum of", "maximum": "more than the maximum of",
                "exclusiveMinimum": "not more than", "exclusiveMaximum": "not less than"}[rule] + f" {want}"
    if rule == "uniqueItems":
        return "lists an item more than once"
    if rule in ("oneOf", "anyOf"):
        # a form of the value's own type says best what is wrong (a string against a list of versions, ...)
        import jsonschema
        context = err.context or []
        other_type = {e.relative_schema_path[0] for e in context if e.validator == "type" and not e.relative_path}
        forms = [e for e in context if e.relative_schema_path[0] not in other_type]
        if not forms and context:
            return f"{kind_of(value)} where {' or '.join(_wanted(e.validator_value) for e in context if e.validator == 'type')} is wanted"
        near = jsonschema.exceptions.best_match(forms) if forms else None
        if near is None or near.validator in ("oneOf", "anyOf", "not", "required"):
            return f"{kind_of(value)} that is none of the forms the schema allows here"
        inner = key_path(near.relative_path) + ": " if near.relative_path else ""
        return inner + schema_message(near, doc)
    return f"breaks the schema's rule {rule!r}"


def key_position(doc, err) -> str:
    """'3 of 5' for a key whose name breaks the schema: where it is in its mapping, not what it says."""
    parent = doc
    for part in err.absolute_path:
        parent = parent[part]
    keys = list(parent)
    return f"{keys.index(err.instance) + 1} of {len(keys)}" if err.instance in keys else "(unknown position)"


def schema_problems(doc, schema: dict, where: str, messages=None) -> list[str]:
    """'WHERE: KEY: PROBLEM' ('KEY: PROBLEM' without a WHERE) for every way `doc` breaks `schema`, sorted by
    key; `messages(err, text)` may word a problem in the caller's terms."""
    import jsonschema
    validator = jsonschema.Draft202012Validator(schema)
    out = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        text = schema_message(err, doc)
        out.append((f"{where}: " if where else "") + f"{key_path(err.absolute_path)}: "
                   + (messages(err, text) if messages else text))
    return out
