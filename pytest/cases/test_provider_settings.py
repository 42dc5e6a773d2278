"""Issue 26, part 2: a provider's sizes are optional and range-checked. A manifest that leaves out the
rendezvous sizes gets the spec's defaults (the verdict rests on their choice); a size that means "never"
(4294967295) is a failure naming it, at once, instead of a 4 GiB message."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.run.run_cases import run_manifest  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a pair's sides run in network namespaces (root)")
CASE = "Claimed/Rendezvous.LargeSendFromAReadableRegionGoesAsRendezvous/rdm"


def softuet_with(tmp_path, name: str, environment: str) -> pathlib.Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"extends: {REPO / 'cases' / 'manifests' / 'softuet.yaml'}\nname: {name}\nenvironment:\n{environment}")
    return path


class TestRendezvousSizes:
    def test_left_out_the_spec_s_defaults_apply_and_the_verdict_says_so(self, build_dir, tmp_path):
        manifest = softuet_with(tmp_path, "no-sizes", "  UET_PROVIDER_MSG_RENDEZVOUS_SIZE: null\n"
                                "  UET_PROVIDER_TAG_RENDEZVOUS_SIZE: null\n  UET_PROVIDER_MAX_EAGER_SIZE: null\n")
        [r] = run_manifest(manifest, build_dir, tmp_path / "run", areas=["rendezvous"], case_filter=CASE)
        assert (r.case, r.verdict) == (CASE, "pass"), r.message
        assert {"rendezvous-size-default", "max-eager-size-default"} <= set(r.choices)

    def test_a_size_that_means_never_fails_at_once_naming_it(self, build_dir, tmp_path):
        manifest = softuet_with(tmp_path, "never", '  UET_PROVIDER_MSG_RENDEZVOUS_SIZE: "4294967295"\n')
        [r] = run_manifest(manifest, build_dir, tmp_path / "run", areas=["rendezvous"], case_filter=CASE)
        assert r.verdict == "fail", (r.verdict, r.reason)  # a failure, not a timeout: no 4 GiB message was tried
        assert ("UET_PROVIDER_MSG_RENDEZVOUS_SIZE=4294967295 in the manifest's environment is not a size from 1 to "
                "67108864 bytes: give the provider's real size, or leave it out if the provider has no such feature") \
            in r.message
