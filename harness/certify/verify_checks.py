"""The checks ./uet verify makes of an extracted submission package, each returning findings. Every file of the
package is the sender's: read with limits, paths kept inside the package, nothing executed but the suite's
own decoders on the captures."""
from __future__ import annotations

import collections
import dataclasses
import json
import pathlib

import yaml

from harness.inputs import catalogue as catalogue_mod
from harness.results import causes
from harness.inputs import manifest as manifest_mod
from harness.certify import mustpass as mustpass_mod
from harness.inputs import loader_environment, not_applicable
from harness.files import suite_identity
from harness.certify.certify import RUN_MEMBER
from harness.wire.decode_compare import capture_ports, cross_check, decode_cpp_head, kept_line
from harness.certify.package_archive import read_member
from harness.certify.package_limits import Budget, Limits, PackageRefused, over
from harness.certify.package_manifests import MANIFESTS_MEMBER, OutsidePackage, manifest_layers
from harness.results.verdicts import FAILING, HELD, NOT_HELD, Verdict
from harness.run.run_cases import TraitsError, area_traits

# A finding of these classes does not make a package invalid: it says what could not be checked, or what the
# run was let use that the suite refuses unless told (a trust option), for whoever reads the package to weigh.
CAVEAT = "binaries-not-rechecked"
EVIDENCE_CAVEAT = "evidence-not-rechecked"
TRUST = "trust-opt-in"


@dataclasses.dataclass(frozen=True)
class Finding:
    kind: str       # integrity, suite, binaries, manifest, mustpass, verdict, not-applicable, capture, evidence, ...
    message: str

    @property
    def invalidates(self) -> bool:
        return self.kind not in (CAVEAT, EVIDENCE_CAVEAT, TRUST)


def loads(data: bytes | str, shown: str, limits: Limits):
    """The JSON value of a member's data; ValueError when it is not JSON, PackageRefused when it nests deeper
    than limits.json_depth (the parser's own recursion ends far below what a stack would hold)."""
    try:
        doc = json.loads(data)
    except RecursionError:
        raise over(limits, "json_depth", f"{shown}: JSON nested deeper") from None
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > limits.json_depth:
                raise over(limits, "json_depth", f"{shown}: JSON nested deeper")
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return doc


def read_json(root: pathlib.Path, name: str, findings: list[Finding], limits: Limits):
    path = root / name
    if not path.is_file():
        findings.append(Finding("integrity", f"no {name} member"))
        return None
    try:
        return loads(read_member(path, name, limits), name, limits)
    except ValueError as exc:
        findings.append(Finding("integrity", f"{name} is not JSON ({exc})"))
    return None


def inside(root: pathlib.Path, rel) -> pathlib.Path | None:
    """root/rel when rel is a relative path that stays inside root, else None."""
    if not isinstance(rel, str) or not rel:
        return None
    path = (root / rel).resolve()
    return path if path.is_relative_to(root.resolve()) else None


def suite_findings(suite: dict, build: pathlib.Path, repo: pathlib.Path) -> list[Finding]:
    commit = suite.get("commit")
    if not suite_identity.is_known_commit(commit, repo):
        return [Finding("suite", f"suite commit {commit!r} is not in this checkout's git history")]
    out = []
    if suite.get("modified") is not False:
        shown = ", ".join(map(str, (suite.get("changes") or [])[:5]))
        out.append(Finding("suite", f"the suite's tree at {commit[:12]} was modified when the package was made ({shown})"))
    here = suite_identity.commit(repo)
    if here != commit:
        return out + [Finding(CAVEAT, f"this checkout is {here[:12]}, not the package's {commit[:12]}: its binaries and "
                                      "spec data could not be re-checked (check out that commit and build it)")]
    if suite_identity.changes(repo):
        return out + [Finding(CAVEAT, "this checkout has changes from its commit: the package's binaries and spec data "
                                      "could not be re-checked against it")]
    mine = {"built_sha256": suite_identity.hashes(suite_identity.built_files(build)),
            "spec_sha256": suite_identity.hashes(suite_identity.spec_files(repo / "spec"))}
    for key, what in (("built_sha256", "built file"), ("spec_sha256", "spec data file")):
        theirs = suite.get(key) if isinstance(suite.get(key), dict) else {}
        for name in sorted(set(theirs) | set(mine[key])):
            if name not in mine[key]:
                out.append(Finding("binaries", f"{what} {name} is in the package's suite.json but not in this checkout"))
            elif name not in theirs:
                out.append(Finding("binaries", f"{what} {name} of this checkout is missing from the package's suite.json"))
            elif theirs[name] != mine[key][name]:
                out.append(Finding("binaries", f"{what} {name}: the package's SHA-256 {str(theirs[name])[:16]}... is not "
                                               f"this checkout's {mine[key][name][:16]}..."))
    return out


