#!/usr/bin/python3
"""Generate the C++ wire tables and the straight-line decoder from spec/wire.yaml.

usage: generate_codec.py WIRE_YAML OUT_DIR

Writes OUT_DIR/uet/wire/wire_gen.hpp, OUT_DIR/wire_gen.cpp and OUT_DIR/wire_decode_gen.cpp, and
OUT_DIR/uet/wire/libfabric_gen.hpp (the `libfabric:` maps; only code built against libfabric includes it).
The decoder is one function per node with every offset, shift and mask folded into constants
(the xdp2 approach: the parse graph is data, the code is derived from it).
"""
from __future__ import annotations

import os
import sys

from templating import environment, write_if_changed
from wire_model import PSEUDO_TARGETS, Check, FieldUse, Model, Node, SpecError, Versions, When, ident, load

KIND_CPP = {"uint": "uint_", "int": "int_", "bytes": "bytes", "mac": "mac", "ipv4": "ipv4", "ipv6": "ipv6",
            "reserved": "reserved"}


def c_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def load_plan(f: FieldUse, node_len: int) -> tuple[int, int, int, int]:
    """(load offset, load width in bytes, right shift, bit width) reading f inside [0, node_len)."""
    start, end = f.start_bit, f.start_bit + f.bits
    b0, b1 = start // 8, (end - 1) // 8
    span = b1 - b0 + 1
    width = next(w for w in (1, 2, 4, 8) if w >= span)
    off = b0 if b0 + width <= node_len else b1 - width + 1
    if off < 0:
        raise SpecError(f"{f.name}: no {width}-byte load fits inside its node")
    shift = (off + width) * 8 - end
    return off, width, shift, f.bits


def version_expr(versions: Versions) -> str | None:
    """C++ condition on the decoder's spec version (an index into the known versions), or None."""
    terms = []
    if versions.since is not None:
        terms.append(f"c.version() >= {versions.since}u")
    if versions.before is not None:
        terms.append(f"c.version() < {versions.before}u")
    return " && ".join(terms) or None


def when_expr(f: FieldUse | Check) -> str | None:
    w: When | None = f.when
    if not w:
        return None
    v = f"c.val(F::{ident(w.field)})"
    if w.op == "eq":
        return f"{v} == {w.values[0]}u"
    terms = " || ".join(f"x == {x}u" for x in w.values)
    expr = f"[&] {{ const uint64_t x = {v}; return {terms}; }}()"
    return expr if w.op == "in" else f"!{expr}"


def uet_entries(model: Model) -> set[str]:
    """The UET nodes an encapsulation node leads to: where the UET part of a frame begins."""
    return {t for n in model.nodes.values() if not n.uet for t in n.next.targets()
            if t not in PSEUDO_TARGETS and model.nodes[t].uet}


