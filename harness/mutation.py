"""The mutation run: every fault knob of softuet (fep/src/faults.def) must make at least one conformance case
that passes without it fail with it (or, for a SHOULD, come out as a warning). A knob no case catches is a
missing case.

    /usr/bin/python3 -m harness.mutation [--knob NAME ...] [--build build] [--out out/report]

Each knob runs against the softuet manifests in turn (all profiles, then AI Full only, then AI Base only)
until one of them catches it: some rules exist only in one profile configuration (a wildcard tag is refused
only by a FEP without HPC). A knob no case catches then runs the suite's wire checks under packet loss
(WIRE_CHECKS): what only a lossy wire shows, a duplicate delivered twice, is theirs to catch. Writes
out/report/mutation.json; exit status 0 when every knob is caught, 1 when one is not, 3 when the harness
cannot run.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

from harness import run_cases

REPO = pathlib.Path(__file__).resolve().parent.parent
MANIFESTS = [REPO / "cases" / "manifests" / name for name in ("softuet.yaml", "softuet-ai-full.yaml", "softuet-ai-base.yaml")]
# A verdict that shows the knob broke what the case checks: a failure, or a SHOULD no longer met.
CAUGHT = {"fail", "warning"}
# The wire checks that run the FEP over a lossy link (nftables drops), for knobs no case can observe.
WIRE_CHECKS = ["pytest/fep/test_reliability.py"]


def knobs() -> list[tuple[str, str, str]]:
    """[(name, statement, rule)] of fep/src/faults.def."""
    sys.path.insert(0, str(REPO / "fep" / "tools"))
    import faults_md  # the one parser of the knob list
    return faults_md.knobs((REPO / "fep" / "src" / "faults.def").read_text())


@dataclasses.dataclass
class KnobResult:
    knob: str
    statement: str
    rule: str
    caught_by: list[str]     # "manifest: case"
    errors: list[str]        # cases that broke (harness errors) with the knob on
    seconds: float

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)


def by_case(verdicts) -> dict[str, run_cases.Verdict]:
    return {v.case: v for v in verdicts}


def wire_checks(build: pathlib.Path, xml: pathlib.Path, knob: str | None) -> dict[str, str]:
    """{test id: "pass" | "fail" | "skip"} of the wire checks, with `knob` on (UET_MUTATION_FAULTS)."""
    env = dict(os.environ, UET_BUILD=str(build), PYTHONPATH=str(REPO))
    env.pop("UET_MUTATION_FAULTS", None)
    if knob:
        env["UET_MUTATION_FAULTS"] = knob
    xml.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", *WIRE_CHECKS],
                   cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    out = {}
    for tc in ET.parse(xml).getroot().iter("testcase"):
        name = f"{tc.get('classname')}.{tc.get('name')}"
        bad = tc.find("failure") is not None or tc.find("error") is not None
        out[name] = "fail" if bad else "skip" if tc.find("skipped") is not None else "pass"
    return out


def mutate(knob: tuple[str, str, str], baselines: dict, build: pathlib.Path, out: pathlib.Path) -> KnobResult:
    name, statement, rule = knob
    start = time.monotonic()
    caught, errors = [], []
    for manifest in MANIFESTS:
        base = baselines[manifest]
        verdicts = run_cases.run(manifest, build, out / name / manifest.stem, extra_env={"SOFTUET_FAULTS": name})
        for v in verdicts:
            if v.verdict == "error":
                errors.append(f"{manifest.stem}: {v.case}: {v.detail[:200]}")
            elif v.verdict in CAUGHT and base.get(v.case) and base[v.case].verdict == "pass":
                caught.append(f"{manifest.stem}: {v.case}")
        if caught:
            break
    return KnobResult(name, statement, rule, caught, errors, round(time.monotonic() - start, 1))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m harness.mutation", description=__doc__.splitlines()[0])
    parser.add_argument("--knob", action="append", default=[], help="only this knob (repeatable)")
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")))
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "report")
    args = parser.parse_args(argv)
    all_knobs = knobs()
    unknown = sorted(set(args.knob) - {k[0] for k in all_knobs})
    if unknown:
        parser.error(f"no such knob: {', '.join(unknown)} (fep/src/faults.def lists them)")
    chosen = [k for k in all_knobs if not args.knob or k[0] in args.knob]
    if not run_cases.case_binaries(args.build):
        print(f"mutation: no case binaries in {args.build / 'cases'} (run ./uet build)", file=sys.stderr)
        return 3
    work = args.out / "mutation"
    print(f"mutation: baselines ({len(MANIFESTS)} manifests)", flush=True)
    baselines = {}
    for manifest in MANIFESTS:
        verdicts = run_cases.run(manifest, args.build, work / "baseline" / manifest.stem)
        bad = [v for v in verdicts if v.verdict in ("fail", "error")]
        if bad:
            print(f"mutation: the baseline of {manifest.stem} is not clean ({bad[0].case}: {bad[0].verdict}); "
                  "a knob is only caught against passing cases", file=sys.stderr)
            return 3
        baselines[manifest] = by_case(verdicts)
    results = []
    wire_baseline = None
    for i, knob in enumerate(chosen, 1):
        r = mutate(knob, baselines, args.build, work)
        if not r.caught:
            if wire_baseline is None:
                wire_baseline = wire_checks(args.build, work / "baseline" / "wire.xml", None)
            with_knob = wire_checks(args.build, work / r.knob / "wire.xml", r.knob)
            r.caught_by = [f"wire: {t}" for t, v in with_knob.items() if v == "fail" and wire_baseline.get(t) == "pass"]
        results.append(r)
        what = "NOT CAUGHT"
        if r.caught:
            what = f"caught by {r.caught_by[0]}" + (f" (+{len(r.caught_by) - 1})" if len(r.caught_by) > 1 else "")
        print(f"[{i}/{len(chosen)}] {r.knob:<32} {what}  {r.seconds}s", flush=True)
        for e in r.errors[:3]:
            print(f"    error: {e}", flush=True)
    caught = sum(r.caught for r in results)
    report = {"score": f"{caught}/{len(results)}", "caught": caught, "knobs": len(results),
              "results": [dict(dataclasses.asdict(r), caught=r.caught) for r in results]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mutation.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"mutation score: {caught}/{len(results)} knobs caught")
    for r in results:
        if not r.caught:
            print(f"  not caught: {r.knob} ({r.statement}: {r.rule})")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
