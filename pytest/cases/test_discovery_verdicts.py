"""The discovery cases give honest verdicts: everything softuet claims passes; for libfabric's tcp and
udp (not UET providers) the UET statements are not applicable, with the reason, and generic fi_*
semantics pass; a claim the provider does not live up to fails."""
import json
import pathlib
import subprocess

import pytest

from harness.results.results import write_junit

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "cases" / "manifests"
UET_ONLY = {"AddressFormatIsFiAddrUet", "MemoryRegionsAreBoundToEndpoints", "AddressVectorUnspecBehavesAsTable",
            "GetnameReturnsTheCompleteUetAddress", "EndpointsSupportAnEventQueue", "BothEndpointTypesAreSupported",
            "InfoOffersTheProfilesParameterSet"}


@pytest.fixture(scope="session")
def discovery(cell_run):
    """discovery(manifest) -> the discovery binary's results for one manifest (a cell of the manifest against
    itself), run once per session."""
    return lambda manifest: cell_run(manifest, areas=["discovery"]).results()


def by_case(results):
    return {r.case: r for r in results}


def short(case):
    return case.split(".")[1].split("/")[0]


class TestSoftuet:
    def test_every_discovery_case_passes(self, discovery):
        results = discovery(MANIFESTS / "softuet.yaml")
        assert len(results) == 21
        assert {r.verdict for r in results} == {"pass"}, [r for r in results if r.verdict != "pass"]
        assert all(r.statements for r in results), "every case names the statements it checks"

    def test_a_profile_claimed_but_not_advertised_fails(self, discovery, tmp_path):
        # all three profiles claimed, only AI Base given to the provider: its address lacks them, and it
        # offers no fi_tagged (Table 2-4)
        manifest = tmp_path / "softuet-claims-too-much.yaml"
        manifest.write_text(f"extends: {MANIFESTS / 'softuet.yaml'}\nname: softuet-claims-too-much\n"
                            "environment:\n  SOFTUET_PROFILES: ai_base\n")
        results = by_case(discovery(manifest))
        failed = {short(c) for c, r in results.items() if r.verdict == "fail"}
        assert failed == {"GetnameReturnsTheCompleteUetAddress", "InfoOffersTheProfilesParameterSet"}


@pytest.mark.parametrize("name,ep", [("tcp_rxm", "rdm"), ("udp", "dgram")])
class TestNonUetProviders:
    def test_uet_statements_are_not_applicable_with_the_reason(self, discovery, name, ep):
        results = discovery(MANIFESTS / f"{name}.yaml")
        assert results
        for r in results:
            if short(r.case) in UET_ONLY:
                assert r.verdict == "not_applicable", r
                assert "does not claim UET" in r.reason and f"(manifest {name})" in r.reason, r
            else:
                assert r.verdict == "pass", r
        assert {short(r.case) for r in results if r.verdict == "pass"} == {
            "AcceptsTheVersion2Api", "AddressVectorTableIsSupported", "TableIndicesAreContiguousInInsertionOrder",
            "CompletionQueuesAreSupported"}


class TestTraceability:
    def test_case_requirements_reach_the_coverage_report(self, discovery, tmp_path):
        junit = tmp_path / "discovery.xml"
        write_junit(discovery(MANIFESTS / "softuet.yaml"), junit)
        proc = subprocess.run(["/usr/bin/python3", "-m", "harness.results.coverage", "--strict", "--format", "json", "--junit",
                               str(junit)], cwd=REPO, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
        assert report["covered"] == 18
        assert not report["unknown_requirements"], "every id a case names is in spec/catalogue.yaml"
        assert "2.2.5.3.8-b" not in json.dumps(report["uncovered_observable_musts"])
