"""Shared credentials (after Cray's DRC): acquire, grant and revoke by uid, gid or job, access and its
references, release, limits, job ends and reconciliation after a restart, tokens, node-insecure, and the
uet-cred CLI's errors. A process's job is what the entity finds above it: a root-owned Slurm step daemon
(the fixture's `job=` stands one up) or a process the workload manager named in JOB_START."""
import re
import subprocess

import pytest

from harness.run.entity import EntityError

USER = 4242
OTHER = 4343
GROUP = 4500


def ok(r):
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def acquire(entity, *flags, **who):
    cred, job_id = ok(entity.run_cred("acquire", *flags, **who))
    return int(cred), int(job_id)


def listed(entity):
    lines = ok_lines(entity.run_cred("list"))
    return {int(f[0]): dict(zip(["cred", "job_id", "uid", "gid", "job", "flags", "refs", "state"], f[:8]),
                            grants=" ".join(f[8:])) for f in (line.split() for line in lines[1:])}


def ok_lines(r):
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


class TestAcquireAndGrant:
    def test_the_acquirer_is_granted_and_gets_a_jobid_of_the_credentials_range(self, entity):
        cred, job_id = acquire(entity, user=USER)
        assert job_id == 0xC00000
        assert ok(entity.run_cred("access", "--cred", cred, user=USER)) == [str(job_id)]
        row = listed(entity)[cred]
        assert (row["uid"], row["grants"], row["state"]) == (str(USER), f"uid:{USER}", "active")

    def test_another_user_is_refused_until_granted_by_uid_gid_or_job(self, entity):
        cred, job_id = acquire(entity, user=USER)
        r = entity.run_cred("access", "--cred", cred, user=OTHER)
        assert r.returncode == 1 and f"is not granted to pid" in r.stderr and f"uid {OTHER}" in r.stderr
        ok(entity.run_cred("grant", "--cred", cred, "--gid", GROUP, user=USER))
        assert entity.run_cred("access", "--cred", cred, user=OTHER).returncode == 1  # not in the group
        assert ok(entity.run_cred("access", "--cred", cred, user=OTHER, groups=[GROUP])) == [str(job_id)]
        cred2, job2 = acquire(entity, user=USER)
        ok(entity.run_cred("grant", "--cred", cred2, "--job", 77, user=USER))
        assert entity.run_cred("access", "--cred", cred2, user=OTHER, job=78).returncode == 1
        assert ok(entity.run_cred("access", "--cred", cred2, user=OTHER, job=77)) == [str(job2)]

    def test_only_the_acquirer_or_root_changes_the_access_list(self, entity):
        cred, _ = acquire(entity, user=USER)
        r = entity.run_cred("grant", "--cred", cred, "--uid", OTHER, user=OTHER)
        assert r.returncode == 1 and f"was acquired by uid {USER}" in r.stderr
        ok(entity.run_cred("grant", "--cred", cred, "--uid", OTHER))  # root

    def test_revoke_stops_new_access_and_a_held_reference_keeps_working(self, entity):
        cred, job_id = acquire(entity, user=USER)
        ok(entity.run_cred("grant", "--cred", cred, "--job", 9, user=USER))
        assert ok(entity.run_cred("access", "--cred", cred, user=OTHER, job=9)) == [str(job_id)]
        ok(entity.run_cred("revoke", "--cred", cred, "--job", 9, user=USER))
        r = entity.run_cred("access", "--cred", cred, user=OTHER, job=9)
        assert r.returncode == 1 and "is not granted" in r.stderr
        assert listed(entity)[cred]["refs"] == "1"  # job 9's earlier reference stays until the job ends
        r = entity.run_cred("revoke", "--cred", cred, "--job", 9, user=USER)
        assert r.returncode == 1 and "job 9 is not on the access list" in r.stderr

    def test_access_with_a_service_maps_the_jobid_for_endpoints_until_the_job_ends(self, entity):
        cred, job_id = acquire(entity, user=USER)
        ok(entity.run_cred("grant", "--cred", cred, "--job", 5, user=USER))
        ok(entity.run_cred("access", "--cred", cred, "--service", "svc", user=OTHER, job=5))
        maps = entity.run_ctl("list").stdout.split()
        assert maps[1:] == ["svc", str(job_id)]
        ok(entity.run_cred("job-end", "--job", 5))
        assert entity.run_ctl("list").stdout == ""
        assert listed(entity)[cred]["refs"] == "0"


