"""The base image of the containers placement, and the podman the suite runs with.

No image can be pulled here: the image is built on this machine from Debian's packages, once, and kept in
the suite's own container storage. It holds only what the suite's binaries need at run time (their shared
libraries outside the build, found with ldd and mapped to packages with dpkg -S) on a minbase system;
the binaries themselves come in through a read-only volume. Its tag is a hash of that recipe, so a build
that needs another library gets a new image.

The suite's podman never touches the host's podman set-up: its own containers.conf (runc, cgroupfs, a
file events log, ulimits a container may have without CAP_SYS_RESOURCE) and its own storage under
STATE, both named through CONTAINERS_CONF and CONTAINERS_STORAGE_CONF.
"""
from __future__ import annotations

import fcntl
import grp
import hashlib
import json
import os
import pathlib
import pwd
import re
import shutil
import subprocess
import tempfile

from .host import tool
from .placement import PlacementError

STATE = pathlib.Path(os.environ.get("UET_PODMAN_STATE", "/var/lib/uet/podman"))
RUNROOT = pathlib.Path("/run/uet/podman")
IMAGE_REPO = "localhost/uet-fep-base"
RECIPE = 2   # raise when the way the image is made changes
SUITE_USERS = "uet-"  # the suite's own users (setup/impostor-user.sh): the cases look them up by name
# crun fails on these machines (rlimits without CAP_SYS_RESOURCE, then cgroups in hybrid mode); runc works.
CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
"""
STORAGE_CONF = """\
[storage]
driver = "overlay"
graphroot = "{graph}"
runroot = "{run}"
"""


def podman_env() -> dict[str, str]:
    """The environment every podman command of the suite runs with (its own configuration and storage)."""
    conf = STATE / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "containers.conf").write_text(CONTAINERS_CONF)
    (conf / "storage.conf").write_text(STORAGE_CONF.format(graph=STATE / "storage", run=RUNROOT))
    return dict(os.environ, CONTAINERS_CONF=str(conf / "containers.conf"),
                CONTAINERS_STORAGE_CONF=str(conf / "storage.conf"))


def podman(*args: str, timeout: float = 120, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    for needed in ("podman", "runc"):
        tool(needed)
    proc = subprocess.run([tool("podman"), *args], env=podman_env(), capture_output=True, text=True,
                          timeout=timeout, **kwargs)
    if check and proc.returncode != 0:
        raise PlacementError(f"podman {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
    return proc


def runtime_packages(files: list[pathlib.Path], inside: list[pathlib.Path]) -> list[str]:
    """The Debian packages holding the shared libraries `files` load, apart from those under `inside`
    (they come in through the volume). Kept in STATE by the files' sizes and times: a cell asks again."""
    signature = hashlib.sha256(repr(sorted((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)).encode()
                               + repr(sorted(map(str, inside))).encode()).hexdigest()
    cache = STATE / "runtime-packages.json"
    try:
        known = json.loads(cache.read_text())
    except (OSError, ValueError):
        known = {}
    if signature in known:
        return known[signature]
    out = subprocess.run(["ldd", *map(str, files)], capture_output=True, text=True).stdout
    libs = sorted({m[1] for m in re.finditer(r"=> (/\S+)", out)
                   if not any(pathlib.Path(m[1]).resolve().is_relative_to(d) for d in inside)})
    owners = {}
    for line in subprocess.run(["dpkg", "-S", *libs, *(str(pathlib.Path(lib).resolve()) for lib in libs)],
                               capture_output=True, text=True).stdout.splitlines():
        package, _, path = line.partition(": ")
        owners[path.strip()] = package.split(":")[0].split(",")[0].strip()
    packages = set()
    for lib in libs:
        # usrmerge: dpkg knows a library under /lib or /usr/lib, whichever its package shipped
        names = (lib, str(pathlib.Path(lib).resolve()), lib.replace("/usr/lib/", "/lib/", 1), "/usr" + lib)
        found = next((owners[n] for n in names if n in owners), None)
        if not found:
            raise PlacementError(f"no Debian package holds {lib} (dpkg -S): the image could not provide it")
        packages.add(found)
    STATE.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({signature: sorted(packages)}))
    return sorted(packages)


def suite_binaries(build: pathlib.Path) -> list[pathlib.Path]:
    found = [p for d in ("cases", "bin", "lib") for p in sorted((build / d).glob("*"))
             if p.is_file() and os.access(p, os.X_OK) or p.suffix == ".so"]
    return [p for p in found if p.is_file()]


