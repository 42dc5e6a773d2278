"""The mutation run: every fault knob of softuet (fep/src/faults.def) must make at least one conformance case
that passes without it fail with it (or, for a SHOULD, come out as a warning). A knob no case catches is a
missing case.

    /usr/bin/python3 -m harness.mutation [--knob NAME ...] [--build build] [--out out/report] [--jobs N]

Each knob runs against the softuet manifests in turn (all profiles, then AI Full only, then AI Base only)
until one of them catches it: some rules exist only in one profile configuration (a wildcard tag is refused
only by a FEP without HPC). A knob no case catches then runs the suite's wire checks under packet loss
(WIRE_CHECKS): what only a lossy wire shows, a duplicate delivered twice, and the delivery mode of RMA to
an IDEMPOTENT_SAFE key (RUDI), and large sends between FEPs of chosen profiles (rendezvous, deferrable
send), which no case can ask for, are theirs to catch. Writes
out/report/mutation.json; exit status 0 when every knob is caught, 1 when one is not, 3 when the harness
cannot run.

Knobs run --jobs at a time (default 2) only where their runs cannot meet: as root, every softuet manifest
puts its cases in a namespace pair of their own (peer_netns), so two knobs never share a UDP port. Without
root both sides share the host's ports and knobs run one at a time. The wire checks (nftables on a
namespace pair of their own, one pytest session) run one at a time whatever --jobs says.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import yaml

from harness import run_cases

REPO = pathlib.Path(__file__).resolve().parent.parent
MANIFESTS = [REPO / "cases" / "manifests" / name for name in ("softuet.yaml", "softuet-ai-full.yaml", "softuet-ai-base.yaml")]
# A verdict that shows the knob broke what the case checks: a failure, or a SHOULD no longer met.
CAUGHT = {"fail", "warning"}
# The wire checks that run the FEP over a lossy link (nftables drops), for knobs no case can observe.
WIRE_CHECKS = ["pytest/fep/test_reliability.py", "pytest/fep/test_rudi.py", "pytest/fep/test_rendezvous.py"]


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


def isolated() -> bool:
    """True when every manifest's cases run in a namespace pair of their own (root, peer_netns)."""
    return os.geteuid() == 0 and all(yaml.safe_load(m.read_text()).get("peer_netns") for m in MANIFESTS)


def by_case(verdicts) -> dict[str, run_cases.Verdict]:
    return {v.case: v for v in verdicts}


def wire_checks(build: pathlib.Path, xml: pathlib.Path, knob: str | None) -> dict[str, str]:
    """{test id: "pass" | "fail" | "skip" | "error: <why>"} of the wire checks, with `knob` on
    (UET_MUTATION_FAULTS). An error (the check could not run) is never a catch."""
    env = dict(os.environ, UET_BUILD=str(build.resolve()), PYTHONPATH=str(REPO))
    env.pop("UET_MUTATION_FAULTS", None)
    if knob:
        env["UET_MUTATION_FAULTS"] = knob
    xml.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", *WIRE_CHECKS],
                   cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    if not xml.exists():
        return {"pytest": "error: the wire checks wrote no JUnit XML"}
    out = {}
    for tc in ET.parse(xml).getroot().iter("testcase"):
        name = f"{tc.get('classname')}.{tc.get('name')}"
        error = tc.find("error")
        if error is not None:
            out[name] = "error: " + (error.get("message") or "").strip()[:200]
        elif tc.find("failure") is not None:
            out[name] = "fail"
        else:
            out[name] = "skip" if tc.find("skipped") is not None else "pass"
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


def print_table(results: list[KnobResult]) -> None:
    """knob -> the cases that caught it (the first few; mutation.json has them all)."""
    width = max((len(r.knob) for r in results), default=4)
    print(f"\n{'knob':<{width}}  {'statement':<14} caught by")
    for r in results:
        shown = ", ".join(r.caught_by[:3]) + (f" (+{len(r.caught_by) - 3} more)" if len(r.caught_by) > 3 else "")
        print(f"{r.knob:<{width}}  {r.statement:<14} {shown or 'NOT CAUGHT'}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m harness.mutation", description=__doc__.splitlines()[0])
    parser.add_argument("--knob", action="append", default=[], help="only this knob (repeatable)")
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")))
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "report")
    parser.add_argument("--jobs", type=int, default=2,
                        help="knobs at a time, when their runs are isolated in namespace pairs (default 2)")
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
    jobs = max(1, args.jobs if isolated() else 1)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = list(pool.map(lambda m: run_cases.run(m, args.build, work / "baseline" / m.stem), MANIFESTS))
    baselines = {}
    for manifest, verdicts in zip(MANIFESTS, runs):
        bad = [v for v in verdicts if v.verdict in ("fail", "error")]
        if bad:
            print(f"mutation: the baseline of {manifest.stem} is not clean ({bad[0].case}: {bad[0].verdict}); "
                  "a knob is only caught against passing cases", file=sys.stderr)
            return 3
        baselines[manifest] = by_case(verdicts)
    wire_lock, print_lock = threading.Lock(), threading.Lock()
    wire_baseline: dict[str, str] = {}
    done = [0]

    def one(knob: tuple[str, str, str]) -> KnobResult:
        start = time.monotonic()
        r = mutate(knob, baselines, args.build, work)
        if not r.caught:
            with wire_lock:
                if not wire_baseline:
                    wire_baseline.update(wire_checks(args.build, work / "baseline" / "wire.xml", None))
                with_knob = wire_checks(args.build, work / r.knob / "wire.xml", r.knob)
            r.caught_by = [f"wire: {t}" for t, v in with_knob.items() if v == "fail" and wire_baseline.get(t) == "pass"]
            r.errors += [f"wire: {t}: {v}" for t, v in {**wire_baseline, **with_knob}.items() if v.startswith("error")]
        r.seconds = round(time.monotonic() - start, 1)  # with the wire checks
        with print_lock:
            done[0] += 1
            what = "NOT CAUGHT"
            if r.caught:
                what = f"caught by {r.caught_by[0]}" + (f" (+{len(r.caught_by) - 1})" if len(r.caught_by) > 1 else "")
            print(f"[{done[0]}/{len(chosen)}] {r.knob:<32} {what}  {r.seconds}s", flush=True)
            for e in r.errors[:3]:
                print(f"    error: {e}", flush=True)
        return r

    print(f"mutation: {len(chosen)} knobs, {jobs} at a time", flush=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, chosen))  # in faults.def order
    caught = sum(r.caught for r in results)
    report = {"score": f"{caught}/{len(results)}", "caught": caught, "knobs": len(results),
              "results": [dict(dataclasses.asdict(r), caught=r.caught) for r in results]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mutation.json").write_text(json.dumps(report, indent=2) + "\n")
    print_table(results)
    print(f"mutation score: {caught}/{len(results)} knobs caught")
    for r in results:
        if not r.caught:
            print(f"  not caught: {r.knob} ({r.statement}: {r.rule}) -- a missing case")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
