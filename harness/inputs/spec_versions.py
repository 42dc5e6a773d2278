"""The UEC spec versions the suite can check against, as spec/wire.yaml lists them (spec_versions).

A run checks against one version (./uet run --spec-version); a provider's manifest says which versions
it implements (spec_version). Where versions differ is data in wire.yaml, read by both decoders.
"""
from __future__ import annotations

import functools
import pathlib

import yaml

WIRE_YAML = pathlib.Path(__file__).resolve().parents[2] / "spec" / "wire.yaml"


@functools.lru_cache(maxsize=1)
def wire_data() -> dict:
    """spec/wire.yaml, read once (its enums and constants name the values of harness/wire/wire_oracle.py's rules)."""
    # libyaml's loader where python3-yaml has it: ./uet run reads this to parse its options, before it answers
    # bad usage, and the pure-Python loader takes a good part of a second over wire.yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(WIRE_YAML.read_text(), Loader=loader)


def _data() -> dict:
    return wire_data()["spec_versions"]


def known() -> list[str]:
    """Every version a run can check against, oldest first."""
    return sorted((str(v) for v in _data()["known"]), key=lambda v: tuple(int(x) for x in v.split(".")))


def default() -> str:
    """The version a run checks against unless told otherwise."""
    return str(_data()["default"])
