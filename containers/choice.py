"""The placements by name: what ``./uet run --placement`` and a pair file's ``placement`` choose."""
from __future__ import annotations

from .nodes import Nodes
from .placement import Namespaces, Placement, PlacementError
from .podman import Containers

PLACEMENTS = ("namespaces", "containers", "nodes")


def open_placement(name: str, *, mounts: list[tuple[str, str]] = (), entity_socket: str | None = None,
                   **options) -> Placement:
    """A placement by name (not yet entered). ``mounts``: (host folder, "ro" or "rw") the sides must see at
    the same path (the build, the cell's folder, the entity's folder); namespaces and same-host see them anyway."""
    if name == "same-host":
        return Placement()
    if name == "namespaces":
        return Namespaces(**options)
    if name == "containers":
        return Containers(mounts=mounts, **options)
    if name == "nodes":
        return Nodes(mounts=mounts, entity_socket=entity_socket, **options)
    raise PlacementError(f"unknown placement {name!r}: one of {', '.join(PLACEMENTS)}")
