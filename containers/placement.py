"""Where the two sides of a cell run: the placements a run chooses with ``--placement``.

    same-host    both sides in the harness's own namespace (not root, or a manifest without peer_netns)
    namespaces   each side in a network namespace of its own, joined by veth (netns.py): the default
    containers   each side in a podman container of its own, joined by veth (podman.py)
    nodes        each side on a node of a Slurm allocation (nodes.py)

A placement starts the initiator's case binary on side a (``start``), says where the binary starts its
target (``target_place``, a cell plan's target.place: harness/run/cell_plan.py) and on which control-link address
the initiator waits for it (``control_listen``), impairs the test link when an area needs loss (``pair``: impair,
clear_impairment, impairment, impair_hook), and says when a side was lost mid-run (``lost``). The case
binaries are the same in every placement: only their cell plan differs. choice.py opens one by
name.
"""
from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import subprocess

from .cgroup import Group


class PlacementError(RuntimeError):
    """A placement could not be made; the message names what is missing and how to get it."""


class InfraError(PlacementError):
    """The infrastructure under a cell failed before any of its provider code ran: a namespace or veth not
    made, a container that did not start, a Slurm allocation refused, a node's agent that does not answer.
    The harness makes each check it kept from running an `infra_error` and sets the cell up again
    (harness/run/run_cases.py, harness/run/attempts.py).

    Raised only where a placement sets its sides up, never for what happens once a case binary ran: the
    provider then has code inside the placement with the rights to end it (root in a namespace, a container's
    processes, a child of the node's agent), so a side lost after that stays the `error` it was, or a
    provider that crashes or hangs could turn its own failure into one that is not held against it. A host
    that lacks what a placement needs (root, a tool, Slurm) is a PlacementError: the user's to fix, and a
    second try would meet the same."""


def agent_build(mounts: list[tuple[str, str]]) -> pathlib.Path:
    """The build among a placement's volumes: the one holding bin/uet-agent, which each side runs."""
    for path, _ in mounts:
        if (pathlib.Path(path) / "bin" / "uet-agent").exists():
            return pathlib.Path(path)
    raise PlacementError(f"no build with bin/uet-agent among {[p for p, _ in mounts]} (run ./uet build)")


class LocalProcess:
    """A process of this host (optionally behind a prefix such as ``ip netns exec NS``), with the interface
    of agent_client.AgentProcess: a pidfd that turns readable at its end, and its CPU time once reaped.
    `inputs` ({variable: bytes}): each a pipe holding those bytes, its descriptor named by the variable.
    It runs in a group of its own (cgroup.py) with everything it starts: its close ends them all, a
    provider's daemon included."""

    def __init__(self, argv: list[str], env: dict[str, str], *, output: str, prefix: list[str] = (),
                 inputs: dict[str, str] | None = None):
        env, fds = dict(env), []
        self._group = Group()
        try:
            for name, data in (inputs or {}).items():
                read, write = os.pipe()
                fds.append(read)
                with os.fdopen(write, "wb") as w:  # a key, far within the pipe's buffer
                    w.write(data.encode())
                env[name] = str(read)
            with open(output, "a") as out:
                self._proc = subprocess.Popen(self._group.wrap([*prefix, *map(str, argv)]), env=env, stdout=out,
                                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                              start_new_session=True, pass_fds=fds)
        except BaseException:
            self._group.end()
            raise
        finally:
            for fd in fds:
                os.close(fd)
        self.pid = self._proc.pid
        self.returncode: int | None = None
        self.cpu_seconds = 0.0
        self.lost = False
        self._pidfd = os.pidfd_open(self.pid)

    def fileno(self) -> int:
        return self._pidfd

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid:
                self.returncode = self._proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_seconds = usage.ru_utime + usage.ru_stime
        return self.returncode

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)

    def close(self) -> None:
        """After its end: what it left running is ended too."""
        self._group.end(self.pid)
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1


class Placement:
    """The same-host placement, and the interface of the others."""
    name = "same-host"
    pair = None          # what impairs the test link, when the placement has one
    # What the harness needs to know of a placement, said by the placement and nowhere else:
    shares_network = True        # the two sides see one network: each cell needs ports of its own
    keeps_host_network = True    # a side may stay on its host's interface (a manifest's host_interface)
    takes_host_interface = False  # the interface is an option of the placement (Nodes(host_interface=...))

    def __init__(self, **_options):
        pass

    @classmethod
    def after_run(cls) -> None:
        """What the run's end releases (kept resources of its cells); nothing by default."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    target_place = {"kind": "beside"}
    control_listen = None

    def start(self, argv: list[str], env: dict[str, str], output: str, inputs: dict[str, str] | None = None):
        """The initiator's binary on side a; `inputs` ({variable: bytes}) reach it as pipes the variables name."""
        return LocalProcess(argv, env, output=output, inputs=inputs)

    def lost(self) -> str | None:
        """Why a side is gone (its container or node stopped), or None while both serve."""
        return None

    def describe(self) -> dict:
        return {"placement": self.name}


class Namespaces(Placement):
    name = "namespaces"
    shares_network = False
    keeps_host_network = False

    def __init__(self, mounts=(), entity_socket=None, **pair_options):  # the sides see the host's folders anyway
        from .netns import NamespacePair
        self.pair = NamespacePair(**pair_options)

    def __enter__(self):
        from .host import NamespaceError, require_root, tool
        require_root()  # what the host lacks is not lost infrastructure (InfraError)
        tool("ip")
        try:
            self.pair.up()
        except NamespaceError as exc:
            raise InfraError(f"the namespace pair could not be set up: {exc}") from exc
        return self

    def __exit__(self, *exc):
        self.pair.close()
        return False

    @property
    def target_place(self):
        return {"kind": "netns", "netns": self.pair.b.netns}

    @property
    def control_listen(self):
        return self.pair.a.control_ipv6

    def start(self, argv, env, output, inputs=None):
        from .host import tool
        return LocalProcess(argv, env, output=output, prefix=[tool("ip"), "netns", "exec", self.pair.a.netns],
                            inputs=inputs)

    def lost(self):
        from .netns import list_namespaces
        missing = [n for n in self.pair.names if n not in list_namespaces()]
        return f"namespace {', '.join(missing)} was deleted" if missing else None

    def describe(self):
        return {"placement": self.name, "sides": {s: self.pair.side(s).netns for s in "ab"}}
