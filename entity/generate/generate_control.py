#!/usr/bin/python3
"""Generate the Control API tables (uet/control/control_gen.hpp) from spec/control.yaml.

usage: generate_control.py CONTROL_YAML OUT_HEADER

The privileged entity's parser, its replies and its client take every number, type, size and rule of
the Control API from the generated header: a corrected spec/control.yaml is a rebuild, not a code change.
The file is checked first (unknown types, ids out of range or used twice, a nest that does not exist,
a command that names an attribute it does not define); a problem is reported with its key, exit 1.
"""
from __future__ import annotations

import os
import sys

import yaml

# The Jinja2 environment and the writer the codec's generators use.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "codec", "generate"))
from templating import environment, generator_main  # noqa: E402

TYPES = ("u8", "u16", "u32", "u64", "string", "binary", "nest")
WIDTH = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}
WHO = ("admin", "any")


class SpecError(Exception):
    pass


def attr_table(raw: dict, where: str, nests: dict) -> list[dict]:
    out, ids = [], set()
    for name, a in raw.items():
        key = f"{where}.{name}"
        if not isinstance(a, dict) or a.get("type") not in TYPES:
            raise SpecError(f"{key}: type must be one of {', '.join(TYPES)}")
        aid = a.get("id")
        if not isinstance(aid, int) or not 1 <= aid <= 63 or aid in ids:
            raise SpecError(f"{key}: id must be a distinct number 1..63 (a bit of the generated masks)")
        ids.add(aid)
        if a["type"] == "nest" and a.get("nest") not in nests:
            raise SpecError(f"{key}: nest {a.get('nest')!r} is not under `nests:`")
        if a["type"] in ("string", "binary") and not (a.get("max") or a.get("len")):
            raise SpecError(f"{key}: a {a['type']} needs `max` or `len`")
        width = WIDTH.get(a["type"], 8)
        top = (1 << (8 * width)) - 1
        out.append({"name": name, "id": aid, "type": a["type"], "what": str(a.get("what", "")),
                    "min": int(a.get("min", 0)), "max": int(a.get("max", top if a["type"] in WIDTH else 0)),
                    "len": int(a.get("len", 0)), "nest": a.get("nest")})
    return sorted(out, key=lambda a: a["id"])


def mask(names: list[str], attrs: dict[str, dict], key: str) -> int:
    m = 0
    for n in names:
        if n not in attrs:
            raise SpecError(f"{key}: names attribute {n}, which `attributes:` does not define")
        m |= 1 << attrs[n]["id"]
    return m


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    nests_raw = doc.get("nests") or {}
    nests = {name: attr_table(a, f"nests.{name}", nests_raw) for name, a in nests_raw.items()}
    attrs = attr_table(doc["attributes"], "attributes", nests_raw)
    by_name = {a["name"]: a for a in attrs}
    ack = attr_table(doc["ack_attributes"], "ack_attributes", {})
    commands, ids = [], set()
    for name, c in doc["commands"].items():
        key = f"commands.{name}"
        if c.get("who") not in WHO or not isinstance(c.get("id"), int) or not 1 <= c["id"] <= 255 or c["id"] in ids:
            raise SpecError(f"{key}: needs a distinct id 1..255 and `who` ({' or '.join(WHO)})")
        ids.add(c["id"])
        reply = c.get("reply", "ack")
        commands.append({
            "name": name, "id": c["id"], "admin": c["who"] == "admin", "path": str(c.get("path", "")),
            "required": mask(c.get("required", []), by_name, key), "optional": mask(c.get("optional", []), by_name, key),
            "repeated": mask(c.get("repeated", []), by_name, key),
            "reply": 0 if reply == "ack" else mask(reply, by_name, key),
            "reply_repeated": mask(c.get("reply_repeated", []), by_name, key)})
    return {"doc": doc, "attrs": attrs, "nests": nests, "ack": ack, "commands": sorted(commands, key=lambda c: c["id"])}


def render(model: dict) -> str:
    env = environment({"c_str": lambda s: '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'},
                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates"))
    return env.get_template("control_gen.hpp.j2").render(**model)


def main(argv: list[str]) -> int:
    return generator_main(argv, __doc__.strip().splitlines()[2], lambda path: render(load(path)), (SpecError, KeyError, TypeError, ValueError))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
