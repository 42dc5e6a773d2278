"""./uet manifest init: a starter manifest for a provider, from what its libfabric's fi_info says about it.

    ./uet manifest init --provider NAME [--libfabric PREFIX] [-o FILE] [--force] [--timeout S]

A certification lab handed an unknown provider gets a file that `python3 -m harness.inputs.manifest check` accepts:
the provider's name, its endpoint types, whether it looks like UET (its address format is FI_ADDR_UET),
each with a comment saying which answer of fi_info it rests on; caps, MR modes and address sizes as comments
(the cases ask fi_getinfo themselves); and what fi_info cannot tell: every key the schema marks (x-starter),
commented out with the schema's placeholder (x-unfilled) as its value, which check refuses once uncommented.
A UET provider's keys are listed whatever fi_info says: a provider may be UET though its libfabric shows
another address format. Nothing is claimed that fi_info did not say, except what the schema requires (a UET
provider's one profile), which says so.

Exit status (./uet's): 0 written; 1 not written: FILE exists (--force replaces it), or fi_info hung, died or
offered no endpoint type the suite tests; 2 bad usage; 3 the libfabric at PREFIX cannot answer (no
bin/fi_info, no lib/libfabric.so, no such provider).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shlex
import sys
import tempfile
import textwrap

import yaml

from harness.inputs import address_layout, libfabric_prefix, provider_probe

from harness.files import output_files
from harness.inputs import manifest as manifest_mod
from harness.commands import manifest as manifest_options
from harness.inputs.fi_info_text import Offer

REPO = pathlib.Path(__file__).resolve().parents[2]
WIRE_YAML = REPO / "spec" / "wire.yaml"
SCHEMA = "cases/manifests/manifest.schema.yaml"
TESTED_KINDS = ("rdm", "dgram")   # the endpoint_types the schema knows
COMMENT_COLUMN = 34
WIDTH = 112


def fi_addr_uet() -> int:
    """The suite's FI_ADDR_UET: its value is MISSING from the spec (spec/wire.yaml choice fi-addr-uet-value)."""
    return int(yaml.safe_load(WIRE_YAML.read_text())["constants"]["fi_addr_uet"]["value"])


def layouts_of_size(size: int) -> list[str]:
    """The layouts of spec/address-layouts.yaml whose address is `size` bytes long."""
    return [name for name in address_layout.names() if address_layout.resolve(name)["size"] == size]


def uet_evidence(offer: Offer, numbers: dict[str, list[int]], uet_value: int) -> tuple[bool, str]:
    """(looks like UET, why): an address format fi_info names FI_ADDR_UET, or one it cannot name whose
    number is the suite's FI_ADDR_UET."""
    formats = [f for ep in offer.endpoints.values() for f in ep.addr_formats]
    if "FI_ADDR_UET" in formats:
        return True, "fi_info: addr_format FI_ADDR_UET"
    unnamed = sorted({n for values in numbers.values() for n in values})
    if uet_value in unnamed:
        return True, (f"fi_info: addr_format Unknown (its libfabric has no FI_ADDR_UET); fi_getinfo gives "
                      f"{uet_value:#x}, the suite's FI_ADDR_UET (spec/wire.yaml choice fi-addr-uet-value)")
    if unnamed:
        return False, (f"fi_info: addr_format Unknown, fi_getinfo gives {', '.join(f'{n:#x}' for n in unnamed)}: not the "
                       f"suite's FI_ADDR_UET {uet_value:#x}; if it is yours, say uet: true (the value is MISSING "
                       "from the spec: spec/wire.yaml choice fi-addr-uet-value)")
    if any(f not in provider_probe.KNOWN_FORMATS for f in formats):
        return False, ("fi_info: addr_format Unknown, and fi_getinfo's number for it could not be read: if it is "
                       "FI_ADDR_UET, say uet: true")
    return False, f"fi_info: addr_format {', '.join(dict.fromkeys(formats)) or 'not printed'}: not FI_ADDR_UET"


