#!/usr/bin/python3
"""Generate uet.lua, a Wireshark Lua dissector for the UET part of the parse graph of spec/wire.yaml.

usage: generate_lua.py WIRE_YAML OUT_FILE

The dissector holds the UET nodes of the model (entropy header, TSS, PDS, SES) as Lua tables and walks
them with a small interpreter in the template, so it decodes what uet-decode decodes, under the same
dotted field names. Wireshark's own dissectors handle Ethernet, IP and UDP; uet.lua registers on the
UDP port table (preference, default constants.udp_port) and the IP protocol table
(constants.uet_ip_proto, where the graph puts the entropy header).
"""
from __future__ import annotations

import dataclasses
import re
import sys

from templating import environment, generator_main
from wire_model import CLEAR_TEXT_OPTIONS, Check, FieldUse, Model, Node, SpecError, Versions, load


# The Wireshark preference title of each decoder option a clear_text edge names.
PREF_LABELS = {"tss_conf_offset": "TSS confidentiality offset"}


def lua_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def lua_key(k) -> str:
    return k if isinstance(k, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) else f"[{lua_value(k)}]"


def lua_value(v) -> str:
    """A Lua literal for a Python value of the model (None, bool, int, str, list, dict)."""
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return lua_str(v)
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua_value(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{lua_key(k)}={lua_value(x)}" for k, x in v.items() if x is not None) + "}"
    raise SpecError(f"no Lua literal for {v!r}")


def lua_items(table: dict, *keys: str) -> str:
    """Some entries of a table as Lua `key=value` pairs (nil ones left out), to spread a table over lines."""
    return ", ".join(f"{k}={lua_value(table[k])}" for k in keys if table.get(k) is not None)


def uet_nodes(model: Model) -> list[Node]:
    return [n for n in model.nodes.values() if n.uet]


def field_width(model: Model) -> dict[str, int]:
    """The widest use of each emitted UET field in bits (0 for byte strings): it picks the ProtoField type."""
    width: dict[str, int] = {}
    for node in uet_nodes(model):
        for f in node.fields:
            if f.emit:
                width[f.name] = max(width.get(f.name, 0), f.bits)
    return width


def protofield(name: str, info, bits: int) -> str:
    """The ProtoField constructor of a field: unsigned and signed by width, or bytes."""
    if info.kind == "bytes":
        return "bytes"
    sign = "int" if info.kind == "int" else "uint"
    size = next(w for w in (8, 16, 24, 32, 64) if bits <= w)
    if info.kind not in ("uint", "int"):
        raise SpecError(f"{name}: kind {info.kind} has no Lua mapping (UET fields are uint, int or bytes)")
    return f"{sign}{size}"


def versions_entry(versions: Versions) -> dict | None:
    """since/before as 0-based indices into the model's versions, as the dissector's preference counts."""
    return {"since": versions.since, "before": versions.before} if versions else None


def when_entry(when) -> dict | None:
    return {"field": when.field, "op": when.op, "values": when.values} if when else None


def check_entry(chk: Check) -> dict:
    return {"field": chk.field, "invalid": chk.invalid, "require": chk.require, "when": when_entry(chk.when),
            "versions": versions_entry(chk.versions), "diag": chk.diag, "choice": chk.choice}


def field_entry(f: FieldUse) -> dict:
    entry = {"name": f.name, "at": f.at, "bit": f.bit, "bits": f.bits, "nbytes": f.nbytes, "kind": f.kind,
             "enum": f.enum, "uncertain": f.uncertain, "require": f.require}
    if not f.emit and f.kind != "reserved":
        entry["internal"] = True
    if f.invalid:
        entry["invalid"] = f.invalid
    entry["when"] = when_entry(f.when)
    return entry


