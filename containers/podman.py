"""The containers placement: each side in a podman container of its own (its own network, mount, UTS and
IPC namespaces), joined by the same two veth pairs a namespace pair has (the test link and the control
link), moved into each container's network namespace by its PID. No podman network is made: the
containers start with --network none, and the host's firewall rules are never touched.

Each container's first process is the side's agent (containers/agent): the harness starts the initiator's
case binary through agent a (a unix socket in the pair's folder), and the binary starts its target
through agent b (TCP over the control link). The containers share the host's PID namespace, so that a
PID the privileged entity sees is the PID a case grants; the build, the cell's folder and the entity's
folder come in as volumes at the paths they have on the host.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import threading
import uuid

from . import agent_client
from .host import NamespaceError, ip, pid_alive, tool
from .image import RUNROOT, ensure_image, podman, podman_env
from .netns import NamespacePair
from .placement import InfraError, Placement, agent_build

AGENT_PORT = 47990
LEASE_WAIT_S = 120   # an agent nobody leased within this ends (a harness that died while starting it)
LABEL = "uet.owner"
_once: dict = {}   # (build, mounts) -> the image tag, once this process has checked it
_once_lock = threading.Lock()
# (image, mounts) -> pairs whose cell ended with both sides serving: a run's next cell takes one rather than
# start two containers (each FEP still in a container of its own; the agents end every process a cell left)
_idle: dict[tuple, list] = {}


_removals: list[subprocess.Popen] = []
_removals_lock = threading.Lock()


def _remove_later(names: list[str]) -> None:
    with _removals_lock:
        if not _removals:
            atexit.register(flush_removals)
        _removals[:] = [p for p in _removals if p.poll() is None]
        _removals.append(subprocess.Popen([tool("podman"), "rm", "-f", "-t", "0", *names], env=podman_env(),
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def flush_removals(timeout: float = 60.0) -> None:
    """Waits for the containers this process stopped to be removed (a run calls it before it ends)."""
    with _removals_lock:
        pending, _removals[:] = list(_removals), []
    for proc in pending:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def release_pool() -> None:
    """Closes the container pairs kept for further cells, then waits for every removal: a run calls it as
    it ends (and atexit does), so that no container outlives the run."""
    with _once_lock:
        pairs = [p for kept in _idle.values() for p in kept]
        _idle.clear()
    for pair in pairs:
        pair.close()
    flush_removals()


def remove_stale_containers() -> list[str]:
    """Removes the suite's containers whose creating process is gone (a crashed or killed run)."""
    listed = podman("ps", "-a", "--filter", f"label={LABEL}", "--format", "json", check=False)
    stale = []
    for c in json.loads(listed.stdout or "[]") if listed.returncode == 0 else []:
        owner = (c.get("Labels") or {}).get(LABEL, "")
        if owner.isdigit() and not pid_alive(int(owner)):
            stale.append(c["Names"][0] if c.get("Names") else c["Id"])
    if stale:
        podman("rm", "-f", "-t", "0", *stale, check=False)
    return stale


