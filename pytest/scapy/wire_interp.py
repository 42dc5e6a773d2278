"""A tiny interpreter of the UET part of spec/wire.yaml (nodes from `uet` on), used only by
test_wire_crosscheck.py to compare the hand-written Scapy layers with wire.yaml field by field.

It implements the notation of spec/README.md for what the UET nodes use: fixed `size`,
`min_len`, `dispatch`, `fields` (at/bit/bits/bytes, kind int/bytes/reserved, emit, when,
include), and `next` (select/always, cases eq/in/range/not_in, default node/end/error).
"""

from scapy_uet import spec

W = spec.WIRE


def _expand(fields):
    out = []
    for fld in fields or []:
        if "include" in fld:
            out.extend(_expand(W["fragments"][fld["include"]]))
        else:
            out.append(fld)
    return out


def _extract(data, fld):
    at = fld["at"]
    if "bytes" in fld:
        raw = data[at:at + fld["bytes"]]
        return raw.hex()   # `bytes:` fields: hex text (see the report: no `kind` in wire.yaml)
    bit = fld.get("bit", 0)
    bits = fld["bits"]
    nbytes = (bit + bits + 7) // 8
    word = int.from_bytes(data[at:at + nbytes], "big")
    value = (word >> (nbytes * 8 - bit - bits)) & ((1 << bits) - 1)
    if fld.get("kind") == "int" and value >> (bits - 1):
        value -= 1 << bits
    return value


def _case_matches(case, value):
    if "eq" in case:
        return value == case["eq"]
    if "in" in case:
        return value in case["in"]
    if "range" in case:
        return case["range"][0] <= value <= case["range"][1]
    if "not_in" in case:
        return value not in case["not_in"]
    return False


def decode_uet(data, start="uet"):
    """Decode UET bytes (the UDP payload). Returns (layers, fields, reserved_headers, pos)."""
    nodes = W["nodes"]
    values = {}
    fields = {}
    field_header = {}
    layers = []
    reserved = set()
    pos = 0
    node_id = start
    while node_id not in (None, "end", "error"):
        node = nodes[node_id]
        header = node.get("header", node_id)
        need = node.get("min_len", 0) if node.get("dispatch") else node["size"]
        if len(data) - pos < need:
            for name in [n for n, h in field_header.items() if h == header]:
                del fields[name]
                del field_header[name]
            if header in layers:
                layers.remove(header)
            break
        chunk = data[pos:]
        for fld in _expand(node.get("fields")):
            when = fld.get("when")
            if when and not spec.when_holds(when, values):
                continue
            value = _extract(chunk, fld)
            if fld.get("kind") == "reserved":
                if value:
                    reserved.add(header)
                continue
            values[fld["name"]] = value
            if fld.get("emit") is False:
                continue
            fields[fld["name"]] = value
            field_header[fld["name"]] = header
        if not node.get("dispatch") and header not in layers:
            layers.append(header)
        pos += 0 if node.get("dispatch") else node["size"]
        nxt = node["next"]
        if nxt["select"] == "always":
            node_id = nxt["default"]
            continue
        value = values.get(nxt["select"])
        node_id = nxt.get("default", "end")
        for case in nxt.get("cases", []):
            # The layers decode by the default spec version: an edge of another version is not taken.
            if spec.version_holds(case, spec.DEFAULT_VERSION) and _case_matches(case, value):
                node_id = case["to"]
                break
    return layers, fields, reserved, pos
