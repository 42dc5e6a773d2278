"""fi_getname layouts: the ones the suite ships (spec/address-layouts.yaml) and a manifest's declaration
resolved against them into the one record the case binaries read (cases/common/claims/address_layout.hpp).

    resolve(None)                       -> the default (choice uet-address-layout)
    resolve("softuet")                  -> a shipped layout
    resolve({"extends": "uet-address-layout", "size": 52, "fields": {"udp_port": {...}}})
"""
from __future__ import annotations

import functools
import sys
import pathlib

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
LAYOUTS_PATH = REPO / "spec" / "address-layouts.yaml"
ORDERS = ("host", "little", "big")
# fa: 16 bytes (IPv4 in the first 4 unless the IPv6 flag is set), or 4 for a provider that keeps only an IPv4
# address (e.g. inside a struct sockaddr_in); every other field: an integer of 1, 2, 4 or 8 bytes.
WIDTHS = {"fa": (16, 4)}
INT_WIDTHS = (1, 2, 4, 8)
MAX_SIZE = 4096                 # an address larger than a page is not an address
MAX_EXTENDS = 8


class LayoutError(ValueError):
    """A layout that cannot be read: the message names the field and what is wrong."""


@functools.cache
def shipped() -> dict:
    return yaml.safe_load(LAYOUTS_PATH.read_text())


def names() -> list[str]:
    return list(shipped()["layouts"])


def _field(name: str, spec, where: str) -> dict:
    if not isinstance(spec, dict) or set(spec) - {"offset", "width", "order"} or not {"offset", "width"} <= set(spec):
        raise LayoutError(f"{where}: field {name} needs offset and width (and may give order), got {spec!r}")
    offset, width, order = spec["offset"], spec["width"], spec.get("order", "host")
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset < MAX_SIZE:
        raise LayoutError(f"{where}: field {name}: offset {offset!r} is not a byte offset (0 to {MAX_SIZE - 1})")
    allowed = WIDTHS.get(name, INT_WIDTHS)
    if width not in allowed:
        raise LayoutError(f"{where}: field {name}: width {width!r} is not one of {', '.join(map(str, allowed))}")
    if order not in ORDERS:
        raise LayoutError(f"{where}: field {name}: order {order!r} is not one of {', '.join(ORDERS)}")
    return {"offset": offset, "width": width, "order": order}


def _merge(declared: dict, where: str, depth: int = 0) -> dict:
    """Fields, size and provenance of `declared`, its `extends` chain applied (a shipped layout's name)."""
    if depth > MAX_EXTENDS:
        raise LayoutError(f"{where}: the extends chain is longer than {MAX_EXTENDS} (a cycle?)")
    unknown = set(declared) - {"extends", "size", "fields", "choice", "source", "confidence"}
    if unknown:
        raise LayoutError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (keys: extends, size, fields)")
    base = {"fields": {}, "size": 0, "choice": None, "source": None, "confidence": None}
    if "extends" in declared:
        parent = declared["extends"]
        if parent not in shipped()["layouts"]:
            raise LayoutError(f"{where}: extends {parent!r}, which is not a layout of {LAYOUTS_PATH.name} "
                              f"({', '.join(names())})")
        base = _merge(shipped()["layouts"][parent], f"{LAYOUTS_PATH.name}: {parent}", depth + 1)
    known = shipped()["fields"]
    fields = dict(base["fields"])
    for name, spec in (declared.get("fields") or {}).items():
        if name not in known:
            raise LayoutError(f"{where}: unknown field {name!r} (fields: {', '.join(known)})")
        fields[name] = _field(name, spec, where)
    return {"fields": fields, "size": declared.get("size", base["size"]),
            "choice": declared.get("choice", base["choice"]), "source": declared.get("source", base["source"]),
            "confidence": declared.get("confidence", base["confidence"])}


def resolve(declared, where: str = "address_layout") -> dict:
    """The layout record a side runs with: name, declared_by (default, named, manifest), the spec choice it
    rests on (None when the manifest declares its own), size (the fewest bytes an address has), and every
    field's offset, width and byte order."""
    if declared is None or isinstance(declared, str):
        name = declared or shipped()["default"]
        if name not in shipped()["layouts"]:
            raise LayoutError(f"{where}: {name!r} is not a layout of {LAYOUTS_PATH.name} ({', '.join(names())})")
        merged = _merge(shipped()["layouts"][name], f"{LAYOUTS_PATH.name}: {name}")
        declared_by = "default" if declared is None else "named"
        own: set = set()  # a shipped layout is the choice as a whole
    elif isinstance(declared, dict):
        name, declared_by = "declared", "manifest"
        merged = _merge(declared, where)
        if "extends" not in declared:
            merged["choice"] = None  # the provider's own: it rests on the manifest, not on a choice
        own = set(declared.get("fields") or {}) | ({"size"} if "size" in declared else set())
    else:
        raise LayoutError(f"{where}: a layout's name or a mapping {{extends, size, fields}}, got {declared!r}")
    fields, size = merged["fields"], merged["size"]
    missing = [f for f in shipped()["required"] if f not in fields]
    if missing:
        raise LayoutError(f"{where}: no {', '.join(missing)}: every Table 2-10 field needs a place")
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= MAX_SIZE:
        raise LayoutError(f"{where}: size {size!r} is not a size in bytes (1 to {MAX_SIZE})")
    taken: dict[int, str] = {}
    for fname, f in fields.items():
        if f["offset"] + f["width"] > size:
            raise LayoutError(f"{where}: field {fname} (bytes {f['offset']}..{f['offset'] + f['width'] - 1}) "
                              f"ends past the address's {size} bytes")
        for byte in range(f["offset"], f["offset"] + f["width"]):
            if byte in taken:
                raise LayoutError(f"{where}: fields {taken[byte]} and {fname} overlap at byte {byte}")
            taken[byte] = fname
    # What a verdict rests on the choice for when it reads it: the places the manifest did not give itself (a
    # layout that extends the choice and moves some fields reads the others where the choice puts them).
    chosen = [] if merged["choice"] is None else [p for p in ["size", *fields] if p not in own]
    return {"name": name, "declared_by": declared_by, "choice": merged["choice"], "source": merged["source"],
            "confidence": merged["confidence"], "size": size, "fields": fields, "choice_places": chosen}


def read(layout: dict, blob: bytes, field: str) -> int | bytes | None:
    """A field of `blob` through a resolved layout: an integer, the 16 bytes of fa (a 4-byte fa padded with
    zeros), or None when the layout has no such field or the blob is too short for it."""
    place = layout["fields"].get(field)
    if place is None or place["offset"] + place["width"] > len(blob):
        return None
    raw = blob[place["offset"]:place["offset"] + place["width"]]
    if field == "fa":
        return bytes(raw).ljust(16, b"\0")
    return int.from_bytes(raw, "big" if place["order"] == "big" else "little" if place["order"] == "little" else sys.byteorder)
