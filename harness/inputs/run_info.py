"""What a run ran with (results.json's run_info): versions, the manifests with their hashes, the spec data
and the choices in force, and the checks made before any case runs (a provider that libfabric cannot
load, a report folder that cannot be written, namespaces without root)."""
from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import platform
import shutil
import socket
import subprocess

import yaml

from containers.cgroup import Group
from harness.commands.manifest import PROBE_TIMEOUT_S  # one deadline for fi_getinfo: a run's and init's
from harness.inputs import manifest as manifest_mod
from harness.inputs.libfabric_prefix import suite_prefix
from harness.inputs.side_builds import Side

REPO = pathlib.Path(__file__).resolve().parents[2]
WIRE_YAML = REPO / "spec" / "wire.yaml"
CATALOGUE = REPO / "spec" / "catalogue.yaml"


def sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fi_info_binary() -> str | None:
    local = REPO / "deps" / "libfabric" / "bin" / "fi_info"
    return str(local) if local.exists() else shutil.which("fi_info")


@functools.cache
def libfabric_version() -> str:
    tool = fi_info_binary()
    if not tool:
        return "unknown (no fi_info)"
    out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=20).stdout
    for line in out.splitlines():
        if "libfabric:" in line or "fi_info:" in line:
            return line.split(":", 1)[1].strip()
    return out.strip() or "unknown"



def probe_provider(m: manifest_mod.Manifest, build: pathlib.Path, side: Side | None = None) -> tuple[str, str]:
    """fi_getinfo for the manifest's provider in its environment (and its side's libfabric, when it names one):
    ("ok", its version), ("absent", what fi_info said) when libfabric has no such provider (a wrong name or
    path: the user's to fix), or ("broken", what happened) when the provider crashed or hung answering (a
    finding: its cases run and say so)."""
    side = side or Side(build, None)
    # A libfabric without its own fi_info is asked through the suite's, its library first in the path.
    tool = str(side.libfabric.fi_info) if side.libfabric and side.libfabric.fi_info else fi_info_binary()
    if not tool:
        return "ok", "not checked (no fi_info)"
    env = manifest_mod.environment_over(os.environ, m.resolve(build=side.build, port=4793,
                                                               library_first=side.library_first))
    group = Group()
    with subprocess.Popen(group.wrap([tool, "-p", m.provider]), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            out = err = None
        finally:
            group.end(proc.pid)  # fi_info, and what the provider left running (a daemon of its own)
    if out is None:
        return "broken", f"fi_getinfo did not answer within {PROBE_TIMEOUT_S:.0f} s"
    if proc.returncode < 0:
        return "broken", f"fi_info died of signal {-proc.returncode} in fi_getinfo"
    if proc.returncode != 0:
        said = (err.strip() or out.strip()).splitlines()
        return "absent", said[-1] if said else f"fi_info exited {proc.returncode}"
    version = next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.strip().startswith("version:")), "")
    return "ok", version


def choices() -> list[dict]:
    """Every choice in force, with the outside evidence behind it (spec/wire.yaml choices)."""
    doc = yaml.safe_load(WIRE_YAML.read_text())
    out = []
    for cid, c in (doc.get("choices") or {}).items():
        evidence = c.get("evidence") or {}
        out.append({"id": cid, "status": c.get("status"), "confidence": c.get("confidence", "unknown"),
                    "chose": c.get("chose", ""), "agree": list(evidence.get("agree") or []),
                    "disagree": list(evidence.get("disagree") or []), "evidence_note": evidence.get("note", ""),
                    "contested": [{"reading": r.get("reading", ""), "sources": list(r.get("sources") or [])}
                                  for r in c.get("contested") or []]})
    return out


def suite_commit() -> str:
    proc = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


def side_libfabric(side: Side) -> dict:
    """The libfabric one side ran with and the build tree of its case binaries."""
    lf = side.libfabric
    if lf is None:
        return {"source": "suite", "version": libfabric_version(), "prefix": str(suite_prefix().resolve()), "build": str(side.build)}
    return {"source": "named", "version": lf.version, "api": f"{lf.api[0]}.{lf.api[1]}", "prefix": str(lf.prefix),
            "build": str(side.build)}


def suite_libfabric(sides: dict[str, Side]) -> str:
    """The version of the suite's own libfabric, where a side ran with it (./uet run --libfabric sets none up)."""
    if sides and all(side.libfabric for side in sides.values()):
        return "not used: every side ran with its own (see each manifest's)"
    return libfabric_version()


def collect(*, command: str, mode: str, seed: int, spec_version: str, manifests: list[manifest_mod.Manifest],
            provider_versions: dict[str, str], placement: str, sides: dict[str, Side] | None = None) -> dict:
    sides = sides or {}
    return {
        "command": command, "mode": mode, "seed": seed,
        "spec_version": spec_version,
        "host": socket.gethostname(), "kernel": f"{platform.system()} {platform.release()}",
        "libfabric": suite_libfabric(sides), "suite_commit": suite_commit(), "placement": placement,
        "manifests": [{"ref": m.ref, "name": m.name, "provider": m.provider, "uet": m.uet, "profiles": m.profiles,
                       "provider_version": m.data.get("provider_version") or provider_versions.get(m.name, ""),
                       "spec_versions": m.spec_versions, "implements_checked_version": spec_version in m.spec_versions,
                       "sha256": m.sha256, **({"libfabric": side_libfabric(sides[m.name])} if m.name in sides else {})}
                      for m in manifests],
        "spec_data": {"wire_yaml_sha256": sha256(WIRE_YAML), "catalogue_sha256": sha256(CATALOGUE)},
        "choices": choices(),
    }
