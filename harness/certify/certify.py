"""./uet certify's work: the mustpass of a provider's claims, run, and sealed as a submission package (its
options and help: harness/commands/certify.py)."""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import pathlib
import random
import re
import shutil
import sys
import tempfile

from harness.inputs import catalogue as catalogue_mod
from harness.inputs import loader_environment
from harness.inputs import manifest as manifest_mod
from harness.certify import mustpass as mustpass_mod
from harness.inputs import libfabric_prefix, side_builds
from harness.certify import package_archive, package_sums
from harness.files import suite_identity
from harness.files.untrusted import printable_tree
from harness.run import execute as execute_mod
from harness.run import outputs
from harness.run import run_suite as run_suite_mod
from harness.certify.package_manifests import copy_manifests
from harness.run.run_cases import TraitsError, area_traits
from harness.commands import certify as certify_options
from harness.commands import trust_options
from harness.commands.run import SEED_MAX

RUN_MEMBER = "run"          # the run folder's place in the package


class CertifyError(Exception):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def parse_args(argv: list[str]) -> argparse.Namespace:
    return certify_options.parse(argv)


@contextlib.contextmanager
def working_folder(folder: pathlib.Path):
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def run_suite(args, staging: pathlib.Path, refs: list[str], seed: int,
              report: pathlib.Path) -> tuple[int, outputs.RunOutcome | None]:
    """Runs the suite on the package's manifests, `refs` inside `staging`, as ./uet run with these options
    would: from that folder, so what the run records (its manifests, what an opt-in let through) names them
    as the package does. (exit status, the outcome: None when the run did not start or wrote no report)."""
    who = ["--provider", refs[0]] if args.provider else ["--initiator", refs[0], "--target", refs[1]]
    argv = [*who, "--seed", str(seed), "--report", str(report.resolve()), "--quiet", "--build", str(args.build.resolve())]
    argv += [x for o in args.only for x in ("--only", o)] + (["--jobs", str(args.jobs)] if args.jobs else [])
    argv += trust_options.given(args)  # the run records them in results.json, which the package carries
    argv += ["--libfabric", str(args.libfabric.absolute())] if args.libfabric else []
    with working_folder(staging):
        return run_suite_mod.run(run_suite_mod.plan(argv))


def links_in(folder: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_symlink())


def package_name(manifests: list[manifest_mod.Manifest], suite: dict, when: datetime.datetime) -> str:
    who = "__".join(dict.fromkeys(m.name for m in manifests))
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{who}-{when:%Y%m%d}-{suite['commit'][:12]}")


def load_manifests(refs: list[str], allow_loader_environment: bool = False) -> list[manifest_mod.Manifest]:
    try:
        manifests = [manifest_mod.load(r) for r in refs]
    except manifest_mod.ManifestError as exc:
        raise CertifyError("bad manifest:\n  " + str(exc).replace("\n", "\n  "), 2) from None
    if not allow_loader_environment and (refused := loader_environment.problems(manifests)):
        raise CertifyError("bad manifest:\n  " + "\n  ".join(refused), 2)
    return manifests


def certify(args) -> tuple[pathlib.Path, int]:
    refs = [args.provider] if args.provider else [args.initiator, args.target]
    mode = "provider" if args.provider else "pair"
    manifests = load_manifests(refs, args.allow_loader_environment)
    try:
        areas = area_traits(args.build)
    except TraitsError as exc:
        raise CertifyError(str(exc), 3) from None
    if not areas:
        raise CertifyError(f"no case binaries in {args.build / 'cases'} (run ./uet build)", 3)
    suite = suite_identity.describe(args.build)
    if suite["modified"]:
        print(f"uet certify: note: this checkout has {len(suite['changes'])} change(s) from commit "
              f"{suite['commit'][:12]}; the package says so and a verifier rejects it", file=sys.stderr)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, SEED_MAX)
    started = datetime.datetime.now(datetime.timezone.utc)
    with tempfile.TemporaryDirectory(prefix="uet-certify-") as tmp:
        tmp = pathlib.Path(tmp)
        staging = tmp / "package"
        package_refs = copy_manifests(manifests, staging)
        copies = [str(staging / r) for r in package_refs]  # what runs is what the package holds
        manifests = load_manifests(copies, args.allow_loader_environment)
        mustpass = mustpass_mod.derive(catalogue_mod.load(), mode, copies, manifests, areas, args.only)
        print(f"uet certify: {', '.join(m.name for m in manifests)}: profiles "
              f"{', '.join(mustpass_mod.claimed_profiles(manifests))}, {sum(len(v) for v in mustpass['profiles'].values())} "
              f"mustpass statement(s) by profile, seed {seed}", flush=True)
        rc, outcome = run_suite(args, staging, package_refs, seed, tmp / "runs")
        if rc not in (0, 1) or outcome is None:
            raise CertifyError(f"the run ended with exit status {rc} and no complete report: no package written", 3)
        run_dir = outcome.run_dir.resolve()
        if links := links_in(run_dir):
            raise CertifyError("the run folder holds symbolic links (a package has none): " + ", ".join(links[:5]), 3)
        shutil.copytree(run_dir, staging / RUN_MEMBER)
        results = printable_tree(outcome.doc["results"])  # as results.json holds them
        mustpass = dict(mustpass_mod.with_checks(mustpass, results), seed=seed, run_exit_status=rc,
                        refs=package_refs, given_refs=refs)
        (staging / "mustpass.json").write_text(json.dumps(mustpass, indent=1) + "\n")
        (staging / "suite.json").write_text(json.dumps(suite, indent=1) + "\n")
        names = sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file())
        package_sums.write(staging, names)
        args.out.mkdir(parents=True, exist_ok=True)
        package = args.out / (package_name(manifests, suite, started) + ".tar.zst")
        package_archive.write(staging, names + [package_sums.NAME], package, int(started.timestamp()))
    return package, rc


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        if args.check_usage:  # ./uet asks before it builds: a bad manifest is answered at once
            manifests = load_manifests([r for r in (args.provider, args.initiator, args.target) if r],
                                       args.allow_loader_environment)
            try:  # a libfabric the run would refuse is refused here, as bad usage, not a failed run
                trees = execute_mod.libfabric_trees(args, manifests)
            except libfabric_prefix.PrefixError as exc:
                raise CertifyError(str(exc), 2) from None
            # ./uet builds them, as for ./uet run, after all of the suite's own tree: the package names the
            # suite by the hashes of its binaries there (harness/files/suite_identity.py), which verify rebuilds
            print(side_builds.RUN_TARGET + "\n" + "".join(t.line() + "\n" for t in trees), end="")
            return 0
        package, rc = certify(args)
    except CertifyError as exc:
        print(f"uet certify: {exc}", file=sys.stderr)
        return exc.status
    print(f"uet certify: wrote {package} ({package.stat().st_size} bytes)" +
          ("" if rc == 0 else "; the run failed, so a verifier will reject it") + f"; check it: ./uet verify {package}")
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
