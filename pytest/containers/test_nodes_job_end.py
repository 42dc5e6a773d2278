"""The nodes placement's cell ends only once every node's epilog has told the privileged entity that the job
ended (issue 33: TestSameVerdicts[nodes] saw JOB_START [1, 1] against JOB_END [1]: both nodes' prologs of
job 1, and only one epilog).

The cause: the placement's end closed its agents' leases, which ends the agents and so their Slurm steps,
and only then asked whether a side was lost, to skip the wait for the job's end when a slurmd has stopped.
A step that had ended by then counted as lost, no wait, and the cluster stopped while the other node's step
was still being ended, before that node's epilog. Here one agent's step ends first, every time, and the other
is still running when the placement ends."""
import json
import os
import pathlib
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from containers.nodes import Nodes  # noqa: E402
from containers.slurm import missing_binaries  # noqa: E402
from harness.run.entity import suite_entity  # noqa: E402

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="the nodes placement starts slurmd and namespaces (root)"),
              pytest.mark.skipif(bool(missing_binaries()), reason="Slurm is not installed (./uet setup installs it)")]


def job_events(trace: pathlib.Path) -> dict[str, list[int]]:
    events = {"JOB_START": [], "JOB_END": []}
    for line in trace.read_text().splitlines():
        t = json.loads(line)
        if t["cmd"] in events:
            events[t["cmd"]].append(t["attrs"]["wlm_job"])
    return events


def test_every_epilog_reaches_the_entity_after_one_agents_step_ended(build_dir, tmp_path):
    with suite_entity(build_dir, tmp_path / "entity.log") as sock:
        place = Nodes(mounts=[(str(build_dir), "ro")], entity_socket=sock)
        place.__enter__()
        try:
            job = int(place.job)
            first = place.leases.pop(0)  # side a's agent ends with its lease, and its step with it
            first.close()
            end = time.monotonic() + 120  # against a hang only
            while place.steps["a"].poll() is None:
                assert time.monotonic() < end, "side a's step did not end when its agent's lease closed"
                time.sleep(0.05)  # a poll inside a deadline
            assert place.steps["b"].poll() is None and place.lost(), "one step ended, the other runs"
        finally:
            place.__exit__(None, None, None)
    # one JOB_START from each node's prolog and one JOB_END from each node's epilog, all of this job
    assert job_events(tmp_path / "entity-trace.jsonl") == {"JOB_START": [job, job], "JOB_END": [job, job]}
