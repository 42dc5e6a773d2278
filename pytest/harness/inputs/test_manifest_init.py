"""./uet manifest init: fi_info's text read back (captured from libfabric 2.1.0's fi_info in
fi_info_samples/), the starter manifest it makes of it, init against softuet and tcp;ofi_rxm (each file
passes `harness.inputs.manifest check`), and what a lab meets when something is wrong: exit 2 for bad usage,
3 for a libfabric that cannot answer, 1 for a file not written."""
import os
import pathlib
import re
import stat
import subprocess
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.inputs import fi_info_text, manifest_init, provider_probe  # noqa: E402
from harness.inputs.libfabric_prefix import suite_prefix  # noqa: E402

SAMPLES = pathlib.Path(__file__).with_name("fi_info_samples")
FI_ADDR_UET = 0x55455400
SOFTUET_RDM_CAPS = ["FI_MSG", "FI_RMA", "FI_TAGGED", "FI_ATOMIC", "FI_READ", "FI_WRITE", "FI_RECV", "FI_SEND",
                    "FI_REMOTE_READ", "FI_REMOTE_WRITE", "FI_LOCAL_COMM", "FI_REMOTE_COMM", "FI_SOURCE",
                    "FI_DIRECTED_RECV"]


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def softuet_probe(numbers=None) -> provider_probe.Probe:
    offer = fi_info_text.summarize(fi_info_text.parse_verbose(sample("softuet-v.txt")), "softuet")
    numbers = {"FI_EP_RDM": [FI_ADDR_UET], "FI_EP_DGRAM": [FI_ADDR_UET]} if numbers is None else numbers
    return provider_probe.Probe(offer, "2.1.0", numbers, {}, ["fi_info -p softuet -v"])


def prose(text: str) -> str:
    """The comments of a manifest as one line of words (wrapping undone)."""
    return " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))


# The keys the schema marks for init to list (x-starter), in its order: what a starter must name.
ANY_KEYS = ["provider_version", "environment", "libfabric", "peer_netns", "host_interface", "features"]
UET_KEYS = ["spec_version", "address_layout", "wire", "indirect_job_id_environment", "indirect_job_id",
            "fallback_job_id_environment", "privileged_entity", "predefined_service_names", "job_id_methods"]
COMMENTED_KEY = re.compile(r"# ([a-z_]+): ")


def commented_keys(text: str) -> list[str]:
    """The keys a starter lists commented out (`# KEY: VALUE`)."""
    return [m.group(1) for line in text.splitlines() if (m := COMMENTED_KEY.match(line))]


def uncommented(text: str, keys) -> str:
    """`text` with the commented-out blocks of `keys` (a key's line and its comment's lines) made YAML, as a
    vendor does by taking off each line's leading '# '."""
    out, taking = [], False
    for line in text.splitlines():
        m = COMMENTED_KEY.match(line)
        taking = m.group(1) in keys if m else taking and re.match(r"#\s{2,}# ", line) is not None
        out.append(line[2:] if taking else line)
    return "\n".join(out) + "\n"


