#!/usr/bin/python3
"""Generate the C++ reason codes (uet/cases/reason_codes_gen.hpp) from spec/not-applicable-reasons.yaml.

usage: generate_reason_codes.py REASONS_YAML OUT_HEADER

One constant per declared code (uet::cases::reason::kNotClaimedJobIdMethod for not-claimed-job-id-method), of
a type the skip macros alone take: a case that names an undeclared code, or writes one as a string, does not
compile, so a code is added in the YAML and nowhere else. The file is read, and checked against its schema,
by the harness's one reader of it (harness/inputs/not_applicable.py); a problem is reported with its key, exit 1.
"""
from __future__ import annotations

import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
# The Jinja2 environment and the writer the codec's generators use; the reasons file's one reader.
sys.path[:0] = [str(REPO / "codec" / "generate"), str(REPO)]
from templating import environment, generator_main  # noqa: E402
from harness.inputs import not_applicable  # noqa: E402


def constant(code: str) -> str:
    """The C++ name of a code: not-claimed-job-id-method -> kNotClaimedJobIdMethod."""
    return "k" + "".join(word.capitalize() for word in code.split("-"))


def render(path: str) -> str:
    codes = not_applicable.load(pathlib.Path(path))
    env = environment({"constant": constant}, os.fspath(HERE / "templates"))
    return env.get_template("reason_codes_gen.hpp.j2").render(codes=codes)


def main(argv: list[str]) -> int:
    return generator_main(argv, __doc__.strip().splitlines()[2], render, (not_applicable.ReasonsError,))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