def node_entry(node: Node, read: set[str]) -> dict:
    if node.size_rule or node.bounds:
        raise SpecError(f"{node.id}: a UET node with a size rule or bounds has no Lua mapping")
    for f in node.fields:
        checked = f.name in read or f.kind == "reserved" or f.enum or f.invalid or f.require is not None
        if f.bits > 32 and checked:
            # Lua 5.2 compares a 64-bit value (UInt64) with a number as unequal, so checks need 32 bits.
            raise SpecError(f"{node.id}: {f.name} is wider than 32 bits, too wide to check or select on in Lua")
    cases = []
    for c in node.next.cases:
        if c.op == "param":
            raise SpecError(f"{node.id}: select parameter {c.param} inside UET has no Lua mapping")
        cases.append({"op": c.op, "values": c.values, "to": c.to, "versions": versions_entry(c.versions)})
    return {"header": node.header, "dispatch": node.dispatch, "min_len": node.min_len, "size": node.size,
            "payload_length": node.payload_length, "payload_none": node.payload_none,
            "fields": [field_entry(f) for f in node.fields],
            "checks": [check_entry(c) for c in node.checks],
            "select": node.next.field, "cases": cases, "default": node.next.default,
            "clear_text": dataclasses.asdict(node.next.clear_text) if node.next.clear_text else None}


def fields_read(model: Model) -> set[str]:
    """Fields a `when` or a `select` of a UET node reads: they must be decoded inside UET too."""
    out = set()
    decoded = {f.name for n in uet_nodes(model) for f in n.fields}
    for node in uet_nodes(model):
        names = ([f.when.field for f in node.fields if f.when] + [c.field for c in node.checks]
                 + [c.when.field for c in node.checks if c.when] + ([node.next.field] if node.next.field else []))
        for name in names:
            if name not in decoded:
                raise SpecError(f"{node.id}: reads {name}, which no UET node decodes (the Lua dissector starts at UET)")
            out.add(name)
    return out


def enum_names(enum: dict) -> dict[int, str]:
    """Every valid value of an enum with its name; a vendor range names each of its values."""
    names = {int(v): str(n) for v, n in enum.get("values", {}).items()}
    for r in enum.get("vendor", []):
        for v in range(int(r["from"]), int(r["to"]) + 1):
            names.setdefault(v, str(r["name"]))
    return names


def roots(model: Model) -> tuple[str, str]:
    """The UET nodes the graph enters from UDP (the udp_port parameter) and from IP (constants.uet_ip_proto)."""
    proto = int(model.constants["uet_ip_proto"]["value"])
    udp = [c.to for n in model.nodes.values() for c in n.next.cases if c.op == "param" and c.param == "udp_port"]
    ip = [c.to for n in model.nodes.values() if not n.uet and n.next.field in ("ip.proto", "ipv6.nxt")
          for c in n.next.cases if proto in c.values]
    if len(set(udp)) != 1 or len(set(ip)) != 1:
        raise SpecError(f"the UET entry nodes are not unique (from UDP: {udp}, from IP: {ip})")
    return udp[0], ip[0]


def render(model: Model) -> str:
    env = environment({"lua": lua_value, "lua_items": lua_items})
    read = fields_read(model)
    width = field_width(model)
    nodes = {n.id: node_entry(n, read) for n in uet_nodes(model)}
    for node in nodes.values():
        clear = [node["clear_text"]["to"]] if node["clear_text"] else []
        for target in [c["to"] for c in node["cases"]] + [node["default"]] + clear:
            if target not in ("end", "error") and target not in nodes:
                raise SpecError(f"a UET node leads to {target}, outside UET")
    enums = sorted({f.enum for n in uet_nodes(model) for f in n.fields if f.enum})
    fields = [(name, protofield(name, model.fields[name], bits), model.fields[name].enum)
              for name, bits in width.items()]
    udp_root, ip_root = roots(model)
    enum_versions = {e: {v: versions_entry(held) for v, held in model.enums[e].get("_versions", {}).items()}
                     for e in enums}
    cited = sorted({f.uncertain for n in uet_nodes(model) for f in n.fields if f.uncertain})
    choices = {cid: str(model.choices[cid].get("confidence", "unknown")) for cid in cited}
    return env.get_template("uet.lua.j2").render(udp_root=udp_root, ip_root=ip_root, enum_versions=enum_versions,
        spec_versions=model.versions, default_version=model.default_version, choices=choices,
        clear_text_options={o: PREF_LABELS[o] for o in CLEAR_TEXT_OPTIONS},
        nodes=nodes, fields=fields, enums={e: enum_names(model.enums[e]) for e in enums},
        udp_port=int(model.constants["udp_port"]["value"]), ip_proto=int(model.constants["uet_ip_proto"]["value"]))


def main(argv: list[str]) -> int:
    return generator_main(argv, __doc__.strip().splitlines()[2], lambda path: render(load(path)), (SpecError,))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
