"""The entity with a real Slurm as the workload manager (containers/slurm.py: munged, slurmctld and slurmd of
the test's own): Slurm's prolog and epilog (entity/slurm/) tell the entity when jobs start and end, the
entity finds a job's processes by their Slurm step daemon, and a restarted entity reconciles with squeue."""
import pathlib
import shutil
import tempfile

import pytest

from containers.slurm import SlurmCluster, missing_binaries

HOOKS = pathlib.Path(__file__).resolve().parents[2] / "entity" / "slurm"


@pytest.fixture
def slurm(entity):
    missing = missing_binaries()
    if missing:
        pytest.skip(f"Slurm is not installed ({', '.join(missing)} missing; setup/packages.txt lists slurm-wlm)")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="uet-slurm-"))
    folder.chmod(0o755)
    cluster = SlurmCluster(folder, prolog=str(HOOKS / "uet-prolog"), epilog=str(HOOKS / "uet-epilog"),
                           hook_env={"UET_CRED": str(entity.cred), "UET_ENTITY_SOCKET": str(entity.socket)})
    try:
        yield cluster.start()
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


def refs(entity, cred):
    r = entity.run_cred("list")
    assert r.returncode == 0, r.stderr
    for line in r.stdout.splitlines()[1:]:
        f = line.split()
        if f[0] == str(cred):
            return int(f[6]), f[4]
    return None


def job_script(entity, slurm, body):
    """A job that runs `body` (uet-cred as $CRED), writes 'ready' and then waits for the test's 'go' file."""
    go = slurm.folder / f"go-{len(list(slurm.folder.glob('go-*')))}"
    return go, (f"CRED='{entity.cred} --socket {entity.socket}'; {body}; echo ready; "
                f"while [ ! -e {go} ]; do sleep 0.05; done")


def output(slurm, job):
    path = slurm.folder / f"job-{job}.out"
    return path.read_text() if path.exists() else ""


class TestSlurmJobs:
    def test_a_jobs_reference_lives_while_the_job_runs_and_goes_at_its_end(self, entity, slurm):
        cred, job_id = map(int, entity.run_cred("acquire", "--persistent").stdout.split())
        go, script = job_script(entity, slurm, f"$CRED access --cred {cred} --service svc")
        job = slurm.submit(script)
        slurm.wait_for(lambda: "ready" in output(slurm, job), f"job {job} to access")
        assert output(slurm, job).split()[0] == str(job_id)
        assert refs(entity, cred) == (1, "0")
        maps = entity.run_ctl("list").stdout.split()
        assert maps[1:] == ["svc", str(job_id)]
        go.touch()
        slurm.wait_for(lambda: refs(entity, cred) == (0, "0"), f"job {job}'s epilog to drop its reference")
        assert entity.run_ctl("list").stdout == ""

    def test_a_cancelled_jobs_credentials_not_persistent_go(self, entity, slurm):
        go, script = job_script(entity, slurm, "$CRED acquire")
        job = slurm.submit(script)
        slurm.wait_for(lambda: "ready" in output(slurm, job), f"job {job} to acquire")
        cred = int(output(slurm, job).split()[0])
        assert entity.run_cred("list", "--job", job).stdout.split()[9:11] == [str(cred), str(0xC00000)]
        assert slurm.run("scancel", str(job)).returncode == 0
        slurm.wait_for(lambda: refs(entity, cred) is None, f"cancelled job {job}'s credential to go")

    def test_a_token_works_in_its_job_and_is_refused_in_another(self, entity, slurm):
        cred, job_id = map(int, entity.run_cred("acquire", "--persistent").stdout.split())
        entity.run_cred("grant", "--cred", cred, "--uid", 0)
        go, script = job_script(entity, slurm, f"$CRED access --cred {cred} --token; "
                                                "srun -n1 $CRED token-access --token $($CRED access --cred "
                                                f"{cred} --token | tail -1)")
        job = slurm.submit(script)
        slurm.wait_for(lambda: "ready" in output(slurm, job), f"job {job} to access")
        lines = output(slurm, job).split()
        token = lines[1]
        assert lines[0] == lines[2] == str(job_id)  # the job's second step accepted the token
        other = slurm.submit(f"{entity.cred} token-access --token {token} --key {entity.folder}/token.key; echo rc=$?")
        slurm.wait_for(lambda: "rc=" in output(slurm, other), f"job {other}")
        assert f"the token is job {job}'s; the caller runs in job {other}" in output(slurm, other)
        assert "rc=1" in output(slurm, other)
        go.touch()

    def test_a_restarted_entity_drops_the_references_of_jobs_that_ended_while_it_was_away(self, entity, slurm):
        cred, _ = map(int, entity.run_cred("acquire", "--persistent").stdout.split())
        go, script = job_script(entity, slurm, f"$CRED access --cred {cred}")
        job = slurm.submit(script)
        slurm.wait_for(lambda: "ready" in output(slurm, job), f"job {job} to access")
        entity.kill9()
        go.touch()
        slurm.wait_for(lambda: slurm.ended(job), f"job {job} to end")
        entity.args = ["--active-jobs", f"env SLURM_CONF={slurm.conf} squeue -h -t PD,CF,R,S -o %A"]
        entity.start()
        assert refs(entity, cred) == (0, "0")
        assert "1 ended job(s) dropped" in entity.log.read_text()
