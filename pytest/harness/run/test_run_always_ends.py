"""Issue 26, part 1: a run always ends, with one verdict per case, whatever a case binary (or the provider
inside it) does: a case that hangs, every case hanging, an exit 0 with cases left, a crash or a hang before
any case starts. Fake case binaries speak the verdict protocol (signed lines, as cases/common/claims/verdict.cpp)
and list their cases as googletest does."""
import collections
import pathlib
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.inputs import manifest as manifest_mod  # noqa: E402
from harness.run.run_cases import Cell, CellRun  # noqa: E402
from fake_cases import fake_build, hostile_manifest  # noqa: E402

@pytest.fixture
def run_cell(tmp_path, monkeypatch, traits_line):
    """Runs the fake's cell on this host; returns its results and the launches counted."""
    launches = tmp_path / "launches"
    monkeypatch.setenv("UET_CASES_LAUNCHES", str(launches))

    def run(cases: dict, startup: str = "none", **deadlines):
        build = fake_build(tmp_path, cases, traits_line, startup)
        m = manifest_mod.load(REPO / "cases" / "manifests" / "udp.yaml")
        results = CellRun(Cell(m, m, ["fake"]), build, tmp_path / "cell", use_namespaces=False, **deadlines).run()
        # One verdict per case, whatever happened.
        assert [c for c, n in collections.Counter(r.case for r in results).items() if n > 1] == []
        count = len(launches.read_text().splitlines()) if launches.exists() else 0
        return [(r.case, r.verdict, r.reason) for r in results], count
    return run


class TestOneVerdictPerCase:
    def test_a_last_case_past_its_deadline_is_a_timeout_and_the_binary_is_not_relaunched_for_nothing(self, run_cell):
        # Before (3ef8373): the binary was relaunched, ran nothing, and the stale start line was recorded again,
        # hundreds of times a minute.
        got, launches = run_cell({"Fake.A": "pass", "Fake.B": "hang"}, case_deadline=1.0)
        assert got == [("Fake.A", "pass", None), ("Fake.B", "timeout", "no end within the case deadline of 1 s")]
        assert launches == 2  # the relaunch finds nothing left to run and says so by exiting at once

    def test_a_case_past_its_deadline_on_a_host_that_starved_it_is_inconclusive_not_a_timeout(self, run_cell):
        got, _ = run_cell({"Fake.A": "starve", "Fake.B": "pass"}, case_deadline=1.0)
        (case, verdict, reason), after = got[0], got[1:]
        assert (case, verdict) == ("Fake.A", "error")
        assert reason.startswith("inconclusive: the host was busy: no end within the case deadline of 1 s (extended by "
                                 "1.0 s) while process ")
        assert "of the case binary waited" in reason and "for a CPU (load average " in reason
        assert after == [("Fake.B", "pass", None)]

    def test_a_binary_whose_every_case_hangs_ends_its_cell_within_the_cell_s_budget(self, run_cell):
        cases = {f"Fake.C{i}": "hang" for i in range(8)}
        got, _ = run_cell(cases, case_deadline=2.0, cell_deadline=3.0)
        assert [c for c, _, _ in got] == list(cases)
        # How many cases time out before the budget runs out depends on how fast the machine starts the
        # binary; what follows does not: one case cut by the budget at most, every later one not run.
        budget = "the cell's deadline of 3 s (--cell-deadline) ran out"
        timed_out = [c for c, v, _ in got if v == "timeout"]
        assert got[0] == ("Fake.C0", "timeout", "no end within the case deadline of 2 s")
        assert timed_out == list(cases)[:len(timed_out)] and len(timed_out) <= 2
        rest = got[len(timed_out):]
        cut = [r for r in rest if r[2].startswith("not run to its end")]
        assert cut in ([], [rest[0]]) and (not cut or cut[0][1:] == ("error", f"not run to its end: budget ({budget} during this case)"))
        assert rest[len(cut):] == [(c, "error", f"not run: budget ({budget})") for c, _, _ in rest[len(cut):]]
        assert len(rest) >= 6  # cut off by the budget: not run at all, not each run to its deadline

    def test_the_run_s_deadline_ends_a_cell_before_its_own(self, run_cell):
        cases = {"Fake.A": "hang", "Fake.B": "pass"}
        got, _ = run_cell(cases, case_deadline=30.0, run_ends_at=time.monotonic() + 1.5, run_deadline=1.5)
        budget = "the run's deadline of 2 s (--run-deadline) ran out"
        assert got == [("Fake.A", "error", f"not run to its end: budget ({budget} during this case)"),
                       ("Fake.B", "error", f"not run: budget ({budget})")]

    def test_an_exit_0_with_cases_left_leaves_none_of_them_without_a_verdict(self, run_cell):
        got, launches = run_cell({"Fake.A": "pass", "Fake.B": "exit0", "Fake.C": "pass"})
        assert got == [("Fake.A", "pass", None),
                       ("Fake.B", "error", "never run: uet-cases-fake exited with status 0 before this case started"),
                       ("Fake.C", "error", "never run: uet-cases-fake exited with status 0 before this case started")]
        assert launches == 1

    def test_a_crash_before_any_case_is_one_error_per_case_and_no_relaunch(self, run_cell):
        # As a provider that segfaults in fi_getinfo at start-up.
        got, launches = run_cell({"Fake.A": "pass", "Fake.B": "pass"}, startup="segv")
        why = "uet-cases-fake exited of signal SIGSEGV outside any case"
        assert got == [("uet-cases-fake (whole binary)", "error", why),
                       ("Fake.A", "error", f"not run: {why}"), ("Fake.B", "error", f"not run: {why}")]
        assert launches == 1

    def test_a_hang_before_any_case_is_cut_at_the_case_deadline(self, run_cell):
        # As a provider that hangs in fi_domain in a binary's set-up.
        got, launches = run_cell({"Fake.A": "pass"}, startup="hang", case_deadline=1.0)
        why = "uet-cases-fake passed the case deadline outside any case"
        assert got == [("uet-cases-fake (whole binary)", "error", why), ("Fake.A", "error", f"not run: {why}")]
        assert launches == 1  # cut once at the deadline, never relaunched into the same hang


