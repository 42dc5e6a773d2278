"""What a verified package says of itself for the plugfest: the lab, the suite commit, the date it was
certified, and per cell its initiator and target implementations, their builds and the verdict counts. Read
from the package's own members (mustpass.json, suite.json, run/results.json) once ./uet verify found it valid,
each by the reader and within the limits verify uses."""
from __future__ import annotations

import dataclasses
import json
import pathlib

from harness.certify import package_limits
from harness.files import suite_identity
from harness.certify.certify import RUN_MEMBER
from harness.certify.verify_checks import read_json
from harness.commands.certify import LAB_NAME, LAB_RULE
from harness.results.results import checked_results
from reports import view


class ProvenanceError(ValueError):
    """The package, valid for verify, does not say what the plugfest must record; the message says what."""


@dataclasses.dataclass(frozen=True)
class Cell:
    cell: str
    initiator: str
    target: str
    initiator_build: str
    target_build: str
    page: str                 # the cell's page inside the run folder
    counts: dict              # verdict -> n, the non-zero ones


@dataclasses.dataclass(frozen=True)
class Provenance:
    lab: str
    lab_source: str           # "package" (mustpass.json's lab) or "ingest option" (--lab)
    suite_commit: str
    suite_commit_time: int
    certified: str            # run_info.started, as the run wrote it
    cells: tuple

    def supersede_key(self) -> str:
        """What a later package of the same lab must share to replace this one: the suite commit, and each cell
        with the builds of its two sides."""
        cells = sorted((c.cell, c.initiator, c.target, c.initiator_build, c.target_build) for c in self.cells)
        return json.dumps([self.lab, self.suite_commit, cells])


def build_of(record: dict) -> str:
    """A side's build in words: its provider and version, the libfabric it ran with, and its manifest's hash
    (a personality of a provider is the same provider with another manifest)."""
    lf = record.get("libfabric") if isinstance(record.get("libfabric"), dict) else {}
    return (f"{record.get('provider') or '?'} {record.get('provider_version') or '?'} · libfabric "
            f"{lf.get('version') or '?'} ({lf.get('source') or '?'}) · manifest {str(record.get('sha256') or '?')[:12]}")


def lab_of(mustpass: dict, given: str | None) -> tuple[str, str]:
    carried = mustpass.get("lab")
    if carried is not None and not (isinstance(carried, str) and LAB_NAME.fullmatch(carried)):
        raise ProvenanceError(f"mustpass.json: lab {carried!r} is not a lab name ({LAB_RULE})")
    if carried and given and carried != given:
        raise ProvenanceError(f"the package says it comes from lab {carried!r}, not {given!r} (--lab)")
    if carried:
        return carried, "package"
    if given:
        return given, "ingest option"
    raise ProvenanceError("it names no lab (made without ./uet certify --lab): give --lab NAME")


def read(root: pathlib.Path, lab: str | None) -> Provenance:
    """The provenance of the valid package extracted at `root`; ProvenanceError naming what is missing."""
    limits, findings = package_limits.Limits(), []
    mustpass = read_json(root, "mustpass.json", findings, limits)
    suite = read_json(root, "suite.json", findings, limits)
    doc = read_json(root, f"{RUN_MEMBER}/results.json", findings, limits)
    if findings:   # verify read them already: only a package changed since could get here
        raise ProvenanceError("; ".join(f.message for f in findings))
    doc = checked_results(doc, f"{RUN_MEMBER}/results.json")
    lab_name, source = lab_of(mustpass, lab)
    commit = str(suite.get("commit") or "")
    when = suite_identity.commit_time(commit) if commit else None
    if when is None:
        raise ProvenanceError(f"suite commit {commit!r} is not in this checkout's history")
    info, records = doc["run_info"], view.manifests_by_name(doc)
    cells = []
    for c in doc.get("cells") or []:
        mine = [r for r in doc["results"] if r.get("cell") == c.get("id")]
        counts = {v: n for v, n in view.verdict_counts(mine).items() if n}
        cells.append(Cell(str(c["id"]), str(c["initiator"]), str(c["target"]), build_of(records.get(c["initiator"], {})),
                          build_of(records.get(c["target"], {})), str(c.get("page") or ""), counts))
    if not cells:
        raise ProvenanceError(f"{RUN_MEMBER}/results.json has no cell")
    return Provenance(lab_name, source, commit, when, str(info.get("started") or ""), tuple(cells))