class Emitter:
    def __init__(self, model: Model):
        self.model = model
        self.entries = uet_entries(model)

    def choice(self, name: str | None) -> str:
        return f"C::{ident(name)}" if name else "C::none"

    def field_code(self, node: Node, f: FieldUse) -> list[str]:
        hdr = f"H::{ident(node.header)}"
        fid = f"F::{ident(f.name)}"
        where = f"c.p + {f.at}"
        out: list[str] = []
        if f.nbytes:
            if f.emit:
                out.append(f"c.emit({fid}, c.at({where}), {self.choice(f.uncertain)});")
            else:
                out.append(f"c.set({fid}, c.at({where}));")
        else:
            off, width, shift, bits = load_plan(f, node.min_len)
            expr = f"load_be{width * 8}(c.p + {off})"
            if shift:
                expr = f"({expr} >> {shift})"
            if bits < 64:
                expr = f"({expr} & 0x{(1 << bits) - 1:x}u)"
            if f.kind == "int":
                expr = f"sign_extend({expr}, {bits})"
            out.append(f"v = {expr};")
            if f.kind == "reserved":
                out.append(f"if (v) c.diag(DiagKind::reserved_nonzero, {hdr}, kNoField, {where}, v, {c_str(f.name)});")
            else:
                out.append(f"c.emit({fid}, v, {self.choice(f.uncertain)});" if f.emit else f"c.set({fid}, v);")
                if f.enum:
                    out.append(f"if (!valid_{f.enum}(v, c.version())) c.diag(DiagKind::unknown_value, {hdr}, {fid}, {where}, v);")
                for bad in f.invalid:
                    out.append(f"if (v == {bad}u) c.diag(DiagKind::invalid_value, {hdr}, {fid}, {where}, v);")
                if f.require is not None:
                    out.append(f"if (v != {f.require}u) c.diag(DiagKind::invalid_value, {hdr}, {fid}, {where}, v);")
        cond = when_expr(f)
        if cond:
            return [f"if ({cond}) {{"] + ["  " + line for line in out] + ["}"]
        return out

    def check_code(self, node: Node, chk: Check) -> list[str]:
        hdr = f"H::{ident(node.header)}"
        fid = f"F::{ident(chk.field)}"
        at = next((f.at for f in node.fields if f.name == chk.field), 0)
        bad = " || ".join([f"x == {b}u" for b in chk.invalid] + ([f"x != {chk.require}u"] if chk.require is not None else []))
        conds = [e for e in (version_expr(chk.versions), when_expr(chk)) if e]
        choice = f", nullptr, {self.choice(chk.choice)}" if chk.choice else ""
        body = (f"{{ const uint64_t x = c.val({fid}); if ({bad}) c.diag(DiagKind::{chk.diag}, {hdr}, {fid}, c.p + {at}, x"
                f"{choice}); }}")
        return [f"if ({' && '.join(conds)}) {body}" if conds else body]

    def target(self, node: Node, to: str) -> str:
        # A direct (tail) call: the compiler chains the node functions without an indirect jump.
        if to == "end":
            return "c.packet_ends()" if node.payload_none else "kEnd"
        if to == "fragment":
            return "c.fragment_ends()"
        return f"node_{ident(to)}(c)"

    def select_code(self, node: Node) -> list[str]:
        sel = node.next
        diag_header = f"H::{ident(node.header)}" if (not node.dispatch or node.fields) else "c.header"
        default = (f"c.select_error(F::{ident(sel.field)}, {diag_header})" if sel.default == "error"
                   else self.target(node, sel.default))
        out = []
        if sel.clear_text:
            ct = sel.clear_text
            out.append(f"if (c.options.{ct.option}) {{ c.clear_text(c.options.{ct.option}, {ct.icv_bytes}); "
                       f"return {self.target(node, ct.to)}; }}")
        if sel.field is None:
            return out + [f"return {default};"]
        out.append(f"{{ const uint64_t s = c.val(F::{ident(sel.field)});")
        for case in sel.cases:
            if case.op == "eq":
                cond = f"s == {case.values[0]}u"
            elif case.op == "in":
                cond = " || ".join(f"s == {x}u" for x in case.values)
            elif case.op == "range":
                cond = f"s >= {case.values[0]}u && s <= {case.values[1]}u"
            else:
                cond = f"s == c.options.{case.param}"
            held = version_expr(case.versions)
            if held:
                cond = f"({cond}) && {held}"
            out.append(f"  if ({cond}) return {self.target(node, case.to)};")
        out.append(f"  return {default}; }}")
        return out

    def node_fn(self, node: Node) -> list[str]:
        hdr = f"H::{ident(node.header)}"
        dispatch = "true" if node.dispatch else "false"
        body = [f"if (!c.need({node.min_len}, {hdr}, {dispatch})) return kStop;"]
        if node.id in self.entries:
            body.append("c.enter_uet();")
        if node.uet:
            body.append("c.out.reached_uet = true;")
        if not node.dispatch:
            body.append(f"c.begin_header({hdr});")
        if any(not f.nbytes for f in node.fields):
            body.append("uint64_t v;")
        for f in node.fields:
            body += self.field_code(node, f)
        for chk in node.checks:
            body += self.check_code(node, chk)
        if node.size_rule:
            r = node.size_rule
            fid = f"F::{ident(r['field'])}"
            body.append(f"const size_t size = c.val({fid}) * {int(r['scale'])};")
            body.append(f"if (size < {int(r['min'])}) {{ c.diag(DiagKind::invalid_value, {hdr}, {fid}, c.p, c.val({fid})); return kStop; }}")
            body.append(f"if (!c.need(size, {hdr}, false)) return kStop;")
        else:
            body.append(f"constexpr size_t size = {node.size};")
        if node.bounds:
            b = node.bounds
            inc = "true" if b.get("includes_header") else "false"
            body.append(f"if (!c.bounds(F::{ident(b['field'])}, {inc}, size, {hdr})) return kStop;")
        if node.payload_length:
            body.append(f"c.payload_field = F::{ident(node.payload_length)}; c.payload_header = {hdr};")
        body.append("c.p += size;")
        body += self.select_code(node)
        return body


