"""The manifests of a submission package: ./uet certify copies each manifest and every file it extends under
manifests/ and runs the suite on those copies, so that the package holds what ran and verify, which follows
no path out of that folder, can load them all."""
from __future__ import annotations

import os
import pathlib

import yaml

from harness.inputs import manifest as manifest_mod
MANIFESTS_MEMBER = "manifests"


class OutsidePackage(ValueError):
    """A manifest layer lies outside the folder it must stay in."""


def _extends(doc) -> tuple[pathlib.Path, str | None] | None:
    extends = doc.get("extends") if isinstance(doc, dict) else None
    return manifest_mod.split_ref(str(extends)) if extends else None


def manifest_layers(ref: str, within: pathlib.Path | None = None) -> list[pathlib.Path]:
    """The files a manifest is built from: it and its `extends` chain. With `within` (a package's manifests
    are the sender's), a layer outside that folder raises OutsidePackage before it is read."""
    path, _ = manifest_mod.split_ref(ref)
    if within is None and not path.exists() and not path.is_absolute() and (manifest_mod.MANIFESTS / path).exists():
        path = manifest_mod.MANIFESTS / path
    layers = []
    while path is not None and path.resolve() not in layers:
        path = path.resolve()  # as the manifest loader follows extends: from the file, not a link to it
        if within is not None and not path.is_relative_to(within.resolve()):
            raise OutsidePackage(f"{path} is outside {within}")
        layers.append(path)
        doc, _ = manifest_mod.load_yaml(path)
        path = path.parent / extends[0] if (extends := _extends(doc)) else None
    return layers


def _placed(source: pathlib.Path, copy_of: dict[pathlib.Path, pathlib.Path]) -> str | None:
    """The text the copy of `source` must have to mean there what `source` means where it lies, or None when
    its own text does: an absolute `extends:` (a file outside the package) becomes the path to its copy, a
    relative `libfabric:` (of the file or a variant) the absolute one it meant."""
    doc, _ = manifest_mod.load_yaml(source)
    extends = _extends(doc)
    variants = doc.get("variants") if isinstance(doc.get("variants"), dict) else {}
    relative_libfabric = [layer for layer in [doc, *variants.values()] if isinstance(layer, dict)
                          and isinstance(layer.get("libfabric"), str) and not os.path.isabs(layer["libfabric"])]
    if not relative_libfabric and not (extends and extends[0].is_absolute()):
        return None
    if extends:
        target = copy_of[(source.parent / extends[0]).resolve()]
        doc["extends"] = os.path.relpath(target, copy_of[source].parent) + (f"#{extends[1]}" if extends[1] else "")
    for layer in relative_libfabric:
        layer.update(manifest_mod.anchored_libfabric(layer, source.parent))
    return f"# ./uet certify's copy of {source.name}, its paths made to hold here\n" + \
        yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def copy_manifests(manifests: list[manifest_mod.Manifest], staging: pathlib.Path) -> list[str]:
    """Copies every layer under staging/manifests/, keeping their folders relative to one another; returns
    each manifest's ref there, relative to staging. A layer is copied byte for byte unless what it says
    depends on where it lies (_placed): the run must use the copies."""
    files = sorted({p for m in manifests for p in manifest_layers(m.ref)})
    base = pathlib.Path(os.path.commonpath([str(p.parent) for p in files]))
    copy_of = {f: staging / MANIFESTS_MEMBER / f.relative_to(base) for f in files}
    for source, copy in copy_of.items():
        copy.parent.mkdir(parents=True, exist_ok=True)
        text = _placed(source, copy_of)
        copy.write_bytes(source.read_bytes() if text is None else text.encode())
    return [f"{MANIFESTS_MEMBER}/{m.path.relative_to(base)}" + (f"#{m.variant}" if m.variant else "") for m in manifests]