class TestLimits:
    @pytest.mark.parametrize("scope,id_args,who,says", [
        ("global", [], {}, "the global limit is 2"),
        ("user", [], {}, f"the user limit (every uid's) is 2 credential(s), and 2 are held by uid {USER}"),
        ("user", ["--id", USER], {}, f"the user limit of uid {USER} is 2"),
        ("group", ["--id", USER], {}, f"the group limit of gid {USER} is 2"),
        ("job", [], {"job": 31}, "the job limit (every job's) is 2 credential(s), and 2 are held by job 31"),
        ("job", ["--id", 31], {"job": 31}, "the job limit of job 31 is 2"),
    ])
    def test_each_limit_refuses_the_next_acquire_and_names_itself(self, entity, scope, id_args, who, says):
        ok(entity.run_cred("limit", scope, 2, *id_args))
        for _ in range(2):
            acquire(entity, user=USER, **who)
        r = entity.run_cred("acquire", user=USER, **who)
        assert r.returncode == 1 and says in r.stderr, r.stderr
        assert len(listed(entity)) == 2

    def test_limits_are_checked_independently(self, entity):
        ok(entity.run_cred("limit", "user", 10))
        ok(entity.run_cred("limit", "user", 1, "--id", USER))
        acquire(entity, user=USER)
        assert entity.run_cred("acquire", user=USER).returncode == 1      # its own limit
        acquire(entity, user=OTHER)
        acquire(entity, user=OTHER)                                       # the default allows others more

    def test_only_root_sets_limits(self, entity):
        r = entity.run_cred("limit", "global", 1, user=USER)
        assert r.returncode == 1 and "needs the administrator" in r.stderr


class TestRelease:
    def test_a_released_credential_goes_with_its_last_reference(self, entity):
        cred, _ = acquire(entity, "--persistent", user=USER)
        ok(entity.run_cred("grant", "--cred", cred, "--job", 3, user=USER))
        ok(entity.run_cred("access", "--cred", cred, user=OTHER, job=3))
        ok(entity.run_cred("release", "--cred", cred, "--full", user=USER))
        assert listed(entity)[cred]["state"] == "released"
        r = entity.run_cred("access", "--cred", cred, user=OTHER, job=3)
        assert r.returncode == 1 and f"no credential {cred}" in r.stderr
        ok(entity.run_cred("release", "--cred", cred, "--local", user=OTHER, job=3))
        assert cred not in listed(entity)

    def test_only_the_acquirer_gives_it_up_and_a_release_needs_a_reference(self, entity):
        cred, _ = acquire(entity, user=USER)
        r = entity.run_cred("release", "--cred", cred, "--full", user=OTHER)
        assert r.returncode == 1 and "may not give it up" in r.stderr
        r = entity.run_cred("release", "--cred", cred, user=USER)
        assert r.returncode == 1 and "holds no reference" in r.stderr

    def test_a_reference_of_a_process_in_no_job_goes_with_the_process(self, entity):
        cred, _ = acquire(entity, user=USER)
        ok(entity.run_cred("access", "--cred", cred, user=USER))  # the process exits holding it
        ok(entity.run_cred("grant", "--cred", cred, "--job", 4, user=USER))
        # Not node-insecure: a live holder of another job would make this EBUSY; a dead one does not.
        ok(entity.run_cred("access", "--cred", cred, user=OTHER, job=4))


