"""The placements (containers/placement.py): the same cases give the same verdicts with their two sides in
namespaces, in podman containers and on the nodes of a Slurm allocation; a side lost mid-case makes that
case `error` with the reason, the cell goes on, and nothing is left behind; a missing tool, a missing
interface or a node that does not answer is named.

Runs as root with the build (./uet build); the first containers test builds the base image once (about a
minute, from the Debian archive apt uses)."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]

from containers import host, image, netns, podman  # noqa: E402
from containers.choice import open_placement  # noqa: E402
from containers.placement import InfraError  # noqa: E402
from harness.run.run_cases import run_manifest  # noqa: E402

# alone: the tests kill a container and a slurmd mid-case, and the placements are heavy.
pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="the placements need root (namespaces, podman, slurmd)"),
              pytest.mark.alone]

MANIFEST = str(REPO / "cases" / "manifests" / "softuet.yaml") + "#ai_full"
# Two-sided transfers, a lossy wire, the privileged entity granting by PID, and sealed packets: what a
# placement can break (addresses, the control channel, impairment, PIDs, the entity's socket).
AREAS = ["msg", "reliability", "jobs", "security"]


def verdicts(results):
    return {f"{r.area}/{r.case}": r.verdict for r in results}


def ours(entry: pathlib.Path, marks: tuple[bytes, ...]) -> bool:
    """A process that names one of `marks` in its command line, its environment or an open file: slurmstepd
    rewrites its command line and environment but keeps its node's log (in the cluster's folder) open."""
    if any(m in (entry / "cmdline").read_bytes() or m in (entry / "environ").read_bytes() for m in marks):
        return True
    for fd in (entry / "fd").iterdir():
        try:
            if any(m in os.readlink(fd).encode() for m in marks):
                return True
        except OSError:
            continue
    return False


def own_process(entry: pathlib.Path, cmdline: str) -> bool:
    """`entry` (/proc/<pid>) runs `cmdline` for this process's local Slurm cluster (its folder
    uet-nodes-<pid>-* in its environment, SLURM_CONF)."""
    try:
        return (entry / "cmdline").read_bytes().replace(b"\0", b" ").strip() == cmdline.encode() and \
            f"uet-nodes-{os.getpid()}-".encode() in (entry / "environ").read_bytes()
    except OSError:
        return False


def leftovers(before_netns, wait_gone):
    """What this process's runs left: namespaces, containers, agents and local Slurm daemons (once the
    containers it kept for further cells are removed, as a run waits for before it ends). Only its own:
    their names carry its PID (namespaces uet-<pid>-<n>-<side>, containers named after them and labelled
    uet.owner=<pid>, the local cluster's folder uet-nodes-<pid>-*), so another run of the suite on the host
    is none of its business."""
    podman.release_pool()
    pid = os.getpid()
    left = [n for n in netns.list_namespaces() if n.startswith(f"uet-{pid}-") and n not in before_netns]
    ps = image.podman("ps", "-a", "--filter", f"label=uet.owner={pid}", "--format", "{{.Names}}", check=False)
    left += ps.stdout.split()
    marks = (f"uet-{pid}-".encode(), f"uet-nodes-{pid}-".encode())
    for entry in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            comm = (entry / "comm").read_text().strip()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if state == "Z" or comm not in ("uet-agent", "slurmstepd", "conmon", "slurmd", "slurmctld", "munged") \
                    or int(entry.name) == pid or not ours(entry, marks):
                continue
        except (OSError, IndexError, ValueError):
            continue
        if comm == "conmon" and wait_gone(int(entry.name), CONMON_GRACE_S):
            continue  # podman's own: a removed container's conmon runs its exit command (cleanup), then ends
        left.append(f"{entry.name} {cmdline}")
    return left


# How long a removed container's conmon may take to end, on a busy host; a conmon still there after it is left.
CONMON_GRACE_S = 60


@pytest.fixture(scope="module")
def namespace_verdicts(build_dir, tmp_path_factory):
    results = run_manifest(MANIFEST, build_dir, tmp_path_factory.mktemp("namespaces"), areas=AREAS,
                           placement="namespaces")
    assert results and all(r.verdict in ("pass", "not_applicable") for r in results), \
        [(r.case, r.verdict, r.reason) for r in results if r.verdict not in ("pass", "not_applicable")]
    return verdicts(results)


class TestSameVerdicts:
    @pytest.mark.parametrize("placement", ["containers", "nodes"])
    def test_the_verdicts_equal_the_namespace_runs(self, placement, build_dir, tmp_path, namespace_verdicts, wait_gone):
        before = netns.list_namespaces()
        results = run_manifest(MANIFEST, build_dir, tmp_path, areas=AREAS, placement=placement)
        assert verdicts(results) == namespace_verdicts
        assert leftovers(before, wait_gone) == []
        if placement == "nodes":  # the allocation's start and end reached the privileged entity (entity/slurm)
            trace = [json.loads(line) for line in (tmp_path / "privileged-entity-trace.jsonl").read_text().splitlines()]
            starts = [t["attrs"]["wlm_job"] for t in trace if t["cmd"] == "JOB_START"]
            ends = [t["attrs"]["wlm_job"] for t in trace if t["cmd"] == "JOB_END"]
            # the job ID that each node's prolog (JOB_START) and epilog (JOB_END) gave: one of each per node
            job = starts[0] if starts else None
            assert {"JOB_START": starts, "JOB_END": ends} == {"JOB_START": [job, job], "JOB_END": [job, job]}

    def test_a_pair_files_placement_reaches_run_info(self, build_dir, tmp_path):
        pair = tmp_path / "pair.yaml"
        pair.write_text(f"provider: {MANIFEST}\nplacement: containers\n")
        got = subprocess.run([sys.executable, "-m", "harness.run.run_suite", "--pair", str(pair), "--only", "msg",
                              "--report", str(tmp_path / "runs"), "--no-decode-check", "--seed", "7", "--quiet"],
                             capture_output=True, text=True, timeout=600, cwd=REPO,
                             env=dict(os.environ, UET_BUILD=str(build_dir), PYTHONPATH=str(REPO)))
        assert got.returncode == 0, got.stdout + got.stderr
        doc = json.loads(next((tmp_path / "runs").glob("*/results.json")).read_text())
        assert doc["run_info"]["placement"] == "containers"
        assert doc["summary"]["pass"] > 0 and doc["summary"]["fail"] == 0


def kill_when_the_second_case_starts(folder: pathlib.Path, area: str, kill) -> threading.Thread:
    """Runs `kill` as soon as the area's second case has started (its JSON lines say so), in a thread."""
    def watch():
        lines = folder / f"{area}.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = lines.read_text() if lines.exists() else ""
            # "<signature> <json>" (harness/run/verdict_channel.py)
            starts = [line for line in text.splitlines() if line.endswith("}") and '"event":"start"' in line]
            if len(starts) >= 2:
                kill()
                return
            time.sleep(0.005)  # a poll inside a deadline
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


class TestLostSides:
    def check(self, results, what, namespace_verdicts):
        msg = [r for r in results if r.area == "msg"]
        assert msg[0].verdict == "pass"  # ended before the loss: kept
        lost = [r for r in results if r.verdict == "error"]
        assert lost and all(what in r.reason for r in lost), [(r.case, r.reason) for r in lost]
        assert {r.verdict for r in results} <= {"pass", "not_applicable", "error"}
        # The case running at the loss, and any the binary ended after it before the harness saw the loss (a
        # teardown that found its target gone: how many depends on the machine's speed), are the placement's;
        # every later case is counted and says why it did not run; the cell went on to its next area.
        during = [r for r in lost if "placement lost a side during this case" in r.reason]
        assert during and {r.area for r in during} == {"msg"}, [(r.case, r.reason) for r in during]
        assert all("lost a side earlier in this cell" in r.reason for r in lost if r not in during)
        jobs = [r for r in results if r.area == "jobs"]
        assert len(jobs) == len([k for k in namespace_verdicts if k.startswith("jobs/")])
        assert all(r.verdict == "error" for r in jobs)

    def test_a_container_killed_mid_case(self, build_dir, tmp_path, namespace_verdicts, wait_gone):
        before = netns.list_namespaces()

        def kill():  # this process's side b only: another run's containers are not ours to kill
            image.podman("kill", *image.podman("ps", "--filter", "label=uet.side=b", "--filter",
                                               f"label=uet.owner={os.getpid()}", "--format", "{{.Names}}").stdout.split())
        watcher = kill_when_the_second_case_starts(tmp_path, "msg", kill)
        results = run_manifest(MANIFEST, build_dir, tmp_path, areas=["msg", "jobs"], placement="containers")
        watcher.join()
        self.check(results, "container uet-", namespace_verdicts)
        assert leftovers(before, wait_gone) == []

    def test_a_nodes_slurmd_killed_mid_case(self, build_dir, tmp_path, namespace_verdicts, wait_gone):
        before = netns.list_namespaces()

        def kill():  # the uetn2 of this process's cluster only: another run's nodes have the same names
            mine = [int(e.name) for e in pathlib.Path("/proc").glob("[0-9]*") if own_process(e, "slurmd -D -N uetn2")]
            assert mine, "no slurmd of this run's cluster for uetn2"
            for pid in mine:
                os.kill(pid, signal.SIGKILL)
        watcher = kill_when_the_second_case_starts(tmp_path, "msg", kill)
        results = run_manifest(MANIFEST, build_dir, tmp_path, areas=["msg", "jobs"], placement="nodes")
        watcher.join()
        self.check(results, "node uetn2's slurmd stopped", namespace_verdicts)
        assert leftovers(before, wait_gone) == []


def host_interface_manifest(folder: pathlib.Path, interface: str) -> pathlib.Path:
    """softuet's manifest, saying its provider must run on the host's `interface`."""
    doc = yaml.safe_load((REPO / "cases" / "manifests" / "softuet.yaml").read_text())
    doc["host_interface"] = interface
    manifest = folder / "host-if.yaml"
    manifest.write_text(yaml.safe_dump(doc))
    return manifest


class TestNamedProblems:
    def test_podman_missing_names_its_package(self, monkeypatch, tmp_path):
        real = shutil.which
        monkeypatch.setattr(host.shutil, "which", lambda name, **k: None if name == "podman" else real(name, **k))
        with pytest.raises(host.NamespaceError, match=r"'podman' was not found: install the Debian package podman"):
            open_placement("containers", mounts=[(str(REPO / "build"), "ro")]).__enter__()

    def test_runc_missing_names_its_package(self, monkeypatch):
        real = shutil.which
        monkeypatch.setattr(host.shutil, "which", lambda name, **k: None if name == "runc" else real(name, **k))
        with pytest.raises(host.NamespaceError, match=r"'runc' was not found: install the Debian package runc"):
            open_placement("containers", mounts=[(str(REPO / "build"), "ro")]).__enter__()

    def test_debootstrap_missing_names_its_package_when_the_image_must_be_built(self, build_dir, tmp_path, monkeypatch):
        monkeypatch.setattr(image, "STATE", tmp_path / "state")  # a storage without the image
        monkeypatch.setattr(image, "RUNROOT", tmp_path / "run")
        real = shutil.which
        monkeypatch.setattr(host.shutil, "which", lambda name, **k: None if name == "debootstrap" else real(name, **k))
        with pytest.raises(host.NamespaceError, match=r"'debootstrap' was not found: install the Debian package debootstrap"):
            image.ensure_image(build_dir, [REPO.resolve()], say=lambda s: None)

    def test_an_interface_missing_on_the_node_is_named(self, build_dir, tmp_path):
        manifest = host_interface_manifest(tmp_path, "nosuch0")
        results = run_manifest(str(manifest), build_dir, tmp_path / "out", areas=["msg"], placement="nodes")
        assert {r.verdict for r in results} == {"error"}
        assert "the capture interface nosuch0 (the manifest's host_interface) does not exist on node uetn1" in results[0].reason

    def test_a_host_interface_manifest_is_refused_by_namespaces(self, build_dir, tmp_path):
        manifest = host_interface_manifest(tmp_path, "lo")
        results = run_manifest(str(manifest), build_dir, tmp_path / "out", areas=["msg"], placement="containers")
        assert "must run on its host's interface lo (host_interface)" in results[0].reason
        assert "use --placement nodes" in results[0].reason

    # An allocation refused and an agent that does not answer are lost infrastructure (InfraError: the cell's checks
    # are infra_error and it is set up again); what the host lacks (above) is the user's to fix (an error).
    def test_an_unreachable_site_slurm_is_named(self, build_dir, tmp_path, monkeypatch):
        conf = tmp_path / "slurm.conf"
        conf.write_text("ClusterName=nowhere\nSlurmctldHost=nowhere(127.0.0.1)\nSlurmctldPort=1\n"
                        "NodeName=n1 NodeAddr=127.0.0.1\nPartitionName=p Nodes=n1 Default=YES\n")
        monkeypatch.setenv("SLURM_CONF", str(conf))
        monkeypatch.setenv("UET_SLURM_SHARED", str(tmp_path))
        with pytest.raises(InfraError, match=r"salloc -N2 failed \(1\): .*Unable to contact slurm controller.*; no "
                                                 r"allocation of two nodes from the site's Slurm \(SLURM_CONF names it\): "
                                                 r"is its controller reachable\?"):
            open_placement("nodes", mounts=[(str(build_dir), "ro")], slurm="site").__enter__()
        assert not [p for p in tmp_path.iterdir() if p.name.startswith("uet-nodes-")]

    def test_a_node_that_does_not_answer_is_named(self, build_dir, tmp_path):
        fake = tmp_path / "build"
        (fake / "bin").mkdir(parents=True)
        (fake / "bin" / "uet-agent").write_text("#!/bin/sh\nexit 3\n")
        (fake / "bin" / "uet-agent").chmod(0o755)
        with pytest.raises(InfraError, match=r"node uetn1 does not answer: its agent \(job \d+\) did not start"):
            with open_placement("nodes", mounts=[(str(fake), "ro")]):
                pass
        assert not list(pathlib.Path("/tmp").glob(f"uet-nodes-{os.getpid()}-*"))
