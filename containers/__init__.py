"""Containers for the fabric endpoints under test: here, Linux network namespaces joined by a veth pair.

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
