"""Run the conformance-case binaries against one provider, described by its manifest, and turn their
JUnit XML into verdicts: pass, fail, not applicable (with the reason), warning (a SHOULD not met), error
(the binary broke).

    /usr/bin/python3 -m harness.run_cases cases/manifests/softuet.yaml [--build build] [--out out/cases]
                                          [--peer same-host|netns]

Two-process cases start their target side as a second process. With a manifest that says
`peer_netns: true`, run as root and `--peer` not `same-host`, the binaries run in side a of a namespace
pair (containers.NamespacePair) and their peers in side b (UET_CASES_PEER_NETNS); otherwise both
sides share the host. Manifest values may use {build}, {repo}, {port} and {peer_port}: the ports are
UET_CASES_PORT (default 4793) and UET_CASES_PEER_PORT (default port + 1).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import yaml

REPO = pathlib.Path(__file__).resolve().parent.parent


@dataclasses.dataclass
class Verdict:
    case: str
    verdict: str            # pass, fail, not_applicable, warning, error
    requirements: list[str]
    detail: str


def verdicts_from_junit(path: pathlib.Path) -> list[Verdict]:
    out = []
    for tc in ET.parse(path).getroot().iter("testcase"):
        name = f"{tc.get('classname')}.{tc.get('name')}"
        props = {p.get("name"): p.get("value") for p in tc.iter("property")}
        reqs = [r for r in props.get("requirements", "").split(",") if r]
        failure = tc.find("failure")
        skipped = tc.find("skipped")
        if failure is not None:
            out.append(Verdict(name, "fail", reqs, (failure.get("message") or "").strip()[:500]))
        elif skipped is not None:
            reason = (skipped.get("message") or skipped.text or "").strip()
            # gtest prefixes the file:line; our skips all start with "not applicable:".
            reason = reason[reason.find("not applicable:"):] if "not applicable:" in reason else reason
            out.append(Verdict(name, "not_applicable", reqs, reason))
        elif "warning" in props:
            out.append(Verdict(name, "warning", reqs, props["warning"]))
        else:
            out.append(Verdict(name, "pass", reqs, ""))
    return out


def case_binaries(build: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in (build / "cases").glob("uet-cases-*") if os.access(p, os.X_OK))


def ports() -> dict[str, str]:
    port = int(os.environ.get("UET_CASES_PORT", "4793"))
    return {"port": str(port), "peer_port": os.environ.get("UET_CASES_PEER_PORT", str(port + 1))}


def case_environment(manifest: dict, manifest_path: pathlib.Path, build: pathlib.Path) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in (manifest.get("environment") or {}).items():
        env[key] = str(value).format(build=build, repo=REPO, **ports())
    env["UET_CASES_MANIFEST"] = str(manifest_path.resolve())
    env["UET_BUILD"] = str(build.resolve())
    env.update({"UET_CASES_PORT": ports()["port"], "UET_CASES_PEER_PORT": ports()["peer_port"]})
    env["FI_PROVIDER"] = manifest["provider"]
    return env


@contextlib.contextmanager
def placement(manifest: dict, peer: str | None):
    """Yields subprocess.run for the case binaries' side, and the environment that places their peers."""
    want_netns = peer == "netns" or (peer is None and manifest.get("peer_netns") and os.geteuid() == 0)
    if not want_netns:
        yield subprocess.run, {}
        return
    from containers.netns import NamespacePair
    with NamespacePair() as pair:
        yield (lambda argv, **kwargs: pair.run("a", argv, **kwargs)), {"UET_CASES_PEER_NETNS": pair.b.netns}


def run(manifest_path: pathlib.Path, build: pathlib.Path, out: pathlib.Path, timeout: int = 600,
        peer: str | None = None, extra_env: dict[str, str] | None = None) -> list[Verdict]:
    """Runs every case binary against the manifest's provider; `extra_env` goes over the manifest's
    environment, for both sides (the mutation run turns a fault knob on with it)."""
    manifest = yaml.safe_load(manifest_path.read_text())
    env = case_environment(manifest, manifest_path, build)
    env.update(extra_env or {})
    out.mkdir(parents=True, exist_ok=True)
    verdicts = []
    with placement(manifest, peer) as (run_side, placement_env):
        env.update(placement_env)
        for binary in case_binaries(build):
            verdicts += run_binary(binary, run_side, env, out / f"{binary.name}.{manifest_path.stem}.xml", timeout)
    return verdicts


def run_binary(binary: pathlib.Path, run_side, env: dict, xml: pathlib.Path, timeout: int) -> list[Verdict]:
    xml.unlink(missing_ok=True)
    try:
        proc = run_side([str(binary), f"--gtest_output=xml:{xml}"], env=env, capture_output=True, text=True,
                        timeout=timeout)
    except subprocess.TimeoutExpired:
        return [Verdict(binary.name, "error", [], f"timed out after {timeout}s")]
    if not xml.exists():
        return [Verdict(binary.name, "error", [], f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}")]
    return verdicts_from_junit(xml)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m harness.run_cases", description=__doc__.splitlines()[0])
    parser.add_argument("manifest", type=pathlib.Path)
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")))
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "cases")
    parser.add_argument("--peer", choices=["same-host", "netns"], default=None,
                        help="where two-process cases put their peer (default: the manifest's peer_netns, when root)")
    args = parser.parse_args(argv)
    if not args.manifest.exists():
        parser.error(f"no manifest {args.manifest}")
    if not case_binaries(args.build):
        print(f"run_cases: no case binaries in {args.build / 'cases'} (run ./uet build)", file=sys.stderr)
        return 3
    verdicts = run(args.manifest, args.build, args.out, peer=args.peer)
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
        line = f"{v.verdict:<15}{v.case}"
        if v.detail:
            line += f"  — {v.detail.splitlines()[0]}"
        print(line)
    (args.out / f"verdicts.{args.manifest.stem}.json").write_text(
        json.dumps([dataclasses.asdict(v) for v in verdicts], indent=2) + "\n")
    print(f"{args.manifest.stem}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return 1 if counts.get("fail") or counts.get("error") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
