"""The nodes placement: each side on a node of a Slurm allocation (``salloc -N2``), its agent
(containers/agent) started there as a job step, the control channel over TCP between the nodes, the
capture on the initiator's node (the case binary captures where it runs).

On this machine the placement starts a Slurm of its own for the cell (slurm.py: munged, slurmctld and
two slurmd, ``-N uetn1`` and ``-N uetn2``, on one host). Two nodes on one host would share one network
stack, so each node's agent runs in a network namespace of its own, joined to the other's by veth (as
two machines are joined by a wire): the test link for UET, the control link for the channel between the
sides. A manifest whose provider must run on the host's real interface (``host_interface``) gets no
namespace: its side runs on the node's own network, and the capture goes on that interface.

With ``UET_SLURM=site`` the placement takes the site's Slurm as the environment names it (SLURM_CONF;
the partition in UET_SLURM_PARTITION; a folder both nodes see in UET_SLURM_SHARED): the two nodes are
then two machines, their agents listen on TCP, and the suite's build and the run's folder must be on a
file system both nodes see at the same path. Loss for the areas that need it then goes on the egress hook
of each node's data interface through that node's agent (nft, in a table named after the allocation and
the side, matching the cell's UDP ports): the node's own rules are left as they are.
"""
from __future__ import annotations

import json
import os
import pathlib
import selectors
import shutil
import stat
import subprocess
import tempfile
import time

from . import agent_client
from .host import NamespaceError, pid_alive, tool
from .impair import impair_script
from .netns import NamespacePair
from .placement import InfraError, Placement, PlacementError, agent_build
from .slurm import SlurmCluster, SlurmError, kill_processes_of, missing_binaries

LOCAL_NODES = ("uetn1", "uetn2")
READY_DEADLINE_S = 20.0
# How long a cell's end waits for its job to leave the queue and, on the suite's own cluster, for every node's
# epilog (their JOB_END reaches the entity): a bound against a hang only, so generous for a loaded host.
JOB_END_DEADLINE_S = 120.0
HOOKS = pathlib.Path(__file__).resolve().parent.parent / "entity" / "slurm"


# Written in a local cluster's folder as it is made: the cleanup of a later run removes a folder only when
# it is ours (our uid, a real folder) and holds this marker, ours too, naming the pid in the folder's name. A
# name alone proves nothing: in /tmp any user can make a uet-nodes-<dead pid>-x folder.
MARKER = ".uet-nodes-run"