class ContainerPair(NamespacePair):
    """A namespace pair whose two namespaces are those of two containers (``ip netns attach``)."""

    def __init__(self, image: str, mounts: list[tuple[str, str]], build: pathlib.Path, **options):
        super().__init__(**options)
        self.image, self.mounts, self.build = image, mounts, build
        self.container_pids: dict[str, int] = {}
        self.container_names: dict[str, str] = {}
        self.secret: agent_client.RunSecret | None = None
        self.leases: list[agent_client.Lease] = []

    @property
    def folder(self) -> pathlib.Path:
        return RUNROOT.parent / "pairs" / self.prefix

    def agent(self, side: str) -> str:
        return f"unix:{self.folder / (self.side(side).netns + '.sock')}"

    def agent_over_control_link(self, side: str) -> str:
        return f"[{self.side(side).control_ipv6}]:{AGENT_PORT}"

    def _add_namespaces(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        self.secret = agent_client.RunSecret.make(self.folder)
        volumes = [f"-v={self.folder}:{self.folder}"] + [f"-v={p}:{p}:{mode}" for p, mode in self.mounts]
        started = []
        for s in (self.a, self.b):
            # A name of its own: the one before it under this pair's index may still be being removed.
            self.container_names[s.side] = f"{s.netns}-{uuid.uuid4().hex[:6]}"
            argv = [tool("podman"), "run", "-d", "--name", self.container_names[s.side], "--hostname", s.netns,
                    "--network", "none", "--pid", "host", "--cap-add", "NET_RAW,NET_ADMIN",
                    "--label", f"{LABEL}={self.owner_pid}", "--label", f"uet.side={s.side}",
                    *volumes, self.image, f"{self.build}/bin/uet-agent", "--listen", f"unix:{self.folder / (s.netns + '.sock')}",
                    # the control link's address only (moved in after the agent starts: the agent binds it free)
                    "--listen", f"[{s.control_ipv6}]:{AGENT_PORT}", "--secret-file", str(self.secret.path),
                    "--lease", str(LEASE_WAIT_S)]
            started.append(subprocess.Popen(argv, env=podman_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for s, proc in zip((self.a, self.b), started):
            out, err = proc.communicate(timeout=120)
            if proc.returncode != 0:
                raise InfraError(f"podman run {self.container_names[s.side]} failed ({proc.returncode}): "
                                     f"{err.strip()[-800:]}")
        for s in (self.a, self.b):
            # The agent's hello gives the container's first process (the host's PID: --pid host) without
            # another podman command; its network namespace is the container's.
            try:
                pid = int(agent_client.hello(self.agent(s.side), self.secret.value, self.ready_timeout)["pid"])
                # Held while this pair lives: if the harness dies, so do the agents and their containers.
                self.leases.append(agent_client.Lease(self.agent(s.side), self.secret.value, self.ready_timeout))
            except agent_client.AgentError as err:
                logs = podman("logs", self.container_names[s.side], check=False)
                raise InfraError(f"container {self.container_names[s.side]}: {err}; its output: "
                                     f"{(logs.stdout + logs.stderr).strip()[-600:]}")
            self.container_pids[s.side] = pid
            ip("netns", "attach", s.netns, str(pid))

    def close(self):
        # The containers stop with their first process, now; podman removes them in the background
        # (flush_removals), off the cell's path: a cell waits, it does not work, most of its time.
        for pid in self.container_pids.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for lease in self.leases:
            lease.close()
        self.leases = []
        try:
            super().close()
        finally:
            if self.container_names:
                _remove_later(list(self.container_names.values()))
                self.container_names = {}
            if self.a is not None:
                shutil.rmtree(self.folder, ignore_errors=True)

    def lost(self) -> str | None:
        gone = [f"container {self.container_names.get(s, self.side(s).netns)} (PID {pid})"
                for s, pid in self.container_pids.items()
                if not pid_alive(pid) or _zombie(pid)]
        return f"{' and '.join(gone)} stopped" if gone else None


def _zombie(pid: int) -> bool:
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


class Containers(Placement):
    name = "containers"
    shares_network = False
    keeps_host_network = False

    @classmethod
    def after_run(cls):
        release_pool()  # the cells' containers are gone before the report says the run ended

    def __init__(self, mounts: list[tuple[str, str]] = (), build: str | None = None, say=print,
                 entity_socket: str | None = None, **pair_options):
        self.mounts = list(mounts)
        self.build = pathlib.Path(build) if build else agent_build(self.mounts)
        self.say = say
        self.pair_options = pair_options
        self.pair = None

    def __enter__(self):
        for needed in ("podman", "runc"):  # named before anything is tried
            tool(needed)
        # Once per run (this process): podman commands cost a quarter of a second of CPU each.
        with _once_lock:
            if not _once:
                remove_stale_containers()
            key = (str(self.build), tuple(self.mounts))
            if key not in _once:
                _once[key] = ensure_image(self.build, [pathlib.Path(p).resolve() for p, _ in self.mounts], say=self.say)
            image = _once[key]
            pool = _idle.get((image, tuple(self.mounts)), [])
            self.pair = pool.pop() if pool else None
        if self.pair and self.pair.lost():  # stopped while it waited: not to be used again
            self.pair.close()
            self.pair = None
        if not self.pair:
            self.pair = ContainerPair(image, self.mounts, self.build, **self.pair_options)
            try:
                self.pair.up()
            except NamespaceError as exc:  # the veth between the containers
                raise InfraError(f"the containers' link could not be set up: {exc}") from exc
        return self

    def __exit__(self, exc_type, *exc):
        """A pair that served the cell to its end waits for the next cell of the run (release_pool)."""
        if not self.pair:
            return False
        if exc_type or self.pair.lost():
            self.pair.close()
        else:
            for side in "ab":
                self.pair.clear_impairment(side)
            with _once_lock:
                if not _idle:
                    atexit.register(release_pool)
                _idle.setdefault((self.pair.image, tuple(self.mounts)), []).append(self.pair)
        return False

    @property
    def target_place(self):
        return {"kind": "agent", "agent": self.pair.agent_over_control_link("b"), "secret_file": str(self.pair.secret.path)}

    @property
    def control_listen(self):
        return self.pair.a.control_ipv6

    def start(self, argv, env, output, inputs=None):
        return agent_client.AgentProcess(self.pair.agent("a"), argv, env, secret=self.pair.secret.value,
                                         output=output, inputs=inputs)

    def lost(self):
        return self.pair.lost() if self.pair else None

    def describe(self):
        return {"placement": self.name, "image": self.pair.image,
                "sides": {s: self.pair.side(s).netns for s in "ab"}, "runtime": "podman + runc"}


__all__ = ["Containers", "ContainerPair", "remove_stale_containers"]
