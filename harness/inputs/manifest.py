"""Provider manifests: loaded, validated against cases/manifests/manifest.schema.yaml and resolved once.

    /usr/bin/python3 -m harness.inputs.manifest check FILE[#VARIANT] ...    every problem, with its file and key
    /usr/bin/python3 -m harness.inputs.manifest resolve FILE[#VARIANT] [--port N] [-o OUT.json]
    ./uet manifest init --provider NAME [--libfabric PREFIX] [-o FILE] [--force]
                                                 a starter manifest from fi_info (harness/inputs/manifest_init.py)

A reference is a path, optionally `#variant` (a key of the file's `variants:`). `extends: OTHER.yaml`
takes another manifest's keys and overrides them. Maps (environment, wire, ...) merge key by key; every
other value is replaced. The result is checked against the schema with its required keys.

Resolving expands the placeholders {build}, {repo}, {port} (this side's UET UDP port) and {spec_version}
(the version the run checks against) and gives the typed record a side of a pair runs with: the case
binaries read it as JSON (carried by their cell plan: harness/run/cell_plan.py), so no placeholder or YAML is parsed twice. Exit status of the CLI: 0 valid, 1 a manifest is invalid, 2 usage
(init's own: harness/inputs/manifest_init.py).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import os
import pathlib
import re
import string
import sys

import yaml

from harness.inputs import address_layout, spec_versions

from harness.files import input_files
from harness.commands import manifest as manifest_options
from harness.commands import manifest_ref
from harness.commands.manifest_ref import split as split_ref

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA_PATH = REPO / "cases" / "manifests" / "manifest.schema.yaml"
MANIFESTS = manifest_ref.MANIFESTS
JOB_ID_METHODS = ("indirect", "direct", "av")   # what a manifest claims when it says nothing (job_id_methods)
# How the suite gives or asks a provider's JobIDs. A file may drop one that its `extends` gives with a null
# (a provider that takes no JobID says job_id_methods: [] and has none of them).
JOB_ID_HOOK_KEYS = ("indirect_job_id_environment", "indirect_job_id", "fallback_job_id_environment",
                    "privileged_entity")
MAX_JOB_ID = (1 << 24) - 1   # ses.job_id is 24 bits; JobID 0 is no JobID (spec/wire.yaml choice job-id-zero-invalid)
MAP_KEYS = ("environment", "wire", "indirect_job_id_environment", "fallback_job_id_environment", "features")
# A manifest is input from whoever hands it over, read by a harness running as root: each limit turns what
# would be a traceback or the machine's memory into a named problem (exit 2 in a run). The limits of every
# input file: harness/files/input_files.py.
MAX_BYTES, MAX_VALUES, MAX_DEPTH = input_files.MAX_BYTES, input_files.MAX_VALUES, input_files.MAX_DEPTH
MAX_EXTENDS = 16              # files in one extends chain
# The keys whose strings resolve() expands.
EXPANDED_KEYS = ("environment", "indirect_job_id_environment", "fallback_job_id_environment", "wire",
                 "privileged_entity")
# `libfabric` is expanded when the manifest is loaded (a run builds against it before any side resolves), so
# it may name only what is known then.
LOAD_TIME_PLACEHOLDERS = ("repo",)
# An unknown placeholder a problem may show: a short name, perhaps with a conversion or format (never more of
# a value than that: harness/files/input_files.py).
PLACEHOLDER_SHOWN = re.compile(r"[A-Za-z0-9_.!:<>^]{1,40}")


class ManifestError(input_files.InputError):
    """One or more problems of a manifest; str() names the file and key of each."""


def placeholder_values(build, port, checked: str, entity_socket: str | None) -> dict[str, str]:
    """What resolve() puts in for each placeholder; the case binaries' own ones stay as they are."""
    return {"build": str(pathlib.Path(build).resolve()), "repo": str(REPO), "port": str(port),
            "spec_version": checked, "entity_socket": entity_socket or "", "pid": "{pid}", "job": "{job}",
            "entity_trace": str(pathlib.Path(entity_socket).parent / "trace.jsonl") if entity_socket else "",
            "dir": "{dir}", "wlm_job": "{wlm_job}", "alloc_job": "{alloc_job}",
            "sdi": "{sdi}", "key": "{key}", "epoch": "{epoch}", "bin_dir": "{bin_dir}", "uid": "{uid}", "gid": "{gid}"}


