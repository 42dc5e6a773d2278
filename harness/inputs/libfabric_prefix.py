"""A libfabric installation named by its prefix (./uet run --libfabric PREFIX, a manifest's `libfabric:`):
checked from its files alone, before any set-up, and named by version and place so that a build tree of the
suite can be kept for it.

What a prefix must hold, checked in this order, each problem naming the file it missed:
- bin/fi_info or lib/libfabric.so (lib64 and Debian's multiarch folder count as lib): a libfabric at all;
- lib/pkgconfig/libfabric.pc: the suite's build finds libfabric through pkg-config, and its prefix= must be
  this folder (a moved installation would build against the headers of where it was);
- the headers the .pc names (include/rdma/fabric.h) with FI_MAJOR_VERSION >= 2: the cases ask for
  FI_VERSION(2, 0), the UET mapping's API (Debian 12's libfabric 1.17 is too old);
- libfabric.so in the .pc's libdir: what the case binaries link and load;
- the flags of its .pc files, and, as root, that no other user can change any of it
  (harness/inputs/libfabric_trust.py; trust_foreign lets the second through, recorded in Libfabric.foreign).
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pathlib
import re

from harness.inputs import libfabric_trust
REPO = pathlib.Path(__file__).resolve().parents[2]
API_MAJOR_NEEDED = 2          # FI_VERSION(2, 0): what the cases pass to fi_getinfo
LIBRARY_NAMES = ("libfabric.so", "libfabric.so.1")


class PrefixError(ValueError):
    """A prefix that is no libfabric the suite can build against; the message names the missing file."""


@dataclasses.dataclass(frozen=True)
class Libfabric:
    prefix: pathlib.Path      # resolved (realpath)
    version: str              # the .pc's Version: what the suite builds against
    api: tuple[int, int]      # FI_MAJOR_VERSION, FI_MINOR_VERSION of its headers
    lib: pathlib.Path         # the folder of libfabric.so: first in a side's library path
    pkgconfig: pathlib.Path   # the folder of libfabric.pc: first in PKG_CONFIG_PATH for the build
    fi_info: pathlib.Path | None
    foreign: tuple[str, ...] = ()   # what another user can change of it, let through by trust_foreign

    @property
    def key(self) -> str:
        """<version>-<hash of the resolved prefix>: one build tree per installation, two copies of one
        version apart."""
        version = re.sub(r"[^A-Za-z0-9_.+-]", "_", self.version) or "unknown"
        return f"{version}-{hashlib.sha256(str(self.prefix).encode()).hexdigest()[:10]}"

    def describe(self) -> str:
        return f"libfabric {self.version} (API {self.api[0]}.{self.api[1]}) at {self.prefix}"


def suite_prefix() -> pathlib.Path:
    """The libfabric the suite itself uses: setup/env.sh's choice when sourced, else deps/libfabric."""
    return pathlib.Path(os.environ.get("UET_LIBFABRIC_PREFIX") or REPO / "deps" / "libfabric")


def library_folders(prefix: pathlib.Path) -> list[pathlib.Path]:
    """Where an installation may keep libfabric.so: lib, lib64 or a Debian multiarch folder."""
    return [prefix / "lib", prefix / "lib64", *sorted((prefix / "lib").glob("*-linux-gnu*"))]


def find_library(folders: list[pathlib.Path]) -> pathlib.Path | None:
    return next((f / n for f in folders for n in LIBRARY_NAMES if (f / n).is_file()), None)


def read_pc(path: pathlib.Path) -> dict[str, str]:
    """A .pc file's variables and fields (Version, Cflags, ...) with ${var} expanded, as pkg-config reads it."""
    values: dict[str, str] = {}

    def expand(text: str) -> str:
        return re.sub(r"\$\{([A-Za-z0-9_.]+)\}", lambda m: values.get(m[1], ""), text)
    for line in path.read_text(errors="replace").splitlines():
        line = line.split("#", 1)[0].strip()
        var = re.match(r"^([A-Za-z0-9_.]+)\s*=\s*(.*)$", line)
        field = re.match(r"^([A-Za-z0-9_.]+)\s*:\s*(.*)$", line)
        if var:
            values[var[1]] = expand(var[2])
        elif field:
            values[field[1]] = expand(field[2])
    return values