def _line(text: str, comment: str) -> list[str]:
    """`text` with its comment beside it, wrapped onto comment lines in the same column."""
    first = text.ljust(COMMENT_COLUMN - 1) + " "
    parts = textwrap.wrap(comment, WIDTH - len(first) - 2, break_on_hyphens=False, break_long_words=False) or [""]
    return [first + "# " + parts[0]] + [" " * len(first) + "# " + p for p in parts[1:]]


def _comment(text: str, indent: str = "") -> list[str]:
    lead = "# " + indent
    return textwrap.wrap(text, WIDTH, initial_indent=lead, subsequent_indent=lead + "  ", break_on_hyphens=False,
                         break_long_words=False) or ["#"]


def _scalar(value: str) -> str:
    """A YAML scalar that reads back as the same string (JSON's quoting, which YAML reads, where needed)."""
    plain = value and all(c.isalnum() or c in "_.-/" for c in value)
    return value if plain else '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def provider_path_value(path: str) -> str:
    """FI_PROVIDER_PATH as a manifest value: each folder absolute, the suite's build tree as {build} (a run's
    own), and braces doubled (manifest values are format strings)."""
    build = str(REPO / "build")
    out = []
    for entry in filter(None, path.split(":")):
        entry = os.path.abspath(entry).replace("{", "{{").replace("}", "}}")
        out.append("{build}" + entry[len(build):] if entry == build or entry.startswith(build + "/") else entry)
    return ":".join(out)


def _claims(probe: provider_probe.Probe, uet: tuple[bool, str], provider_path: str | None) -> list[str]:
    offer = probe.offer
    kinds = [ep.kind for ep in offer.endpoints.values() if ep.kind in TESTED_KINDS]
    types = ", ".join(t for t, ep in offer.endpoints.items() if ep.kind in TESTED_KINDS)
    lines = _line(f"provider: {_scalar(offer.provider)}",
                  f"fi_info: fi_fabric_attr.prov_name (prov_version {', '.join(offer.versions) or 'not printed'}; "
                  "provider_version is yours to state)")
    lines += _line(f"uet: {'true' if uet[0] else 'false'}", uet[1])
    if uet[0]:
        lines += _line("profiles: [ai_base]", "NOT from fi_info: the schema has a UET provider claim a profile, "
                       "and ai_base is the least claim; state the profiles yours implements (ai_base, ai_full, hpc)")
    else:
        lines += _line("profiles: []", "no profile while uet is false; but a provider may be UET whatever fi_info "
                       "says: if yours is, set uet: true, name its profiles here and fill in the UET provider's keys "
                       "at the end")
    lines += _line(f"endpoint_types: [{', '.join(kinds)}]", f"fi_info: fi_ep_attr.type {types}")
    if provider_path:
        lines += ["environment:"] + _line(f"  FI_PROVIDER_PATH: {_scalar(provider_path_value(provider_path))}",
                                          f"init found {offer.provider} through FI_PROVIDER_PATH={provider_path}")
    return lines


def _offered(probe: provider_probe.Probe) -> list[str]:
    lines = _comment("What fi_info says per endpoint type: not manifest keys (the cases ask fi_getinfo "
                     "themselves), the record of what the provider offered when this file was written.")
    for ep_type, ep in probe.offer.endpoints.items():
        if ep.kind not in TESTED_KINDS:
            lines += _comment(f"{ep_type}: offered, not tested (the suite's cases are RDM and DGRAM)", "  ")
            continue
        numbers = probe.addr_format_numbers.get(ep_type)
        shown = ", ".join(ep.addr_formats) + (f" (fi_getinfo: {', '.join(f'{n:#x}' for n in numbers)})" if numbers else "")
        lines += _comment(f"{ep_type}:", "  ")
        lines += _comment(f"caps: {', '.join(ep.caps) or 'none'}", "    ")
        lines += _comment(f"mr_mode: {', '.join(ep.mr_mode) or 'none'}", "    ")
        lines += _comment(f"addr_format: {shown}; src_addrlen: {', '.join(map(str, ep.src_addrlens))}", "    ")
        lines += _comment(f"domains: {', '.join(ep.domains)}", "    ")
        if probe.src_addr_hex.get(ep_type):
            lines += _comment(f"src_addr (fi_getinfo): {probe.src_addr_hex[ep_type]}", "    ")
    if probe.offer.others:
        lines += _comment(f"fi_info -p {probe.offer.provider} also answered for {', '.join(probe.offer.others)}: "
                          "providers layered over it, each a manifest of its own (not claimed here).")
    return lines


