"""Asks a libfabric installation (PREFIX with bin/fi_info and lib/libfabric.so) what one provider offers,
within one deadline: `fi_info -p NAME -v`, then `-t FI_EP_RDM` / `-t FI_EP_DGRAM` for a type the first
answer lacked (some providers answer a type only when asked for it), and, for an address format fi_info
cannot name, harness.inputs.fi_addr_format. Problems are ProbeError with the exit status of ./uet's conventions:
3 when the installation cannot answer (no fi_info, no libfabric.so, no such provider), 1 when the provider's
answer failed (fi_info hung or died in it), 2 when root would run what another user can change there
(harness/inputs/libfabric_trust.py)."""
from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import shlex
import signal
import subprocess
import sys
import time

from harness.inputs import fi_info_text, libfabric_prefix, libfabric_trust, run_info
REPO = pathlib.Path(__file__).resolve().parents[2]
FI_ENODATA = 61          # fi_info exits with fi_getinfo's -ret: "No data available", nothing matched
PROBED_TYPES = ("FI_EP_RDM", "FI_EP_DGRAM")  # the endpoint types the suite's cases test
EP_TYPE_NUMBERS = {1: "FI_EP_MSG", 2: "FI_EP_DGRAM", 3: "FI_EP_RDM"}  # enum fi_ep_type
SETUP, FAILED, USAGE = 3, 1, 2
PROBE_TIMEOUT_S = run_info.PROBE_TIMEOUT_S  # the deadline a run gives fi_getinfo: init's default
# The address formats fi_info names (libfabric 2.1's enum, and FI_ADDR_UET for a libfabric that adds it);
# it prints "Unknown" for any other, which is then asked for as a number.
KNOWN_FORMATS = {"FI_FORMAT_UNSPEC", "FI_SOCKADDR", "FI_SOCKADDR_IN", "FI_SOCKADDR_IN6", "FI_SOCKADDR_IB",
                 "FI_ADDR_PSMX", "FI_ADDR_GNI", "FI_ADDR_BGQ", "FI_ADDR_MLX", "FI_ADDR_STR", "FI_ADDR_PSMX2",
                 "FI_ADDR_IB_UD", "FI_ADDR_EFA", "FI_ADDR_PSMX3", "FI_ADDR_OPX", "FI_ADDR_CXI", "FI_ADDR_UCX",
                 "FI_ADDR_UET"}


class ProbeError(Exception):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


@dataclasses.dataclass
class Installation:
    prefix: pathlib.Path
    fi_info: pathlib.Path
    library: pathlib.Path


@dataclasses.dataclass
class Probe:
    offer: fi_info_text.Offer
    libfabric_version: str
    # fi_getinfo's numbers where fi_info printed "Unknown": by ep_type, the formats and the first src_addr
    addr_format_numbers: dict[str, list[int]]
    src_addr_hex: dict[str, str]
    commands: list[str]      # the fi_info commands whose answers the manifest rests on


def installation(prefix: pathlib.Path, trust_foreign: bool = True) -> Installation:
    """PREFIX's fi_info and libfabric.so (lib, lib64 or a Debian multiarch folder), or ProbeError naming
    what is missing, or (unless `trust_foreign`) what of it another user can change."""
    prefix = prefix.absolute()
    fi_info = prefix / "bin" / "fi_info"
    if not (fi_info.is_file() and os.access(fi_info, os.X_OK)):
        raise ProbeError(f"no fi_info at {fi_info}: --libfabric names the folder that holds libfabric's "
                         "bin/fi_info and lib/libfabric.so (the suite's own: ./uet setup builds deps/libfabric)", SETUP)
    folders = libfabric_prefix.library_folders(prefix)
    library = libfabric_prefix.find_library(folders)
    if library is None:
        raise ProbeError(f"no libfabric.so in {', '.join(map(str, folders))}: {prefix} is not a libfabric "
                         "installation", SETUP)
    if not trust_foreign and (foreign := libfabric_trust.foreign_parts(prefix, prefix.resolve(), [])):
        raise ProbeError(libfabric_trust.refusal(prefix, foreign), USAGE)
    return Installation(prefix, fi_info, library)


class Deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.01, self.end - time.monotonic())


def probe_environment(inst: Installation) -> dict[str, str]:
    """The caller's environment (FI_PROVIDER_PATH finds a provider outside PREFIX) with PREFIX's library
    first; FI_PROVIDER dropped: -p names the provider, and a stale FI_PROVIDER would hide it."""
    env = {k: v for k, v in os.environ.items() if k != "FI_PROVIDER"}
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(inst.library.parent), env.get("LD_LIBRARY_PATH")]))
    return env