class TestJobs:
    def test_a_job_end_drops_its_references_and_its_credentials_not_persistent(self, entity):
        transient, _ = acquire(entity, user=USER, job=12)
        persistent, _ = acquire(entity, "--persistent", user=USER, job=12)
        for cred in (transient, persistent):
            ok(entity.run_cred("access", "--cred", cred, user=USER, job=12))
        ok(entity.run_cred("job-end", "--job", 12))
        rows = listed(entity)
        assert transient not in rows
        assert rows[persistent]["refs"] == "0" and rows[persistent]["state"] == "active"

    def test_a_job_end_withdraws_the_maps_the_launcher_made_for_it(self, entity):
        ok(entity.run_ctl("map", "--pid", 4001, "--service", "svc", "--job", 7, "--wlm-job", 70))
        ok(entity.run_ctl("map", "--pid", 4001, "--service", "svc", "--job", 8))            # no job: stays
        ok(entity.run_ctl("map", "--pid", 4002, "--service", "svc", "--job", 9, "--wlm-job", 71))
        ok(entity.run_cred("job-end", "--job", 70))
        assert entity.run_ctl("list").stdout.split() == ["4001", "svc", "8", "4002", "svc", "9"]
        ok(entity.run_cred("jobs-active"))                                                  # 71 ended too
        assert entity.run_ctl("list").stdout.split() == ["4001", "svc", "8"]

    def test_after_a_restart_jobs_that_ended_meanwhile_are_reconciled(self, entity, tmp_path):
        cred, _ = acquire(entity, "--persistent", "--node-insecure", user=USER)
        for job in (21, 22):
            ok(entity.run_cred("grant", "--cred", cred, "--job", job, user=USER))
            ok(entity.run_cred("access", "--cred", cred, user=OTHER, job=job))
        assert listed(entity)[cred]["refs"] == "2"
        entity.kill9()
        active = tmp_path / "squeue"
        active.write_text("#!/bin/sh\necho 22\n")
        active.chmod(0o755)
        entity.args = ["--active-jobs", str(active)]
        entity.start()
        assert listed(entity)[cred]["refs"] == "1"
        assert "1 ended job(s) dropped" in entity.log.read_text()
        ok(entity.run_cred("jobs-active"))  # none runs any more
        assert listed(entity)[cred]["refs"] == "0"

    def test_a_failing_job_list_stops_the_start_and_reconciles_nothing(self, entity):
        entity.stop()
        entity.args = ["--active-jobs", "false"]
        with pytest.raises(EntityError, match="exited 3"):
            entity.start()
        assert "failed; nothing was reconciled" in entity.log.read_text()

    def test_processes_named_by_job_start_and_their_children_are_in_the_job(self, entity):
        holder = subprocess.Popen(["sh", "-c", f"read go; {entity.cred} --socket {entity.socket} access --cred 1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        cred, job_id = acquire(entity, user=USER)
        ok(entity.run_cred("grant", "--cred", cred, "--job", 61, user=USER))
        ok(entity.run_cred("job-start", "--job", 61, "--pid", holder.pid))
        out, err = holder.communicate("go\n", timeout=10)
        assert (holder.returncode, out.split()) == (0, [str(job_id)]), err
        assert listed(entity)[cred]["job"] == "0" and listed(entity)[cred]["refs"] == "1"


class TestNodeInsecure:
    def test_two_jobs_share_a_credential_on_a_node_only_when_it_is_node_insecure(self, entity):
        for flags, second in ((), 1), (("--node-insecure",), 0):
            cred, _ = acquire(entity, *flags, user=USER)
            ok(entity.run_cred("grant", "--cred", cred, "--job", 41, user=USER))
            ok(entity.run_cred("grant", "--cred", cred, "--job", 42, user=USER))
            ok(entity.run_cred("access", "--cred", cred, user=OTHER, job=41))
            r = entity.run_cred("access", "--cred", cred, user=OTHER, job=42)
            assert r.returncode == second, r.stderr
            if second:
                assert "in use on this node by job 41" in r.stderr
            ok(entity.run_cred("job-end", "--job", 41))
            ok(entity.run_cred("job-end", "--job", 42))


class TestTokens:
    def token(self, entity, job):
        cred, job_id = acquire(entity, user=USER)
        ok(entity.run_cred("grant", "--cred", cred, "--job", job, user=USER))
        out = ok(entity.run_cred("access", "--cred", cred, "--token", user=OTHER, job=job))
        assert out[0] == str(job_id) and re.fullmatch(r"[0-9a-f]{106}", out[1])
        return job_id, out[1]

    def test_a_process_of_the_job_accesses_with_the_token_and_no_entity(self, entity):
        job_id, token = self.token(entity, 51)
        entity.stop()
        key = entity.folder / "token.key"
        assert oct(key.stat().st_mode & 0o777) == "0o600"
        assert ok(entity.run_cred("token-access", "--token", token, job=51)) == [str(job_id)]

    def test_a_token_replayed_by_another_job_or_changed_is_refused(self, entity):
        _, token = self.token(entity, 52)
        r = entity.run_cred("token-access", "--token", token, job=53)
        assert r.returncode == 1 and "the token is job 52's; the caller runs in job 53" in r.stderr
        r = entity.run_cred("token-access", "--token", token)
        assert r.returncode == 1 and "the caller runs in no job" in r.stderr
        forged = token[:2] + "ff" + token[4:]
        r = entity.run_cred("token-access", "--token", forged, job=52)
        assert r.returncode == 1 and "not made by this entity or was changed" in r.stderr

    def test_a_token_is_for_a_job(self, entity):
        cred, _ = acquire(entity, user=USER)
        r = entity.run_cred("access", "--cred", cred, "--token", user=USER)
        assert r.returncode == 1 and "a token is for the processes of one job" in r.stderr


class TestCli:
    def test_exit_codes_say_refused_bad_usage_or_no_entity(self, entity, tmp_path):
        assert entity.run_cred("access", "--cred", 99).returncode == 1
        r = entity.run_cred("grant", "--cred", 1)
        assert r.returncode == 2 and "Exactly 1 option from [--uid,--gid,--job]" in r.stderr
        r = entity.run_cred("limit", "planet", 1)
        assert r.returncode == 2 and "planet" in r.stderr
        r = entity.run_cred("token-access", "--token", "xyz", job=1)
        assert r.returncode == 2 and "not hex" in r.stderr
        entity.stop()
        r = entity.run_cred("list")
        assert r.returncode == 3 and "no privileged entity answers at" in r.stderr