class TestRunBudget:
    def test_a_run_of_hanging_cases_ends_with_exit_1_and_counts_each_case_once(self, cmd_uet_run, results_of, tmp_path, traits_line):
        build = fake_build(tmp_path, {f"Fake.C{i}": "hang" for i in range(5)}, traits_line, area="aaa")
        run = cmd_uet_run("--provider", "udp.yaml", "--same-host", "--build", build, "--report", tmp_path / "runs",
                          "--case-deadline", "1", "--cell-deadline", "2",
                          env={"UET_CASES_LAUNCHES": str(tmp_path / "launches")})
        assert run.returncode == 1, run.stdout + run.stderr
        assert "uet run: budget: a case 1 s, a cell 2 s, the run at most 0 min;" in run.stdout
        doc = results_of(tmp_path / "runs")
        cases = [r["case"] for r in doc["results"]]
        assert cases == [f"Fake.C{i}" for i in range(5)]
        assert doc["summary"]["timeout"] + doc["summary"]["error"] == 5
        assert sum("not run: budget" in r["reason"] or "budget (" in r["reason"] for r in doc["results"]) >= 3

    @pytest.mark.parametrize("option", ["--cell-deadline", "--run-deadline"])
    @pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "86401"])
    def test_a_deadline_that_is_not_one_is_usage(self, cmd_uet_run, option, value):
        run = cmd_uet_run("--provider", "udp.yaml", option, value, "--check-usage", timeout=30)
        assert run.returncode == 2
        assert f"{option} {float(value)} is not a deadline: give seconds, more than 0 and at most 86400" in run.stderr


class TestHostileProvider:
    @pytest.mark.parametrize("mode, reason", [
        ("getinfo-segv", "the case binary died of signal SIGSEGV"),
        ("domain-hang", "no end within the case deadline of 2 s")])
    def test_a_run_against_a_provider_that_crashes_or_hangs_ends_within_its_budget(
            self, hostile_provider, processes_mapping, cmd_uet_run, results_of, tmp_path, mode, reason):
        manifest = hostile_manifest(tmp_path, hostile_provider, mode)
        run = cmd_uet_run("--provider", manifest, "--same-host", "--report", tmp_path / "runs", "--case-deadline", "2",
                          "--cell-deadline", "15", "--quiet")
        assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
        doc = results_of(tmp_path / "runs")
        keys = [(r["area"], r["case"]) for r in doc["results"]]
        assert len(keys) == len(set(keys)), "a case has two verdicts"
        assert doc["summary"]["pass"] == 0 and reason in {r["reason"] for r in doc["results"]}
        assert processes_mapping(hostile_provider / "libhostile-fi.so") == [], "a process of the run is left behind"

    def test_the_daemons_a_provider_leaves_behind_end_with_the_run_on_the_same_host(
            self, hostile_provider, processes_mapping, cmd_uet_run, tmp_path, wait_gone):
        # The provider makes a daemon at its first fi_getinfo in each process (the probe's fi_info, each case
        # binary): forked twice, in a session of its own. Each is in its command's cgroup all the same.
        pids = tmp_path / "daemons"
        manifest = hostile_manifest(tmp_path, hostile_provider, "getinfo-daemon", HOSTILE_PROVIDER_PIDS=pids)
        run = cmd_uet_run("--provider", manifest, "--same-host", "--only", "discovery", "--report", tmp_path / "runs",
                          "--case-deadline", "20", "--quiet")
        assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
        left = [int(pid) for pid in pids.read_text().split()]
        assert len(left) >= 2, "the provider made no daemon in the probe or the binary: the test proves nothing"
        assert [pid for pid in left if not wait_gone(pid)] == []
        assert processes_mapping(hostile_provider / "libhostile-fi.so") == []

    def test_a_provider_that_hangs_in_fi_getinfo_is_a_finding_not_a_usage_error(self, hostile_provider, tmp_path,
                                                                               monkeypatch, build_dir,
                                                                               processes_mapping):
        from harness.inputs import run_info
        monkeypatch.setattr(run_info, "PROBE_TIMEOUT_S", 2.0)
        for mode, said in (("getinfo-hang", ("broken", "fi_getinfo did not answer within 2 s")),
                           ("getinfo-segv", ("broken", "fi_info died of signal 11 in fi_getinfo"))):
            m = manifest_mod.load(hostile_manifest(tmp_path, hostile_provider, mode))
            assert run_info.probe_provider(m, build_dir) == said
        assert processes_mapping(hostile_provider / "libhostile-fi.so") == []