def enum_valid_fn(name: str, enum: dict) -> str:
    held = enum.get("_versions", {})
    values = sorted(int(v) for v in enum.get("values", {}) if int(v) not in held)
    terms = []
    small = [v for v in values if v < 64]
    big = [v for v in values if v >= 64]
    if small:
        mask = 0
        for v in small:
            mask |= 1 << v
        terms.append(f"(v < 64 && ((0x{mask:x}ull >> v) & 1))")
    terms += [f"v == {v}u" for v in big]
    terms += [f"(v <= {r['to']}u)" if r["from"] == 0 else f"(v >= {r['from']}u && v <= {r['to']}u)"
              for r in enum.get("vendor", [])]
    for value, versions in sorted(held.items()):
        cond = version_expr(versions).replace("c.version()", "ver")
        terms.append(f"(v == {value}u && {cond})")
    body = " || ".join(terms) if terms else "false"
    return f"[[maybe_unused]] inline bool valid_{name}(uint64_t v, [[maybe_unused]] unsigned ver) {{ return {body}; }}"


def max_on_path(model: Model) -> tuple[int, int]:
    """Most emitted fields and most headers on any path: sizes of the per-frame arrays."""
    best = [0, 0]

    def walk(node_id: str, nfields: int, headers: tuple[str, ...]) -> None:
        node = model.nodes[node_id]
        nfields += sum(1 for f in node.fields if f.emit)
        if not node.dispatch and (not headers or headers[-1] != node.header):
            headers = headers + (node.header,)
        best[0] = max(best[0], nfields)
        best[1] = max(best[1], len(headers))
        for t in node.next.targets():
            if t not in PSEUDO_TARGETS:
                walk(t, nfields, headers)

    for link in model.links.values():
        walk(link["root"], 0, ())
    return best[0], best[1]


def render(model: Model, out_dir: str) -> None:
    env = environment({"ident": ident, "c_str": c_str})
    emitter = Emitter(model)
    max_fields, max_headers = max_on_path(model)
    nodes = list(model.nodes.values())
    node_index = {n.id: i for i, n in enumerate(nodes)}
    when_list: list[tuple[str, str, list[int]]] = []
    layouts = []
    for n in nodes:
        for f in n.fields:
            w = -1
            if f.when:
                w = len(when_list)
                when_list.append((f.when.field, f.when.op, f.when.values))
            layouts.append((n, f, w))
    ctx = dict(
        model=model, nodes=nodes, node_index=node_index, fields=list(model.fields.values()),
        headers=model.headers, enums=model.enums, choices=model.choices, constants=model.constants,
        kind_cpp=KIND_CPP, max_fields=max_fields, max_headers=max_headers, layouts=layouts, whens=when_list,
        node_bodies={n.id: emitter.node_fn(n) for n in nodes},
        enum_valid_fns=[enum_valid_fn(name, e) for name, e in model.enums.items()],
        libfabric=model.libfabric, int=int, ident=ident, pseudo=PSEUDO_TARGETS,
    )
    os.makedirs(os.path.join(out_dir, "uet", "wire"), exist_ok=True)
    outputs = {
        os.path.join(out_dir, "uet", "wire", "wire_gen.hpp"): "wire_gen.hpp.j2",
        os.path.join(out_dir, "wire_gen.cpp"): "wire_gen.cpp.j2",
        os.path.join(out_dir, "wire_decode_gen.cpp"): "wire_decode_gen.cpp.j2",
        os.path.join(out_dir, "uet", "wire", "libfabric_gen.hpp"): "libfabric_gen.hpp.j2",
    }
    for path, template in outputs.items():
        write_if_changed(path, env.get_template(template).render(**ctx))


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        model = load(argv[1])
        render(model, argv[2])
    except SpecError as err:
        print(f"{argv[1]}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
