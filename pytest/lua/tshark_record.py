"""What tshark shows of UET in one frame, read from `tshark -T json` with uet.lua loaded, in the terms of
uet-decode's record (codec/DECODE-OUTPUT.md): uet.* field values, the choice each field rests on, the
diagnostics (expert infos) and the payload length; for a UDP GSO run, each packet's place in it and the
packets after the first (each a uetsuite tree of its own)."""
from __future__ import annotations

import dataclasses
import json
import re

UET_FIELD = re.compile(r"uet(\.[a-z0-9_]+)+")
# Expert messages of uet.lua start "<kind> in <header>[ field <field>]".
DIAGNOSTIC = re.compile(r"(\w+) in (\S+?)(?: field (\S+?))?:")


@dataclasses.dataclass
class ShownFrame:
    fields: dict = dataclasses.field(default_factory=dict)        # name -> value, as uet-decode writes it
    uncertain: dict = dataclasses.field(default_factory=dict)     # name -> choice id
    confidence: dict = dataclasses.field(default_factory=dict)    # choice id -> its confidence
    diagnostics: set = dataclasses.field(default_factory=set)     # (kind, header, field or None)
    payload_len: int | None = None
    repeated: list = dataclasses.field(default_factory=list)      # field names shown twice in one frame
    errors: list = dataclasses.field(default_factory=list)        # errors of the Lua dissector
    gso: dict = dataclasses.field(default_factory=dict)           # segment, offset, stride (and count on the first)
    segments: list = dataclasses.field(default_factory=list)      # ShownFrame of each GSO segment after the first


def _value(text: str):
    """tshark prints integers in decimal (uet.lua uses base.DEC) and byte strings as aa:bb:cc."""
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text.replace(":", "")


def _walk(pairs: list, frame: ShownFrame) -> None:
    for key, value in pairs:
        if isinstance(value, list):  # an object, kept as its (key, value) pairs
            if key.endswith("_tree") and UET_FIELD.fullmatch(key[:-5]):
                mark = dict(value)
                if "uetsuite.choice" in mark:
                    frame.uncertain[key[:-5]] = mark["uetsuite.choice"]
                    frame.confidence[mark["uetsuite.choice"]] = mark.get("uetsuite.confidence")
            _walk(value, frame)
        elif key == "_ws.lua.error" or key.startswith("Lua Error"):
            frame.errors.append(key)
        elif key == "_ws.expert.message" and (m := DIAGNOSTIC.match(value)):
            frame.diagnostics.add((m.group(1), m.group(2), m.group(3)))
        elif key == "uetsuite.payload_len":
            frame.payload_len = int(value)
        elif key.startswith("uetsuite.gso."):
            frame.gso[key[len("uetsuite.gso."):]] = int(value)
        elif UET_FIELD.fullmatch(key):
            if key in frame.fields:
                frame.repeated.append(key)
            frame.fields[key] = _value(value)


def shown_frames(json_text: str) -> list[ShownFrame]:
    """One ShownFrame per packet of `tshark -T json` output. Objects are read as pairs, since tshark
    repeats keys (several header subtrees in one layer)."""
    packets = json.loads(json_text, object_pairs_hook=lambda pairs: pairs)
    out = []
    for packet in packets:
        layers = dict(dict(packet)["_source"])["layers"]
        frame = ShownFrame()
        seen_uet = False
        for key, value in layers:
            # The first uetsuite tree is the frame's packet; each further one a GSO segment's.
            if key == "uetsuite" and seen_uet:
                frame.segments.append(ShownFrame())
                _walk(value, frame.segments[-1])
                continue
            seen_uet |= key == "uetsuite"
            _walk([(key, value)], frame)
        out.append(frame)
    return out
