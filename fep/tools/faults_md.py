"""The one reader of fep/src/faults.def, the list of softuet's fault knobs; writes fep/FAULTS.md from it.

Usage: python3 fep/tools/faults_md.py [--check]   (--check: exit 1 when FAULTS.md is not current)
The build runs it (fep/CMakeLists.txt), so FAULTS.md follows faults.def without a hand edit.
"""
import os
import pathlib
import re
import sys
import tempfile
import typing

FEP = pathlib.Path(__file__).resolve().parents[1]
FAULTS_DEF = FEP / "src" / "faults.def"
FAULTS_MD = FEP / "FAULTS.md"
_STRING = r'"(?:[^"\\\n]|\\.)*"'
# One entry: SOFTUET_FAULT(name, "statement", "rule", "check", ...), over one or more lines.
ENTRY = re.compile(r'SOFTUET_FAULT\(\s*(\w+)\s*((?:,\s*' + _STRING + r'\s*)+)\)')
# A named check: "Suite.Name" (that case in any kind) or "Prefix/Suite.Name/kind" (that instance).
CHECK = re.compile(r'^(?:\w+/)?\w+\.\w+(?:/\w+)?$')


class FaultsDefError(ValueError):
    """faults.def holds an entry the reader cannot take; the message names the line."""


class Knob(typing.NamedTuple):
    name: str
    statement: str
    rule: str
    checks: tuple  # the cases that must fail with the knob on (may be empty)


def _line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def parse(text, where="fep/src/faults.def"):
    """[Knob] in the order of faults.def. Every SOFTUET_FAULT( outside a comment must be a whole entry: one
    the compiler takes and this reader would skip would be a knob the mutation run never tries."""
    code = re.sub(r"//[^\n]*", lambda m: " " * len(m.group()), text)  # offsets stay those of `text`
    entries, seen = [], {}
    for start in (m.start() for m in re.finditer(r"\bSOFTUET_FAULT\(", code)):
        line = _line_of(text, start)
        m = ENTRY.match(code, start)
        if not m:
            raise FaultsDefError(f"{where}:{line}: not SOFTUET_FAULT(name, \"statement\", \"rule\", \"check\", ...)")
        strings = [s[1:-1] for s in re.findall(_STRING, m.group(2))]
        if len(strings) < 2:
            raise FaultsDefError(f"{where}:{line}: {m.group(1)} needs a statement and the rule it breaks")
        name, statement, rule, checks = m.group(1), strings[0], strings[1], tuple(strings[2:])
        if name in seen:
            raise FaultsDefError(f"{where}:{line}: knob {name} is already at line {seen[name]}")
        bad = [c for c in checks if not CHECK.match(c)]
        if bad:
            raise FaultsDefError(f"{where}:{line}: {name}: {bad[0]!r} is not a case name (Suite.Name or "
                                 "Prefix/Suite.Name/kind)")
        if len(set(checks)) != len(checks):
            raise FaultsDefError(f"{where}:{line}: {name} names a check twice")
        seen[name] = line
        entries.append(Knob(name, statement, rule, checks))
    return entries


def knobs(text):
    """[(name, statement, rule)] in the order of faults.def."""
    return [(k.name, k.statement, k.rule) for k in parse(text)]


def named_checks(text):
    """knob -> the cases that must fail with it on, for the knobs that name some."""
    return {k.name: list(k.checks) for k in parse(text) if k.checks}


def render(entries):
    lines = [
        "# softuet fault knobs",
        "",
        "Generated from `fep/src/faults.def` by `fep/tools/faults_md.py`; edit that file, not this one.",
        "Each knob breaks exactly one rule; turn knobs on with `SOFTUET_FAULTS=name,name`. An unknown name",
        "makes fi_getinfo and fi_domain fail with a message listing the known ones.",
        "",
        "| Knob | Statement | Rule it breaks |",
        "|---|---|---|",
    ]
    lines += [f"| `{n}` | {s} | {r} |" for n, s, r in entries]
    return "\n".join(lines) + "\n"


def write_if_changed(path, text):
    """Writes `text` to `path` unless it holds it already (a current file is left alone, so a build in a
    tree it may not write succeeds), by rename from a private temporary file beside it."""
    path = pathlib.Path(path)
    if path.is_file() and not path.is_symlink() and path.read_text() == text:
        return False
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return True


def main(argv):
    try:
        shown = FAULTS_DEF.relative_to(FEP.parent) if FAULTS_DEF.is_relative_to(FEP.parent) else FAULTS_DEF
        text = render((k.name, k.statement, k.rule) for k in parse(FAULTS_DEF.read_text(), str(shown)))
    except FaultsDefError as exc:
        print(exc, file=sys.stderr)
        return 2
    if "--check" in argv:
        if not FAULTS_MD.exists() or FAULTS_MD.read_text() != text:
            print(f"{FAULTS_MD} is not current: run python3 fep/tools/faults_md.py", file=sys.stderr)
            return 1
        return 0
    write_if_changed(FAULTS_MD, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
