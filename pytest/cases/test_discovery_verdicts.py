"""The discovery cases give honest verdicts: everything softuet claims passes; for libfabric's tcp and
udp (not UET providers) the UET statements are not applicable, with the reason, and generic fi_*
semantics pass; a claim the provider does not live up to fails."""
import json
import pathlib
import subprocess

import pytest

from harness.run_cases import run

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "cases" / "manifests"
UET_ONLY = {"AddressFormatIsFiAddrUet", "MemoryRegionsAreBoundToEndpoints", "AddressVectorUnspecBehavesAsTable",
            "GetnameReturnsTheCompleteUetAddress", "EndpointsSupportAnEventQueue", "BothEndpointTypesAreSupported"}


def discovery(verdicts):
    """The discovery binary's verdicts (run() runs every case binary)."""
    return [v for v in verdicts if "Discovery" in v.case]


def by_case(verdicts):
    return {v.case: v for v in verdicts}


def short(case):
    return case.split(".")[1].split("/")[0]


class TestSoftuet:
    def test_every_discovery_case_passes(self, build_dir, tmp_path):
        verdicts = discovery(run(MANIFESTS / "softuet.yaml", build_dir, tmp_path))
        assert len(verdicts) == 19
        assert {v.verdict for v in verdicts} == {"pass"}, [v for v in verdicts if v.verdict != "pass"]
        assert all(v.requirements for v in verdicts), "every case names the statements it checks"

    def test_a_profile_claimed_but_not_advertised_fails(self, build_dir, tmp_path):
        manifest = tmp_path / "softuet-claims-too-much.yaml"
        text = (MANIFESTS / "softuet.yaml").read_text().replace("SOFTUET_PROFILES: ai_base,ai_full,hpc",
                                                                 "SOFTUET_PROFILES: ai_base")
        manifest.write_text(text)
        verdicts = by_case(discovery(run(manifest, build_dir, tmp_path)))
        failed = {short(c) for c, v in verdicts.items() if v.verdict == "fail"}
        assert failed == {"GetnameReturnsTheCompleteUetAddress"}


@pytest.mark.parametrize("name,ep", [("tcp_rxm", "rdm"), ("udp", "dgram")])
class TestNonUetProviders:
    def test_uet_statements_are_not_applicable_with_the_reason(self, build_dir, tmp_path, name, ep):
        verdicts = discovery(run(MANIFESTS / f"{name}.yaml", build_dir, tmp_path))
        for v in verdicts:
            if short(v.case) in UET_ONLY:
                assert v.verdict == "not_applicable", v
                assert "does not claim UET" in v.detail and f"{name}.yaml" in v.detail
            else:
                assert v.verdict == "pass", v
        assert {short(v.case) for v in verdicts if v.verdict == "pass"} == {
            "AcceptsTheVersion2Api", "AddressVectorTableIsSupported", "TableIndicesAreContiguousInInsertionOrder",
            "CompletionQueuesAreSupported"}


class TestTraceability:
    def test_case_requirements_reach_the_coverage_report(self, build_dir, tmp_path):
        run(MANIFESTS / "softuet.yaml", build_dir, tmp_path)
        proc = subprocess.run(["/usr/bin/python3", "-m", "harness.coverage", "--strict", "--format", "json", "--junit",
                               *map(str, tmp_path.glob("uet-cases-discovery.*.xml"))], cwd=REPO, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
        assert report["covered"] == 17
        assert not report["unknown_requirements"], "every id a case names is in spec/catalogue.yaml"
        assert "2.2.5.3.8-b" not in json.dumps(report["uncovered_observable_musts"])
