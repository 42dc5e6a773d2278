"""The entity cases (uet-cases-entity) through the harness: softuet, with the suite's uet-entity started for
the cell, passes them; a provider whose manifest declares no privileged entity is "not applicable" with the
reason. The fault knobs that break a rule of the entity's fail the case that checks it in the one mutation run
(pytest/cases/test_mutation.py); only the knob whose "only" no targeted run shows is tried here."""
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "cases" / "manifests"
PORTS = (48430, 48431)
CASES = {"Entity.AGrantedJobIdOpensAnEndpoint", "Entity.AJobIdNotGrantedOpensNoEndpoint",
         "Entity.TheIndirectJobIdComesFromTheEntity", "Entity.ARevokedGrantStopsNewEndpointsNotOpenOnes",
         "Entity.AnAuthKeyNotGrantedIsNotInserted", "Entity.SeveralJobIdsOfOneProcessEnterTheAv",
         "Entity.AnEndedJobsJobIdOpensNoNewEndpoint", "ControlApi.EndpointCreationSendsAnAddressAllocationRequest",
         "ControlApi.TheAllocationResponseIsTheEndpointsAddress", "ControlApi.AnEntityNotRunningAsRootIsNotBelieved"}


def test_softuet_with_the_suites_entity_passes_them(cell_run):
    run = cell_run(MANIFESTS / "softuet.yaml", areas=["entity"], ports=PORTS)
    found = run.by_case()
    assert set(found) == CASES
    assert {c: r.verdict for c, r in found.items() if r.verdict != "pass"} == {}
    assert all(r.statements for r in found.values())
    assert "uet-entity: serving" in (run.out / "privileged-entity.log").read_text()
    # The Control API as it happened is kept beside the log: the provider's address allocation requests.
    assert '"cmd":"ADDR_ALLOC"' in (run.out / "privileged-entity-trace.jsonl").read_text()


def test_without_a_declared_entity_they_are_not_applicable(cell_run):
    run = cell_run(MANIFESTS / "tcp_rxm.yaml", areas=["entity"], ports=PORTS)
    found = run.by_case()
    assert set(found) == CASES and {r.verdict for r in found.values()} == {"not_applicable"}
    assert all("does not claim UET" in r.reason for r in found.values())
    assert not (run.out / "privileged-entity.log").exists()  # no entity was started for it


JOBS = {f"Claimed/Jobs.{name}/rdm" for name in (
    "ABufferOfAnEntityJobIdTakesIt", "ABufferOfAnEntityJobIdTakesItOnOneNode", "ABufferOfAnEntityJobIdRefusesAnother",
    "ABufferOfAnEntityJobIdRefusesAnotherOnOneNode", "ARegionOfAnEntityJobIdIsNotWrittenByAnother",
    "ARegionOfAnEntityJobIdIsNotWrittenByAnotherOnOneNode", "TheTargetsEntityJobIdIsOnTheWire",
    "ARevokedGrantStopsTheTargetsNewEndpointsNotItsOpenOne")} | {
    f"Claimed/AllocationJobId.{name}/rdm" for name in (
        "TheResponsesJobIdTakesPrecedenceOverJobInitialisations", "WithSeveralJobIdsAndAvAuthKeysTheResponsesJobIdIsIgnored")}
SECURITY = {f"Claimed/Security.{name}/rdm" for name in (
    "PacketsOfABoundJobIdAreSealedInItsSecureDomain", "TheFepAsksItsEntityForTheKey",
    "AKeyUpdateSealsTheNextPacketsUnderTheNewKey")}


class TestJobsBetweenTwoProcesses:
    def test_softuet_passes_them_between_two_nodes_and_on_one(self, cell_run):
        found = cell_run(MANIFESTS / "softuet.yaml", areas=["jobs"], ports=PORTS).by_case()
        assert {c: r.verdict for c, r in found.items() if c in JOBS} == {c: "pass" for c in JOBS}
        assert set(found) == JOBS  # authorization is about RDM: no DGRAM instance is made

    def test_a_short_cut_inside_the_node_fails_only_the_one_node_cases(self, cell_run):
        found = cell_run(MANIFESTS / "softuet.yaml", areas=["jobs"], knob="same_node_unchecked", ports=PORTS).by_case()
        assert {c for c, r in found.items() if r.verdict == "fail"} == {
            "Claimed/Jobs.ABufferOfAnEntityJobIdRefusesAnotherOnOneNode/rdm",
            "Claimed/Jobs.ARegionOfAnEntityJobIdIsNotWrittenByAnotherOnOneNode/rdm"}



class TestSecurityBetweenTwoProcesses:
    """Security bindings and key updates (uet-cases-security): softuet seals and opens its packets with the
    keys the suite's entity gives (the knobs that break a rule of 2.2.9: pytest/cases/test_mutation.py)."""

    def test_softuet_passes_them(self, cell_run):
        run = cell_run(MANIFESTS / "softuet.yaml", areas=["security"], ports=PORTS)
        found = run.by_case()
        assert {c: r.verdict for c, r in found.items() if c in SECURITY} == {c: "pass" for c in SECURITY}
        assert set(found) == SECURITY  # authorization is about RDM: no DGRAM instance is made
        # The key updates the entity sent unasked are in its trace.
        assert '"push_to":' in (run.out / "privileged-entity-trace.jsonl").read_text()