@dataclasses.dataclass(frozen=True)
class Manifest:
    """A manifest after extends and its variant, validated; placeholders not yet expanded."""
    ref: str                  # as named: path[#variant]
    path: pathlib.Path
    variant: str | None
    name: str
    data: dict
    sha256: str               # of the files it was built from, in order
    variant_names: tuple[str, ...] = ()  # the file's own variants

    @property
    def provider(self) -> str:
        return self.data["provider"]

    @property
    def uet(self) -> bool:
        return bool(self.data["uet"])

    @property
    def profiles(self) -> list[str]:
        return list(self.data.get("profiles") or [])

    @property
    def endpoint_types(self) -> list[str]:
        return list(self.data["endpoint_types"])

    @property
    def namespaces(self) -> bool:
        return bool(self.data.get("peer_netns"))

    def variants(self) -> list[str]:
        return list(self.variant_names)

    @property
    def spec_versions(self) -> list[str]:
        """The spec versions the provider says it implements (the default one when it says nothing)."""
        declared = self.data.get("spec_version") or spec_versions.default()
        return [declared] if isinstance(declared, str) else list(declared)

    @property
    def libfabric(self) -> pathlib.Path | None:
        """The prefix of the libfabric this side runs with (absolute), or None: the suite's own."""
        return pathlib.Path(self.data["libfabric"]) if self.data.get("libfabric") else None

    def with_default_libfabric(self, prefix: pathlib.Path | None) -> "Manifest":
        """This manifest with `prefix` (./uet run --libfabric) as its libfabric unless it names its own."""
        if prefix is None or self.libfabric is not None:
            return self
        return dataclasses.replace(self, data=dict(self.data, libfabric=str(pathlib.Path(prefix).absolute())))

    @property
    def suite_entity(self) -> bool:
        """The manifest asks the suite to run its own privileged entity (uet-entity) for the entity cases."""
        return (self.data.get("privileged_entity") or {}).get("start") == "suite"

    def resolve(self, *, build: pathlib.Path, port: int, spec_version: str | None = None,
                entity_socket: str | None = None, library_first: pathlib.Path | None = None) -> dict:
        """The record one side runs with, placeholders expanded (what C++ reads as Manifest), for a run that
        checks against `spec_version` (default: spec/wire.yaml's). `library_first`: the lib folder of the side's
        own libfabric, put first in its LD_LIBRARY_PATH (before the manifest's or the caller's). {pid}, {job}, {wlm_job}, {alloc_job}, {sdi}, {key}, {epoch}, {dir}, {bin_dir}, {uid} and {gid} in the
        privileged entity's commands stay: the case binaries fill them in."""
        checked = spec_version or spec_versions.default()
        values = placeholder_values(build, port, checked, entity_socket)

        def expand(v):
            return None if v is None else str(v).format(**values)

        entity = self.data.get("privileged_entity")

        def env(key):
            return {k: expand(v) for k, v in (self.data.get(key) or {}).items()}

        environment = env("environment")
        if library_first is not None:
            after = environment.get("LD_LIBRARY_PATH", os.environ.get("LD_LIBRARY_PATH"))
            environment["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(library_first), after]))

        wire = self.data.get("wire")
        # The keys the record takes as the manifest gives them (provider, uet, profiles, ...) are not named here:
        # resolved_record takes every declared key this leaves out from the manifest.
        return resolved_record({
            "format": 1, "name": self.name, "ref": self.ref, "sha256": self.sha256,
            "spec_versions": self.spec_versions, "checked_spec_version": checked,
            "port": port, "environment": environment,
            "wire": {"interface": self.data.get("host_interface") or expand(wire["interface"]),
                     "udp_port": udp_port(expand(wire["udp_port"])),
                     "udp_port_chosen_by": udp_port_chooser(wire["udp_port"])} if wire else None,
            "indirect_job_id_environment": env("indirect_job_id_environment"),
            "indirect_job_id": job_id_number(self.data.get("indirect_job_id")),
            "fallback_job_id_environment": env("fallback_job_id_environment"),
            "privileged_entity": {
                "start": entity["start"],
                "environment": {k: expand(v) for k, v in (entity.get("environment") or {}).items()},
                "grant": [expand(a) for a in entity["grant"]], "revoke": [expand(a) for a in entity["revoke"]],
                "trace": expand(entity.get("trace")),
                "job": {"grant": [expand(a) for a in entity["job"]["grant"]],
                        "end": [expand(a) for a in entity["job"]["end"]]} if entity.get("job") else None,
                "allocation_grant": [expand(a) for a in entity["allocation_grant"]] if entity.get("allocation_grant") else None,
                "security": {"bind": [expand(a) for a in entity["security"]["bind"]],
                             "key_update": [expand(a) for a in entity["security"]["key_update"]]}
                if entity.get("security") else None,
                "impostor": {
                    "start": [expand(a) for a in entity["impostor"]["start"]],
                    "environment": {k: expand(v) for k, v in (entity["impostor"].get("environment") or {}).items()},
                    "grant": [expand(a) for a in entity["impostor"]["grant"]],
                    "user": str(entity["impostor"]["user"]),
                } if entity.get("impostor") else None,
            } if entity else None,
            "address_layout": address_layout.resolve(self.data.get("address_layout")),
            "job_id_methods": claimed_job_methods(self.data),
        }, self.data)


# The resolved side: the record resolve() writes, as a Python type built at import time from its one declaration,
# $defs/resolved of manifest.schema.yaml. The C++ struct and loader the case binaries read it with are generated
# from the same declaration (cases/generate/generate_resolved_side.py), so writer and reader cannot disagree on a key.
class ResolvedSideError(ValueError):
    """A record that breaks the declaration: a bug of the writer, named with the key."""


def _closed(schema):
    """`schema` with every object that lists its properties requiring each of them and refusing any other: the
    declaration says once that every key is written."""
    if isinstance(schema, list):
        return [_closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _closed(v) for k, v in schema.items()}
    if isinstance(schema.get("properties"), dict):
        out["required"] = list(schema["properties"])
        out["additionalProperties"] = False
    return out


@functools.cache
def _resolved_defs() -> dict:
    return _closed(yaml.safe_load(SCHEMA_PATH.read_text())["$defs"])


def resolved_declaration() -> dict:
    """The record's declaration (closed), with the other $defs it refers to under "$defs"."""
    defs = _resolved_defs()
    return dict(copy.deepcopy(defs["resolved"]), **{"$defs": copy.deepcopy(defs)})


RESOLVED_FIELDS: tuple[str, ...] = tuple(_resolved_defs()["resolved"]["properties"])
# The type: its fields are the record's keys, in the order they are written.
ResolvedSide = dataclasses.make_dataclass("ResolvedSide", [(name, object) for name in RESOLVED_FIELDS], frozen=True,
                                          kw_only=True)


_RESOLVED_DECLARATION = resolved_declaration()


def validate_resolved(record) -> None:
    """Raises ResolvedSideError naming the first key of `record` that breaks the declaration."""
    if problems := input_files.schema_problems(record, _RESOLVED_DECLARATION, "resolved side"):
        raise ResolvedSideError(f"{problems[0]} (its declaration: {SCHEMA_PATH.name}, $defs/resolved)")


def _left_out(schema: dict):
    """What a key the manifest leaves out is in the record: null where the declaration allows it, else the empty
    list or map; None when it has no such value (the record cannot be written without it)."""
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    return (None, True) if "null" in types else ([], True) if "array" in types else \
        ({}, True) if "object" in types else (None, False)


def resolved_record(values: dict, manifest: dict) -> dict:
    """The record of `values` (the keys the resolver computes) and, for every other declared key, the manifest's
    own value of it: in the declared order, checked against the declaration."""
    undeclared = sorted(set(values) - set(RESOLVED_FIELDS))
    if undeclared:
        raise ResolvedSideError(f"resolved side: undeclared key {undeclared[0]} (its declaration: {SCHEMA_PATH.name}, "
                                "$defs/resolved)")
    given = {}
    for key in RESOLVED_FIELDS:
        if key in values:
            given[key] = values[key]
        elif manifest.get(key) is not None:
            given[key] = copy.deepcopy(manifest[key])
        else:
            empty, has = _left_out(_resolved_defs()["resolved"]["properties"][key])
            if not has:
                raise ResolvedSideError(f"resolved side: no {key}, which the manifest leaves out and the resolver "
                                        "does not compute")
            given[key] = empty
    out = dataclasses.asdict(ResolvedSide(**given))
    validate_resolved(out)
    return out


def claimed_job_methods(manifest: dict) -> list[str]:
    """The JobID methods a manifest (or its resolved record) claims: its job_id_methods, all three when it says
    nothing. An empty list is a provider that takes no JobID at all (its requests carry JobID 0)."""
    methods = manifest.get("job_id_methods")
    return list(JOB_ID_METHODS if methods is None else methods)


def job_id_number(value) -> int | None:
    """A JobID as a manifest writes it (a number, or a string such as "0x5A5A01"), or None when it is not one."""
    try:
        number = value if isinstance(value, int) and not isinstance(value, bool) else int(str(value), 0)
    except ValueError:
        return None
    return number if 1 <= number <= MAX_JOB_ID else None


def _job_id_problems(merged: dict, where: str) -> list[str]:
    """What a manifest says of its JobIDs that cannot hold together: an indirect JobID that is no JobID or has no
    environment to assign it (or the reverse), and hooks of a provider that claims no JobID method."""
    out = []
    job, env = merged.get("indirect_job_id"), merged.get("indirect_job_id_environment")
    if job is not None and job_id_number(job) is None:
        out.append(f"{where}: indirect_job_id: {str(job)[:40]!r} is not a JobID (1..{MAX_JOB_ID}; 0 is no JobID, "
                   "choice job-id-zero-invalid): a provider that takes no JobID says job_id_methods: []")
    if (job is None) != (not env):
        out.append(f"{where}: indirect_job_id and indirect_job_id_environment go together (the JobID that "
                   "environment assigns): give both, or neither")
    methods = claimed_job_methods(merged)
    if "indirect" not in methods:
        for key in JOB_ID_HOOK_KEYS:
            if merged.get(key) and (key != "privileged_entity" or not methods):
                out.append(f"{where}: {key}: job_id_methods ({', '.join(methods) or 'none'}) claims no "
                           f"{'JobID method' if not methods else 'indirect JobID method'}, so the suite has no "
                           f"JobID to ask of it this way; leave {key} out (null drops what extends gives)")
    return out


def udp_port(value: str) -> int | str:
    """A side's UET port as the cases read it: a number, or "auto" (the provider binds one of its own choosing,
    which the capture learns from the traffic)."""
    return "auto" if str(value) == "auto" else int(value)


def udp_port_chooser(value) -> str:
    """Who chose a side's UET port: "suite" ({port}: the harness gives each cell's sides ports of their own),
    "manifest" (a fixed number the provider is configured with) or "provider" (auto). Only the last two say
    what the provider does when nobody tells it a port, which is what UDP port 4793 is about."""
    text = str(value)
    return "provider" if text == "auto" else "suite" if "{port}" in text else "manifest"


def schema() -> dict:
    full = yaml.safe_load(SCHEMA_PATH.read_text())
    full["$defs"]["spec_version"]["enum"] = spec_versions.known()
    return full


def unfilled(full: dict) -> str:
    """The placeholder `manifest init` writes for a value a vendor must give (the schema's x-unfilled)."""
    return full["x-unfilled"]


def _unfilled_problems(doc, full: dict, where: str) -> list[str]:
    """Each value still the init's placeholder: named before the schema's problems, which it would only blur
    (a placeholder is no port, no command), so that a starter file uncommented but not filled in is refused."""
    mark, out = unfilled(full), []

    def walk(value, key: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{key}.{input_files.key_name(k)}" if key else input_files.key_name(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{key}.{i}")
        elif value == mark:
            out.append(f"{where}: {key}: still {mark}, the placeholder of manifest init: give its value "
                       f"({SCHEMA_PATH.name} says what it means) or delete the key")
    walk(doc, "")
    return out


def _partial_schema(full: dict) -> dict:
    """The schema without its required keys: what one file of an `extends` chain must satisfy."""
    s = {k: v for k, v in full.items() if k not in ("required", "if", "then")}
    return s


def _problems(doc, against: dict, where: str) -> list[str]:
    def worded(err, text: str) -> str:
        """The manifest's own wording where a bare schema problem would not tell the user why."""
        if err.validator == "minItems" and list(err.absolute_path) == ["profiles"]:
            return "a UET provider (uet: true) claims at least one profile"
        if "propertyNames" in err.relative_schema_path and list(err.absolute_path) == ["variants"]:
            return (f"the name of variant {input_files.key_position(doc, err)} is not a plain name of at most 100 "
                    "characters (letters, digits and _ . + -, starting with a letter or digit): it becomes a folder "
                    "of the run")
        return text
    return input_files.schema_problems(doc, against, where, worded)


def read_text(path: pathlib.Path, what: str = "manifest") -> str:
    """The text of a manifest file read as untrusted input (harness/files/input_files.py); ManifestError names the
    file and the problem."""
    try:
        return input_files.read_text(path, what)
    except input_files.InputError as exc:
        raise ManifestError(exc.problems) from None


def load_yaml(path: pathlib.Path, what: str = "manifest"):
    """(document, text) of a YAML file read as untrusted input (harness/files/input_files.py); ManifestError names
    the file and the problem."""
    try:
        return input_files.load_yaml(path, what)
    except input_files.InputError as exc:
        raise ManifestError(exc.problems) from None


def _placeholder_problems(doc: dict, where: str) -> list[str]:
    """Every string resolve() expands must name only known placeholders, as {name}; a literal brace is {{ or }}."""
    out, every = [], tuple(placeholder_values(REPO, 0, "", None))

    def walk(value, key: str, known: tuple[str, ...] = every) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{key}.{input_files.key_name(k)}", known)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{key}.{i}", known)
        elif isinstance(value, str):
            try:
                fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(value)
                          if name is not None]
            except ValueError as exc:
                out.append(f"{where}: {key}: bad placeholder ({exc}; a literal brace is written {{{{ or }}}})")
                return
            for name, spec, conv in fields:
                if name not in known or spec or conv:
                    field = name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "")
                    shown = "{" + field + "}" if PLACEHOLDER_SHOWN.fullmatch(field) else f"of {len(field)} characters"
                    out.append(f"{where}: {key}: unknown placeholder {shown} (known: "
                               + ", ".join("{" + p + "}" for p in known) + "; a literal brace is {{ or }})")

    layers = [("", doc)] + [(f"variants.{v}.", body) for v, body in (doc.get("variants") or {}).items()
                             if isinstance(body, dict)]
    for prefix, layer in layers:
        for key in EXPANDED_KEYS:
            if key in layer:
                walk(layer[key], prefix + key)
        if "libfabric" in layer:
            walk(layer["libfabric"], prefix + "libfabric", LOAD_TIME_PLACEHOLDERS)
    return out


