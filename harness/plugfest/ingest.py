"""./uet plugfest's work: packages verified by ./uet verify's checks, recorded with their provenance in the
history database, their evidence kept in the site's folder, and the site rendered (options and help:
harness/commands/plugfest.py).

Order of an ingest, so that "accepted" means recorded and a crash anywhere leaves the history right: the
package is verified into a private folder of the site's evidence/ (removed when it is refused); its folder
is renamed to evidence/<hash>; its rows are written in one transaction, and only then is "accepted" printed;
the site is rendered from the whole database after the last package. A crash before the transaction leaves
no row (the next ingest of that package replaces the folder it left), one after it leaves the rows and a
page that the next ingest or render brings up to date.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import pathlib
import shutil
import sys
import tempfile
import time

from harness.certify import package_archive, package_limits
from harness.certify import verify as verify_mod
from harness.commands import plugfest as plugfest_options
from harness.files import output_files
from harness.files.untrusted import printable
from harness.inputs import not_applicable
from harness.plugfest import ledger, provenance
from harness.results.conformance_statement import RunFolderError, read_results
from harness.trends import history_index
from reports import plugfest_site, plugfest_view
from reports.render import render_html

# What the site publishes of a package's members: data a browser shows as text or downloads. Anything else
# (a lab's pages, and whatever a server or browser might run as one: .shtml, .svgz, .xht, .rss, .mht, ...) is
# not published; the suite renders the run's pages again. A list of what may stay, not of what must go.
PUBLISHED_SUFFIXES = ("", ".json", ".jsonl", ".pcap", ".pcapng", ".log", ".txt", ".yaml", ".csv", ".xlsx", ".zst")


def published(path: pathlib.Path) -> bool:
    return path.suffix.lower() in PUBLISHED_SUFFIXES


class Refused(Exception):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def republish(members: pathlib.Path) -> None:
    """The run's pages made again by this suite from the package's results.json, in place of the lab's (a page
    a lab wrote could carry script onto the plugfest's site); every file readable by whoever reads the site."""
    for path in sorted(members.rglob("*")):
        if (path.is_file() or path.is_symlink()) and not published(path):
            path.unlink()
    run = members / "run"
    try:
        render_html(read_results(run), run)
    except (RunFolderError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise Refused(f"its run report cannot be rendered again ({exc})", 2) from None
    for folder, dirs, files in os.walk(members.parent):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


def copied_once(package: pathlib.Path, copy: pathlib.Path) -> str:
    """The submitter's file read once into `copy` (a new file of the private staging folder); its SHA-256. What
    is hashed, verified and kept are then the same bytes, though the file be replaced while the ingest runs."""
    digest, most, size = hashlib.sha256(), package_limits.Limits().tar_bytes + (1 << 20), 0
    with open(package, "rb") as src, open(copy, "xb") as dst:
        for block in iter(lambda: src.read(1 << 20), b""):
            size += len(block)
            if size > most:   # no larger file is a package verify reads whole
                raise Refused(f"verify refuses to read it: over {most} bytes, more than its archive may hold", 2)
            digest.update(block)
            dst.write(block)
    return digest.hexdigest()


def verified(package: pathlib.Path, copy: pathlib.Path, staging: pathlib.Path, build: pathlib.Path) -> str:
    """Runs ./uet verify's checks on the package's copy with the members left in staging/members; verify's
    verdict line, or Refused. The report names the package as submitted."""
    args = argparse.Namespace(package=copy, build=build, reasons=not_applicable.REASONS_PATH, report=None)
    as_submitted = lambda exc: str(exc).replace(str(copy), str(package))   # noqa: E731 (the name the user gave)
    t0 = time.monotonic()
    try:
        findings, stats = verify_mod.verify(args, into=staging / plugfest_view.MEMBERS)
    except package_archive.UnreadablePackage as exc:
        raise Refused(f"not a package: {as_submitted(exc)}", 2) from None
    except package_limits.PackageRefused as exc:
        raise Refused(f"verify refuses to read it: {as_submitted(exc)}", 2) from None
    bad, verdict = verify_mod.verdict_of(findings)
    if bad:
        raise Refused(f"verify: {verdict}: " + "; ".join(f"[{f.kind}] {f.message}" for f in bad), 1)
    verify_mod.write_report(staging, package, findings, stats, time.monotonic() - t0, verdict)
    return verdict


def de_duplicated(db, digest: str) -> str:
    seen = ledger.known(db, digest)
    return (f"de-duplicated: the same package (SHA-256 {digest[:16]}) as {seen['name']} of lab {seen['lab']}, "
            f"ingested {seen['ingested']}: nothing recorded")


def ingest_one(db, package: pathlib.Path, args, now: datetime.datetime) -> str:
    """One package recorded; the line that says so. Refused when it is not."""
    if not package.is_file():
        raise Refused("not a package: " + ("not a regular file" if package.exists() else "no such file"), 2)
    site_evidence = args.out / plugfest_view.EVIDENCE_FOLDER
    os.close(output_files.open_folder(site_evidence, shared_ok=False))
    staging = pathlib.Path(tempfile.mkdtemp(prefix=".ingest-", dir=site_evidence))
    try:
        copy = staging / plugfest_view.PACKAGE_COPY
        digest = copied_once(package, copy)   # the same bytes are the same package
        if ledger.known(db, digest):
            return de_duplicated(db, digest)
        evidence = args.out / plugfest_view.evidence_folder(digest)
        verdict = verified(package, copy, staging, args.build)
        try:
            prov = provenance.read(staging / plugfest_view.MEMBERS, args.lab)
        except provenance.ProvenanceError as exc:
            raise Refused(str(exc), 2) from None
        republish(staging / plugfest_view.MEMBERS)
        if ledger.known(db, digest):   # another ingest of the same bytes recorded it while this one verified
            return de_duplicated(db, digest)
        if evidence.exists():   # a folder an ingest left when it stopped before its transaction: no row names it
            shutil.rmtree(evidence)
        staging.rename(evidence)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    try:
        done = ledger.record(db, digest, package.name, prov, now.isoformat(timespec="seconds"), verdict,
                             plugfest_view.evidence_folder(digest))
    except ledger.AlreadyRecorded:   # another ingest of the same bytes recorded it meanwhile: the same evidence
        return de_duplicated(db, digest)
    cells = ", ".join(f"{c.initiator} → {c.target}" for c in prov.cells)
    line = (f"accepted: lab {prov.lab}{' (by --lab)' if prov.lab_source != 'package' else ''}, suite "
            f"{prov.suite_commit[:12]}, {cells}, certified {prov.certified}; {verdict}; evidence {evidence}")
    if done.supersedes:
        line += f"; it supersedes {done.supersedes[:16]} (the same lab, suite commit and builds, certified earlier)"
    if done.superseded_by:
        line += f"; superseded at once by {done.superseded_by[:16]} (the same lab, suite commit and builds, certified later)"
    return line


def main(argv: list[str]) -> int:
    args = plugfest_options.parse(argv)
    now = args.now or datetime.datetime.now(datetime.timezone.utc)
    try:
        db = history_index.open_index(args.db)
    except history_index.IndexRefused as exc:
        print(f"uet plugfest: {exc}", file=sys.stderr)
        return 2
    status = 0
    try:
        for package in getattr(args, "packages", []):
            shown = printable(str(package))
            try:
                print(f"uet plugfest: {shown}: " + printable(ingest_one(db, package, args, now)), flush=True)
            except Refused as exc:
                print(f"uet plugfest: refused {shown}: {printable(str(exc))}; nothing recorded", file=sys.stderr)
                status = max(status, exc.status)
            except OSError as exc:
                print(f"uet plugfest: {shown}: cannot keep its evidence in {printable(str(args.out))}: "
                      f"{printable(str(exc))}; nothing recorded", file=sys.stderr)
                status = max(status, 2)
        packages = ledger.packages(db)
    finally:
        db.close()
    try:
        page = plugfest_site.render_site(packages, args.out, now)
    except OSError as exc:
        print(f"uet plugfest: cannot write the site into {printable(str(args.out))}: {printable(str(exc))}", file=sys.stderr)
        return 2
    print(f"uet plugfest: {len(packages)} package(s) in the history; site {printable(str(page))}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
