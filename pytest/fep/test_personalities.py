"""softuet's personalities seen the way the suite sees a provider: the address a probe's fi_getname gives,
read through the layout its manifest in cases/manifests/personalities/ declares (harness/inputs/address_layout.py,
the suite's own reader), names the probe's PIDonFEP, its IP address and the UDP port it is bound on."""
import errno
import ipaddress
import os
import socket
import subprocess

import pytest

from harness.inputs import address_layout, manifest
from softuet_helpers import REPO, built_probe, decode_strict, run_pingpong, server_address

PERSONALITIES = REPO / "cases" / "manifests" / "personalities"
FEP = "127.0.0.1"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((FEP, 0))
        return s.getsockname()[1]


def bound(port):
    """Is FEP:port taken (by the probe)?"""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind((FEP, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
        return False


@pytest.fixture
def probe_address(build_dir, softuet_env):
    """probe_address(env) -> (pid, blob): a softuet-transfer-probe server's fi_getname, while it runs."""
    servers = []

    def start(env):
        server = subprocess.Popen([built_probe(build_dir, "softuet-transfer-probe"), "serve", "1"],
                                  env=dict(softuet_env, SOFTUET_ADDR=FEP, **env), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        servers.append(server)
        return server.pid, bytes.fromhex(server_address(server))

    yield start
    for server in servers:
        server.stdin.close()  # the probe ends when its stdin closes
        server.wait(timeout=30)


def layout_of(name):
    return address_layout.resolve(manifest.load(PERSONALITIES / name).data.get("address_layout"))


def pid_on_fep(pid):
    return (pid & 0xFFF) or 1


def test_wide_address_reads_back_through_its_manifest(probe_address):
    port = free_port()
    pid, blob = probe_address({"SOFTUET_ADDR_LAYOUT": "wide52", "SOFTUET_UDP_PORT": str(port)})
    layout = layout_of("wide-address.yaml")
    assert layout["declared_by"] == "manifest" and layout["size"] == len(blob) == 52
    assert address_layout.read(layout, blob, "pid_on_fep") == pid_on_fep(pid)
    assert address_layout.read(layout, blob, "udp_port") == port
    assert address_layout.read(layout, blob, "fa")[:4] == ipaddress.IPv4Address(FEP).packed
    assert address_layout.read(layout, blob, "num_indices") == 1
    # Not softuet's own layout in disguise: read as that, the same bytes name another PIDonFEP and port.
    usual = address_layout.resolve("softuet")
    assert (address_layout.read(usual, blob, "pid_on_fep"), address_layout.read(usual, blob, "udp_port")) != \
        (pid_on_fep(pid), port)


def test_own_port_is_the_one_bound_and_the_one_named(probe_address):
    pid, blob = probe_address({"SOFTUET_UDP_PORT": "auto"})
    layout = layout_of("own-port.yaml")
    port = address_layout.read(layout, blob, "udp_port")
    assert port and bound(port)
    assert address_layout.read(layout, blob, "pid_on_fep") == pid_on_fep(pid)


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")
def test_own_port_traffic_decodes_by_hand_without_naming_its_ports(pair, softuet_env, build_dir, cmd_uet_decode,
                                                                   tmp_path):
    """Issue 35, item 11: uet-decode run by hand (no --port) learns the ports a provider chose, as a run's
    capture does; a capture of the own-port personality is all UET, none of it to 4793."""
    own = manifest.load(PERSONALITIES / "own-port.yaml").resolve(build=build_dir, port=4793)["environment"]
    pcap = tmp_path / "own-port.pcap"
    client_out, _ = run_pingpong(pair, dict(softuet_env, SOFTUET_UDP_PORT=own["SOFTUET_UDP_PORT"]), "rdm", 64, 10,
                                 pcap, capture_filter="udp")
    assert "=10" in client_out
    records = decode_strict(cmd_uet_decode, pcap)  # every frame UET, well-formed
    ports = {r["fields"]["udp.dstport"] for r in records}
    assert len(ports) == 2 and 4793 not in ports  # the client's and the server's own


def test_address_v1_hands_out_version_1_without_the_fa_valid_flag(probe_address):
    """Issue 35, item 6: a provider whose addresses are another version, its FA-valid flag clear, the FA there."""
    port = free_port()
    # Its manifest's address settings: the layout (from wide-address.yaml), the version and the flag.
    env = {k: v for k, v in manifest.load(PERSONALITIES / "address-v1.yaml").data["environment"].items()
           if k.startswith("SOFTUET_ADDR_")}
    pid, blob = probe_address(dict(env, SOFTUET_UDP_PORT=str(port)))
    layout = layout_of("address-v1.yaml")
    assert address_layout.read(layout, blob, "version") == 1
    assert address_layout.read(layout, blob, "flags") == 0b11101  # caps, PIDonFEP, indices, initiator: no FA-valid
    assert address_layout.read(layout, blob, "fa")[:4] == ipaddress.IPv4Address(FEP).packed
    assert address_layout.read(layout, blob, "udp_port") == port
    assert address_layout.read(layout, blob, "pid_on_fep") == pid_on_fep(pid)
