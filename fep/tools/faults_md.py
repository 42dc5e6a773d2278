"""Write fep/FAULTS.md from fep/src/faults.def, the one list of softuet's fault knobs.

Usage: python3 fep/tools/faults_md.py [--check]   (--check: exit 1 when FAULTS.md is not current)
"""
import pathlib
import re
import sys

FEP = pathlib.Path(__file__).resolve().parents[1]
KNOB = re.compile(r'^SOFTUET_FAULT\((\w+), "([^"]+)", "([^"]+)"\)\s*$')


def knobs(text):
    """[(name, statement, rule)] in the order of faults.def."""
    return [m.groups() for m in map(KNOB.match, text.splitlines()) if m]


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


def main(argv):
    text = render(knobs((FEP / "src" / "faults.def").read_text()))
    out = FEP / "FAULTS.md"
    if "--check" in argv:
        if not out.exists() or out.read_text() != text:
            print(f"{out} is not current: run python3 fep/tools/faults_md.py", file=sys.stderr)
            return 1
        return 0
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
