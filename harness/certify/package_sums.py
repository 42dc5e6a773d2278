"""SHA256SUMS of a submission package: one `<sha256>  <member>` line per member (sha256sum's format, so
`sha256sum -c SHA256SUMS` checks an extracted package too), the file itself left out."""
from __future__ import annotations

import pathlib
import re

from harness.certify.package_archive import read_member
from harness.certify.package_limits import Limits, over
from harness.files.suite_identity import file_sha256

NAME = "SHA256SUMS"
_LINE = re.compile(r"^([0-9a-f]{64})  (\S.*)$")


def write(root: pathlib.Path, names: list[str]) -> None:
    (root / NAME).write_text("".join(f"{file_sha256(root / n)}  {n}\n" for n in sorted(names) if n != NAME))


def parse(text: str) -> tuple[dict[str, str], list[str]]:
    """({member: sha256}, problems: lines that are not `<sha256>  <name>` or name a member twice)."""
    sums, problems = {}, []
    for number, line in enumerate(text.splitlines(), 1):
        m = _LINE.match(line)
        if not m:
            problems.append(f"{NAME} line {number} is not '<sha256>  <member>': {line[:120]!r}")
        elif m.group(2) in sums:
            problems.append(f"{NAME} line {number} lists {m.group(2)!r} a second time")
        else:
            sums[m.group(2)] = m.group(1)
    return sums, problems


def mismatches(root: pathlib.Path, members: list[str], limits: Limits) -> list[str]:
    """Every way the extracted members and SHA256SUMS disagree, one line each."""
    if NAME not in members:
        return [f"no {NAME} member: the package cannot show it is unaltered"]
    data = read_member(root / NAME, NAME, limits)
    if data.count(b"\n") > limits.members:  # a line per member
        raise over(limits, "members", f"{NAME}: lines", data.count(b"\n"))
    sums, problems = parse(data.decode(errors="replace"))
    present = set(members) - {NAME}
    for name in sorted(set(sums) - present):
        problems.append(f"member {name!r} is listed in {NAME} but missing from the package")
    for name in sorted(present - set(sums)):
        problems.append(f"member {name!r} is not listed in {NAME} (an extra member)")
    for name in sorted(present & set(sums)):
        if file_sha256(root / name) != sums[name]:
            problems.append(f"member {name!r} does not match its SHA-256 in {NAME} (altered)")
    return problems