def _run(argv: list[str], env: dict, deadline: Deadline, what: str) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", env=env,
                              timeout=deadline.left(), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ProbeError(f"{what} did not answer within {deadline.seconds:g} s (the provider hangs in fi_getinfo?): "
                         "no manifest written", FAILED) from None
    if proc.returncode < 0:
        raise ProbeError(f"{what} died of signal {signal.Signals(-proc.returncode).name} (in the provider's "
                         "fi_getinfo?): no manifest written", FAILED)
    return proc


def _last_line(proc: subprocess.CompletedProcess) -> str:
    said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    return said[-1] if said else f"exit status {proc.returncode}"


def _not_offered(inst: Installation, provider: str, said: str, env: dict, deadline: Deadline,
                 version: str) -> ProbeError:
    listed = fi_info_text.parse_list(_run([str(inst.fi_info), "-l"], env, deadline, "fi_info -l").stdout)
    parts = provider.split(";")
    if all(p in listed for p in parts):
        why = f"it loads {' and '.join(parts)}, which offer no endpoint here ({said})"
    else:
        missing = ", ".join(p for p in parts if p not in listed)
        where = os.environ.get("FI_PROVIDER_PATH")
        hint = (f"FI_PROVIDER_PATH={where} does not hold it" if where else
                "a provider outside the installation is found through FI_PROVIDER_PATH=its folder")
        why = f"no provider {missing} ({said}); {hint}"
    return ProbeError(f"libfabric {version or '(version unknown)'} at {inst.prefix} does not offer provider "
                      f"'{provider}': {why}. The providers it sees: {', '.join(listed) or 'none'}", SETUP)


def _verbose(inst: Installation, provider: str, env: dict, deadline: Deadline, ep_type: str | None):
    argv = [str(inst.fi_info), "-p", provider, *(["-t", ep_type] if ep_type else []), "-v"]
    proc = _run(argv, env, deadline, shlex.join(["fi_info", *argv[1:]]))
    return argv, proc


def _numbers(inst: Installation, provider: str, env: dict, deadline: Deadline):
    """fi_getinfo's address formats and first src_addr by ep_type (harness.inputs.fi_addr_format)."""
    probe_env = dict(env, FI_PROVIDER=",".join(provider.split(";")), PYTHONPATH=str(REPO))
    proc = _run([sys.executable, "-m", "harness.inputs.fi_addr_format", str(inst.library), provider], probe_env, deadline,
                "fi_getinfo (harness.inputs.fi_addr_format)")
    try:
        rows = json.loads(proc.stdout) if proc.returncode == 0 else []
    except ValueError:
        rows = []
    formats: dict[str, list[int]] = {}
    addrs: dict[str, str] = {}
    for row in rows:
        ep_type = EP_TYPE_NUMBERS.get(row.get("ep_type"), f"ep_type {row.get('ep_type')}")
        if row.get("addr_format") not in formats.setdefault(ep_type, []):
            formats[ep_type].append(row.get("addr_format"))
        addrs.setdefault(ep_type, row.get("src_addr", ""))
    return formats, addrs


def probe(provider: str, prefix: pathlib.Path, timeout: float, trust_foreign: bool = True) -> Probe:
    inst = installation(prefix, trust_foreign)
    env = probe_environment(inst)
    deadline = Deadline(timeout)
    version = fi_info_text.version_line(_run([str(inst.fi_info), "--version"], env, deadline, "fi_info --version").stdout)
    argv, proc = _verbose(inst, provider, env, deadline, None)
    if proc.returncode == FI_ENODATA:
        raise _not_offered(inst, provider, _last_line(proc), env, deadline, version)
    if proc.returncode != 0:
        raise ProbeError(f"fi_info -p {provider} -v failed: {_last_line(proc)}", SETUP)
    docs, commands = fi_info_text.parse_verbose(proc.stdout), [shlex.join(["fi_info", *argv[1:]])]
    seen = fi_info_text.summarize(docs, provider).endpoints
    for ep_type in (t for t in PROBED_TYPES if t not in seen):
        argv, proc = _verbose(inst, provider, env, deadline, ep_type)
        if proc.returncode == 0:
            docs += fi_info_text.parse_verbose(proc.stdout)
            commands.append(shlex.join(["fi_info", *argv[1:]]))
    offer = fi_info_text.summarize(docs, provider)
    if not offer.endpoints:
        raise _not_offered(inst, provider, "fi_info answered only for " + (", ".join(offer.others) or "nothing"),
                           env, deadline, version)
    formats, addrs = {}, {}
    if any(f not in KNOWN_FORMATS for ep in offer.endpoints.values() for f in ep.addr_formats):
        formats, addrs = _numbers(inst, provider, env, deadline)
    return Probe(offer, version, formats, addrs, commands)

