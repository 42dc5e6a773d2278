"""Issue 37, item 3: infrastructure errors are their own verdict. A placement that cannot set up a side before
any of the cell's provider code ran makes each check it kept from running `infra_error` (containers/placement.py
InfraError), the cell is set up again (--infra-retries, 1 by default) with the same seed, and what is still lost
is counted apart: results.json's summary, the JUnit (an <error type="infra_error">), the report, the console's
last line, the exit status (4 when nothing else failed), the conformance statement (never not met) and ./uet compare
(never a regression). A provider that crashes, or that ends its own placement, stays `error`.

The lost infrastructure is real: an `ip` first on PATH whose `netns add` fails as the kernel refuses a
namespace (FaultyIp), once or every time; the rest goes to the real ip."""
import collections
import datetime
import os
import pathlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from fake_cases import fake_build, hostile_manifest
from containers import agent_client, choice
from containers.placement import Placement
from harness.inputs import manifest as manifest_mod
from harness.results import conformance_statement, expectations
from harness.results.results import Result, result_of_line
from harness.run import attempts
from harness.run.run_cases import Cell, CellRun
from harness.trends import ci_summary, compare

REPO = pathlib.Path(__file__).resolve().parents[3]
REFUSAL = "Cannot create namespace file /run/netns/{}: No space left on device"


class FaultyIp:
    """A host whose namespaces cannot always be made: an `ip` first on PATH whose `netns add` fails, once
    (refuse("once"): a transient loss, the next set-up works) or every time (refuse("always")); anything else
    goes to the real ip. `refused` counts the refusals; `env` is the PATH that puts it first."""

    def __init__(self, folder: pathlib.Path):
        self.folder = folder
        real = shutil.which("ip", path="/usr/sbin:/sbin:/usr/bin:/bin")
        # The rename takes the one refusal of "once" atomically: of two set-ups at once, one fails.
        (folder / "ip").write_text(f"""#!/bin/sh
if [ "$1 $2" = "netns add" ] && {{ [ -e '{folder}/always' ] || mv '{folder}/once' '{folder}/once.taken' 2>/dev/null; }}; then
  echo "$3" >> '{folder}/refused'
  echo "{REFUSAL.format('$3')}" >&2
  exit 1
fi
exec '{real}' "$@"
""")
        (folder / "ip").chmod(0o755)
        self.env = {"PATH": f"{folder}:{os.environ.get('PATH', '')}"}

    def refuse(self, how: str) -> None:
        (self.folder / how).write_text("")

    @property
    def refused(self) -> list[str]:
        path = self.folder / "refused"
        return path.read_text().split() if path.exists() else []