def comment_of(text: str, key: str) -> str:
    """The comment beside a top-level key, with its continuation lines."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
    parts = [lines[start].split("# ", 1)[1]]
    for line in lines[start + 1:]:
        if not line.startswith(" " * 10) or "# " not in line:
            break
        parts.append(line.split("# ", 1)[1])
    return " ".join(parts)


@pytest.fixture(scope="session")
def cmd_init():
    """cmd_init(*args, env=None) -> CompletedProcess of `python3 -m harness.inputs.manifest_init ARGS` (./uet manifest init)."""
    def run(*args, env=None, timeout=120):
        full = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
        return subprocess.run([sys.executable, "-m", "harness.inputs.manifest_init", *map(str, args)], cwd=REPO, env=full,
                              capture_output=True, text=True, timeout=timeout)
    return run


@pytest.fixture(scope="session")
def cmd_check():
    def run(path):
        return subprocess.run([sys.executable, "-m", "harness.inputs.manifest", "check", str(path)], cwd=REPO,
                              env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=60)
    return run


@pytest.fixture(scope="session")
def libfabric_prefix():
    prefix = suite_prefix()
    if not (prefix / "bin" / "fi_info").exists():
        pytest.skip(f"no fi_info in {prefix} (./uet setup builds deps/libfabric)")
    return prefix


@pytest.fixture(scope="session")
def softuet_path(build_dir):
    lib = build_dir / "lib"
    if not (lib / "libsoftuet-fi.so").exists():
        pytest.fail(f"softuet is not built in {lib}: run ./uet build (or set UET_BUILD)")
    return lib


def fake_prefix(folder: pathlib.Path, script: str, library: bool = True) -> pathlib.Path:
    """A libfabric installation whose bin/fi_info is `script` (Python) and whose lib/libfabric.so is empty."""
    (folder / "bin").mkdir(parents=True)
    fi_info = folder / "bin" / "fi_info"
    fi_info.write_text("#!/usr/bin/python3\nimport sys\n" + script)
    fi_info.chmod(fi_info.stat().st_mode | stat.S_IXUSR)
    if library:
        (folder / "lib").mkdir()
        (folder / "lib" / "libfabric.so").write_bytes(b"")
    return folder


def replaying(text: str) -> str:
    """A fake fi_info that answers -v with `text` and --version as libfabric 9.9.9."""
    return ("if '--version' in sys.argv: print('fi_info: 9.9.9\\nlibfabric: 9.9.9')\n"
            f"elif '-t' in sys.argv: sys.exit(61)\nelse: sys.stdout.write({text!r})\n")


class TestParseVerbose:
    def test_softuet_s_two_structures_with_their_nested_blocks(self):
        docs = fi_info_text.parse_verbose(sample("softuet-v.txt"))
        assert len(docs) == 2
        rdm, dgram = docs
        assert rdm["caps"] == SOFTUET_RDM_CAPS
        assert rdm["mode"] == []
        assert rdm["addr_format"] == "Unknown"
        assert rdm["src_addrlen"] == "40"
        assert rdm["src_addr"] == ""  # fi_info prints nothing for a format it does not know
        assert rdm["dest_addr"] == "(null)"
        assert rdm["fi_ep_attr"]["type"] == "FI_EP_RDM"
        assert rdm["fi_ep_attr"]["max_msg_size"] == "67108864"
        assert rdm["fi_domain_attr"]["mr_mode"] == ["FI_MR_ENDPOINT"]
        assert rdm["fi_domain_attr"]["name"] == "192.0.2.2"
        assert rdm["fi_fabric_attr"] == {"name": "softuet", "prov_name": "softuet", "prov_version": "0.1",
                                         "api_version": "2.1"}
        assert rdm["nic"] == "(nil)"
        assert rdm["fi_tx_attr"]["msg_order"] == []
        assert dgram["fi_ep_attr"]["type"] == "FI_EP_DGRAM"
        assert dgram["caps"] == ["FI_MSG", "FI_RECV", "FI_SEND", "FI_LOCAL_COMM", "FI_REMOTE_COMM", "FI_SOURCE"]

    def test_a_provider_s_own_lines_and_a_nested_nic_are_read_past(self):
        text = ("softuet: warming up\n---\nfi_info:\n    caps: [ FI_MSG ]\nprovider chatter: here\n"
                "    nic:\n        device_attr:\n            name: mlx5_0\n        bus_attr: (nil)\n"
                "    fi_ep_attr:\n        type: FI_EP_DGRAM\n\tbogus\n---\nfi_info:\n    addr_format: FI_ADDR_UET\n")
        assert fi_info_text.parse_verbose(text) == [
            {"caps": ["FI_MSG"], "nic": {"device_attr": {"name": "mlx5_0"}, "bus_attr": "(nil)"},
             "fi_ep_attr": {"type": "FI_EP_DGRAM"}},
            {"addr_format": "FI_ADDR_UET"}]

    def test_nothing_to_read(self):
        assert fi_info_text.parse_verbose("") == []
        assert fi_info_text.parse_verbose("fi_getinfo: -61 (No data available)\n") == []


class TestSummarize:
    def test_softuet_by_endpoint_type(self):
        offer = fi_info_text.summarize(fi_info_text.parse_verbose(sample("softuet-v.txt")), "softuet")
        assert list(offer.endpoints) == ["FI_EP_RDM", "FI_EP_DGRAM"]
        rdm = offer.endpoints["FI_EP_RDM"]
        assert (rdm.kind, rdm.caps, rdm.mr_mode, rdm.addr_formats, rdm.src_addrlens, rdm.domains) == (
            "rdm", SOFTUET_RDM_CAPS, ["FI_MR_ENDPOINT"], ["Unknown"], [40], ["192.0.2.2"])
        assert offer.endpoints["FI_EP_DGRAM"].kind == "dgram"
        assert offer.versions == ["0.1"] and offer.others == []

    def test_tcp_rxm_merges_its_interfaces(self):
        offer = fi_info_text.summarize(fi_info_text.parse_verbose(sample("tcp_rxm-v.txt")), "tcp;ofi_rxm")
        assert list(offer.endpoints) == ["FI_EP_RDM"]
        rdm = offer.endpoints["FI_EP_RDM"]
        assert (rdm.mr_mode, rdm.addr_formats, rdm.src_addrlens, rdm.domains) == (
            [], ["FI_SOCKADDR_IN", "FI_SOCKADDR_IN6"], [16, 28], ["eth0", "lo"])
        assert offer.versions == ["201.0"]

    def test_a_provider_layered_over_the_one_asked_for_is_not_its_offer(self):
        # fi_info -p udp also answers for udp;ofi_rxd, whose RDM endpoint is not udp's
        offer = fi_info_text.summarize(fi_info_text.parse_verbose(sample("udp-v.txt")), "udp")
        assert list(offer.endpoints) == ["FI_EP_DGRAM"]
        assert offer.others == ["udp;ofi_rxd"]


class TestOtherOutputs:
    def test_fi_info_l_names_the_providers(self):
        assert fi_info_text.parse_list(sample("list.txt")) == [
            "ofi_rxm", "ofi_rxd", "shm", "udp", "tcp", "sockets", "ofi_hook_noop", "off_coll", "softuet"]

    def test_fi_info_version(self):
        assert fi_info_text.version_line("fi_info: 2.1.0\nlibfabric: 2.1.0\nlibfabric api: 2.1\n") == "2.1.0"
        assert fi_info_text.version_line("garbage\n") == ""


class TestUetAndLayout:
    def test_fi_addr_uet_is_the_suite_s_choice(self):
        assert manifest_init.fi_addr_uet() == FI_ADDR_UET

    def test_an_unknown_format_whose_number_is_fi_addr_uet(self):
        looks, why = manifest_init.uet_evidence(softuet_probe().offer, {"FI_EP_RDM": [FI_ADDR_UET]}, FI_ADDR_UET)
        assert looks is True
        assert why == ("fi_info: addr_format Unknown (its libfabric has no FI_ADDR_UET); fi_getinfo gives 0x55455400, "
                       "the suite's FI_ADDR_UET (spec/wire.yaml choice fi-addr-uet-value)")

    def test_an_unknown_format_of_another_number_is_not_claimed(self):
        looks, why = manifest_init.uet_evidence(softuet_probe().offer, {"FI_EP_RDM": [0x1234]}, FI_ADDR_UET)
        assert looks is False
        assert why.startswith("fi_info: addr_format Unknown, fi_getinfo gives 0x1234: not the suite's FI_ADDR_UET "
                              "0x55455400; if it is yours, say uet: true")

    def test_an_unknown_format_whose_number_could_not_be_read_is_not_claimed(self):
        assert manifest_init.uet_evidence(softuet_probe().offer, {}, FI_ADDR_UET) == (
            False, "fi_info: addr_format Unknown, and fi_getinfo's number for it could not be read: if it is "
                   "FI_ADDR_UET, say uet: true")

    def test_a_libfabric_that_names_fi_addr_uet(self):
        offer = fi_info_text.summarize([{"addr_format": "FI_ADDR_UET", "fi_fabric_attr": {"prov_name": "v"}}], "v")
        assert manifest_init.uet_evidence(offer, {}, FI_ADDR_UET) == (True, "fi_info: addr_format FI_ADDR_UET")

    def test_a_socket_address_is_not_uet(self):
        offer = fi_info_text.summarize(fi_info_text.parse_verbose(sample("tcp_rxm-v.txt")), "tcp;ofi_rxm")
        assert manifest_init.uet_evidence(offer, {}, FI_ADDR_UET) == (
            False, "fi_info: addr_format FI_SOCKADDR_IN, FI_SOCKADDR_IN6: not FI_ADDR_UET")

    def test_shipped_layouts_by_size(self):
        assert manifest_init.layouts_of_size(40) == ["softuet"]
        assert manifest_init.layouts_of_size(32) == ["uet-address-layout"]
        assert manifest_init.layouts_of_size(16) == []

    def test_fi_provider_path_as_a_manifest_value(self):
        assert manifest_init.provider_path_value(str(REPO / "build" / "lib")) == "{build}/lib"
        assert manifest_init.provider_path_value("/opt/v{1}/lib::/opt/x") == "/opt/v{{1}}/lib:/opt/x"


class TestCompose:
    def test_softuet_s_claims_and_nothing_more(self):
        text = manifest_init.compose(softuet_probe(), command="./uet manifest init --provider softuet",
                                     provider_path=None, uet_value=FI_ADDR_UET)
        assert yaml.safe_load(text) == {"provider": "softuet", "uet": True, "profiles": ["ai_base"],
                                        "endpoint_types": ["rdm", "dgram"]}

    def test_every_claim_says_where_it_came_from(self):
        text = manifest_init.compose(softuet_probe(), command="init", provider_path="/opt/softuet/lib",
                                     uet_value=FI_ADDR_UET)
        assert comment_of(text, "provider").startswith("fi_info: fi_fabric_attr.prov_name (prov_version 0.1;")
        assert comment_of(text, "uet").startswith("fi_info: addr_format Unknown (its libfabric has no FI_ADDR_UET)")
        assert comment_of(text, "profiles").startswith("NOT from fi_info: the schema has a UET provider claim a profile")
        assert comment_of(text, "endpoint_types") == "fi_info: fi_ep_attr.type FI_EP_RDM, FI_EP_DGRAM"
        assert "  FI_PROVIDER_PATH: /opt/softuet/lib # init found softuet through FI_PROVIDER_PATH=/opt/softuet/lib" \
            in text.splitlines()

    def test_caps_mr_modes_and_formats_are_comments(self):
        text = manifest_init.compose(softuet_probe(), command="init", provider_path=None, uet_value=FI_ADDR_UET)
        lines = text.splitlines()
        assert "#   FI_EP_RDM:" in lines and "#   FI_EP_DGRAM:" in lines
        assert "#     mr_mode: FI_MR_ENDPOINT" in lines
        assert "#     addr_format: Unknown (fi_getinfo: 0x55455400); src_addrlen: 40" in lines
        assert "#     caps: FI_MSG, FI_RECV, FI_SEND, FI_LOCAL_COMM, FI_REMOTE_COMM, FI_SOURCE" in lines

    def test_the_address_size_of_a_shipped_layout_is_said_not_claimed(self):
        text = manifest_init.compose(softuet_probe(), command="init", provider_path=None, uet_value=FI_ADDR_UET)
        assert ("src_addrlen is 40 bytes, the size of `softuet` in spec/address-layouts.yaml. A size is not a layout"
                in prose(text))
        assert "address_layout" not in yaml.safe_load(text)

    def test_what_fi_info_cannot_tell_is_every_key_the_schema_marks(self):
        text = manifest_init.compose(softuet_probe(), command="init", provider_path=None, uet_value=FI_ADDR_UET)
        assert commented_keys(text) == ANY_KEYS + UET_KEYS

    def test_a_key_written_above_is_not_listed_again(self):
        text = manifest_init.compose(softuet_probe(), command="init", provider_path="/opt/softuet/lib",
                                     uet_value=FI_ADDR_UET)
        assert "environment" not in commented_keys(text)
        assert yaml.safe_load(text)["environment"] == {"FI_PROVIDER_PATH": "/opt/softuet/lib"}

    def test_a_provider_whose_format_number_is_not_fi_addr_uet_is_not_uet_but_gets_the_uet_keys(self):
        probe = softuet_probe(numbers={"FI_EP_RDM": [0x1234], "FI_EP_DGRAM": [0x1234]})
        text = manifest_init.compose(probe, command="init", provider_path=None, uet_value=FI_ADDR_UET)
        assert yaml.safe_load(text)["uet"] is False and yaml.safe_load(text)["profiles"] == []
        assert commented_keys(text) == ANY_KEYS + UET_KEYS
        assert ("fi_info does not show this provider as UET (uet: false above), but a provider may be UET whatever "
                "fi_info says") in prose(text)


class TestInit:
    def test_softuet(self, cmd_init, cmd_check, softuet_path, libfabric_prefix, tmp_path):
        out = tmp_path / "softuet-starter.yaml"
        run = cmd_init("--provider", "softuet", "-o", out, env={"FI_PROVIDER_PATH": str(softuet_path)})
        assert run.returncode == 0, run.stderr
        assert run.stdout == (f"manifest init: wrote {out} (softuet: a UET provider; endpoint types rdm, dgram). "
                              f"Fill in what its end lists, then: ./uet manifest check {out}\n")
        check = cmd_check(out)
        assert check.returncode == 0, check.stderr
        assert check.stdout == f"{out}: valid (softuet-starter: provider softuet, profiles ai_base)\n"
        text = out.read_text()
        assert yaml.safe_load(text) == {
            "provider": "softuet", "uet": True, "profiles": ["ai_base"], "endpoint_types": ["rdm", "dgram"],
            "environment": {"FI_PROVIDER_PATH": manifest_init.provider_path_value(str(softuet_path))}}
        assert "fi_getinfo gives 0x55455400, the suite's FI_ADDR_UET" in comment_of(text, "uet")

    def test_tcp_rxm_through_the_front_door(self, cmd_check, libfabric_prefix, tmp_path):
        out = tmp_path / "tcp.yaml"
        run = subprocess.run([str(REPO / "uet"), "manifest", "init", "--provider", "tcp;ofi_rxm", "-o", out.name],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120,
                             env={k: v for k, v in os.environ.items() if k != "FI_PROVIDER_PATH"})
        assert run.returncode == 0, run.stderr
        assert cmd_check(out).returncode == 0
        assert yaml.safe_load(out.read_text()) == {"provider": "tcp;ofi_rxm", "uet": False, "profiles": [],
                                                   "endpoint_types": ["rdm"]}

    def test_udp_is_dgram_only_and_names_what_is_layered_over_it(self, cmd_init, libfabric_prefix):
        run = cmd_init("--provider", "udp")
        assert run.returncode == 0, run.stderr
        assert yaml.safe_load(run.stdout)["endpoint_types"] == ["dgram"]
        assert "# fi_info -p udp also answered for udp;ofi_rxd: providers layered over it" in run.stdout

    def test_the_address_format_number_comes_from_fi_getinfo(self, softuet_path, libfabric_prefix):
        inst = provider_probe.installation(libfabric_prefix)
        env = dict(os.environ, FI_PROVIDER="softuet", FI_PROVIDER_PATH=str(softuet_path), PYTHONPATH=str(REPO))
        run = subprocess.run([sys.executable, "-m", "harness.inputs.fi_addr_format", str(inst.library), "softuet"], env=env,
                             capture_output=True, text=True, timeout=60)
        rows = yaml.safe_load(run.stdout)
        assert [(r["ep_type"], r["addr_format"], r["src_addrlen"], len(r["src_addr"])) for r in rows] == [
            (3, FI_ADDR_UET, 40, 80), (2, FI_ADDR_UET, 40, 80)]

    def test_a_libfabric_that_names_fi_addr_uet_needs_no_number(self, cmd_init, tmp_path):
        text = sample("softuet-v.txt").replace("addr_format: Unknown", "addr_format: FI_ADDR_UET")
        prefix = fake_prefix(tmp_path / "lf", replaying(text))
        run = cmd_init("--provider", "softuet", "--libfabric", prefix)
        assert run.returncode == 0, run.stderr
        assert comment_of(run.stdout, "uet") == "fi_info: addr_format FI_ADDR_UET"
        assert "fi_info (libfabric 9.9.9) says about it: fi_info -p softuet -v." in prose(run.stdout)


class TestUetKeysWhateverFiInfoSays:
    """libfabric's udp core shows FI_SOCKADDR_IN: its starter says uet: false, and still lists every UET key
    of the schema for a provider over it that is UET; check passes it as written, refuses each placeholder
    uncommented and not filled in, and passes it filled in."""
    UNFILLED = ["provider_version", "environment.NAME", "libfabric", "peer_netns", "host_interface", "features",
                "spec_version", "address_layout", "wire.interface", "wire.udp_port",
                "indirect_job_id_environment.NAME", "indirect_job_id", "fallback_job_id_environment.NAME",
                "privileged_entity.start", "privileged_entity.environment.NAME", "privileged_entity.grant.0",
                "privileged_entity.revoke.0", "predefined_service_names.0", "job_id_methods.0"]

    @pytest.fixture(scope="class")
    def udp_starter(self, cmd_init, libfabric_prefix, tmp_path_factory):
        out = tmp_path_factory.mktemp("udp") / "udp.yaml"
        run = cmd_init("--provider", "udp", "-o", out, env={"FI_PROVIDER_PATH": ""})
        assert run.returncode == 0, run.stderr
        return out

    def test_it_is_not_uet_by_fi_info_and_lists_every_uet_key(self, udp_starter):
        text = udp_starter.read_text()
        assert yaml.safe_load(text) == {"provider": "udp", "uet": False, "profiles": [], "endpoint_types": ["dgram"]}
        assert commented_keys(text) == ANY_KEYS + UET_KEYS
        assert UET_KEYS == manifest_init.starter_keys(manifest_init._schema(), "uet")
        assert "but a provider may be UET whatever fi_info says" in prose(text)

    def test_as_written_it_passes_check(self, udp_starter, cmd_check):
        check = cmd_check(udp_starter)
        assert (check.returncode, check.stderr) == (0, "")

    def test_uncommented_and_not_filled_in_each_placeholder_is_refused_by_name(self, udp_starter, cmd_check, tmp_path):
        text = uncommented(udp_starter.read_text(), ANY_KEYS + UET_KEYS)
        out = tmp_path / "vendor.yaml"
        out.write_text(text.replace("\nuet: false ", "\nuet: true  ").replace("\nprofiles: [] ", "\nprofiles: [ai_base]"))
        check = cmd_check(out)
        assert check.returncode == 1
        assert check.stderr.splitlines() == [
            f"{out}: {key}: still FILL-IN, the placeholder of manifest init: give its value (manifest.schema.yaml says "
            "what it means) or delete the key" for key in self.UNFILLED]

    def test_filled_in_it_is_a_uet_provider(self, udp_starter, cmd_check, tmp_path):
        text = uncommented(udp_starter.read_text(), ["address_layout", "wire", "indirect_job_id_environment",
                                                     "indirect_job_id", "job_id_methods"])
        for placeholder, value in [("\nuet: false ", "\nuet: true  "), ("\nprofiles: [] ", "\nprofiles: [ai_base]"),
                                   ("address_layout: FILL-IN", "address_layout: uet-address-layout"),
                                   ("{interface: FILL-IN, udp_port: FILL-IN}", "{interface: veth0, udp_port: auto}"),
                                   ("indirect_job_id_environment: {NAME: FILL-IN}",
                                    "indirect_job_id_environment: {VENDOR_JOB_ID: '7'}"),
                                   ("indirect_job_id: FILL-IN", "indirect_job_id: 7"),
                                   ("job_id_methods: [FILL-IN]", "job_id_methods: [indirect]")]:
            assert placeholder in text
            text = text.replace(placeholder, value)
        out = tmp_path / "vendor.yaml"
        out.write_text(text)
        check = cmd_check(out)
        assert (check.returncode, check.stderr) == (0, "")
        assert check.stdout == f"{out}: valid (vendor: provider udp, profiles ai_base)\n"


class TestUsage:
    @pytest.mark.parametrize("args, said", [
        ((), "the following arguments are required: --provider"),
        (("--provider", "udp", "--bogus"), "unrecognized arguments: --bogus"),
        (("--provider", "udp", "--timeout", "0"), "argument --timeout: '0' is not a deadline"),
        (("--provider",), "argument --provider: expected one argument")])
    def test_bad_usage_is_2_at_once(self, args, said):
        run = subprocess.run([str(REPO / "uet"), "manifest", "init", *args], capture_output=True, text=True, timeout=120)
        assert run.returncode == 2
        assert said in run.stderr
        assert "setup:" not in run.stdout + run.stderr and "building" not in run.stdout + run.stderr  # answered first

    def test_an_output_in_a_missing_folder_is_usage(self, cmd_init, tmp_path):
        run = cmd_init("--provider", "udp", "-o", tmp_path / "no" / "x.yaml")
        assert run.returncode == 2
        assert run.stderr == (f"manifest init: {tmp_path / 'no'} does not exist: -o names a file in an existing "
                              "folder\n")


class TestRefusals:
    def test_an_existing_file_is_not_overwritten_without_force(self, cmd_init, libfabric_prefix, tmp_path):
        out = tmp_path / "mine.yaml"
        out.write_text("provider: mine\n")
        run = cmd_init("--provider", "udp", "-o", out)
        assert run.returncode == 1
        assert run.stderr == f"manifest init: {out} exists: not overwritten (--force replaces it)\n"
        assert out.read_text() == "provider: mine\n"
        run = cmd_init("--provider", "udp", "-o", out, "--force")
        assert run.returncode == 0, run.stderr
        assert yaml.safe_load(out.read_text())["provider"] == "udp"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.yaml"]  # no temporary file left

    def test_a_provider_that_libfabric_does_not_have(self, cmd_init, libfabric_prefix):
        run = cmd_init("--provider", "nosuchprov", env={"FI_PROVIDER_PATH": ""})
        assert run.returncode == 3
        assert run.stderr.startswith(f"manifest init: libfabric 2.1.0 at {libfabric_prefix} does not offer provider "
                                     "'nosuchprov': no provider nosuchprov (fi_getinfo: -61 (No data available)); ")
        assert run.stderr.rstrip().endswith("The providers it sees: ofi_rxm, ofi_rxd, shm, udp, tcp, sockets, "
                                            "ofi_hook_noop, off_coll")
        assert run.stdout == ""

    def test_a_prefix_without_fi_info(self, cmd_init, tmp_path):
        run = cmd_init("--provider", "udp", "--libfabric", tmp_path)
        assert run.returncode == 3
        assert run.stderr.startswith(f"manifest init: no fi_info at {tmp_path / 'bin' / 'fi_info'}: ")

    def test_a_prefix_without_libfabric_so(self, cmd_init, tmp_path):
        prefix = fake_prefix(tmp_path / "lf", replaying(""), library=False)
        run = cmd_init("--provider", "udp", "--libfabric", prefix)
        assert run.returncode == 3
        assert run.stderr == (f"manifest init: no libfabric.so in {prefix / 'lib'}, {prefix / 'lib64'}: {prefix} is "
                              "not a libfabric installation\n")

    def test_a_provider_with_only_msg_endpoints(self, cmd_init, tmp_path):
        text = sample("udp-v.txt").replace("FI_EP_DGRAM", "FI_EP_MSG")
        prefix = fake_prefix(tmp_path / "lf", replaying(text))
        out = tmp_path / "msg.yaml"
        run = cmd_init("--provider", "udp", "--libfabric", prefix, "-o", out)
        assert run.returncode == 1
        assert run.stderr == ("manifest init: udp offers only FI_EP_MSG: the suite's cases test FI_EP_RDM and "
                              "FI_EP_DGRAM endpoints; no manifest written\n")
        assert not out.exists()

    @pytest.mark.parametrize("mode, said", [
        ("getinfo-hang", "manifest init: fi_info -p hostile -v did not answer within 2 s (the provider hangs in "
                         "fi_getinfo?): no manifest written\n"),
        ("getinfo-segv", "manifest init: fi_info -p hostile -v died of signal SIGSEGV (in the provider's "
                         "fi_getinfo?): no manifest written\n")])
    def test_a_provider_that_hangs_or_crashes_in_fi_getinfo(self, cmd_init, hostile_provider, processes_mapping,
                                                            libfabric_prefix, tmp_path, mode, said):
        out = tmp_path / "hostile.yaml"
        run = cmd_init("--provider", "hostile", "--timeout", "2", "-o", out,
                       env={"FI_PROVIDER_PATH": str(hostile_provider), "HOSTILE_PROVIDER_MODE": mode})
        assert (run.returncode, run.stderr) == (1, said)  # for a hang: the --timeout's own message
        assert not out.exists()
        assert processes_mapping(hostile_provider / "libhostile-fi.so") == []