def load_manifests(root: pathlib.Path, mustpass: dict, info: dict, limits: Limits) -> tuple[list, list[Finding]]:
    """The package's manifests that load, each checked against the hash results.json's run_info gives it."""
    refs = mustpass.get("refs") if isinstance(mustpass.get("refs"), list) else []
    if len(refs) > limits.manifest_refs:
        raise over(limits, "manifest_refs", "mustpass.json: manifests named in refs", len(refs))
    recorded = {m.get("name"): m for m in info.get("manifests") or [] if isinstance(m, dict)}
    manifests, out = [], []
    for ref in refs:
        path = inside(root, str(ref).partition("#")[0])
        if path is None or not path.is_file():
            out.append(Finding("manifest", f"manifest {ref!r} is not a file of the package"))
            continue
        try:
            manifest_layers(str(path), within=root / MANIFESTS_MEMBER)
            m = manifest_mod.load(str(path) + (("#" + str(ref).partition("#")[2]) if "#" in str(ref) else ""))
        except OutsidePackage:
            out.append(Finding("manifest", f"manifest {ref}: it or a file it extends lies outside the package's manifests/"))
            continue
        except (manifest_mod.ManifestError, yaml.YAMLError, OSError) as exc:
            out.append(Finding("manifest", f"manifest {ref}: {exc}"))
            continue
        if m.name not in recorded:
            out.append(Finding("manifest", f"manifest {ref} ({m.name}) is not one results.json ran"))
        elif recorded[m.name].get("sha256") != m.sha256:
            out.append(Finding("manifest", f"manifest {ref} ({m.name}) changed: its SHA-256 is not the one results.json "
                                           "recorded as the run's"))
        manifests.append(m)
    if not refs:
        out.append(Finding("manifest", "mustpass.json names no manifests"))
    return manifests, out


def opt_in_findings(info: dict, manifests: list, root: pathlib.Path) -> list[Finding]:
    """A warning for each trust option the run was given (run_info.opt_ins), naming what it let through; a
    manifest of the package that sets a loader variable when the run records no such option (a run refuses it
    without) invalidates."""
    given = [o for o in info.get("opt_ins") or [] if isinstance(o, dict)]
    out = [Finding(TRUST, f"the run was made with {o.get('option')}: "
                          + ("; ".join(map(str, o.get("let_through") or [])) or "it let nothing through"))
           for o in given]
    if not any(o.get("option") == loader_environment.ALLOW_LOADER_ENVIRONMENT for o in given):
        out += [Finding("manifest", f"{s}: a loader variable, and results.json records no "
                                    f"{loader_environment.ALLOW_LOADER_ENVIRONMENT}, without which a run refuses it")
                for m in manifests for s in loader_environment.settings(m, _in_package(m, root))]
    return out


def _in_package(m, root: pathlib.Path) -> str:
    return str(m.path.relative_to(root.resolve())) + (f"#{m.variant}" if m.variant else "")