def mark_ours(folder: pathlib.Path) -> None:
    fd = os.open(folder / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w") as f:
        f.write(f"{os.getpid()}\n")


def is_ours(folder: pathlib.Path, owner_pid: int) -> bool:
    try:
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            return False
        fd = os.open(folder / MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            mst = os.fstat(f.fileno())
            if not stat.S_ISREG(mst.st_mode) or mst.st_uid != os.geteuid():
                return False
            return f.read(32) == f"{owner_pid}\n".encode()
    except OSError:
        return False


def cleanup_stale_clusters(tmp: str | None = None) -> list[str]:
    """Stops the local Slurm daemons of runs that died without stopping them, and removes their folders."""
    removed = []
    for folder in pathlib.Path(tmp or tempfile.gettempdir()).glob("uet-nodes-*-*"):
        owner = folder.name.split("-")[2]
        if not owner.isdigit() or pid_alive(int(owner)) or not is_ours(folder, int(owner)):
            continue
        kill_processes_of(folder)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(str(folder))
    return removed


class NodeLink:
    """The data path between the two nodes, impaired through each side's agent (the `pair` of the
    placement, with the interface the harness's loss uses: impair, clear_impairment, impairment)."""
    impair_hook = "egress"

    def __init__(self, placement: "Nodes"):
        self.placement = placement
        self._rules: dict[str, str] = {}

    def table(self, side: str) -> str:
        return f"uet_impair_{self.placement.job}_{side}"

    def impair(self, side, loss_percent=None, udp_dport=None, every=None, offset=0):
        device = self.placement.data_interface(side)
        script = impair_script("egress", device, loss_percent, udp_dport, every, offset, self.table(side))
        self.placement.run_on(side, ["nft", "-f", "{script}"], script=script)
        self._rules[side] = script

    def clear_impairment(self, side):
        t = self.table(side)
        self.placement.run_on(side, ["nft", "-f", "{script}"], script=f"add table netdev {t}\ndelete table netdev {t}\n")
        self._rules.pop(side, None)

    def impairment(self, side):
        return self._rules.get(side, "")


class Nodes(Placement):
    name = "nodes"
    takes_host_interface = True  # nodes may be one host: shares_network stays True

    def __init__(self, mounts=(), build: str | None = None, entity_socket: str | None = None, say=print,
                 slurm: str | None = None, host_interface: str | None = None):
        self.build = pathlib.Path(build) if build else agent_build(mounts)
        self.entity_socket, self.say = entity_socket, say
        self.site = (slurm or os.environ.get("UET_SLURM", "local")) == "site"
        self.cluster: SlurmCluster | None = None
        self.folder: pathlib.Path | None = None
        self.job: str | None = None
        self.nodes: dict[str, str] = {}        # side -> node name
        self.addresses: dict[str, str] = {}    # side -> the node's address
        self.agents: dict[str, str] = {}       # side -> where the harness reaches its agent
        self.peer_agents: dict[str, str] = {}  # side -> where the other side reaches it ("[address]:port")
        self.agent_pids: dict[str, int] = {}
        self.secret: agent_client.RunSecret | None = None
        self.leases: list[agent_client.Lease] = []
        self.steps: dict[str, subprocess.Popen] = {}
        self.host_interface = host_interface
        # Nodes on this host get a network stack each; on a site's nodes, or on the host's own interface,
        # the nodes' networks are what they are.
        self.netns = None if self.site or host_interface else NamespacePair()
        self.pair = self.netns or NodeLink(self)

    # ---- Slurm

    def _slurm(self, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess:
        env = self.cluster.env if self.cluster else os.environ
        try:
            return subprocess.run(list(argv), capture_output=True, text=True, env=env, timeout=timeout)
        except FileNotFoundError:
            raise PlacementError(f"'{argv[0]}' was not found: install Slurm's client (Debian package slurm-client)") from None
        except subprocess.TimeoutExpired:
            raise InfraError(f"{' '.join(argv[:3])} did not answer within {timeout:g} s: is Slurm reachable?") from None

    def __enter__(self):
        try:
            self._enter()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _enter(self):
        if self.site:
            self.folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-nodes-", dir=os.environ.get("UET_SLURM_SHARED")))
        else:
            missing = missing_binaries()
            if missing:
                raise PlacementError(f"Slurm is not installed ({', '.join(missing)} missing): "
                                     "apt-get install slurm-wlm munge")
            cleanup_stale_clusters()
            self.folder = pathlib.Path(tempfile.mkdtemp(prefix=f"uet-nodes-{os.getpid()}-"))
            self.folder.chmod(0o755)
            mark_ours(self.folder)
            hooks = {}
            if self.entity_socket:  # job starts and ends reach the privileged entity (entity/slurm)
                hooks = dict(prolog=str(HOOKS / "uet-prolog"), epilog=str(HOOKS / "uet-epilog"),
                             hook_env={"UET_CRED": str(self.build / "bin" / "uet-cred"),
                                       "UET_ENTITY_SOCKET": self.entity_socket})
            try:
                self.cluster = SlurmCluster(self.folder, nodes=LOCAL_NODES, **hooks).start()
            except SlurmError as err:
                raise InfraError(f"the local Slurm did not start: {err}") from None
        partition = os.environ.get("UET_SLURM_PARTITION")
        got = self._slurm("salloc", "--no-shell", "-N2", "-J", "uet-cell", *(["-p", partition] if partition else []),
                          "--immediate=60", timeout=90)
        if got.returncode != 0 or "Granted job allocation" not in got.stderr:
            where = ("the site's Slurm (SLURM_CONF names it): is its controller reachable?" if self.site
                     else "the local Slurm")
            raise InfraError(f"salloc -N2 failed ({got.returncode}): {got.stderr.strip()[-500:]}; no allocation "
                                 f"of two nodes from {where}")
        self.job = got.stderr.split("Granted job allocation", 1)[1].split()[0]
        names = self._slurm("scontrol", "show", "hostnames",
                            self._slurm("squeue", "-h", "-j", self.job, "-o", "%N").stdout.strip()).stdout.split()
        if len(names) < 2:
            raise InfraError(f"allocation {self.job} has nodes {names}: two are needed")
        for side, node in zip("ab", names[:2]):
            self.nodes[side] = node
            self.addresses[side] = self._node_address(node)
        if self.netns:
            try:
                self.netns.up()
            except NamespaceError as exc:
                raise InfraError(f"the nodes' namespaces could not be set up: {exc}") from exc
        for side in "ab":
            self._start_agent(side)
        if self.host_interface:
            for side in "ab":
                try:
                    self.run_on(side, ["test", "-e", f"/sys/class/net/{self.host_interface}"])
                except InfraError:
                    raise
                except PlacementError:
                    raise PlacementError(f"the capture interface {self.host_interface} (the manifest's host_interface) "
                                         f"does not exist on node {self.nodes[side]}") from None

    def _node_address(self, node: str) -> str:
        shown = self._slurm("scontrol", "show", "node", node, "-o").stdout
        for field in shown.split():
            if field.startswith("NodeAddr="):
                return field.split("=", 1)[1]
        raise PlacementError(f"scontrol knows no node {node}")

    def _start_agent(self, side: str) -> None:
        node = self.nodes[side]
        if self.secret is None:  # in the allocation's folder, which the nodes share
            self.secret = agent_client.RunSecret.make(self.folder)
        # The one address the other side and the harness reach it at, never every address of the node.
        address = self.netns.side(side).control_ipv6 if self.netns else self.addresses[side]
        agent = [str(self.build / "bin" / "uet-agent"), "--listen", f"[{address}]:0",
                 "--secret-file", str(self.secret.path), "--lease", str(READY_DEADLINE_S * 3)]
        if self.netns:  # its own network stack; the harness reaches it through a socket in the cell's folder
            agent = [tool("ip"), "netns", "exec", self.netns.side(side).netns, *agent,
                     "--listen", f"unix:{self.folder / f'agent-{side}.sock'}"]
        argv = ["srun", "--jobid", self.job, "-w", node, "-N1", "-n1", "--overlap", "-u", *agent]
        env = self.cluster.env if self.cluster else os.environ
        step = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.steps[side] = step
        deadline = time.monotonic() + READY_DEADLINE_S
        sel = selectors.DefaultSelector()
        sel.register(step.stdout, selectors.EVENT_READ)
        said = ""
        try:
            while time.monotonic() < deadline:
                if not sel.select(deadline - time.monotonic()):
                    break
                line = step.stdout.readline()
                if not line:
                    break
                said += line
                if line.startswith("{"):
                    event = json.loads(line)
                    port = event["listen"][0].rsplit(":", 1)[1]
                    if self.netns:
                        self.agents[side] = event["listen"][1]
                        self.peer_agents[side] = f"[{self.netns.side(side).control_ipv6}]:{port}"
                    else:
                        self.agents[side] = self.peer_agents[side] = f"[{self.addresses[side]}]:{port}"
                    self.agent_pids[side] = int(event["pid"])
                    try:
                        agent_client.hello(self.agents[side], self.secret.value, READY_DEADLINE_S)
                        # Held while this placement lives: a harness that dies takes its agents with it.
                        self.leases.append(agent_client.Lease(self.agents[side], self.secret.value, READY_DEADLINE_S))
                    except agent_client.AgentError as err:
                        raise InfraError(f"node {node}'s agent (job {self.job}): {err}") from None
                    return
        finally:
            sel.close()
        raise InfraError(f"node {node} does not answer: its agent (job {self.job}) did not start within "
                             f"{READY_DEADLINE_S:.0f} s: {said.strip()[-500:]}")

    def __exit__(self, *exc):
        # Asked before the leases close: closing them ends the agents and so their steps, which lost() then
        # reports, and the job's end was not waited for at all: the cluster stopped before a node's epilog
        # had run, and the entity saw one JOB_END of two (TestSameVerdicts[nodes], whenever an agent's step
        # ended before this line ran).
        slurmd_gone = self._slurmd_gone()
        for lease in self.leases:
            lease.close()
        self.leases = []
        if self.job:
            self._slurm("scancel", self.job)
            # Its steps end through their slurmd: the nodes stop only once the job has left the queue.
            end = time.monotonic() + (0 if slurmd_gone else JOB_END_DEADLINE_S)  # a stopped slurmd never ends them
            while time.monotonic() < end and self._slurm("squeue", "-h", "-j", self.job).stdout.strip():
                time.sleep(0.05)  # a poll inside a deadline
            # The suite's own cluster also says when both epilogs ran (its completion record): their JOB_END
            # reaches the entity before the cell stops it (once, a second epilog was seen to come later).
            while self.cluster and time.monotonic() < end and not self.cluster.ended(int(self.job)):
                time.sleep(0.05)  # a poll inside a deadline
        for step in self.steps.values():
            if step.poll() is None:
                step.kill()
            step.wait()
            step.stdout.close()
        if not self.site:
            for pid in self.agent_pids.values():  # a step left by a node whose slurmd was killed
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
        if self.cluster:
            self.cluster.stop()
        if self.netns:
            self.netns.close()
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
        return False

    # ---- the placement's interface

    @property
    def target_place(self):
        return {"kind": "agent", "agent": self.peer_agents["b"], "secret_file": str(self.secret.path)}

    @property
    def control_listen(self):
        return self.netns.a.control_ipv6 if self.netns else self.addresses["a"]

    def start(self, argv, env, output, inputs=None):
        return agent_client.AgentProcess(self.agents["a"], argv, env, secret=self.secret.value, output=output,
                                         inputs=inputs)

    def _slurmd_gone(self) -> list[str]:
        """The suite's own nodes whose slurmd has stopped (a site's are not ours to watch)."""
        if not self.cluster:
            return []
        return [f"node {node}'s slurmd stopped" for node in self.nodes.values()
                if self.cluster.slurmd(node).poll() is not None]

    def lost(self):
        gone = self._slurmd_gone()
        for side, step in self.steps.items():
            if step.poll() is not None:
                gone.append(f"the agent step on node {self.nodes[side]} ended ({step.returncode})")
        return "; ".join(gone) or None

    def describe(self):
        return {"placement": self.name, "slurm": "site" if self.site else "local (slurm.py, one host)",
                "job": self.job, "sides": dict(self.nodes), "addresses": dict(self.addresses),
                "network": ({s: self.netns.side(s).netns for s in "ab"} if self.netns
                            else f"the nodes' own ({self.host_interface or 'their routes'})")}

    # ---- running a command on a side's node

    def run_on(self, side: str, argv: list[str], script: str = "", timeout: float = 30) -> str:
        """Runs `argv` on `side`'s node through its agent ({script}: a file holding `script`); its output."""
        work = pathlib.Path(tempfile.mkdtemp(prefix=f"run-{side}-", dir=self.folder))
        try:
            (work / "script").write_text(script)
            argv = [a.replace("{script}", str(work / "script")) for a in argv]
            proc = agent_client.AgentProcess(self.agents[side], argv, {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                                             secret=self.secret.value, output=str(work / "out"))
            rc = proc.wait(timeout)
            out = (work / "out").read_text(errors="replace")
            if rc != 0:
                raise PlacementError(f"{argv[0]} on node {self.nodes[side]} failed ({rc}): {out.strip()[-500:]}")
            return out
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def data_interface(self, side: str) -> str:
        """The interface `side`'s packets leave by towards the other node (the loopback, for nodes on one host)."""
        peer = self.addresses["b" if side == "a" else "a"]
        route = self.run_on(side, ["ip", "-o", "route", "get", peer]).split()
        return route[route.index("dev") + 1] if "dev" in route else "lo"
