"""./uet verify's work: whether a submission package is valid, offline (its options and help:
harness/commands/verify.py)."""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import time

from harness.files.input_files import InputError
from harness.inputs import catalogue as catalogue_mod
from harness.commands import verify as verify_options
from harness.inputs import not_applicable
from harness.certify import package_archive, package_limits, package_sums
from harness.certify.certify import RUN_MEMBER
from harness.files.untrusted import printable, printable_tree
from harness.certify.verify_checks import (Finding, capture_findings, load_manifests, mustpass_findings, opt_in_findings,
                                   read_json, suite_findings, verdict_findings)
from harness.certify.verify_oracle import oracle_findings, plan_findings
from harness.results.results import checked_results

REPO = pathlib.Path(__file__).resolve().parents[2]


def parse_args(argv: list[str]) -> argparse.Namespace:
    args = verify_options.parse(argv)
    args.reasons = args.reasons or not_applicable.REASONS_PATH
    return args


def check_extracted(root: pathlib.Path, members: list[str], args,
                    limits: package_limits.Limits) -> tuple[list[Finding], dict]:
    findings = [Finding("integrity", m) for m in package_sums.mismatches(root, members, limits)]
    suite = read_json(root, "suite.json", findings, limits) or {}
    mustpass = read_json(root, "mustpass.json", findings, limits) or {}
    results_member = f"{RUN_MEMBER}/results.json"
    doc = read_json(root, results_member, findings, limits)
    if not (isinstance(suite, dict) and isinstance(mustpass, dict)):
        return findings + [Finding("integrity", "suite.json or mustpass.json is not a JSON object")], {}
    try:  # the package's results.json is read by the format's one reader once the package's limits let it in
        doc = checked_results(doc, results_member) if doc is not None else {}
    except InputError as exc:
        return findings + [Finding("integrity", str(exc))], {}
    findings += suite_findings(suite, args.build, REPO)
    manifests, problems = load_manifests(root, mustpass, doc.get("run_info") or {}, limits)
    findings += problems + opt_in_findings(doc.get("run_info") or {}, manifests, root)
    # the plan is made only of manifests found inside the package, all of them
    refs = [m.ref for m in manifests] if len(manifests) == len(mustpass.get("refs") or []) else []
    findings += mustpass_findings(mustpass, manifests, refs, suite, doc, catalogue_mod.load(), args.build)
    try:
        reasons, why = not_applicable.load(args.reasons), None
    except not_applicable.ReasonsError as exc:
        reasons, why = None, str(exc)
    findings += verdict_findings(doc, reasons, why)
    capture_problems, stats = capture_findings(root / RUN_MEMBER, doc, args.build / "bin" / "uet-decode", limits)
    oracle_problems, stats["wire_oracle"] = oracle_findings(root / RUN_MEMBER, doc, args.build / "bin" / "uet-decode")
    if refs:  # a manifest that did not load is a finding already, and the cells cannot be held against it
        oracle_problems += plan_findings(root / RUN_MEMBER, doc, manifests, args.build)
    return findings + capture_problems + oracle_problems, stats


def verify(args, into: pathlib.Path | None = None) -> tuple[list[Finding], dict]:
    """Findings and counts; raises package_archive.UnreadablePackage and package_limits.PackageRefused.
    `into`: a new folder of the caller's where the members are left once judged (./uet plugfest keeps them
    as evidence); by default they go with a temporary folder."""
    limits = package_limits.Limits()
    with tempfile.TemporaryDirectory(prefix="uet-verify-") as tmp:
        root = into or pathlib.Path(tmp) / "package"
        members, unsafe = package_archive.extract(args.package, root, limits)
        if unsafe:  # judged no further; what was written before the first is removed with the folder
            return [Finding("unsafe-member", u) for u in unsafe], {"members": None}
        try:
            findings, stats = check_extracted(root, members, args, limits)
        except (TypeError, AttributeError, KeyError, ValueError) as exc:  # JSON of a shape no suite writes
            findings, stats = [Finding("integrity", f"the package's JSON has a shape the suite never writes ({exc!r})")], {}
        return findings, dict(stats, members=len(members))


def verdict_of(findings: list[Finding]) -> tuple[list[Finding], str]:
    """(the findings that invalidate the package, the verdict line: VALID, with its caveats, or INVALID)."""
    bad = [f for f in findings if f.invalidates]
    caveats = len(findings) - len(bad)
    return bad, (f"INVALID: {len(bad)} finding(s) ({', '.join(sorted({f.kind for f in bad}))})" if bad else
                 "VALID" + (f", with {caveats} caveat(s)" if caveats else ""))


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
        return verify_options.main(argv)
    t0 = time.monotonic()
    try:
        findings, stats = verify(args)
    except package_archive.UnreadablePackage as exc:
        print(f"uet verify: unreadable package: {printable(str(exc))}", file=sys.stderr)
        return 2
    except package_limits.PackageRefused as exc:
        print(f"uet verify: refused package {printable(str(args.package))}: {printable(str(exc))}", file=sys.stderr)
        return 2
    for f in findings:
        print(printable(f"uet verify: [{f.kind}] {f.message}"))
    bad, verdict = verdict_of(findings)
    name = args.package.name.removesuffix(".tar.zst")
    report = args.report or REPO / "out" / "verifications" / name
    write_report(report, args.package, findings, stats, time.monotonic() - t0, verdict)
    print(f"uet verify: {verdict} ({time.monotonic() - t0:.1f} s; report {report / 'verification.txt'})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
