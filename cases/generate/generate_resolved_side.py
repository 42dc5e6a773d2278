#!/usr/bin/python3
"""Generate the C++ struct of the resolved side and its loader from their one declaration.

usage: generate_resolved_side.py MANIFEST_SCHEMA_YAML OUT_DIR

Reads $defs/resolved of the manifest schema (the record harness/inputs/manifest.py writes, whose Python type is
built from the same declaration) and writes OUT_DIR/resolved_side_gen.hpp (struct ResolvedSide) and
OUT_DIR/resolved_side_gen.cpp (read_resolved_side, resolved_side_json). A declared value the generator has
no C++ type for fails the build, naming it: give it x-cpp.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import textwrap

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "codec", "generate"))
from templating import environment, write_if_changed  # noqa: E402  (the codec's, beside no package)

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
SCALARS = {"string": "std::string", "boolean": "bool"}


class DeclarationError(ValueError):
    """A declaration the generator cannot turn into C++, named with its key."""


@dataclasses.dataclass
class Field:
    name: str
    description: list[str]  # its lines, as a comment
    kind: str             # custom, scalar, integer, strings, struct
    cpp: str              # the member's C++ type
    nullable: bool = False
    json: str = ""        # custom: the NAME of NAME_from_json / NAME_to_json
    const: object = None  # a value the reader refuses any other of
    struct: "Struct | None" = None


@dataclasses.dataclass
class Struct:
    name: str
    description: list[str]
    fields: list[Field]


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _types(spec: dict) -> list[str]:
    t = spec.get("type", [])
    types = t if isinstance(t, list) else [t]
    if not types and "enum" in spec and all(isinstance(v, str) for v in spec["enum"]):
        types = ["string"]
    return types


def _field(name: str, spec: dict, defs: dict, where: str) -> Field:
    description = " ".join(str(spec.get("description", "")).split())  # the key's own, not its $ref's
    ref = spec.get("$ref")
    if ref:
        if not ref.startswith("#/$defs/") or ref.removeprefix("#/$defs/") not in defs:
            raise DeclarationError(f"{where}: $ref {ref} is not one of $defs")
        spec = {**defs[ref.removeprefix("#/$defs/")], **{k: v for k, v in spec.items() if k != "$ref"}}
    description = textwrap.wrap(description, 100)
    cpp = spec.get("x-cpp") or {}
    types = _types(spec)
    nullable = "null" in types
    types = [t for t in types if t != "null"]
    if cpp.get("json"):
        if nullable:
            raise DeclarationError(f"{where}: a value read by {cpp['json']}_from_json may not be null")
        return Field(name, description, "custom", cpp["type"], json=cpp["json"])
    if "const" in spec and isinstance(spec["const"], int) and cpp.get("type"):
        return Field(name, description, "integer", cpp["type"], const=spec["const"])
    if types == ["integer"]:
        base = cpp.get("type", "int64_t")
        return Field(name, description, "integer", f"std::optional<{base}>" if nullable else base, nullable)
    if len(types) == 1 and types[0] in SCALARS:
        return Field(name, description, "scalar", SCALARS[types[0]], nullable)
    if types == ["array"] and _types(spec.get("items") or {}) == ["string"]:
        return Field(name, description, "strings", "std::vector<std::string>", nullable)
    if types == ["object"] and isinstance(spec.get("properties"), dict):
        struct = _struct(camel(name), description, spec["properties"], defs, where)
        return Field(name, description, "struct", struct.name, nullable, struct=struct)
    raise DeclarationError(f"{where}: no C++ type for {spec!r}: declare a type the generator knows, or x-cpp "
                           "{type: T, json: NAME} with NAME_from_json and NAME_to_json in "
                           "cases/common/claims/resolved_side_types.hpp")


def _struct(name: str, description: str, properties: dict, defs: dict, where: str) -> Struct:
    return Struct(name, description, [_field(k, v, defs, f"{where}.{k}") for k, v in properties.items()])


def load(path: str) -> Struct:
    with open(path, encoding="utf-8") as fh:
        defs = (yaml.safe_load(fh) or {}).get("$defs") or {}
    resolved = defs.get("resolved")
    if not isinstance(resolved, dict) or not isinstance(resolved.get("properties"), dict):
        raise DeclarationError("$defs/resolved: no declaration of the resolved side (an object with properties)")
    return _struct("ResolvedSide", [], resolved["properties"], defs, "$defs/resolved")


def structs_of(top: Struct) -> list[Struct]:
    """Every struct, the nested ones first (each is complete where its parent names it)."""
    out = []
    for f in top.fields:
        if f.struct:
            out += structs_of(f.struct)
    return out + [top]


def render(top: Struct, source: str) -> dict[str, str]:
    env = environment({"camel": camel}, TEMPLATES)
    values = {"top": top, "structs": structs_of(top), "source": source}
    return {name: env.get_template(name + ".j2").render(**values)
            for name in ("resolved_side_gen.hpp", "resolved_side_gen.cpp")}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        texts = render(load(argv[1]), "cases/manifests/" + os.path.basename(argv[1]))
    except DeclarationError as err:
        print(f"{argv[1]}: {err}", file=sys.stderr)
        return 1
    for name, text in texts.items():
        write_if_changed(os.path.join(argv[2], name), text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
