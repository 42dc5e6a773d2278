"""The main job (./uet run). Today:
  1. decode every capture of the golden corpus with both decoders, cross-check them against each other
     and the expected decode;
  2. run the conformance cases against every provider manifest in cases/manifests/ (softuet, the
     embedded default, and libfabric's tcp;ofi_rxm and udp as non-UET references), with verdicts;
  3. report the requirement coverage of those runs;
  4. the mutation run (harness/mutation.py): every fault knob of softuet must make a case or a wire check
     fail; the score goes to out/report/mutation.json and, with the other results, to summary.json;
and write the reports to out/report/.
Exit status: 0 everything agreed and every knob was caught; 1 a disagreement, a failing case or a knob
nothing caught; 3 a decoder could not run.
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

from harness import run_cases
from harness.decode_compare import DecoderError, cross_check, load_expected

REPO = pathlib.Path(__file__).resolve().parent.parent


def golden_captures(folder: pathlib.Path) -> list[tuple[pathlib.Path, int]]:
    """(capture, UET port) of each capture listed in the corpus's manifest.json."""
    manifest = json.loads((folder / "manifest.json").read_text())
    return [(folder / entry["file"], int(entry.get("port", 4793))) for entry in manifest]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="./uet run", description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")))
    parser.add_argument("--corpus", type=pathlib.Path, default=REPO / "captures" / "golden")
    parser.add_argument("--report", type=pathlib.Path, default=REPO / "out" / "report")
    args = parser.parse_args(argv)
    uet_decode = args.build / "bin" / "uet-decode"
    if not uet_decode.exists():
        print(f"uet run: {uet_decode} is not built", file=sys.stderr)
        return 3
    captures = golden_captures(args.corpus) if (args.corpus / "manifest.json").exists() else []
    if not captures:
        print(f"uet run: no captures in {args.corpus}", file=sys.stderr)
        return 3
    args.report.mkdir(parents=True, exist_ok=True)
    results, start = [], time.monotonic()
    for i, (pcap, port) in enumerate(captures, 1):
        try:
            result = cross_check(pcap, uet_decode, port, load_expected(pcap))
        except DecoderError as err:
            print(f"uet run: {err}", file=sys.stderr)
            return 3
        results.append(result)
        verdict = "agree" if result.ok else f"{len(result.disagreements)} DISAGREEMENTS"
        print(f"[{i}/{len(captures)}] {pcap.name}: {result.frames} frames "
              f"({result.counts['uet']} uet, {result.counts['malformed']} malformed, {result.counts['non-uet']} non-uet), "
              f"decoders {verdict}", flush=True)
        for d in result.disagreements[:5]:
            print(f"    frame {d.frame} ({d.case}) {d.between}: " + "; ".join(d.details[:3]))
    frames = sum(r.frames for r in results)
    bad = sum(len(r.disagreements) for r in results)
    report = {"job": "golden-corpus cross-check", "captures": [dataclasses.asdict(r) for r in results],
              "frames": frames, "disagreements": bad, "seconds": round(time.monotonic() - start, 2)}
    (args.report / "decode-crosscheck.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"uet run: {len(results)} captures, {frames} frames, {bad} disagreements; "
          f"report in {args.report / 'decode-crosscheck.json'}")

    failing_cases = 0
    case_counts: dict[str, dict[str, int]] = {}
    cases_out = args.report / "cases"
    for manifest in sorted((REPO / "cases" / "manifests").glob("*.yaml")):
        verdicts = run_cases.run(manifest, args.build, cases_out)
        counts: dict[str, int] = {}
        for v in verdicts:
            counts[v.verdict] = counts.get(v.verdict, 0) + 1
            if v.verdict in ("fail", "error"):
                print(f"    {v.verdict}: {v.case}: {v.detail.splitlines()[0] if v.detail else ''}")
        failing_cases += counts.get("fail", 0) + counts.get("error", 0)
        case_counts[manifest.stem] = counts
        (cases_out / f"verdicts.{manifest.stem}.json").write_text(
            json.dumps([dataclasses.asdict(v) for v in verdicts], indent=2) + "\n")
        print(f"cases against {manifest.stem}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    coverage = subprocess.run([sys.executable, "-m", "harness.coverage", "--junit",
                               *map(str, sorted(cases_out.glob("*softuet*.xml")))], cwd=REPO, capture_output=True,
                              text=True, timeout=120)
    (args.report / "coverage.txt").write_text(coverage.stdout)
    print("\n".join(coverage.stdout.splitlines()[:3]))
    # The mutation run: every fault knob of the reference FEP must make a case (or a wire check) fail.
    print("mutation run: one suite run per softuet fault knob", flush=True)
    (args.report / "mutation.json").unlink(missing_ok=True)
    mutation = subprocess.run([sys.executable, "-m", "harness.mutation", "--build", str(args.build),
                               "--out", str(args.report)], cwd=REPO, timeout=3600)
    score = "not run (exit %d)" % mutation.returncode
    if (args.report / "mutation.json").exists():
        score = json.loads((args.report / "mutation.json").read_text())["score"]
    summary = {"decode_disagreements": bad, "cases": case_counts, "coverage": coverage.stdout.splitlines()[:3],
               "mutation_score": score}
    (args.report / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"uet run: {bad} decoder disagreements, {failing_cases} failing cases, mutation score {score}; "
          f"summary in {args.report / 'summary.json'}")
    return 1 if bad or failing_cases or mutation.returncode else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
