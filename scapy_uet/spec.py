"""What the Scapy layers take from ``spec/wire.yaml`` at run time.

Allowed uses (and the only ones made here):
  * ``constants``: the UDP port, the IP protocol number of UET without UDP and the size of TSS's ICV;
  * ``enums``: the value -> name tables (for the ``*EnumField`` of the layers and for the
    ``unknown_value`` diagnostic);
  * the ``uncertain`` marks of nodes and fields (for the record's ``uncertain`` map);
  * the ``payload: none`` marks of nodes (after which a UET packet is complete: ``trailing_bytes``);
  * the field names, for the cross-check test only.

The header LAYOUTS (offsets, bit positions, sizes) are NOT read from here: they are written by hand
in ``scapy_uet/layers.py`` from the spec digest, part I.
"""

import os

import yaml

_HERE = os.path.dirname(os.path.abspath(__file__))
WIRE_YAML = os.environ.get(
    "UET_WIRE_YAML", os.path.join(os.path.dirname(_HERE), "spec", "wire.yaml"))


def _load():
    try:
        with open(WIRE_YAML, "r", encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except OSError as exc:  # pragma: no cover - installation problem
        raise ImportError("scapy_uet: cannot read the spec data %s: %s" % (WIRE_YAML, exc))


WIRE = _load()

UDP_PORT = int(WIRE["constants"]["udp_port"]["value"])

# Spec versions (spec_versions): a decode follows one of them; values that differ carry since/before.
VERSIONS = sorted((str(v) for v in WIRE["spec_versions"]["known"]),
                  key=lambda v: tuple(int(x) for x in v.split(".")))
DEFAULT_VERSION = str(WIRE["spec_versions"]["default"])


def version_holds(held, version):
    """Does an entry with `since:` / `before:` keys hold in `version` (a known version name)?"""
    at = VERSIONS.index(version)
    if "since" in held and at < VERSIONS.index(str(held["since"])):
        return False
    return not ("before" in held and at >= VERSIONS.index(str(held["before"])))


def rule_holds(rule, version):
    """Does spec-version rule `rule` (spec_versions.rules of wire.yaml) hold in `version`?"""
    return version_holds(WIRE["spec_versions"]["rules"][rule], version)


def value_held(enum_name, value, version):
    """Is a listed value of enum `enum_name` valid in `version` (its `versions:` entry, if any)?"""
    held = (WIRE["enums"][enum_name].get("versions") or {}).get(value)
    if held is None:
        return True
    if "rule" in held:
        return rule_holds(held["rule"], version)
    if "unless" in held:
        return not rule_holds(held["unless"], version)
    return version_holds(held, version)


def confidence(choice):
    """How confident choice `choice` is (high, medium, low, unknown), from its outside evidence."""
    return str(WIRE["choices"][choice]["confidence"])
UET_IP_PROTO = int(WIRE["constants"]["uet_ip_proto"]["value"])
TSS_ICV_BYTES = int(WIRE["constants"]["tss_icv_bytes"]["value"])
# Nodes after which the UET packet ends when the parse graph ends there (`payload: none`).
PAYLOAD_NONE = frozenset(node_id for node_id, node in WIRE["nodes"].items() if node.get("payload") == "none")


def enum(name):
    """Value -> name table of wire.yaml enum `name`, vendor ranges expanded (all valid values)."""
    spec = WIRE["enums"][name]
    table = {int(k): str(v) for k, v in (spec.get("values") or {}).items()}
    for rng in spec.get("vendor") or []:
        for value in range(int(rng["from"]), int(rng["to"]) + 1):
            table.setdefault(value, "%s_%#x" % (rng["name"], value))
    return table


# ---------------------------------------------------------------------------------------------
# `uncertain` marks: (header, field name) -> list of (when, choice)


def _expand(fields):
    out = []
    for fld in fields or []:
        if "include" in fld:
            out.extend(_expand(WIRE["fragments"][fld["include"]]))
        else:
            out.append(fld)
    return out


def _uncertain_entries():
    entries = {}
    for node_id, node in WIRE["nodes"].items():
        header = node.get("header", node_id)
        node_choice = node.get("uncertain")
        for fld in _expand(node.get("fields")):
            name = fld.get("name")
            if not name or fld.get("kind") == "reserved" or fld.get("emit") is False:
                continue
            entries.setdefault((header, name), []).append(
                (fld.get("when"), fld.get("uncertain") or node_choice))
    return entries


UNCERTAIN = _uncertain_entries()


def when_holds(when, fields):
    """Evaluate a wire.yaml `when:` condition against the record fields decoded so far."""
    if not when:
        return True
    if when["field"] not in fields:
        return False
    value = fields[when["field"]]
    if "eq" in when:
        return value == when["eq"]
    if "in" in when:
        return value in when["in"]
    if "not_in" in when:
        return value not in when["not_in"]
    return False


def uncertain_choice(header, name, fields):
    for when, choice in UNCERTAIN.get((header, name), []):
        if when_holds(when, fields):
            return choice
    return None


def wire_field_names():
    """header -> set of emitted field names (for the cross-check test)."""
    out = {}
    for (header, name) in UNCERTAIN:
        out.setdefault(header, set()).add(name)
    return out