def anchored_libfabric(layer: dict, folder: pathlib.Path) -> dict:
    """`layer` with its libfabric prefix expanded and made absolute against the folder of the file that says it
    (an extended file's relative path stays its own)."""
    if not isinstance(layer.get("libfabric"), str):
        return layer
    path = pathlib.Path(layer["libfabric"].format(repo=REPO))
    return dict(layer, libfabric=os.path.normpath(path if path.is_absolute() else folder / path))


def _read(path: pathlib.Path) -> tuple[dict, str]:
    doc, text = load_yaml(path)
    if not isinstance(doc, dict):
        raise ManifestError([f"{path}: (top level): a manifest is a mapping of keys, not {type(doc).__name__}"])
    return doc, text


def _without_dropped(doc):
    """A manifest file without the JobID hooks it drops (null), which only _merge reads."""
    if not isinstance(doc, dict):
        return doc
    return {k: v for k, v in doc.items() if not (v is None and k in JOB_ID_HOOK_KEYS)}


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        if value is None and key in JOB_ID_HOOK_KEYS:
            out.pop(key, None)
        elif key in MAP_KEYS and isinstance(out.get(key), dict) and isinstance(value, dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def _layers(path: pathlib.Path, variant: str | None, seen: tuple, full: dict) -> tuple[dict, list[str], dict]:
    """(merged keys, texts read, the file's own keys) of path[#variant] with its extends chain."""
    path = path.resolve()
    if path in seen:
        raise ManifestError([f"{path}: extends: a cycle ({' -> '.join(map(str, seen + (path,)))})"])
    if len(seen) >= MAX_EXTENDS:
        raise ManifestError([f"{seen[-1]}: extends: a chain of more than {MAX_EXTENDS} files (from {seen[0]})"])
    doc, text = _read(path)
    problems = (_unfilled_problems(doc, full, input_files.shown_path(path))
                or _problems(_without_dropped(doc), _partial_schema(full), input_files.shown_path(path)))
    if not problems:
        problems = _placeholder_problems(doc, input_files.shown_path(path))
    if problems:
        raise ManifestError(problems)
    texts = [text]
    merged: dict = {}
    if "extends" in doc:
        base_path, base_variant = split_ref(doc["extends"])
        merged, base_texts, _ = _layers(path.parent / base_path, base_variant, seen + (path,), full)
        texts = base_texts + texts
    own = {k: v for k, v in doc.items() if k not in ("extends", "variants")}
    merged = _merge(merged, anchored_libfabric(own, path.parent))
    if variant is not None:
        variants = doc.get("variants") or {}
        if variant not in variants:
            known = ", ".join(sorted(variants)) or "none"
            raise ManifestError([f"{path}: variants: no variant '{variant}' (this file has: {known})"])
        merged = _merge(merged, anchored_libfabric(variants[variant], path.parent))
    return merged, texts, doc


def load(ref: str | pathlib.Path) -> Manifest:
    """The manifest named by `ref` (path[#variant]); raises ManifestError naming every problem."""
    path, variant = manifest_ref.path_of(str(ref)), split_ref(str(ref))[1]
    full = schema()
    merged, texts, own = _layers(path, variant, (), full)
    where = f"{path}{'#' + variant if variant else ''} (after extends and variant)"
    problems = _problems(merged, full, where)
    if not problems:
        problems = _job_id_problems(merged, where)
    try:
        address_layout.resolve(merged.get("address_layout"), f"{path}: address_layout")
    except address_layout.LayoutError as exc:
        problems.append(str(exc))
    if problems:
        raise ManifestError(problems)
    digest = hashlib.sha256("\0".join(texts + [variant or ""]).encode()).hexdigest()  # a variant is its own manifest
    name = own.get("name") or path.stem  # the file's own: an extended file's name is not inherited
    if variant:
        name = (own.get("variants") or {})[variant].get("name") or f"{name}-{variant.replace('_', '-')}"
    return Manifest(ref=str(ref), path=path.resolve(), variant=variant, name=name,
                    data=merged, sha256=digest, variant_names=tuple(sorted(own.get("variants") or {})))


# A resolved record is a few kilobytes; one larger than this (a package's member at verify time) is not read.
RESOLVED_LIMIT = 1 << 20


def resolved_path(cell_folder: pathlib.Path, side: str) -> pathlib.Path:
    """Where a cell's folder keeps a side's resolved record (side: initiator or target), which its binaries read."""
    return cell_folder / f"{side}.manifest.json"


def read_resolved(path: pathlib.Path) -> dict | None:
    """The one reader of a resolved record in Python (the case binaries read it in C++): the record, or None
    when it is absent, not a regular file (a symbolic link included), larger than RESOLVED_LIMIT, not JSON or
    not an object. It may come from a package under verification: it is read, never trusted further."""
    if path.is_symlink():
        return None
    try:
        record = input_files.parse_json(path, input_files.read_json_bytes(path, "resolved record", RESOLVED_LIMIT),
                                        "resolved record")
    except input_files.InputError:
        return None
    return record if isinstance(record, dict) else None


def write_resolved(manifest: Manifest, out: pathlib.Path, *, build: pathlib.Path, port: int,
                   spec_version: str | None = None, entity_socket: str | None = None,
                   library_first: pathlib.Path | None = None) -> dict:
    """Writes the resolved record a side's binaries read, and returns it."""
    record = manifest.resolve(build=build, port=port, spec_version=spec_version, entity_socket=entity_socket,
                              library_first=library_first)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    return record


def environment_over(base: dict, record: dict) -> dict:
    """`base` with a resolved record's environment over it (a null value unsets) and its provider."""
    env = dict(base)
    for key, value in record["environment"].items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    env["FI_PROVIDER"] = record["provider"]
    return env


def main(argv: list[str]) -> int:
    args = manifest_options.parse(argv)
    if args.command == "check":
        bad = 0
        for ref in args.refs:
            try:
                m = load(ref)
            except ManifestError as exc:
                bad += 1
                for p in exc.problems:
                    print(p, file=sys.stderr)
                continue
            extra = f"; variants: {', '.join(m.variants())}" if m.variants() and not m.variant else ""
            print(f"{ref}: valid ({m.name}: provider {m.provider}, profiles {','.join(m.profiles) or 'none'}{extra})")
        return 1 if bad else 0
    try:
        m = load(args.ref)
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return 1
    record = json.dumps(m.resolve(build=args.build, port=args.port), indent=2) + "\n"
    if args.output:
        args.output.write_text(record)
    else:
        sys.stdout.write(record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