@pytest.fixture
def faulty_ip(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("namespaces need root")
    return FaultyIp(tmp_path_factory.mktemp("faulty-ip"))


@pytest.fixture
def namespaces_cell(tmp_path, monkeypatch, traits_line, faulty_ip):
    """Runs a fake binary's cell in the namespaces placement on a host whose `ip` is faulty_ip's; returns
    (case, verdict, reason) of each result and how many times the binary was launched."""
    launches = tmp_path / "launches"
    monkeypatch.setenv("UET_CASES_LAUNCHES", str(launches))
    monkeypatch.setenv("PATH", faulty_ip.env["PATH"])

    def run(cases: dict, startup: str = "none", **options):
        build = fake_build(tmp_path, cases, traits_line, startup)
        m = manifest_mod.load(REPO / "cases" / "manifests" / "udp.yaml")
        results = CellRun(Cell(m, m, ["fake"]), build, tmp_path / "cell", placement="namespaces", **options).run()
        count = len(launches.read_text().splitlines()) if launches.exists() else 0
        return [(r.case, r.verdict, r.reason) for r in results], count
    return run


class AgentGone(Placement):
    """Both sides on this host, each binary started through an agent: from the `after`-th start on, one that
    answers nowhere (a socket nobody listens at, as an agent whose node is gone)."""
    name = "agent-gone"
    after = 0
    starts = 0

    def start(self, argv, env, output, inputs=None):
        AgentGone.starts += 1
        if AgentGone.starts <= self.after:
            return super().start(argv, env, output, inputs)
        nowhere = pathlib.Path(output).parent / "gone.sock"
        return agent_client.AgentProcess(f"unix:{nowhere}", argv, env, secret="x", output=output, inputs=inputs,
                                         timeout=0.5)


@pytest.fixture
def agent_gone(monkeypatch, tmp_path, traits_line):
    """Runs a fake two-area cell in AgentGone, whose agent stops answering after `after` starts."""
    monkeypatch.setitem(choice.CLASSES, AgentGone.name, AgentGone)
    monkeypatch.setenv("UET_CASES_LAUNCHES", str(tmp_path / "launches"))

    def run(after: int):
        monkeypatch.setattr(AgentGone, "after", after)
        monkeypatch.setattr(AgentGone, "starts", 0)
        for area in ("one", "two"):
            build = fake_build(tmp_path, {"Fake.A": "pass"}, traits_line, area=area)
        m = manifest_mod.load(REPO / "cases" / "manifests" / "udp.yaml")
        results = CellRun(Cell(m, m, ["one", "two"]), build, tmp_path / "cell", placement=AgentGone.name).run()
        return [(r.area, r.verdict, r.reason) for r in results]
    return run


class TestWhereItIsRaised:
    def test_an_agent_that_does_not_answer_before_any_case_ran_is_an_infra_error(self, agent_gone):
        got = agent_gone(after=0)
        assert [(area, verdict) for area, verdict, _ in got] == [("one", "infra_error"), ("two", "infra_error")]
        assert got[0][2].startswith("could not start uet-cases-one in the agent-gone placement: the agent at unix:")
        assert got[0][2].endswith("gone.sock did not answer within 0.5 s: [Errno 2] No such file or directory")

    def test_an_agent_lost_once_a_case_binary_ran_is_an_error(self, agent_gone):
        # The provider ran in the placement: it may have ended the agent itself.
        got = agent_gone(after=1)
        assert [(area, verdict) for area, verdict, _ in got] == [("one", "pass"), ("two", "error")]

    def test_a_namespace_the_host_cannot_make_is_an_infra_error_and_nothing_ran(self, namespaces_cell, faulty_ip):
        faulty_ip.refuse("always")
        got, launches = namespaces_cell({"Fake.A": "pass"})
        [(case, verdict, reason)] = got
        lost = faulty_ip.refused[0]
        assert (case, verdict) == ("uet-cases-fake (whole binary)", "infra_error")
        assert reason.startswith("the namespaces placement could not be made: the namespace pair could not be set "
                                 f"up: netns add {lost} failed (1): ")
        assert reason.endswith(REFUSAL.format(lost))
        assert launches == 0

    def test_a_provider_that_crashes_at_start_up_stays_an_error(self, namespaces_cell, faulty_ip):
        got, launches = namespaces_cell({"Fake.A": "pass"}, startup="segv")
        why = "uet-cases-fake exited of signal SIGSEGV outside any case"
        assert got == [("uet-cases-fake (whole binary)", "error", why), ("Fake.A", "error", f"not run: {why}")]
        assert (launches, faulty_ip.refused) == (1, [])

    def test_a_provider_that_deletes_its_own_namespace_cannot_make_an_infra_error(self, namespaces_cell):
        # The provider runs as root in its namespace: a side lost once it ran may be its own doing, so the
        # case it was in and the cases after it stay errors (never infra_error, which would not count against it).
        got, _ = namespaces_cell({"Fake.A": "pass", "Fake.B": "lose-namespace", "Fake.C": "pass"})
        verdicts = [(case, verdict) for case, verdict, _ in got]
        assert verdicts == [("Fake.A", "pass"), ("Fake.B", "error"), ("Fake.C", "error")]
        assert "the namespaces placement lost a side during this case: namespace " in got[1][2]
        assert got[2][2].startswith("not run: the namespaces placement lost a side earlier in this cell (namespace ")

    def test_a_case_binary_that_says_infra_error_gets_an_error(self, namespaces_cell):
        got, _ = namespaces_cell({"Fake.A": "says-infra-error"})
        assert got == [("Fake.A", "error", "the case binary reported 'infra_error', a verdict only the harness gives")]


def lost(ident: str, verdict: str = "infra_error") -> Result:
    cell, area, case = ident.split("/", 2)
    return Result(cell, area, f"uet-cases-{area}", case, verdict, reason="lost" if verdict == "infra_error" else None)


class TestRetryOnSyntheticAttempts:
    """attempts.retry_infra on results made with the results model; run_again stands for a pass of the cells."""

    @staticmethod
    def plan():
        m1 = manifest_mod.load(REPO / "cases" / "manifests" / "udp.yaml")
        m2 = manifest_mod.load(REPO / "cases" / "manifests" / "softuet.yaml")
        return [(0, Cell(m1, m1, ["authz", "msg"]), "*"), (1, Cell(m2, m2, ["authz"]), "*")]

    def test_a_transient_loss_is_run_again_once_and_replaced(self):
        plan = self.plan()
        first = [lost("udp/authz/uet-cases-authz (whole binary)"), lost("udp/msg/uet-cases-msg (whole binary)"),
                 lost("softuet/authz/A", "pass")]
        asked = []

        def run_again(entries):
            asked.append([(i, c.id, c.areas, f) for i, c, f in entries])
            return [lost("udp/authz/A", "pass"), lost("udp/msg/B", "fail")]
        results, tries = attempts.retry_infra(first, plan, retries=1, stop=_Never(), run_again=run_again, say=print)
        assert asked == [[(0, "udp", ["authz", "msg"], "*")]]
        assert [(r.id, r.verdict) for r in results] == [("softuet/authz/A", "pass"), ("udp/authz/A", "pass"),
                                                        ("udp/msg/B", "fail")]
        assert tries == {"udp": 2, "softuet": 1}

    def test_a_permanent_loss_stays_infra_error_after_its_retries(self):
        plan = self.plan()
        first = [lost("udp/authz/uet-cases-authz (whole binary)")]
        results, tries = attempts.retry_infra(first, plan, retries=2, stop=_Never(), say=print,
                                              run_again=lambda entries: [lost("udp/authz/uet-cases-authz (whole binary)")])
        assert [(r.id, r.verdict) for r in results] == [("udp/authz/uet-cases-authz (whole binary)", "infra_error")]
        assert tries == {"udp": 3, "softuet": 1}

    def test_no_retry_with_0(self):
        first = [lost("udp/authz/uet-cases-authz (whole binary)")]
        results, tries = attempts.retry_infra(first, self.plan(), retries=0, stop=_Never(), say=print,
                                              run_again=lambda entries: pytest.fail("run again with --infra-retries 0"))
        assert (results, tries) == (first, {"udp": 1, "softuet": 1})

    def test_an_attempt_lost_to_the_infrastructure_says_nothing_of_the_check(self):
        assert attempts.classify(["infra_error", "pass"]) == "pass"
        assert attempts.classify(["infra_error", "fail", "pass"]) == "flaky"
        assert attempts.classify(["infra_error", "infra_error"]) == "infra_error"


class _Never:
    @staticmethod
    def is_set():
        return False


class TestCountedApart:
    @pytest.mark.parametrize("summary, failed, status", [
        ({"infra_error": 2}, False, 4), ({"infra_error": 2}, True, 1), ({"infra_error": 0}, False, 0), ({}, True, 1)])
    def test_the_exit_status(self, summary, failed, status):
        assert ci_summary.exit_status(summary, failed) == status

    @pytest.mark.parametrize("verdicts, status", [
        (["infra_error"], "not_observed"), (["infra_error", "pass"], "inconclusive"),
        (["infra_error", "fail"], "not_met"), (["infra_error", "not_applicable"], "inconclusive")])
    def test_a_statement_is_never_not_met_by_an_infra_error(self, verdicts, status):
        assert conformance_statement.status_of("MUST", collections.Counter(verdicts)) == status

    def test_compare_counts_it_apart_and_never_as_a_regression(self):
        old = {"results": [lost("c/a/X", "pass").as_dict(), lost("c/a/Y", "fail").as_dict()]}
        new = {"results": [lost("c/a/X").as_dict(), lost("c/a/Y").as_dict()]}
        c = compare.compare(old, new)
        assert [(x["id"], x["old"], x["new"]) for x in c["infra_errors"]] == [("c/a/X", "pass", "infra_error"),
                                                                             ("c/a/Y", "fail", "infra_error")]
        assert (c["regressions"], c["fixes"], c["exit_status"]) == ([], [], 0)

    def test_an_expectation_says_nothing_of_a_check_that_did_not_run_and_is_not_stale(self, tmp_path):
        path = tmp_path / "x.yaml"
        path.write_text("expectations:\n  - match: 'c/a/X'\n    expect: fail\n    reason: known\n    link: https://x/1\n"
                        "    owner: lab\n    expires: 2099-01-01\n")
        results = [lost("c/a/X").as_dict()]
        block = expectations.apply(expectations.load(path), results, datetime.date(2026, 1, 1))
        assert results[0]["expectation"] is None
        assert (block["stale"], block["unexpected"]) == ([], 0)

    def test_a_verdict_line_cannot_say_it(self):
        event = {"case": "A.B", "verdict": "infra_error", "reason": "the node was lost (honest)"}
        r = result_of_line(event, cell="c", area="a", binary="b")
        assert (r.verdict, r.reason) == ("error", "the case binary reported 'infra_error', a verdict only the harness gives")


class TestTheOption:
    def test_help_names_it_and_the_exit_status(self, cmd_uet_run):
        done = cmd_uet_run("--help", timeout=60)
        said = " ".join(done.stdout.split())
        assert "--infra-retries N set a cell up again up to N times (default 1; 0: never)" in said
        assert ("4 nothing failed but the infrastructure kept checks from running (infra_error: a namespace, container, "
                "node or agent lost before the case could run, still after --infra-retries)") in said

    @pytest.mark.parametrize("value", ["-1", "100"])
    def test_out_of_range_is_usage(self, cmd_uet_run, value):
        done = cmd_uet_run("--provider", "udp.yaml", "--infra-retries", value, "--check-usage", timeout=60)
        assert done.returncode == 2
        assert f"--infra-retries {value} is out of range: 0 to 99" in done.stderr


class TestRunWithALostNamespace:
    """./uet run on a host that refuses a namespace: a fake build (the fake's one area) in the namespaces placement."""

    @pytest.fixture
    def uet_run(self, cmd_uet_run, results_of, tmp_path, traits_line, faulty_ip):
        def run(*options, cases=None):
            build = fake_build(tmp_path, cases or {"Fake.A": "pass", "Fake.B": "pass"}, traits_line)
            done = cmd_uet_run("--provider", "udp.yaml", "--placement", "namespaces", "--build", build, "--seed", "7",
                               "--report", tmp_path / "runs", *options,
                               env=dict(faulty_ip.env, UET_CASES_LAUNCHES=str(tmp_path / "launches")))
            return done, results_of(tmp_path / "runs"), (tmp_path / "runs" / "latest").resolve()
        return run

    def test_a_transient_loss_is_set_up_again_and_the_cell_passes(self, uet_run, faulty_ip):
        faulty_ip.refuse("once")
        done, doc, _ = uet_run()
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert [(r["case"], r["verdict"]) for r in doc["results"]] == [("Fake.A", "pass"), ("Fake.B", "pass")]
        assert len(faulty_ip.refused) == 1
        assert (doc["run_info"]["infra_retries"], doc["cells"][0]["infra_attempts"]) == (1, 2)
        assert doc["summary"]["infra_error"] == 0
        assert ("uet run: infrastructure retry 1 of 1: 1 cell(s) lost before their cases ran (udp), set up again "
                "with the same seed") in done.stdout
        assert doc["run_info"]["placement"] == "namespaces"

    def test_a_loss_that_stays_is_an_infra_error_counted_apart_everywhere(self, uet_run, faulty_ip):
        faulty_ip.refuse("always")
        done, doc, run_dir = uet_run()
        assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
        assert len(faulty_ip.refused) == 2  # the first set-up and its one retry
        assert [(r["case"], r["verdict"]) for r in doc["results"]] == [("uet-cases-fake (whole binary)", "infra_error")]
        s = doc["summary"]
        assert (s["infra_error"], s["error"], s["fail"], s["exit_status"]) == (1, 0, 0, 4)
        assert doc["cells"][0]["infra_attempts"] == 2
        assert ", 1 infrastructure error (not run: the placement was lost); coverage " in done.stdout.splitlines()[-1]
        [error] = ET.parse(run_dir / "junit.xml").getroot().iter("error")
        assert error.get("type") == "infra_error"
        assert error.get("message").startswith("infra_error: the namespaces placement could not be made: ")
        index = (run_dir / "index.html").read_text()
        assert '<span class="n" data-count="infra_error">1</span><span class="what">infrastructure error</span>' in index

    def test_no_retry_with_infra_retries_0(self, uet_run, faulty_ip):
        faulty_ip.refuse("once")
        done, doc, _ = uet_run("--infra-retries", "0")
        assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
        assert (len(faulty_ip.refused), doc["cells"][0]["infra_attempts"], doc["summary"]["infra_error"]) == (1, 1, 1)

    def test_a_provider_that_crashes_once_set_up_again_is_a_provider_failure(self, uet_run, faulty_ip):
        faulty_ip.refuse("once")
        done, doc, _ = uet_run(cases={"Fake.A": "segv"})
        assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
        assert [(r["case"], r["verdict"]) for r in doc["results"]] == [("Fake.A", "error")]
        assert doc["cells"][0]["infra_attempts"] == 2


class TestAProviderThatCrashesAtStartUp:
    def test_it_stays_an_error_after_a_lost_set_up_and_the_run_exits_1(self, hostile_provider, cmd_uet_run, results_of,
                                                                       tmp_path, faulty_ip):
        # A real provider (libhostile-fi.so) that segfaults in fi_getinfo, in a namespace pair the host refuses
        # once: the retry's set-up works, the provider crashes, and its crash is its own, never infra_error.
        faulty_ip.refuse("once")
        manifest = hostile_manifest(tmp_path, hostile_provider, "getinfo-segv")
        done = cmd_uet_run("--provider", manifest, "--placement", "namespaces", "--only", "discovery", "--seed", "7",
                           "--report", tmp_path / "runs", "--case-deadline", "20", "--quiet", env=faulty_ip.env)
        assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
        doc = results_of(tmp_path / "runs")
        assert len(faulty_ip.refused) == 1 and doc["cells"][0]["infra_attempts"] == 2
        assert doc["summary"]["infra_error"] == 0 and doc["summary"]["pass"] == 0
        assert {r["verdict"] for r in doc["results"]} == {"error", "not_applicable"}  # uet: false: no UET check
        assert "the case binary died of signal SIGSEGV" in {r["reason"] for r in doc["results"]}


class TestCertify:
    def test_no_package_vouches_for_checks_that_never_ran(self, build_dir, tmp_path, faulty_ip):
        faulty_ip.refuse("always")
        done = subprocess.run([sys.executable, "-m", "harness.certify.certify", "--provider", "softuet.yaml#hpc",
                               "--only", "discovery", "--seed", "7", "--out", str(tmp_path / "out")], cwd=REPO,
                              env=dict(os.environ, UET_BUILD=str(build_dir), PYTHONPATH=str(REPO), **faulty_ip.env),
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
        assert ("uet certify: the infrastructure kept checks from running (infra_error, exit status 4): no package "
                "written; certify again") in done.stderr
        assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
