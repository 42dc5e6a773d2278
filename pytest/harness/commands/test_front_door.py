"""The front door (./uet run): manifests checked against their schema, bad input answered with exit 2 and
a message naming the bad thing, an interop cell whose broken side takes the blame, a non-UET provider
paired with softuet not applicable with the reason, and Ctrl-C leaving a partial report and nothing
running behind it."""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "cases" / "manifests"
BROKEN = MANIFESTS / "examples" / "softuet-wrong-job-id.yaml"
from harness.run import cell_plan  # noqa: E402
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="namespace pairs and captures need root (os.geteuid() != 0)")


@pytest.fixture(scope="session")
def cmd_manifest():
    def run(*args):
        return subprocess.run([sys.executable, "-m", "harness.inputs.manifest", *map(str, args)], cwd=REPO,
                              env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=60)
    return run


class TestManifestCheck:
    def test_every_shipped_manifest_and_variant_is_valid(self, cmd_manifest):
        refs = [str(p) for p in sorted(MANIFESTS.rglob("*.yaml")) if p.name != "manifest.schema.yaml"]
        refs += [f"{MANIFESTS / 'softuet.yaml'}#{v}" for v in
                 ("ai_base", "ai_full", "hpc", "ai_base+ai_full", "ai_base+hpc", "ai_full+hpc")]
        run = cmd_manifest("check", *refs)
        assert run.returncode == 0, run.stderr
        assert run.stdout.count(": valid (") == len(refs)

    def test_every_shipped_pair_file_is_valid(self):
        from harness.run.run_suite import parse_args
        pairs = sorted((REPO / "cases" / "pairs").glob("*.yaml"))
        for pair in (p for p in pairs if p.name != "pair.schema.yaml"):
            args = parse_args(["--pair", str(pair)])
            refs = [r for r in (args.provider, args.initiator, args.target, *(args.matrix or [])) if r]
            assert refs and all(pathlib.Path(r.split("#")[0]).exists() for r in refs), pair
            assert args.placement in ("namespaces", "containers", "nodes")

    def test_every_problem_is_named_with_file_and_key(self, cmd_manifest, tmp_path):
        bad = tmp_path / "bad.yaml"
        bad.write_text("provider: x\nuet: true\nprofiles: [hpx]\nendpoint_types: []\nbogus: 1\n")
        run = cmd_manifest("check", bad)
        assert run.returncode == 1
        assert run.stderr.splitlines() == [
            f"{bad}: (top level): unknown key: bogus",
            f"{bad}: endpoint_types: lists 0 item(s): at least 1 wanted",
            f"{bad}: profiles.0: not one of ai_base, ai_full, hpc",
        ]

    def test_a_uet_provider_claims_a_profile(self, cmd_manifest, tmp_path):
        bad = tmp_path / "noprofile.yaml"
        bad.write_text("provider: x\nuet: true\nprofiles: []\nendpoint_types: [rdm]\n")
        run = cmd_manifest("check", bad)
        assert run.returncode == 1
        assert "profiles: a UET provider (uet: true) claims at least one profile" in run.stderr

    def test_extends_overrides_and_a_cycle_is_refused(self, cmd_manifest, tmp_path):
        child = tmp_path / "child.yaml"
        child.write_text(f"extends: {MANIFESTS / 'softuet.yaml'}#hpc\nenvironment: {{SOFTUET_FAULTS: no_ack}}\n")
        run = cmd_manifest("resolve", child, "--port", "5000")
        assert run.returncode == 0, run.stderr
        record = json.loads(run.stdout)
        assert record["profiles"] == ["hpc"]
        assert record["environment"]["SOFTUET_PROFILES"] == "hpc"
        assert record["environment"]["SOFTUET_FAULTS"] == "no_ack"
        assert record["environment"]["SOFTUET_UDP_PORT"] == "5000"
        assert record["wire"] == {"interface": "any", "udp_port": 5000, "udp_port_chosen_by": "suite"}
        loop = tmp_path / "loop.yaml"
        loop.write_text("extends: loop.yaml\n")
        run = cmd_manifest("check", loop)
        assert run.returncode == 1 and "extends: a cycle" in run.stderr

    def test_the_case_binaries_read_no_yaml(self, build_dir, tmp_path, resolved_side):
        # A side is carried as its resolved record: the manifest's own YAML is no record, for the plan's writer
        # and, in a plan made by hand, for the binary (which reads the record alone, not the file it names).
        yaml_doc = yaml.safe_load((MANIFESTS / "softuet.yaml").read_text())
        common = dict(cell="c", area="discovery", initiator_manifest=MANIFESTS / "softuet.yaml",
                      target_manifest=MANIFESTS / "softuet.yaml", results=tmp_path / "r.jsonl", captures=tmp_path)
        with pytest.raises(cell_plan.PlanError, match="initiator: resolved side: "):
            cell_plan.make(**common, initiator_record=yaml_doc, target_record=resolved_side())
        plan = cell_plan.make(**common, initiator_record=resolved_side(), target_record=resolved_side())
        plan["initiator"]["resolved"] = yaml_doc
        cell_plan.write(tmp_path / "plan.json", plan)
        env = dict(os.environ, UET_CASES_PLAN=str(tmp_path / "plan.json"))
        run = subprocess.run([str(build_dir / "cases" / "uet-cases-discovery")], env=env, capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 3
        assert f"uet cases: manifest {MANIFESTS / 'softuet.yaml'}: undeclared key 'peer_netns' (the resolved side is " \
               "declared in cases/manifests/manifest.schema.yaml, $defs/resolved)" in run.stderr


class TestBadInput:
    def test_help_documents_every_option_with_an_example(self, cmd_uet_run):
        run = cmd_uet_run("--help")
        assert run.returncode == 0
        for option in ("--provider", "--initiator", "--target", "--matrix", "--only", "--jobs", "--seed", "--report",
                       "--quiet", "--verbose", "--same-host"):
            assert option in run.stdout
        assert run.stdout.count("e.g.") >= 7

    def test_target_without_initiator_is_usage(self, cmd_uet_run):
        run = cmd_uet_run("--target", "softuet.yaml")
        assert run.returncode == 2
        assert "--target goes with --initiator" in run.stderr

    def test_a_bad_manifest_names_its_file_and_key(self, cmd_uet_run, tmp_path):
        bad = tmp_path / "vendor.yaml"
        bad.write_text("provider: vendor\nuet: maybe\nprofiles: [ai_base]\nendpoint_types: [rdm]\n")
        run = cmd_uet_run("--provider", bad, "--report", tmp_path / "runs")
        assert run.returncode == 2
        assert f"{bad}: uet: a string where true or false is wanted" in run.stderr

    def test_an_unknown_provider_says_what_fi_getinfo_said(self, cmd_uet_run, tmp_path):
        m = tmp_path / "nosuch.yaml"
        m.write_text("provider: nosuchprov\nuet: false\nprofiles: []\nendpoint_types: [rdm]\n")
        run = cmd_uet_run("--provider", m, "--report", tmp_path / "runs", "--same-host")
        assert run.returncode == 2
        assert "provider 'nosuchprov' cannot be loaded: fi_getinfo said: fi_getinfo: -61 (No data available)" in run.stderr

    def test_an_unwritable_report_folder(self, cmd_uet_run, tmp_path):
        blocker = tmp_path / "file"
        blocker.write_text("")
        run = cmd_uet_run("--provider", "udp.yaml", "--report", blocker / "runs", "--same-host")
        assert run.returncode == 2
        assert f"the report folder {blocker / 'runs'} cannot be written" in run.stderr

    def test_only_that_selects_nothing(self, cmd_uet_run, results_of, tmp_path):
        run = cmd_uet_run("--initiator", "udp.yaml", "--target", "tcp_rxm.yaml", "--only", "ep", "--only", "av",
                          "--report", tmp_path, "--same-host")
        assert run.returncode == 0, run.stderr  # ep and av are single-process: they run for each side
        # A case pattern that matches no case runs nothing and says so: not a green run that tested nothing.
        run = cmd_uet_run("--provider", "udp.yaml", "--only", "nosucharea*", "--report", tmp_path, "--same-host")
        assert run.returncode == 2
        assert "uet run: --only nosucharea* matched no check of this run" in run.stderr
        assert results_of(tmp_path)["summary"]["total"] == 0
        # A name as gtest prints it (Suite.Case) matches its parameterised instances.
        run = cmd_uet_run("--provider", "udp.yaml", "--only", "Ep.BadOptionsAreRefused", "--report", tmp_path,
                          "--same-host")
        assert run.returncode in (0, 1), run.stderr
        assert results_of(tmp_path)["summary"]["total"] > 0


class TestOnly:
    def test_a_statement_keeps_the_checks_that_cover_it(self, cmd_uet_run, results_of, tmp_path):
        run = cmd_uet_run("--provider", "tcp_rxm.yaml", "--only", "discovery", "--only", "2.2.5.3.8", "--same-host",
                          "--report", tmp_path, "--quiet", "--seed", "3")
        assert run.returncode == 0, run.stderr
        results = results_of(tmp_path)["results"]
        assert results and all(any(s.startswith("2.2.5.3.8") for s in r["statements"]) for r in results)
        assert {r["area"] for r in results} == {"discovery"}
        assert all(r["repro"].endswith("--seed 3") for r in results)


class TestMatrix:
    def test_a_matrix_of_two_non_uet_providers(self, cmd_uet_run, results_of, tmp_path):
        run = cmd_uet_run("--matrix", "udp.yaml", "tcp_rxm.yaml", "--only", "msg", "--same-host", "--report", tmp_path,
                          "--quiet")
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        results = results_of(tmp_path)
        assert sorted(c["id"] for c in results["cells"]) == ["tcp_rxm", "tcp_rxm__udp", "udp", "udp__tcp_rxm"]
        crossed = [r for r in results["results"] if "__" in r["cell"]]
        assert crossed and {r["verdict"] for r in crossed} == {"not_applicable"}
        # each with its reason: not UET, a DGRAM case that needs reliability, or no protocol the two share
        assert all(r["reason"].startswith("not applicable: ") for r in crossed)
        generic = [r for r in crossed if "does not claim UET" not in r["reason"] and "/dgram" not in r["case"]]
        assert generic and all("no common wire protocol: two non-UET providers" in r["reason"] for r in generic)
        html = (tmp_path / "latest" / "index.html").read_text()
        assert 'id="interop-matrix"' in html
        for cell in ("udp__tcp_rxm", "tcp_rxm__udp"):
            assert f'href="cells/{cell}.html"' in html


@root_only
class TestInteropCell:
    """The broken-vendor example: softuet with wrong_job_id as the initiator, a clean softuet as the target."""

    @pytest.fixture(scope="class")
    def broken_pair(self, broken_authz_pair):
        return broken_authz_pair, broken_authz_pair.results(), broken_authz_pair.report

    def test_the_run_fails_and_blames_the_broken_side(self, broken_pair):
        run, results, _ = broken_pair
        assert run.returncode == 1, run.stdout[-2000:]
        failed = [r for r in results["results"] if r["verdict"] == "fail"]
        assert failed
        assert {r["blamed_manifest"] for r in failed} == {"softuet-wrong-job-id"}
        # The wire check: no request the initiator sent carries the right JobID; the frames it did send,
        # with their JobID, are the evidence.
        wire = next(r for r in failed if r["case"] == "Claimed/Authz.DirectJobIdIsOnTheWire/rdm")
        assert wire["blamed_side"] == "initiator"
        assert wire["blame_basis"] == "wire: no matching frame from the initiator"
        assert "uet.ses.job_id is 0x" in wire["message"]
        frame = wire["evidence"]["frames"][-1]
        assert frame["sender"] == "initiator" and "uet.ses.job_id=" in frame["summary"]
        assert wire["evidence"]["capture"].endswith(".pcap") and wire["evidence"]["decoded"].endswith(".json")

    def test_the_single_process_checks_of_each_side_pass(self, broken_pair):
        _, results, _ = broken_pair
        cells = {c["id"]: c for c in results["cells"]}
        assert set(cells) == {"softuet-wrong-job-id__softuet"}  # --only authz: a two-process area only
        assert results["run_info"]["seed"] == 5
        assert [m["name"] for m in results["run_info"]["manifests"]] == ["softuet-wrong-job-id", "softuet"]

    def test_the_repro_command_reproduces_the_failure(self, broken_pair, cmd_uet_run, results_of, tmp_path):
        _, results, _ = broken_pair
        failed = next(r for r in results["results"] if r["verdict"] == "fail")
        assert failed["repro"].startswith("./uet run --initiator ")
        args = failed["repro"].split()[2:]
        args = [a.strip("'") for a in args]
        run = cmd_uet_run(*args, "--report", tmp_path, "--quiet")
        again = results_of(tmp_path)
        assert run.returncode == 1
        assert [(r["case"], r["verdict"]) for r in again["results"]] == [(failed["case"], "fail")]

    def test_the_report_renders_in_chromium_with_the_run_s_counts(self, broken_pair, cmd_chromium):
        _, results, report = broken_pair
        run_dir = (report / "latest").resolve()
        index = run_dir / "index.html"
        shot = run_dir / "report.png"  # kept in the run folder: what a reader of this run sees
        cmd_chromium(f"--screenshot={shot}", "--window-size=1280,3000", "--hide-scrollbars", index.as_uri())
        assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
        dom = cmd_chromium("--dump-dom", index.as_uri()).stdout
        summary = results["summary"]
        for verdict in ("pass", "fail", "not_applicable", "error", "timeout"):
            assert re.search(rf'data-count="{verdict}">{summary[verdict]}<', dom), verdict
        for section in ("run-info", "summary", "coverage", "failures", "not-applicable"):
            assert f'id="{section}"' in dom
        assert len(re.findall(r'class="failure[ "]', dom)) == summary["fail"] + summary["error"] + summary["timeout"]
        assert dom.count('class="repro"') >= summary["fail"]

    def test_a_non_uet_provider_paired_with_softuet_is_not_applicable(self, cmd_uet_run, results_of, tmp_path):
        run = cmd_uet_run("--initiator", "tcp_rxm.yaml", "--target", "softuet.yaml", "--only", "msg",
                          "--report", tmp_path, "--quiet")
        assert run.returncode == 0, run.stdout[-2000:]
        rs = results_of(tmp_path)["results"]
        assert rs and {r["verdict"] for r in rs} == {"not_applicable"}
        generic = [r for r in rs if "does not claim UET" not in r["reason"]]
        assert generic and all("no common wire protocol: tcp_rxm (tcp;ofi_rxm) initiates, softuet (UET) is the target"
                               in r["reason"] for r in generic)


def processes_of_run(folder: pathlib.Path) -> list[str]:
    """The processes of one run: a case binary's environment names its cell plan, in the run's folder (the
    host may be running other runs of the suite: theirs are not this test's business)."""
    found = []
    for entry in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            if str(folder).encode() in (entry / "environ").read_bytes():
                found.append(f"{entry.name} {(entry / 'cmdline').read_bytes().replace(bytes(1), b' ').decode(errors='replace')}")
        except OSError:
            continue
    return found


@root_only
class TestInterrupt:
    def test_ctrl_c_writes_a_partial_report_and_leaves_nothing_behind(self, cmd_uet_run, results_of, tmp_path):
        proc = subprocess.Popen(cmd_uet_run.argv("--provider", "softuet.yaml", "--only", "msg", "--report", tmp_path,
                                                 "--verbose"), cwd=REPO, env=cmd_uet_run.env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        for line in proc.stdout:  # wait for the first case to end: the run is in the middle of a cell
            lines.append(line)
            if line.startswith("    pass:"):
                break
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 130, "".join(lines) + out
        results = results_of(tmp_path)
        assert results["run_info"]["partial"] is True
        assert (tmp_path / "latest" / "index.html").exists()
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert f"uet-{proc.pid}-" not in left
        assert processes_of_run(tmp_path) == []


FAKE_BINARY = """#!/usr/bin/python3
# A case binary that crashes in one case and hangs in another: the runner's verdicts for both.
import hashlib, hmac, json, os, signal, sys, time
cases = ["Fake.Passes", "Fake.Crashes", "Fake.Hangs", "Fake.RunsAfter"]
flt = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--gtest_filter="))
excluded = set(flt.split("-", 1)[1].split(":")) if "-" in flt else set()
out = open(json.load(open(os.environ["UET_CASES_PLAN"]))["results"], "a")
key = os.read(int(os.environ["UET_CASES_VERDICT_KEY_FD"]), 256).strip()  # signed as verdict.cpp signs
seq = iter(range(1000))
def line(**kw):
    body = json.dumps(dict(kw, seq=next(seq)))
    out.write(hmac.new(key, body.encode(), hashlib.sha256).hexdigest() + " " + body + "\\n"); out.flush()
for case in cases:
    if case in excluded:
        continue
    line(event="start", case=case)
    if case == "Fake.Crashes":
        os.kill(os.getpid(), signal.SIGSEGV)
    if case == "Fake.Hangs":
        time.sleep(600)
    line(event="end", case=case, verdict="pass", requirements="2.2.6-a", seconds=0.01)
"""


class TestCrashAndDeadline:
    def test_a_crash_and_a_hang_are_verdicts_and_the_binary_goes_on(self, tmp_path):
        from harness.inputs import manifest as manifest_mod
        from harness.run.run_cases import Cell, CellRun
        build = tmp_path / "build"
        (build / "cases").mkdir(parents=True)
        fake = build / "cases" / "uet-cases-fake"
        fake.write_text(FAKE_BINARY)
        fake.chmod(0o755)
        m = manifest_mod.load(MANIFESTS / "udp.yaml")
        results = CellRun(Cell(m, m, ["fake"]), build, tmp_path / "cell", use_namespaces=False,
                          case_deadline=2.0).run()
        got = [(r.case, r.verdict) for r in results]
        assert got == [("Fake.Passes", "pass"), ("Fake.Crashes", "error"), ("Fake.Hangs", "timeout"),
                       ("Fake.RunsAfter", "pass")]
        assert results[1].reason == "the case binary died of signal SIGSEGV"
        assert results[2].reason == "no end within the case deadline of 2 s"


class TestReproCommand:
    """Issue 35, item 8: a repro command dropped --libfabric (and the placement and trust options), so on the
    same machine it ran against the suite's own libfabric, or exited 2. Each repro is read back by the run's own
    parser and must give the options that shape what runs."""

    def repro(self, *argv):
        from harness.run import execute
        from harness.commands import run as run_options
        from harness.run.run_cases import Cell
        from harness.inputs import manifest as manifest_mod
        args, _ = run_options.parse([*argv, "--provider", str(MANIFESTS / "softuet.yaml")])
        m = manifest_mod.load(str(MANIFESTS / "softuet.yaml"))
        line = execute.repro_command(Cell(m, m, ["msg"]), "Msg.SendIsDelivered", 5, "1.0.1",
                                     execute.shaping_options(args))
        again, _ = run_options.parse(line.split()[2:])
        return line, again

    def test_it_carries_the_libfabric_prefix(self, tmp_path):
        line, again = self.repro("--libfabric", str(tmp_path / "lf"))
        assert (again.libfabric, again.only, again.seed) == (tmp_path / "lf", ["Msg.SendIsDelivered"], 5)
        assert line.startswith(f"./uet run --provider {MANIFESTS / 'softuet.yaml'} --libfabric {tmp_path / 'lf'} ")

    def test_it_carries_the_placement_and_the_trust_options(self):
        _, again = self.repro("--placement", "containers", "--trust-foreign-libfabric", "--allow-loader-environment")
        assert (again.placement, again.trust_foreign_libfabric, again.allow_loader_environment) == \
               ("containers", True, True)
        _, again = self.repro("--same-host")
        assert (again.same_host, again.placement) == (True, None)

    def test_a_plain_run_adds_nothing(self):
        line, _ = self.repro()
        assert line == f"./uet run --provider {MANIFESTS / 'softuet.yaml'} --only Msg.SendIsDelivered --seed 5"