def _address(probe: provider_probe.Probe, uet: bool) -> list[str]:
    sizes = sorted({n for ep in probe.offer.endpoints.values() if ep.kind in TESTED_KINDS for n in ep.src_addrlens})
    shown = ", ".join(map(str, sizes)) or "not printed"
    if not uet:
        return _comment(f"Address: src_addrlen {shown} bytes. address_layout is where a UET address keeps its "
                        "fields: left out while uet is false (it is among the UET provider's keys below).")
    said = []
    for size in sizes:
        names = layouts_of_size(size)
        said.append(f"{size} bytes, the size of {' and '.join(f'`{n}`' for n in names)} in spec/address-layouts.yaml"
                    if names else f"{size} bytes, the size of no layout in spec/address-layouts.yaml")
    return _comment(f"Address: fi_getinfo's src_addrlen is {'; '.join(said) or 'not printed'}. A size is not a layout: "
                    "address_layout is left out, so the suite's choice uet-address-layout applies (every verdict "
                    "that reads an address says so). Name a layout (address_layout: NAME) if your provider keeps "
                    "the Table 2-10 fields where it does, or declare its own: {extends: uet-address-layout, size: N, "
                    "fields: {FIELD: {offset, width, order}}}.")


def _schema() -> dict:
    return manifest_mod.schema()  # with what manifest.py adds to it


def starter_keys(schema: dict, kind: str) -> list[str]:
    """The keys the schema marks for init to list (x-starter: uet or any), in the schema's order."""
    return [key for key, spec in schema["properties"].items() if spec.get("x-starter") == kind]


def _placeholder(spec: dict, schema: dict):
    """A value of the shape `spec` wants with the schema's x-unfilled in every place a vendor must fill:
    a map its required keys (a map of variables one variable), a list one item, anything else the mark."""
    mark = manifest_mod.unfilled(schema)
    if "$ref" in spec:
        spec = schema["$defs"][spec["$ref"].rsplit("/", 1)[1]]
    if spec.get("type") == "object" and "required" in spec:
        return {key: _placeholder(spec["properties"][key], schema) for key in spec["required"]}
    if spec.get("type") == "object" and "propertyNames" in spec:
        return {"NAME": mark}
    if spec.get("type") == "array":
        return [mark]
    return mark