def mustpass_findings(mustpass: dict, manifests: list, refs: list[str], suite: dict, doc: dict,
                      cat: catalogue_mod.Catalogue, build: pathlib.Path) -> list[Finding]:
    """The package's run held to its mustpass; the plan made again with the package's areas as this checkout's
    build declares them (their traits)."""
    out = []
    if mustpass.get("complete") is not True or mustpass.get("only"):
        out.append(Finding("mustpass", f"the run left part of the mustpass out (--only {' '.join(map(str, mustpass.get('only') or []))}): "
                                       "incomplete"))
    if doc.get("run_info", {}).get("partial") is not False:
        out.append(Finding("mustpass", "the run was cut short (run_info.partial): incomplete"))
    want = mustpass_mod.statements_by_profile(cat, mustpass_mod.claimed_profiles(manifests))
    have = mustpass.get("profiles") if isinstance(mustpass.get("profiles"), dict) else {}
    for profile, ids in want.items():
        if profile not in have:
            out.append(Finding("mustpass", f"claimed profile {profile} has no mustpass"))
        elif sorted(have[profile]) != sorted(ids):
            out.append(Finding("mustpass", f"the mustpass of profile {profile} is not the catalogue's: "
                                           f"{len(have[profile])} statements, not {len(ids)}"))
    for profile in sorted(set(have) - set(want)):
        out.append(Finding("mustpass", f"the mustpass has profile {profile}, which no manifest claims"))
    names = [n.removeprefix("cases/uet-cases-") for n in suite.get("built_sha256") or {} if n.startswith("cases/uet-cases-")]
    try:
        traits = area_traits(build)
    except TraitsError as exc:
        return out + [Finding("mustpass", f"the plan cannot be made: {exc}")]
    if unknown := [a for a in names if a not in traits]:
        return out + [Finding("mustpass", f"the plan cannot be made: this checkout's build has no case binary of "
                                          f"area(s) {', '.join(unknown)}")]
    areas = {a: traits[a] for a in names}
    mode = {1: "provider", 2: "pair"}.get(len(refs))
    try:  # without its manifests (a finding already) there is no plan to hold the run to
        planned = mustpass_mod.planned_cells(mode, refs, areas) if mode else []
    except manifest_mod.ManifestError as exc:
        return out + [Finding("mustpass", f"the plan cannot be made from the package's manifests: {exc}")]
    results = [r for r in doc.get("results") or [] if isinstance(r, dict)]
    ran = {(r.get("cell"), r.get("area")) for r in results}
    for cell in planned:
        for area in cell["areas"]:
            if (cell["id"], area) not in ran:
                out.append(Finding("mustpass", f"cell {cell['id']}, area {area}: no result (the mustpass did not run in full)"))
    checks = mustpass_mod.checks_of({"profiles": want}, results)
    recorded = mustpass.get("checks") if isinstance(mustpass.get("checks"), dict) else {}
    for statement, ids in checks.items():
        if sorted(recorded.get(statement) or []) != sorted(ids):
            out.append(Finding("mustpass", f"statement {statement}: mustpass.json lists {len(recorded.get(statement) or [])} "
                                           f"check(s), results.json has {len(ids)}"))
    return out


def verdict_findings(doc: dict, reasons: dict | None, reasons_problem: str | None) -> list[Finding]:
    out = []
    if reasons is None and any(isinstance(r, dict) and r.get("verdict") == Verdict.NOT_APPLICABLE for r in doc.get("results") or []):
        out.append(Finding("not-applicable", f"no reason code can be allowed: {reasons_problem}"))
    for r in doc.get("results") or []:
        if not isinstance(r, dict):
            continue
        if r.get("verdict") in FAILING:
            why = r.get("reason") or (causes.explain(r, doc) if r.get("verdict") in NOT_HELD else None)
            out.append(Finding("verdict", f"{r.get('id')}: {r.get('verdict')}" + (f" ({why})" if why else "")))
        elif r.get("verdict") == Verdict.NOT_APPLICABLE:
            if why := not_applicable.submission_problem(r, reasons):
                out.append(Finding("not-applicable", why))
        elif r.get("verdict") not in HELD:
            out.append(Finding("verdict", f"{r.get('id')}: unknown verdict {r.get('verdict')!r}"))
    summary = doc.get("summary") or {}
    if summary.get("exit_status") != 0:
        out.append(Finding("verdict", f"the run's exit status was {summary.get('exit_status')!r}, not 0"))
    return out


def _frame_fields(summary: str) -> dict[str, int | str] | None:
    """An evidence frame's fields by value, as the decoders' records hold them: numbers ("0x1f", a signed field's
    "-0x1") as integers, byte strings as their hex digits (cases/common/sides/capture.cpp summary())."""
    def value(text: str) -> int | str:
        if text.startswith(("0x", "-0x")):
            return int(text, 16)
        if text and all(c in "0123456789abcdef" for c in text):
            return text
        raise ValueError(text)
    try:
        return {k: value(v) for k, v in (part.split("=", 1) for part in summary.split())}
    except ValueError:
        return None


def _records_with_segments(records: list[dict]):
    for rec in records:
        yield rec
        yield from rec.get("segments") or []