def debian_release() -> str:
    for line in pathlib.Path("/etc/os-release").read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.split("=", 1)[1].strip().strip('"')
    raise PlacementError("/etc/os-release names no VERSION_CODENAME: not a Debian system the image can be built for")


def debian_mirror() -> str:
    """The Debian archive apt on this machine uses (never a name written into the suite)."""
    out = subprocess.run(["apt-get", "indextargets", "--format", "$(SITE)|$(LABEL)|$(RELEASE)"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        site, label, release = (line.split("|") + ["", ""])[:3]
        if label == "Debian" and not release.endswith(("-security", "-updates", "-backports")):
            return site
    raise PlacementError("no Debian archive in 'apt-get indextargets': configure apt with a Debian mirror "
                         "(the base image is built from it with debootstrap)")


def image_tag(packages: list[str], release: str, users: dict[str, list[str]] | None = None) -> str:
    digest = hashlib.sha256(f"{RECIPE}|{release}|{','.join(packages)}|{json.dumps(users or {})}".encode()).hexdigest()[:12]
    return f"{IMAGE_REPO}:{digest}"


def suite_users() -> dict[str, list[str]]:
    """The host's passwd and group lines of the suite's own users, as the image's /etc files take them: a
    container shares the host's PIDs (--pid host), so its users are the host's by number as well as by name."""
    return {"passwd": [":".join(map(str, (p.pw_name, "x", p.pw_uid, p.pw_gid, p.pw_gecos, p.pw_dir, p.pw_shell)))
                       for p in pwd.getpwall() if p.pw_name.startswith(SUITE_USERS)],
            "group": [f"{g.gr_name}:x:{g.gr_gid}:" for g in grp.getgrall() if g.gr_name.startswith(SUITE_USERS)]}


def ensure_image(build: pathlib.Path, inside: list[pathlib.Path], say=print) -> str:
    """The tag of the base image for the binaries of `build` and of every other build tree among the volumes
    (one built against another libfabric, whose libraries that libfabric may need), built first if this machine
    has none yet."""
    release = debian_release()
    trees = [build] + [p for p in inside if p != build.resolve() and (p / "CMakeCache.txt").is_file()]
    packages = runtime_packages([b for tree in trees for b in suite_binaries(tree)], inside)
    users = suite_users()
    tag = image_tag(packages, release, users)
    return debootstrap_image(tag, release, packages, "image", say, users)


def debootstrap_image(tag: str, release: str, packages: list[str], name: str, say=print,
                      users: dict[str, list[str]] | None = None) -> str:
    """`tag`, built once if this machine has none yet: debootstrap minbase of `release` with `packages` and the
    `users` lines added to its /etc files, imported into the suite's podman storage (`name` tells its lock, log
    and work folder from another image's)."""
    if podman("image", "exists", tag, check=False).returncode == 0:
        return tag
    STATE.mkdir(parents=True, exist_ok=True)
    with open(STATE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time; the others then find it made
        if podman("image", "exists", tag, check=False).returncode == 0:
            return tag
        tool("debootstrap")
        mirror = debian_mirror()
        say(f"containers: building the image {tag} once (debootstrap {release} minbase"
            + (f" with {', '.join(packages)}" if packages else "") + "); about a minute")
        root = pathlib.Path(tempfile.mkdtemp(prefix="rootfs-", dir=STATE))
        log = STATE / ("debootstrap.log" if name == "image" else f"{name}-debootstrap.log")
        include = [f"--include={','.join(packages)}"] if packages else []
        try:
            with open(log, "w") as out:
                done = subprocess.run([tool("debootstrap"), "--variant=minbase", *include, release, str(root), mirror],
                                      stdout=out, stderr=subprocess.STDOUT, timeout=1800)
            if done.returncode != 0:
                raise PlacementError(f"debootstrap failed ({done.returncode}); its log: {log}: "
                                     f"{log.read_text(errors='replace').strip()[-600:]}")
            for file, lines in (users or {}).items():
                with open(root / "etc" / file, "a") as etc:
                    etc.write("".join(line + "\n" for line in lines))
            tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
            podman("import", "--change", "CMD=[\"/bin/sh\"]", "-", tag, stdin=tar.stdout, timeout=600)
            tar.wait()
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return tag
