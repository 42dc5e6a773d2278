"""The cell plan: everything the harness tells one case binary about the area it runs, as one JSON file
(cases/plan/cell-plan.schema.yaml) that cases/common/claims/cell_plan.cpp loads as structs. Both sides of a pair read
the same plan: each side's resolved manifest record, where the target runs, the initiator's control-link address,
where verdicts and captures go, the counted loss on the link. The binary finds it in UET_CASES_PLAN.

As a command, it writes a plan for running one binary by hand:

    python3 -m harness.run.cell_plan --provider my.yaml [--target other.yaml] --area authz [--port N] -o DIR

resolves the manifests into DIR, writes DIR/<area>.plan.json and prints the command line that runs the
binary with it (both sides on this host, the target beside the initiator). Exit status: 0 written, 1 a
manifest or the plan is invalid, 2 usage.
"""
from __future__ import annotations

import argparse
import functools
import json
import pathlib
import shlex
import sys

import yaml

from harness.files import input_files
from harness.inputs import manifest as manifest_mod
from harness.wire.capture_cap import CAPTURE_CAP_BYTES

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA_PATH = REPO / "cases" / "plan" / "cell-plan.schema.yaml"
PLAN_VARIABLE = "UET_CASES_PLAN"
PLAN_VERSION = 2
BESIDE = {"kind": "beside"}


class PlanError(ValueError):
    """A plan that breaks its schema: a bug of the harness or a placement, named with the key."""


@functools.cache
def _schema() -> dict:
    return yaml.safe_load(SCHEMA_PATH.read_text())


def netns_place(netns: str) -> dict:
    return {"kind": "netns", "netns": netns}


def agent_place(agent: str, secret_file: str) -> dict:
    return {"kind": "agent", "agent": agent, "secret_file": secret_file}


def make(*, cell: str, area: str, initiator_manifest: pathlib.Path, target_manifest: pathlib.Path,
         initiator_record: dict, target_record: dict, results: pathlib.Path, captures: pathlib.Path, target_place: dict | None = None,
         target_log: pathlib.Path | None = None, control_listen: str | None = None, loss: dict | None = None,
         target_binary: pathlib.Path | None = None, capture_cap_bytes: int = CAPTURE_CAP_BYTES) -> dict:
    """The plan as a dict, validated against the schema (PlanError names the first problem). Each side carries
    its resolved record (manifest.resolve's, checked against its declaration) beside the file it was written to:
    the plan is the one file a case binary reads. `target_binary`: the case binary the target runs, when not the
    initiator's own (a side built against another libfabric)."""
    for side, record in (("initiator", initiator_record), ("target", target_record)):
        try:
            manifest_mod.validate_resolved(record)
        except manifest_mod.ResolvedSideError as exc:
            raise PlanError(f"cell plan {cell}/{area}: {side}: {exc}") from None
    plan = {"plan_version": PLAN_VERSION, "cell": cell, "area": area,
            "initiator": {"manifest": str(initiator_manifest), "resolved": initiator_record},
            "target": {"manifest": str(target_manifest), "resolved": target_record, "place": target_place or BESIDE},
            "results": str(results), "captures": str(captures), "capture_cap_bytes": capture_cap_bytes}
    if target_binary is not None:
        plan["target"]["binary"] = str(target_binary)
    if target_log is not None:
        plan["target_log"] = str(target_log)
    if control_listen:
        plan["control_listen"] = control_listen
    if loss:
        plan["loss"] = {k: loss[k] for k in ("every", "offset", "seed", "pattern")}
    if problems := input_files.schema_problems(plan, _schema(), f"cell plan {cell}/{area}"):
        raise PlanError(problems[0])
    return plan


def write(path: pathlib.Path, plan: dict) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan, indent=2) + "\n")
    return path


def main(argv: list[str]) -> int:
    from harness.inputs import libfabric_prefix, side_builds
    from harness.commands import trust_options
    parser = argparse.ArgumentParser(prog="python3 -m harness.run.cell_plan", description=__doc__.splitlines()[0])
    parser.add_argument("--provider", required=True, metavar="FILE[#VARIANT]", help="the initiator's manifest")
    parser.add_argument("--target", metavar="FILE[#VARIANT]", help="the target's manifest (default: --provider's)")
    parser.add_argument("--area", required=True, help="the binary's area, e.g. authz for uet-cases-authz")
    parser.add_argument("--port", type=int, default=4793,
                        help="the initiator's UET UDP port ({port}); the target's is the next one (default 4793)")
    parser.add_argument("--build", type=pathlib.Path, default=REPO / "build")
    parser.add_argument("-o", "--out", type=pathlib.Path, required=True, help="a folder for the plan and its files")
    trust_options.add(parser, loader=False)
    args = parser.parse_args(argv)
    try:
        sides = [manifest_mod.load(args.provider), manifest_mod.load(args.target or args.provider)]
        # A manifest naming its own libfabric runs from that libfabric's tree (./uet run --libfabric builds it)
        builds = side_builds.of_run(sides, args.build, args.trust_foreign_libfabric)
    except (manifest_mod.ManifestError, libfabric_prefix.PrefixError) as exc:
        print(exc, file=sys.stderr)
        return 1
    binaries = [builds[m.name].build / "cases" / f"uet-cases-{args.area}" for m in sides]
    for binary in binaries:
        if not binary.exists():
            parser.error(f"no binary {binary} (is --area right? has ./uet build run?)")
    out = args.out.resolve()
    paths = [manifest_mod.resolved_path(out, side) for side in ("initiator", "target")]
    records = [manifest_mod.write_resolved(m, p, build=builds[m.name].build, port=port,
                                           library_first=builds[m.name].library_first)
               for m, p, port in zip(sides, paths, (args.port, args.port + 1))]
    try:
        plan = make(cell=f"{sides[0].name}--{sides[1].name}", area=args.area, initiator_manifest=paths[0],
                    target_manifest=paths[1], initiator_record=records[0], target_record=records[1], results=out / f"{args.area}.jsonl", captures=out / "captures",
                    target_log=out / f"{args.area}.target.log",
                    target_binary=None if binaries[1] == binaries[0] else binaries[1].resolve())
    except PlanError as exc:
        print(exc, file=sys.stderr)
        return 1
    (out / "captures").mkdir(parents=True, exist_ok=True)
    path = write(out / f"{args.area}.plan.json", plan)
    env = {k: v for k, v in records[0]["environment"].items() if v is not None}
    env.update({PLAN_VARIABLE: str(path), "FI_PROVIDER": records[0]["provider"]})
    print(" ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + shlex.quote(str(binaries[0].resolve())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
