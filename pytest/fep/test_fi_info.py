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

    def test_bad_udp_gso_gives_no_info(self, fi_info):
        res = fi_info("-p", "softuet", env_extra={"SOFTUET_UDP_GSO": "yes", "FI_LOG_LEVEL": "warn"})
        assert res.returncode != 0
        assert "SOFTUET_UDP_GSO='yes': expected 0 or 1" in res.stderr


class TestService:
    """fi_getinfo's service (spec 2.2.5.2.2): an RI number or a name of the UET_PROVIDER_SERVICE_PATH file."""

    def test_a_resource_index_number_is_served(self, fi_info):
        res = fi_info("-p", "softuet", "-P", "17")
        assert res.returncode == 0, res.stderr
        assert EP_TYPES.findall(res.stdout) == ["FI_EP_RDM", "FI_EP_DGRAM"]

    def test_a_bad_number_gives_no_info_and_names_it(self, fi_info):
        res = fi_info("-p", "softuet", "-P", "4096", env_extra={"FI_LOG_LEVEL": "warn"})
        assert res.returncode != 0
        assert "service '4096'" in res.stderr

    def test_a_bad_service_file_line_is_named(self, fi_info, tmp_path):
        services = tmp_path / "services"
        services.write_text("mpi 100 2\nccl 4095 2\n")
        res = fi_info("-p", "softuet", "-P", "mpi",
                      env_extra={"UET_PROVIDER_SERVICE_PATH": str(services), "FI_LOG_LEVEL": "warn"})
        assert res.returncode != 0
        assert f"{services}:2: start_index + num_indices > 4096" in res.stderr

    def test_a_name_of_the_service_file_is_served(self, fi_info, tmp_path):
        services = tmp_path / "services"
        services.write_text("mpi 100 2\n")
        res = fi_info("-p", "softuet", "-P", "mpi", env_extra={"UET_PROVIDER_SERVICE_PATH": str(services)})
        assert res.returncode == 0, res.stderr