def header_api(header: pathlib.Path) -> tuple[int, int] | None:
    found = dict(re.findall(r"^#define\s+FI_(MAJOR|MINOR)_VERSION\s+(\d+)", header.read_text(errors="replace"), re.M))
    return (int(found["MAJOR"]), int(found["MINOR"])) if "MAJOR" in found and "MINOR" in found else None


def check(prefix: str | os.PathLike, *, trust_foreign: bool = False) -> Libfabric:
    """The installation at `prefix`, or PrefixError naming the first file it lacks, the .pc flags it refuses
    or (unless `trust_foreign`) what of it another user can change."""
    given = pathlib.Path(prefix)
    if not given.is_dir():
        raise PrefixError(f"{given}: no such folder (a libfabric prefix is the folder that holds its bin/fi_info, "
                          "lib/libfabric.so and lib/pkgconfig/libfabric.pc)")
    root = given.resolve()
    fi_info = root / "bin" / "fi_info"
    fi_info = fi_info if fi_info.is_file() and os.access(fi_info, os.X_OK) else None
    folders = library_folders(root)
    if fi_info is None and find_library(folders) is None:
        raise PrefixError(f"{given} is not a libfabric installation: neither {given / 'bin' / 'fi_info'} nor "
                          f"{given / 'lib' / 'libfabric.so'} exists")
    pc = next((f / "pkgconfig" / "libfabric.pc" for f in folders if (f / "pkgconfig" / "libfabric.pc").is_file()), None)
    if pc is None:
        raise PrefixError(f"no {given / 'lib' / 'pkgconfig' / 'libfabric.pc'}: the suite builds against a libfabric "
                          "through pkg-config (install libfabric with its .pc file: make install does)")
    fields = read_pc(pc)
    said = pathlib.Path(fields.get("prefix") or "/nonexistent")
    if not said.exists() or said.resolve() != root:
        raise PrefixError(f"{pc} says prefix={fields.get('prefix', '')}, not {given}: the installation was moved "
                          "or copied after it was built; the build would take the headers of where it was "
                          "(install it again with --prefix=where it now is)")
    header = pathlib.Path(fields.get("includedir") or root / "include") / "rdma" / "fabric.h"
    api = header_api(header) if header.is_file() else None
    if api is None:
        raise PrefixError(f"no libfabric headers: {header} is missing or defines no FI_MAJOR_VERSION and "
                          f"FI_MINOR_VERSION (the includedir of {pc})")
    version = fields.get("Version", "").strip() or f"{api[0]}.{api[1]}"
    if api[0] < API_MAJOR_NEEDED:
        raise PrefixError(f"libfabric {version} at {given} is too old: its headers' API is {api[0]}.{api[1]} "
                          f"(FI_MAJOR_VERSION {api[0]} in {header}) and the suite's cases need FI_VERSION("
                          f"{API_MAJOR_NEEDED}, 0), the API of the UET mapping (libfabric >= {API_MAJOR_NEEDED}.0; "
                          "Debian 12's libfabric 1.x is too old)")
    libdir = pathlib.Path(fields.get("libdir") or root / "lib")
    library = find_library([libdir])
    if library is None:
        raise PrefixError(f"no {libdir / 'libfabric.so'} (the libdir of {pc}): the case binaries link it")
    bad_flags, elsewhere = [], [libdir, libdir / "libfabric", header.parent.parent, header.parent, pc.parent]
    for other in libfabric_trust.pc_files(pc.parent):
        problems, folders = libfabric_trust.flag_problems(read_pc(other), other)
        bad_flags += problems
        elsewhere += folders
    if bad_flags:
        raise PrefixError("\n".join(bad_flags))
    foreign = libfabric_trust.foreign_parts(given, root, elsewhere)
    if foreign and not trust_foreign:
        raise PrefixError(libfabric_trust.refusal(given, foreign))
    return Libfabric(prefix=root, version=version, api=api, lib=libdir.resolve(), pkgconfig=pc.parent.resolve(),
                     fi_info=fi_info, foreign=tuple(foreign))