def _flow(value) -> str:
    """A placeholder as one line of YAML flow style."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(map(_flow, value)) + "]"
    return str(value)


def _commented_key(key: str, spec: dict, schema: dict) -> list[str]:
    """`# KEY: PLACEHOLDER  # what it means`: taking the leading "# " off each line gives the key and its
    comment as YAML."""
    text = f"{key}: {_flow(_placeholder(spec, schema))}"
    about = spec.get("description") or "see the schema"
    if len(text) < COMMENT_COLUMN - 3:
        return ["# " + line for line in _line(text, about)]
    return ["# " + text] + ["# " + line for line in _line("", about)]


def _unknowns(uet: bool, written: set[str]) -> list[str]:
    schema = _schema()
    mark = manifest_mod.unfilled(schema)
    lines = _comment(f"What fi_info cannot tell: the keys below, commented out ({SCHEMA} says what each means). "
                     f"Take the leading '# ' off each that applies and put its value in place of {mark}: "
                     f"./uet manifest check names every {mark} left.")
    for kind, heading in (("any", "Any provider's:"), ("uet", "A UET provider's:")):
        lines += ["#"] + _comment(heading)
        if kind == "uet" and not uet:
            lines += _comment("fi_info does not show this provider as UET (uet: false above), but a provider may be "
                              "UET whatever fi_info says (a libfabric without FI_ADDR_UET, a provider over the udp "
                              "core): if yours is, set uet: true, name its profiles (ai_base, ai_full, hpc) and fill "
                              "these in.")
        for key in starter_keys(schema, kind):
            if key not in written:  # a key written above is filled in there
                lines += _commented_key(key, schema["properties"][key], schema)
    return lines


def compose(probe: provider_probe.Probe, *, command: str, provider_path: str | None,
            uet_value: int | None = None) -> str:
    """The manifest's text: a header, the claims with their sources, then what fi_info offered and what it
    could not tell, as comments."""
    uet = uet_evidence(probe.offer, probe.addr_format_numbers, fi_addr_uet() if uet_value is None else uet_value)
    lines = _comment(f"A starter manifest for provider {probe.offer.provider}, written by `{command}` from what "
                     f"fi_info (libfabric {probe.libfabric_version or 'version unknown'}) says about it: "
                     + "; ".join(probe.commands) + ". Each key says where it came from.")
    lines += _comment(f"Next: fill in what the end of this file lists ({SCHEMA}), check it with "
                      "./uet manifest check FILE, run it with ./uet run --provider FILE.")
    lines += _claims(probe, uet, provider_path) + ["#"]
    written = set(yaml.safe_load("\n".join(lines)) or {})
    lines += _offered(probe) + ["#"] + _address(probe, uet[0]) + ["#"] + _unknowns(uet[0], written)
    return "\n".join(lines) + "\n"


def _fail(message: str, status: int) -> int:
    print(f"manifest init: {message}", file=sys.stderr)
    return status


def _validate(text: str) -> list[str]:
    """What harness.inputs.manifest check would say about `text` (nothing: it is valid)."""
    from harness.inputs import manifest  # here: run_info, which the probe loads, loads manifest
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "starter.yaml"
        path.write_text(text)
        try:
            manifest.load(path)
        except manifest.ManifestError as exc:
            return exc.problems
    return []


def run(args: argparse.Namespace) -> int:
    out = args.output
    if out is not None:
        if out.is_dir():
            return _fail(f"{out} is a folder: -o names the manifest file to write", 2)
        if not out.absolute().parent.is_dir():
            return _fail(f"{out.absolute().parent} does not exist: -o names a file in an existing folder", 2)
        if out.exists() and not args.force:
            return _fail(f"{out} exists: not overwritten (--force replaces it)", 1)
    try:
        # A prefix named is checked for what another user can change (fi_info runs as the caller); the suite's
        # own is the clone's.
        probe = provider_probe.probe(args.provider, args.libfabric or libfabric_prefix.suite_prefix(), args.timeout,
                                     trust_foreign=args.libfabric is None or args.trust_foreign_libfabric)
    except provider_probe.ProbeError as exc:
        return _fail(str(exc), exc.status)
    if not any(ep.kind in TESTED_KINDS for ep in probe.offer.endpoints.values()):
        return _fail(f"{args.provider} offers only {', '.join(probe.offer.endpoints)}: the suite's cases test "
                     "FI_EP_RDM and FI_EP_DGRAM endpoints; no manifest written", 1)
    command = shlex.join(["./uet", "manifest", "init", "--provider", args.provider,
                          *(["--libfabric", str(args.libfabric)] if args.libfabric else [])])
    text = compose(probe, command=command, provider_path=os.environ.get("FI_PROVIDER_PATH"))
    problems = _validate(text)
    if problems:  # the suite's own fault: say so rather than write a file check refuses
        return _fail("the starter manifest fails its own check (a bug of init):\n" + "\n".join(problems), 1)
    if out is None:
        sys.stdout.write(text)
        return 0
    try:  # whole or not at all, never through a link (harness/files/output_files.py); a file made since the first look
        output_files.write(out, text, replace=args.force)   # is refused too
    except FileExistsError:
        return _fail(f"{out} exists: not overwritten (--force replaces it)", 1)
    except output_files.UnsafeFolder as exc:
        return _fail(f"cannot write {out}: {exc}", 2)
    except OSError as exc:
        return _fail(f"cannot write {out}: {exc.strerror or exc}", 1)
    claims = yaml.safe_load(text)
    print(f"manifest init: wrote {out} ({args.provider}: {'a UET provider' if claims['uet'] else 'not a UET provider'}; "
          f"endpoint types {', '.join(claims['endpoint_types'])}). Fill in what its end lists, then: "
          f"./uet manifest check {shlex.quote(str(out))}")
    return 0


def main(argv: list[str]) -> int:
    return run(manifest_options.parse_init(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
