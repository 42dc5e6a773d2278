"""./uet run: parse_args -> RunPlan (harness/run/run_plan.py) -> execute (harness/run/execute.py) ->
write_outputs (harness/run/outputs.py); its options and help: harness/commands/run.py."""
from __future__ import annotations

import argparse
import pathlib
import sys

import yaml

from harness.commands import run as run_options
from harness.files import input_files
from harness.files.untrusted import printable
from harness.inputs import side_builds
from harness.inputs import spec_versions
from harness.run import execute as execute_mod
from harness.run import outputs
from harness.run import run_plan
from harness.trends import ci_options

REPO = pathlib.Path(__file__).resolve().parents[2]


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The options (harness/commands/run.py checks what needs only the standard library), then what needs the
    set-up's packages: the pair file, the spec version, the CI options' files."""
    args, p = run_options.parse(argv)
    if args.pair:
        try:
            read_pair_file(args)
        except execute_mod.UsageError as exc:
            p.error(str(exc))
        if args.target and not args.initiator:
            p.error("--target goes with --initiator (an interop cell); e.g. --initiator a.yaml --target b.yaml")
    if args.spec_version is None:
        args.spec_version = spec_versions.default()
    elif args.spec_version not in spec_versions.known():
        p.error(f"argument --spec-version: invalid choice: {args.spec_version!r} (choose from "
                f"{', '.join(map(repr, spec_versions.known()))})")
    ci_options.check(args, p)
    return args


def read_pair_file(args) -> None:
    """Fills the run's who and where from a pair description (cases/pairs/pair.schema.yaml); manifest
    paths in it are relative to the file."""
    try:
        doc, _ = input_files.load_yaml(args.pair, "pair file")
    except input_files.InputError as exc:
        raise execute_mod.UsageError(f"the pair file cannot be read: {exc}") from None
    schema = yaml.safe_load((REPO / "cases" / "pairs" / "pair.schema.yaml").read_text())
    problems = input_files.schema_problems(doc, schema, "")
    if problems:
        raise execute_mod.UsageError(f"the pair file {input_files.shown_path(args.pair)}: " + "; ".join(problems[:5])
                         + " (keys: provider | initiator and target | matrix, and placement)")

    def ref(r: str) -> str:
        path, _, variant = r.partition("#")
        full = pathlib.Path(path) if pathlib.Path(path).is_absolute() else args.pair.parent / path
        return str(full) + (f"#{variant}" if variant else "")
    args.provider = ref(doc["provider"]) if "provider" in doc else None
    args.initiator = ref(doc["initiator"]) if "initiator" in doc else None
    args.target = ref(doc["target"]) if "target" in doc else None
    args.matrix = [ref(r) for r in doc["matrix"]] if "matrix" in doc else None
    if args.placement and doc.get("placement") and args.placement != doc["placement"]:
        raise execute_mod.UsageError(f"--placement {args.placement} disagrees with the pair file's placement: {doc['placement']}")
    args.placement = args.placement or doc.get("placement")


def plan(argv: list[str]) -> run_plan.RunPlan:
    """The plan of the command line `argv` (./uet run's options), as ./uet run makes it."""
    return run_plan.from_args(parse_args(argv), argv)


def run(the_plan: run_plan.RunPlan) -> tuple[int, outputs.RunOutcome | None]:
    """execute -> write_outputs, and what the console says at the end: (exit status, the outcome; None when the
    run did not start or its report could not be written)."""
    try:
        outcome = execute_mod.execute(the_plan)
        outputs.write_outputs(outcome)
    except execute_mod.Refused as exc:
        print(f"uet run: {exc}", file=sys.stderr)
        return exc.status, None
    except outputs.NotWritten as exc:
        print(f"uet run: {exc}", file=sys.stderr)
        return 3, None
    for line in outputs.summary_lines(outcome):
        print(printable(line), flush=True)
    if outcome.matched_nothing and not outcome.interrupted:
        print(f"uet run: --only {' '.join(the_plan.only)} matched no check of this run", file=sys.stderr)
    return outcome.exit_status, outcome


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    the_plan = run_plan.from_args(args, argv)
    if args.check_usage:  # ./uet builds the suite's own tree (what it needs of it), then these trees
        try:  # bad manifests, and a libfabric the suite cannot build against, are answered before the build
            loaded = execute_mod.load_manifests(the_plan)
            trees = execute_mod.trees_of(the_plan, loaded)
        except execute_mod.Refused as exc:
            print(f"uet run: {exc}", file=sys.stderr)
            return exc.status
        sided = [m.with_default_libfabric(args.libfabric) for m in loaded]
        print(side_builds.suite_target(sided, args.trust_foreign_libfabric) + "\n"
              + "".join(t.line() + "\n" for t in trees), end="")
        return 0
    return run(the_plan)[0]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
