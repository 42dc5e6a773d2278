"""Where a cell's two sides run: network namespaces joined by veth, podman containers, or the nodes of a
Slurm allocation (choice.py), each side's processes started by its agent (agent/).

See README.md beside this file; the CLI is ``/usr/bin/python3 -m containers --help``.
"""
from .netns import (  # noqa: F401
    NamespaceError,
    NamespacePair,
    Side,
    addresses_for,
    attach,
    cleanup_stale,
    delete_pair,
    existing_pairs,
    list_namespaces,
)

__all__ = ["NamespaceError", "NamespacePair", "Side", "addresses_for", "attach", "cleanup_stale",
           "delete_pair", "existing_pairs", "list_namespaces"]
