"""./uet verify PACKAGE: whether a submission package (./uet certify) is valid, offline, without a provider.

examples:
  ./uet verify out/submissions/softuet-hpc-20261127-8577eed291c3.tar.zst
  ./uet verify PACKAGE --report /tmp/verification

It checks the archive before extracting anything (no path outside it, no links, devices or oversized
members), that SHA256SUMS matches every member with none missing or extra, that the suite commit is in this
checkout's history and its tree was unmodified, the binaries' and spec data's hashes against this
checkout's build when this checkout is that commit (otherwise a caveat says they could not be re-checked),
that the mustpass ran in full for every claimed profile with no fail, error or timeout, that every
not-applicable result has a reason code spec/not-applicable-reasons.yaml allows in a submission, that
every capture re-decodes with both decoders to the decode kept beside it, and that every evidence frame is
in its capture. One line per finding, then the verdict; the report: <report>/verification.json and .txt.

exit status: 0 a valid submission (caveats allowed); 1 an invalid one; 2 bad usage or an unreadable package.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

from harness import catalogue as catalogue_mod
from harness import not_applicable, package_archive, package_sums
from harness.certify import RUN_MEMBER
from harness.untrusted import printable, printable_tree
from harness.verify_checks import (Finding, capture_findings, load_manifests, mustpass_findings, read_json,
                                   suite_findings, verdict_findings)

REPO = pathlib.Path(__file__).resolve().parent.parent


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="./uet verify", description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("package", type=pathlib.Path, help="a .tar.zst that ./uet certify wrote")
    p.add_argument("--report", type=pathlib.Path, default=None,
                   help="folder for verification.json and verification.txt (default out/verifications/<package>)")
    p.add_argument("--reasons", type=pathlib.Path, default=not_applicable.REASONS_PATH,
                   help="the not-applicable reason codes (default spec/not-applicable-reasons.yaml)")
    p.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")),
                   help=argparse.SUPPRESS)
    p.add_argument("--check-usage", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    caller = pathlib.Path(os.environ.get("UET_CALLER_DIR", os.getcwd()))  # ./uet runs from the repository
    args.package = caller / args.package
    args.report = caller / args.report if args.report else None
    return args


def check_extracted(root: pathlib.Path, members: list[str], args) -> tuple[list[Finding], dict]:
    findings = [Finding("integrity", m) for m in package_sums.mismatches(root, members)]
    suite = read_json(root, "suite.json", findings) or {}
    mustpass = read_json(root, "mustpass.json", findings) or {}
    doc = read_json(root, f"{RUN_MEMBER}/results.json", findings) or {}
    if not (isinstance(suite, dict) and isinstance(mustpass, dict) and isinstance(doc, dict)):
        return findings + [Finding("integrity", "suite.json, mustpass.json or results.json is not a JSON object")], {}
    findings += suite_findings(suite, args.build, REPO)
    manifests, problems = load_manifests(root, mustpass, doc.get("run_info") or {})
    findings += problems
    # the plan is made only of manifests found inside the package, all of them
    refs = [m.ref for m in manifests] if len(manifests) == len(mustpass.get("refs") or []) else []
    findings += mustpass_findings(mustpass, manifests, refs, suite, doc, catalogue_mod.load())
    try:
        reasons, why = not_applicable.load(args.reasons), None
    except not_applicable.ReasonsError as exc:
        reasons, why = None, str(exc)
    findings += verdict_findings(doc, reasons, why)
    capture_problems, stats = capture_findings(root / RUN_MEMBER, doc, args.build / "bin" / "uet-decode")
    return findings + capture_problems, stats


def verify(args) -> tuple[list[Finding], dict]:
    """Findings and counts; raises package_archive.UnreadablePackage."""
    with tempfile.TemporaryDirectory(prefix="uet-verify-") as tmp:
        tmp = pathlib.Path(tmp)
        limits = package_archive.Limits()
        with package_archive.open_tar(package_archive.decompress(args.package, tmp, limits)) as tar:
            unsafe = package_archive.unsafe_members(tar, limits)
            if unsafe:  # nothing of it is written out
                return [Finding("unsafe-member", u) for u in unsafe], {"members": None}
            root = tmp / "package"
            root.mkdir()
            members = package_archive.extract_files(tar, root)
        (tmp / "package.tar").unlink()
        try:
            findings, stats = check_extracted(root, members, args)
        except (TypeError, AttributeError, KeyError, ValueError) as exc:  # JSON of a shape no suite writes
            findings, stats = [Finding("integrity", f"the package's JSON has a shape the suite never writes ({exc!r})")], {}
        return findings, dict(stats, members=len(members))


def write_report(folder: pathlib.Path, package: pathlib.Path, findings: list[Finding], stats: dict, seconds: float,
                 verdict: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    doc = printable_tree({"format": 1, "package": str(package), "verdict": verdict, "seconds": round(seconds, 1),
                          "counts": stats, "findings": [{"kind": f.kind, "message": f.message, "invalidates": f.invalidates}
                                                        for f in findings]})
    (folder / "verification.json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = [f"package: {doc['package']}", f"verdict: {verdict}", f"seconds: {doc['seconds']}", f"counts: {json.dumps(stats)}"]
    lines += [f"[{f['kind']}] {f['message']}" for f in doc["findings"]]
    (folder / "verification.txt").write_text("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.check_usage:  # ./uet asks before it builds
        if not args.package.is_file():
            print(f"uet verify: no package at {args.package}", file=sys.stderr)
            return 2
        return 0
    t0 = time.monotonic()
    try:
        findings, stats = verify(args)
    except package_archive.UnreadablePackage as exc:
        print(f"uet verify: unreadable package: {printable(str(exc))}", file=sys.stderr)
        return 2
    for f in findings:
        print(printable(f"uet verify: [{f.kind}] {f.message}"))
    bad = [f for f in findings if f.invalidates]
    caveats = len(findings) - len(bad)
    verdict = (f"INVALID: {len(bad)} finding(s) ({', '.join(sorted({f.kind for f in bad}))})" if bad else
               "VALID" + (f", with {caveats} caveat(s)" if caveats else ""))
    name = args.package.name.removesuffix(".tar.zst")
    report = args.report or REPO / "out" / "verifications" / name
    write_report(report, args.package, findings, stats, time.monotonic() - t0, verdict)
    print(f"uet verify: {verdict} ({time.monotonic() - t0:.1f} s; report {report / 'verification.txt'})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
