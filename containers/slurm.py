"""A Slurm cluster of the caller's own on this machine: munged, slurmctld and one slurmd per node (``slurmd
-N name``, each on a port of its own: Debian's build lets several run on one host), every file, socket and
port of theirs under one folder, so that tests and the nodes placement get a real workload manager
without touching /etc. Debian's slurm-wlm runs with no systemd and no cgroups (proctrack/linuxproc,
task/none); munged must have its socket in a folder of mode 0755."""
from __future__ import annotations

import os
import pathlib
import shutil
import signal
import socket
import subprocess
import time

READY_DEADLINE_S = 20.0
BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "scontrol")


class SlurmError(Exception):
    """The cluster did not come up, or a wait ran out: the message says which, with its logs."""


def missing_binaries() -> list[str]:
    return [b for b in BINARIES if not shutil.which(b) and not os.path.exists(f"/usr/sbin/{b}")]


PORT_ATTEMPTS = 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    """`prolog`/`epilog`: scripts Slurm runs at each job's start and end on the node (with `hook_env`)."""

    def __init__(self, folder: pathlib.Path, prolog: str | None = None, epilog: str | None = None,
                 hook_env: dict[str, str] | None = None, nodes: tuple[str, ...] = ("uetnode",)):
        self.folder = folder
        self.conf = folder / "slurm.conf"
        self.logs = folder / "log"
        self.nodes = nodes
        self.node = nodes[0]
        self.procs: list[subprocess.Popen] = []
        self.prolog, self.epilog, self.hook_env = prolog, epilog, hook_env or {}

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def _hook(self, name: str, script: str | None) -> str:
        if not script:
            return ""
        # Slurm gives its hooks a bare environment: a wrapper of ours sets what the hook needs.
        wrapper = self.folder / name
        exports = "".join(f"export {k}='{v}'\n" for k, v in self.hook_env.items())
        # Each hook that has run says so, by node and job (hooks_done): the job-completion record may come
        # before the last node's epilog has run.
        done = self.logs / f"{name}-done"
        wrapper.write_text(f"#!/bin/sh\n{exports}{script}\nrc=$?\n"
                           f"echo \"$SLURMD_NODENAME $SLURM_JOB_ID\" >> '{done}'\nexit $rc\n")
        wrapper.chmod(0o755)
        return f"{name.capitalize()}={wrapper}\n"

    def _write_config(self) -> None:
        f = self.folder
        for sub in ("munge", "state", "spool", "log", *(f"spool/{n}" for n in self.nodes)):
            (f / sub).mkdir(mode=0o755, exist_ok=True)
        key = f / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        host = socket.gethostname()
        self.conf.write_text(
            "ClusterName=uetsuite\n"
            f"SlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={_free_port()}\n"
            "SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
            f"AuthInfo=socket={f}/munge/munge.sock\n"
            f"StateSaveLocation={f}/state\nSlurmdSpoolDir={f}/spool/%n\n"
            f"SlurmctldPidFile={f}/slurmctld.pid\nSlurmdPidFile={f}/slurmd-%n.pid\n"
            f"SlurmctldLogFile={f}/log/slurmctld.log\nSlurmdLogFile={f}/log/slurmd-%n.log\n"
            "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n"
            "AccountingStorageType=accounting_storage/none\n"
            f"JobCompType=jobcomp/filetxt\nJobCompLoc={f}/log/jobcomp.txt\n"
            "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
            "MpiDefault=none\nReturnToService=2\nKillWait=2\n"
            + self._hook("prolog", self.prolog) + self._hook("epilog", self.epilog) +
            "".join(f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={_free_port()} "
                      f"CPUs={os.cpu_count() or 1} State=UNKNOWN\n" for n in self.nodes) +
            f"PartitionName=uet Nodes={','.join(self.nodes)} Default=YES MaxTime=UNLIMITED State=UP\n")

    def _spawn(self, name: str, argv: list[str]) -> None:
        out = open(self.logs / f"{name}.out", "ab")
        self.procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                           start_new_session=True))
        out.close()

    def logs_text(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}" for p in sorted(self.logs.glob("*")))

    def start(self) -> "SlurmCluster":
        self._write_config()
        f = self.folder
        self._spawn("munged", ["munged", "-F", "-f", f"--socket={f}/munge/munge.sock", f"--key-file={f}/munge/munge.key",
                               f"--log-file={f}/log/munged.log", f"--pid-file={f}/munge/munged.pid",
                               f"--seed-file={f}/munge/seed"])
        self.wait_for(lambda: (f / "munge" / "munge.sock").exists(), "munged's socket")
        # The daemons' ports are free ones the kernel named a moment before: another cluster starting on the
        # host (a second run of the suite) may take one first. Then they start again on others.
        for attempt in range(1, PORT_ATTEMPTS + 1):
            first = len(self.procs)
            self._spawn("slurmctld", ["slurmctld", "-D", "-i"])
            for n in self.nodes:
                self._spawn(f"slurmd-{n}", ["slurmd", "-D", "-N", n])
            try:
                self.wait_for(self.all_idle, f"{len(self.nodes)} idle node(s)")
                return self
            except SlurmError as exc:
                if "Address already in use" not in str(exc) or attempt == PORT_ATTEMPTS:
                    raise
            for p in self.procs[first:]:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
            del self.procs[first:]
            self._write_config()
        return self

    def all_idle(self) -> bool:
        states = self.run("sinfo", "-h", "-N", "-o", "%N %t").stdout.split()
        return states[1::2] == ["idle"] * len(self.nodes)

    def slurmd(self, node: str) -> subprocess.Popen:
        return next(p for p in self.procs if p.args[-1] == node and "slurmd" in p.args[0])

    def wait_for(self, ready, what: str, deadline: float = READY_DEADLINE_S):
        end = time.monotonic() + deadline
        while True:
            for p in self.procs:
                if p.poll() is not None:
                    raise SlurmError(f"{p.args[0]} exited {p.returncode} while waiting for {what}\n{self.logs_text()}")
            got = ready()
            if got:
                return got
            if time.monotonic() > end:
                raise SlurmError(f"no {what} within {deadline:.0f} s\n{self.logs_text()}")
            time.sleep(0.05)

    def run(self, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), capture_output=True, text=True, env=self.env, timeout=timeout)

    def submit(self, script: str) -> int:
        """sbatch a shell script; its job id."""
        r = self.run("sbatch", "--parsable", "-o", str(self.folder / "job-%j.out"), "--wrap", script)
        if r.returncode:
            raise SlurmError(f"sbatch failed: {r.stderr}")
        return int(r.stdout.strip().split(";")[0])

    def ended(self, job: int) -> bool:
        """The job is in the job-completion record, and every node's epilog (where there is one) has run."""
        comp = self.logs / "jobcomp.txt"
        if not (comp.exists() and f"JobId={job} " in comp.read_text()):
            return False
        return not self.epilog or self.hooks_done("epilog", job) >= len(self.nodes)

    def hooks_done(self, name: str, job: int) -> int:
        """How many nodes have run hook `name` (prolog, epilog) for `job`."""
        done = self.logs / f"{name}-done"
        lines = done.read_text().splitlines() if done.exists() else []
        return len({line.split()[0] for line in lines if line.split()[1:] == [str(job)]})

    def stop(self) -> None:
        self.run("scontrol", "shutdown", timeout=30)
        # slurmctld goes on the shutdown; a slurmd whose steps were killed under it may wait for them, so it
        # is told directly. munged, which they need until then, goes last.
        for p in sorted(self.procs, key=lambda p: p.args[0] == "munged"):
            if p.poll() is None and (p.args[0] in ("munged", "slurmd") or not p.args[0].startswith("slurmctld")):
                p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        # Step daemons and the tasks they ran: everything still started for this cluster.
        kill_processes_of(self.folder)


def _uses(entry: pathlib.Path, folder: str) -> bool:
    mark = folder.encode()
    if mark in (entry / "cmdline").read_bytes() or mark in (entry / "environ").read_bytes():
        return True
    # slurmstepd overwrites its command line and environment, but keeps its node's log open
    for fd in (entry / "fd").iterdir():
        try:
            if os.readlink(fd).startswith(folder):
                return True
        except OSError:
            continue
    return False


def processes_of(folder: pathlib.Path) -> list[int]:
    """PIDs of the processes started for the cluster in `folder` (its path is in their command line, their
    environment (SLURM_CONF) or their open files), apart from this one."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if _uses(entry, str(folder)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def kill_processes_of(folder: pathlib.Path) -> list[int]:
    killed = processes_of(folder)
    for pid in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return killed
