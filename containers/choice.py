"""The placements by name: what ``./uet run --placement`` and a pair file's ``placement`` choose. A new
placement is its module and a row here; what the harness must know of it are its class's attributes
(placement.py's Placement)."""
from __future__ import annotations

from .nodes import Nodes
from .placement import Namespaces, Placement, PlacementError
from .podman import Containers

# same-host is not chosen by name on the command line (--same-host is), but a cell may run in it.
CLASSES: dict[str, type[Placement]] = {"namespaces": Namespaces, "containers": Containers, "nodes": Nodes,
                                       "same-host": Placement}
PLACEMENTS = tuple(name for name in CLASSES if name != "same-host")


def placement_class(name: str) -> type[Placement]:
    try:
        return CLASSES[name]
    except KeyError:
        raise PlacementError(f"unknown placement {name!r}: one of {', '.join(PLACEMENTS)}") from None


def open_placement(name: str, *, mounts: list[tuple[str, str]] = (), entity_socket: str | None = None,
                   **options) -> Placement:
    """A placement by name (not yet entered). ``mounts``: (host folder, "ro" or "rw") the sides must see at
    the same path (the build, the cell's folder, the entity's folder); namespaces and same-host see them anyway."""
    return placement_class(name)(mounts=mounts, entity_socket=entity_socket, **options)
