"""./uet test --fresh-machine: the README's commands, as a newcomer meets them, in a container made from a
minimal Debian image that holds nothing but a clone of this checkout's last commit.

Why: the suite's own tests and CI run where the set-up has long since installed everything, so a command
that needs a package before the set-up installs it (an import before apt) passes there and dies on a new
machine. Here nothing is installed but Debian's minbase (debootstrap --variant=minbase of this machine's
release, from the mirror apt already uses): no Python, no compiler, no libfabric, no ccache. The container
is privileged and shares the host's network, as root on a VM is: the set-up reaches the Debian mirror, and
./uet run makes its namespace pairs.

    ./uet test --fresh-machine [--commands run|run,test] [--commit REV] [--keep] [--log FILE]

Exit status: 0 every command exited 0; 1 one did not (its output is in the log); 2 bad usage; 3 the
container could not be made. Prints each command's time and status.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from .host import tool
from .image import debian_release, debootstrap_image, podman, podman_env
from .placement import PlacementError

REPO = pathlib.Path(__file__).resolve().parent.parent
IMAGE_REPO = "localhost/uet-fresh-debian"
RECIPE = 1   # raise when the way the image is made changes
COMMANDS = {"run": "./uet run", "test": "./uet test"}   # the README's two commands
COMMAND_DEADLINE_S = {"run": 3 * 3600, "test": 4 * 3600}  # a hang guard only: a fresh 2-core VM builds everything


def image(say=print) -> str:
    """The minbase image of this machine's Debian release, built once and kept in the suite's podman storage."""
    release = debian_release()
    return debootstrap_image(f"{IMAGE_REPO}:{release}-{RECIPE}", release, [], "fresh-image", say)


def clone(into: pathlib.Path, commit: str) -> pathlib.Path:
    """A clone of this checkout at `commit`: what a newcomer gets, without this checkout's builds and outputs."""
    where = into / "uet"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(where)], check=True, timeout=600,
                   capture_output=True)
    subprocess.run(["git", "-C", str(where), "checkout", "--quiet", "--detach", commit], check=True, timeout=600,
                   capture_output=True)
    return where


def run_in(name: str, command: str, log, deadline: float) -> tuple[int, float]:
    """(exit status, seconds) of `command` run in the clone, inside the container `name`."""
    argv = [tool("podman"), "exec", "--workdir", "/root/uet", name, "bash", "-c", f"{command} 2>&1"]
    t0 = time.monotonic()
    try:
        rc = subprocess.run(argv, env=podman_env(), stdout=log, stderr=subprocess.STDOUT, timeout=deadline).returncode
    except subprocess.TimeoutExpired:
        log.write(f"\nfresh machine: {command} still running after {deadline:.0f} s: stopped\n".encode())
        rc = 124
    return rc, time.monotonic() - t0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="./uet test --fresh-machine", description=__doc__.split("\n\n")[0])
    p.add_argument("--commands", default="run", help="which of the README's commands, in order: run, or run,test "
                   "(default run)")
    p.add_argument("--commit", default="HEAD", metavar="REV", help="the commit of this checkout to clone (default "
                   "HEAD; e.g. an older one, to show what a newcomer met then)")
    p.add_argument("--keep", action="store_true", help="leave the container and the clone for a look")
    p.add_argument("--log", type=pathlib.Path, default=REPO / "out" / "fresh-machine" / "last.log",
                   help="the commands' output (default out/fresh-machine/last.log)")
    args = p.parse_args(argv)
    wanted = args.commands.split(",")
    if not wanted or any(w not in COMMANDS for w in wanted):
        p.error(f"--commands {args.commands}: a list of {', '.join(COMMANDS)}")
    known = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{args.commit}^{{commit}}"],
                           capture_output=True, text=True)
    if known.returncode != 0:
        p.error(f"--commit {args.commit}: no such commit in {REPO}")
    if os.geteuid() != 0:
        p.error("the container is privileged (namespace pairs, captures, apt): run as root")
    try:
        tag = image()
    except (PlacementError, subprocess.SubprocessError, OSError) as exc:
        print(f"fresh machine: the image could not be made: {exc}", file=sys.stderr)
        return 3
    work = pathlib.Path(tempfile.mkdtemp(prefix="uet-fresh-"))
    name = f"uet-fresh-{os.getpid()}"
    args.log.parent.mkdir(parents=True, exist_ok=True)
    failed = False
    try:
        checkout = clone(work, args.commit)
        commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        podman("run", "--detach", "--name", name, "--privileged", "--network", "host",
               "--volume", f"{checkout}:/root/uet", tag, "sleep", "infinity", timeout=300)
        print(f"fresh machine: {tag}, a clone of {commit}; output in {args.log}", flush=True)
        with open(args.log, "wb") as log:
            for w in wanted:
                log.write(f"\n=== {COMMANDS[w]}\n".encode())
                log.flush()
                rc, seconds = run_in(name, COMMANDS[w], log, COMMAND_DEADLINE_S[w])
                print(f"fresh machine: {COMMANDS[w]}: exit {rc} in {seconds / 60:.1f} min", flush=True)
                if rc != 0:
                    failed = True
                    break
    except (PlacementError, subprocess.SubprocessError, OSError) as exc:
        print(f"fresh machine: the container could not be made: {exc}", file=sys.stderr)
        return 3
    finally:
        if not args.keep:
            podman("rm", "--force", "--time", "5", name, check=False, timeout=120)
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"fresh machine: kept the container {name} and the clone {work}")
    if failed:
        print(f"fresh machine: FAILED; the last lines of {args.log}:", file=sys.stderr)
        print("\n".join(args.log.read_text(errors="replace").splitlines()[-25:]), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
