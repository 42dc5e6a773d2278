"""Issue 26, part 3: a pair has a two-process case only where both sides claim what it needs. A target
that claims no DGRAM makes the initiator's DGRAM instances not applicable, naming the target, instead of
failures blamed on it."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.run.run_cases import run_manifest  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a pair's sides run in network namespaces (root)")


def test_a_target_without_dgram_makes_the_dgram_cases_not_applicable_naming_it(build_dir, tmp_path):
    target = tmp_path / "rdm-only.yaml"
    target.write_text(f"extends: {REPO / 'cases' / 'manifests' / 'softuet.yaml'}\nname: rdm-only\nendpoint_types: [rdm]\n")
    results = run_manifest(REPO / "cases" / "manifests" / "softuet.yaml", build_dir, tmp_path / "run", target=target,
                           areas=["msg"], case_filter="Claimed/Msg.*")
    dgram = [r for r in results if r.case.endswith("/dgram")]
    rdm = [r for r in results if r.case.endswith("/rdm")]
    assert dgram and rdm
    # Some DGRAM cases are not applicable for a reason of their own first; none fails, none is blamed.
    assert {r.verdict for r in dgram} == {"not_applicable"}, [(r.case, r.verdict, r.message) for r in dgram]
    assert ("not applicable: the target, rdm-only, claims no dgram endpoints "
            "(!::uet::cases::target_claims_type(GetParam().ep_type))") in {r.reason for r in dgram}
    assert {r.verdict for r in rdm} == {"pass"}, [(r.case, r.verdict, r.message) for r in rdm if r.verdict != "pass"]


def test_a_target_without_the_direct_job_id_method_still_has_its_requests_checked(build_dir, tmp_path):
    """A wire check that needs to know a request's JobID is not gated by the direct method: it checks the rest
    of the request and says it did not check the JobID; a case that needs the method is not applicable."""
    target = tmp_path / "indirect-only.yaml"
    # Without HPC, which needs the AV method (2.2.4.1-s): a side that claims HPC fails the AV cases instead.
    target.write_text(f"extends: {REPO / 'cases' / 'manifests' / 'softuet.yaml'}\nname: indirect-only\n"
                      "job_id_methods: [indirect]\nprofiles: [ai_base, ai_full]\n"
                      "environment: {SOFTUET_PROFILES: 'ai_base,ai_full'}\n")
    results = run_manifest(REPO / "cases" / "manifests" / "softuet.yaml", build_dir, tmp_path / "run", target=target,
                           areas=["wire", "authz"], case_filter="Claimed/Wire.RequestsAddressTheTargetEndpoint/rdm:"
                                                               "Claimed/Authz.AvAuthKeyJobIdIsOnTheWire/rdm")
    got = {r.case: r for r in results}
    wire = got["Claimed/Wire.RequestsAddressTheTargetEndpoint/rdm"]
    assert wire.verdict == "pass", (wire.reason, wire.message)
    assert wire.notes["JobID"].startswith("not checked: a side claims no direct JobID method")
    authz = got["Claimed/Authz.AvAuthKeyJobIdIsOnTheWire/rdm"]
    assert authz.verdict == "not_applicable"
    assert authz.reason.startswith("not applicable: the target indirect-only does not claim the av JobID method "
                                   "(job_id_methods), which this case needs")