def _closest(fields: dict, records: list[dict]) -> tuple[int, object, dict] | None:
    """The decoded frame nearest an evidence frame: (how many of its fields differ, the frame's number, what
    those fields are there); 0 differing: the evidence frame is in the capture. None without records."""
    best = None
    for rec in records:
        have = rec.get("fields") if isinstance(rec.get("fields"), dict) else {}
        differ = {k: have.get(k) for k, v in fields.items() if have.get(k) != v}
        if best is None or len(differ) < best[0]:
            best = (len(differ), rec.get("frame"), differ)
            if not differ:
                break
    return best


def _nearest_words(closest: tuple[int, object, dict] | None) -> str:
    if closest is None:
        return ""
    _, frame, differ = closest
    shown = "; ".join(f"{k} is {'absent' if v is None else v}" for k, v in list(differ.items())[:3])
    return f" (nearest: frame {frame}, where {shown}{'; ...' if len(differ) > 3 else ''})"


def _other_ports(records: list[dict], ports: tuple[int, ...], limits: Limits) -> list[int]:
    """The UDP destination ports of the capture's frames the kept decode did not read as UET, most frames
    first: where a side's frames went when it chose a port the capture entry does not name (a package from a
    suite that kept the target's port only)."""
    seen = collections.Counter(rec["fields"]["udp.dstport"] for rec in records
                               if rec.get("status") == "non-uet" and isinstance(rec.get("fields"), dict)
                               and isinstance(rec["fields"].get("udp.dstport"), int)
                               and rec["fields"]["udp.dstport"] not in ports)
    return [p for p, _ in seen.most_common(limits.evidence_ports)]


def _decoded_under(pcap: pathlib.Path, port: int, uet_decode: pathlib.Path, version, limits: Limits,
                   budget: Budget) -> list[dict]:
    """The capture decoded again with `port` as UET's, [] when no decoder can read it so (the kept decode's
    cross-check says why)."""
    try:
        records, _ = decode_cpp_head(uet_decode, pcap, port, limits.document_bytes, spec_version=version)
    except Exception:  # noqa: BLE001 - the sender's capture may break a decoder in any way: a finding already
        return []
    budget.spend("decoded_bytes", sum(len(kept_line(r)) for r in records), "the captures and decodes: bytes read")
    return list(_records_with_segments(records))


def _kept_decode(kept: pathlib.Path, shown: str, limits: Limits, budget: Budget) -> list[dict]:
    data = read_member(kept, shown, limits)
    budget.spend("decoded_bytes", len(data), "the captures and decodes: bytes read")
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    if lines > limits.decode_records:
        raise over(limits, "decode_records", f"{shown}: lines", lines)
    return [loads(line, f"{shown} line {n}", limits) for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]


def _redecoded(run: pathlib.Path, pcap: pathlib.Path, result_id, cap: dict, uet_decode: pathlib.Path, version,
               limits: Limits, budget: Budget, out: list[Finding], stats: dict) -> list[dict]:
    """The decode kept beside a capture, once both decoders have decoded the capture again and agree with it;
    [] when it could not be checked (a finding says why)."""
    kept = inside(run, cap.get("decoded"))
    if kept is None or not kept.is_file():
        out.append(Finding("capture", f"{result_id}: the decode {cap.get('decoded')!r} of {cap.get('capture')} "
                                      "is not in the package"))
        return []
    size = pcap.stat().st_size
    if size > limits.capture_bytes:
        raise over(limits, "capture_bytes", f"{RUN_MEMBER}/{cap.get('capture')}: its size in bytes", size)
    budget.spend("decoded_bytes", size, "the captures and decodes: bytes read")
    try:
        expected = _kept_decode(kept, f"{RUN_MEMBER}/{cap.get('decoded')}", limits, budget)
        check = cross_check(pcap, uet_decode, capture_ports(cap), expected, version)
    except PackageRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - the sender's capture may break a decoder in any way: a finding
        out.append(Finding("capture", f"{cap.get('capture')}: cannot be re-decoded ({exc!r})"))
        return []
    stats["captures"] += 1
    stats["frames"] += check.frames
    for d in check.disagreements[:3]:
        out.append(Finding("capture", f"{cap.get('capture')}: frame {d.frame}: {d.between} disagree: "
                                      + "; ".join(d.details[:2])))
    return expected


