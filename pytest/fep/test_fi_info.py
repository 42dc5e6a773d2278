"""softuet discovery through fi_info: the endpoint types, the ep-type hint, and a bad configuration."""
import re

EP_TYPES = re.compile(r"^\s*type:\s*(FI_EP_\w+)", re.M)
PROVIDERS = re.compile(r"^provider:\s*(\S+)", re.M)


class TestFiInfo:
    def test_lists_rdm_and_dgram(self, fi_info):
        res = fi_info("-p", "softuet")
        assert res.returncode == 0, res.stderr
        assert PROVIDERS.findall(res.stdout) == ["softuet", "softuet"]
        assert EP_TYPES.findall(res.stdout) == ["FI_EP_RDM", "FI_EP_DGRAM"]
        assert "fabric: softuet" in res.stdout

    def test_no_utility_provider_stacks_on_softuet(self, fi_info):
        # ofi_rxd over softuet's DGRAM would be an RDM endpoint that is not RUD/ROD on the wire.
        res = fi_info("-p", "softuet", env_extra={"FI_PROVIDER": "softuet,ofi_rxd,ofi_rxm"})
        assert res.returncode == 0, res.stderr
        assert PROVIDERS.findall(res.stdout) == ["softuet", "softuet"]

    def test_ep_type_hint_dgram(self, fi_info):
        res = fi_info("-p", "softuet", "-t", "FI_EP_DGRAM")
        assert res.returncode == 0, res.stderr
        assert EP_TYPES.findall(res.stdout) == ["FI_EP_DGRAM"]

    def test_ep_type_hint_rdm(self, fi_info):
        res = fi_info("-p", "softuet", "-t", "FI_EP_RDM")
        assert res.returncode == 0, res.stderr
        assert EP_TYPES.findall(res.stdout) == ["FI_EP_RDM"]

    def test_ep_type_hint_msg_none(self, fi_info):
        res = fi_info("-p", "softuet", "-t", "FI_EP_MSG")
        assert res.returncode != 0
        assert "provider: softuet" not in res.stdout

    def test_attributes(self, fi_info):
        res = fi_info("-p", "softuet", "-t", "FI_EP_RDM", "-v")
        assert res.returncode == 0, res.stderr
        out = res.stdout
        assert "threading: FI_THREAD_SAFE" in out
        assert "progress: FI_PROGRESS_MANUAL" in out
        assert "av_type: FI_AV_TABLE" in out
        assert "mr_mode: [ FI_MR_ENDPOINT ]" in out
        assert "src_addrlen: 40" in out
        assert re.search(r"^\s*mode: \[\s*\]", out, re.M)

    def test_bad_profiles_gives_no_info_and_names_the_value(self, fi_info):
        res = fi_info("-p", "softuet", env_extra={"SOFTUET_PROFILES": "bogus", "FI_LOG_LEVEL": "warn"})
        assert res.returncode != 0
        assert "provider: softuet" not in res.stdout
        assert "SOFTUET_PROFILES='bogus'" in res.stderr
        assert "unknown profile 'bogus'" in res.stderr

    def test_profile_subset_is_accepted(self, fi_info):
        res = fi_info("-p", "softuet", env_extra={"SOFTUET_PROFILES": "ai_base,hpc"})
        assert res.returncode == 0, res.stderr
        assert EP_TYPES.findall(res.stdout) == ["FI_EP_RDM", "FI_EP_DGRAM"]

    def test_bad_job_id_gives_no_info(self, fi_info):
        res = fi_info("-p", "softuet", env_extra={"SOFTUET_JOB_ID": "16777216", "FI_LOG_LEVEL": "warn"})
        assert res.returncode != 0
        assert "SOFTUET_JOB_ID='16777216'" in res.stderr
