"""Every limit ./uet verify holds a submission package to, in one place. A package is a stranger's file: each
limit turns what would fill the disk, the memory or hours of decoding into exit 2 with a message naming the
limit (PackageRefused). Each is far above what ./uet certify writes: the full mustpass of softuet.yaml#hpc
is 0.3 MB compressed, 5.8 MB in 249 members (results.json 0.4 MB, the largest decode 1 MB, the largest capture
0.15 MB), 80 capture references and 2,288 decoded frames."""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Limits:
    # The archive, judged member by member before a byte of a member is written
    tar_bytes: int = 4 << 30           # the decompressed tar stream (read through once, never kept)
    extracted_bytes: int = 2 << 30     # the regular members together, as written out
    member_bytes: int = 1 << 30        # one member (the size its header declares)
    members: int = 200_000
    name_bytes: int = 1024             # a member's name
    name_part_bytes: int = 255         # one folder or file name in it (NAME_MAX)
    # What is read into memory and parsed
    document_bytes: int = 64 << 20     # one member read whole: results.json, suite.json, SHA256SUMS, a decode
    json_depth: int = 64               # nesting of JSON arrays and objects
    decode_records: int = 1_000_000    # lines of one kept decode (one per frame)
    manifest_refs: int = 2             # manifests mustpass.json names: a provider, or a pair
    # The work of re-checking the captures
    capture_refs: int = 10_000         # captures the results name, counting a capture named twice twice
    capture_bytes: int = 64 << 20      # one capture re-decoded (a run keeps at most 16 MiB of one)
    decoded_bytes: int = 1 << 30       # all captures and kept decodes read together
    evidence_frames: int = 100_000     # evidence frames of all results
    evidence_comparisons: int = 5_000_000    # decoded frames compared with an evidence frame, in all
    evidence_ports: int = 4            # other UDP ports a capture is decoded under again to find its evidence
                                       # frames (the other side's port: each side may choose its own)


class PackageRefused(Exception):
    """The package is over a limit, or holds what no package ./uet certify writes holds, in a way that could
    not be judged safely (exit 2). The message names the member or file and the limit."""


def over(limits: Limits, name: str, what: str, amount: int | None = None) -> PackageRefused:
    """The refusal of `what` (which has `amount`, when given) for going over the limit `name`."""
    shown = f"{what} ({amount})" if amount is not None else what
    return PackageRefused(f"{shown}: over the package limit {name} ({getattr(limits, name)})")


class Budget:
    """Counts the work of a whole package against limits as it is done; refuses at the first limit passed."""

    def __init__(self, limits: Limits):
        self.limits, self.used = limits, {}

    def spend(self, name: str, amount: int, what: str) -> None:
        """Counts `amount` against the limit `name`; `what` says what is counted ("run/results.json: capture
        references")."""
        self.used[name] = self.used.get(name, 0) + amount
        if self.used[name] > getattr(self.limits, name):
            raise over(self.limits, name, what, self.used[name])