def capture_findings(run: pathlib.Path, doc: dict, uet_decode: pathlib.Path,
                     limits: Limits) -> tuple[list[Finding], dict]:
    """Every capture re-decoded by both decoders against the decode kept beside it, every evidence frame
    looked for in its result's captures, and every capture file named by a result. Each capture is decoded
    once however often it is named, one at a time: the work and the memory grow with the package's captures,
    not with how often they are named, and stay under the limits."""
    out, stats, budget = [], {"captures": 0, "frames": 0}, Budget(limits)
    first: dict[pathlib.Path, tuple] = {}          # each capture: the result and reference that named it first
    frames: list[tuple] = []                       # (result id, frame, its fields) of every evidence frame
    groups_of: dict[pathlib.Path, list[range]] = {}   # each capture: the evidence frames of results naming it
    capturing: dict = {}                           # each result id: whether it names a capture
    for r in doc.get("results") or []:
        if not isinstance(r, dict) or not isinstance(r.get("evidence"), dict):
            continue
        pcaps = []
        for cap in r["evidence"].get("captures") or []:
            budget.spend("capture_refs", 1, f"{RUN_MEMBER}/results.json: references to captures")
            pcap = inside(run, cap.get("capture"))
            if pcap is None or not pcap.is_file():
                out.append(Finding("capture", f"{r.get('id')}: capture {cap.get('capture')!r} is not in the package"))
                continue
            first.setdefault(pcap, (r.get("id"), cap))
            pcaps.append(pcap)
        capturing[r.get("id")] = bool(pcaps) or capturing.get(r.get("id"), False)
        start = len(frames)
        for frame in r["evidence"].get("frames") or []:
            budget.spend("evidence_frames", 1, f"{RUN_MEMBER}/results.json: evidence frames")
            fields = _frame_fields(str(frame.get("summary", ""))) if isinstance(frame, dict) else None
            frames.append((r.get("id"), frame, fields))
        for pcap in dict.fromkeys(pcaps):
            groups_of.setdefault(pcap, []).append(range(start, len(frames)))
    found = [False] * len(frames)
    nearest: dict[int, tuple] = {}               # each evidence frame not found: the decoded frame nearest it
    version = (doc.get("run_info") or {}).get("spec_version")

    def look(records: list[dict], pcap: pathlib.Path) -> list[int]:
        """Looks for the capture's evidence frames not found yet in `records`; those still not found."""
        left = []
        for i in (i for group in groups_of.get(pcap, []) for i in group if frames[i][2] and not found[i]):
            budget.spend("evidence_comparisons", max(len(records), 1),
                         f"{RUN_MEMBER}/results.json: decoded frames compared with evidence frames")
            near = _closest(frames[i][2], records)
            found[i] = near is not None and near[0] == 0
            if not found[i] and near is not None and (nearest.get(i) is None or near[0] < nearest[i][0]):
                nearest[i] = near
            left += [] if found[i] else [i]
        return left

    for pcap, (result_id, cap) in first.items():
        records = list(_records_with_segments(_redecoded(run, pcap, result_id, cap, uet_decode, version, limits,
                                                         budget, out, stats)))
        if records and look(records, pcap):
            # Frames one side sent to a port of its own choosing: the evidence names fields, not a port.
            for port in _other_ports(records, capture_ports(cap), limits):
                if not look(_decoded_under(pcap, port, uet_decode, version, limits, budget), pcap):
                    break
    for i, ((result_id, frame, fields), ok) in enumerate(zip(frames, found)):
        if not ok and fields is not None and capturing.get(result_id):
            out.append(Finding("evidence", f"{result_id}: evidence frame {str((frame or {}).get('summary'))[:120]!r} "
                                           f"is not in its capture{_nearest_words(nearest.get(i))}"))
    # Only a failing result keeps evidence frames (cases/common/claims/verdict.cpp), and a fail invalidates the package
    # on its own: frames nothing could be looked for in weaken no verdict, so they are a caveat, not a finding.
    unchecked = [i for i, (result_id, _, fields) in enumerate(frames) if fields is None or not capturing.get(result_id)]
    if unchecked:
        out.append(Finding(EVIDENCE_CAVEAT, f"{len(unchecked)} evidence frame(s) of {len({frames[i][0] for i in unchecked})} "
                                   "result(s) could not be looked for in a capture: their result kept none (a scripted "
                                   "peer reads the frames off its own socket) or they are frames the suite itself sent"))
    for pcap in sorted(run.rglob("*.pcap")):
        if pcap.resolve() not in first:
            out.append(Finding("capture", f"{RUN_MEMBER}/{pcap.relative_to(run)}: a capture no result names"))
    return out, stats
