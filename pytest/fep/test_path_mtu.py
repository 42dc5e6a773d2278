"""softuet sizes its packets to the path MTU and never relies on IP fragmentation (fep/DESIGN.md "Packet size").

The fabtests list of test_fabtests.py runs over a 1500-byte veth pair (fewer iterations: the sizes matter
here, not the counts), captured whole on side a: with no filter, since a fragment after the first has no
UDP header and a "udp" filter would hide it. Every frame must be a whole datagram (IPv4: MF 0 and fragment
offset 0; IPv6: no fragment header), and the data packets must use the room: the largest payload a request
or a read response carries is the payload MTU, computed from the MTU and the header sizes of spec/wire.yaml.
A configured MTU (SOFTUET_MTU) smaller than the link's sizes the packets the same way; one larger than the
link's makes a send fail (EMSGSIZE) rather than leave in fragments."""
import json
import os
import pathlib
import struct

import pytest
import yaml

from containers import NamespacePair
from harness.run.fabtests import run_pair
from scapy_uet.pcapio import read_frames
from test_fabtests import IDS, PROGRAMS

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)")

REPO = pathlib.Path(__file__).resolve().parents[2]
NODES = yaml.safe_load((REPO / "spec" / "wire.yaml").read_text())["nodes"]
IP_UDP = NODES["ip"]["size"]["min"] + NODES["udp"]["size"]  # IPv4 without options (softuet sends none)
# A request in the standard header (RUD/ROD, SOM or continuation: both 24 bytes after buffer_offset).
STD_REQUEST = sum(NODES[n]["size"] for n in ("uet.pds.rud_rod_req", "uet.ses.std", "uet.ses.std.buffer_offset",
                                              "uet.ses.std.som"))
# The largest header of a packet that carries data: a rendezvous request with its extension header.
LARGEST_DATA_HEADER = STD_REQUEST + NODES["uet.ses.rendezvous"]["size"]
PAYLOAD_ALIGN = 8  # softuet's payload MTU is a multiple of its largest atomic datatype (fep/src/payload_mtu.hpp)
LINKTYPE_ETHERNET = 1
ETH_IPV4, ETH_IPV6 = 0x0800, 0x86DD
IPPROTO_UDP, IPV6_FRAGMENT = 17, 44
REQUEST_LAYERS = {"uet.pds.rud_rod_req", "uet.pds.rudi", "uet.pds.uud"}


def payload_mtu(mtu):
    """The payload bytes per packet softuet must choose on an IPv4 path of `mtu` bytes."""
    return (mtu - IP_UDP - LARGEST_DATA_HEADER) // PAYLOAD_ALIGN * PAYLOAD_ALIGN


def with_iterations(argv, most):
    """`argv` with its -I count lowered to `most`."""
    out = list(argv)
    if "-I" in out:
        at = out.index("-I") + 1
        out[at] = str(min(int(out[at]), most))
    return out


def fragmentation_problems(pcap):
    """Frames of the capture that are not whole datagrams: IP fragments, or UDP lengths that do not fill
    the IP packet. Parsed here from the bytes (Ethernet, IPv4/IPv6, UDP), apart from both UET decoders."""
    problems, frames = [], 0
    for n, f in enumerate(read_frames(str(pcap)), 1):
        assert f.linktype == LINKTYPE_ETHERNET, f"frame {n}: link type {f.linktype}"
        frames += 1
        data = f.data
        ethertype = struct.unpack_from("!H", data, 12)[0]
        if ethertype == ETH_IPV4:
            ip = data[14:]
            ihl = (ip[0] & 0xF) * 4
            total, flags_offset = struct.unpack_from("!H2xH", ip, 2)
            if flags_offset & 0x2000 or flags_offset & 0x1FFF:
                problems.append(f"frame {n}: IPv4 fragment (MF {flags_offset >> 13 & 1}, offset "
                                f"{(flags_offset & 0x1FFF) * 8})")
            elif ip[9] == IPPROTO_UDP and struct.unpack_from("!H", ip, ihl + 4)[0] != total - ihl:
                problems.append(f"frame {n}: UDP length {struct.unpack_from('!H', ip, ihl + 4)[0]} of an "
                                f"IPv4 payload of {total - ihl}")
        elif ethertype == ETH_IPV6:
            ip = data[14:]
            plen, next_header = struct.unpack_from("!HB", ip, 4)
            if next_header == IPV6_FRAGMENT:
                problems.append(f"frame {n}: IPv6 fragment header")
            elif next_header == IPPROTO_UDP and struct.unpack_from("!H", ip, 44)[0] != plen:
                problems.append(f"frame {n}: UDP length {struct.unpack_from('!H', ip, 44)[0]} of an IPv6 "
                                f"payload of {plen}")
    return problems, frames


def uet_records(cmd_uet_decode, pcap):
    """The decoded UET frames of a capture (the rest, e.g. fabtests' TCP exchange, is left out)."""
    res = cmd_uet_decode(pcap)
    assert res.returncode == 0, res.stderr
    records = [json.loads(line) for line in res.stdout.splitlines()]
    return [r for r in records if r["status"] != "non-uet"]


def largest(records, layer_set, standard_only=False):
    """The record of the largest payload among frames with one of `layer_set` (and the standard SES header
    when `standard_only`), or None."""
    chosen = [r for r in records if layer_set & set(r["layers"]) and r["payload_len"] > 0
              and (not standard_only or r["layers"][-1] == "uet.ses.std")]
    return max(chosen, key=lambda r: r["payload_len"], default=None)


@pytest.fixture(scope="module")
def fabtests_on_1500(softuet_env, tmp_path_factory):
    """Every program of the fabtests list over a 1500-byte link, all traffic captured on side a."""
    pcap = tmp_path_factory.mktemp("mtu1500") / "fabtests.pcap"
    with NamespacePair(mtu=1500) as pair:
        with pair.capture("a", pcap, filter=None) as capture:
            runs = [run_pair(pair, [argv[0], "-p", "softuet", *with_iterations(argv[1:], 20)], env=softuet_env,
                             timeout=120) for argv in PROGRAMS]
        return runs, pcap, capture.stats


class TestFabtestsOn1500ByteLink:
    def test_every_program_passes(self, fabtests_on_1500):
        runs, _, _ = fabtests_on_1500
        failed = [f"{name}:\n{run.describe()}" for name, run in zip(IDS, runs) if not run.ok]
        assert not failed, f"{len(runs) - len(failed)}/{len(runs)} passed\n" + "\n".join(failed)

    def test_no_frame_is_an_ip_fragment(self, fabtests_on_1500):
        _, pcap, stats = fabtests_on_1500
        problems, frames = fragmentation_problems(pcap)
        assert frames > 0, f"nothing captured ({stats})"
        assert not problems, f"{len(problems)} of {frames} frames:\n" + "\n".join(problems[:20])

    def test_data_packets_carry_a_whole_payload_mtu(self, fabtests_on_1500, cmd_uet_decode):
        _, pcap, _ = fabtests_on_1500
        records = uet_records(cmd_uet_decode, pcap)
        want = payload_mtu(1500)  # 1392 = 1500 - 28 - 80
        request = largest(records, REQUEST_LAYERS, standard_only=True)
        assert request is not None, "no data request captured"
        assert request["payload_len"] == want, request
        # Headers and payload: a full standard-header request is the largest-header packet's room short
        # of the MTU by its 24-byte extension header, no more.
        assert request["fields"]["ip.len"] == IP_UDP + STD_REQUEST + want, request
        # fi_rma_bw -o read: each read asks for one payload MTU, answered in one response.
        response = largest(records, {"uet.ses.response_data"})
        assert response is not None and response["payload_len"] == want, response
        assert max(r["fields"]["ip.len"] for r in records if "ip.len" in r["fields"]) <= 1500


def test_configured_mtu_below_the_links_sizes_the_packets(softuet_env, tmp_path, cmd_uet_decode):
    """SOFTUET_MTU=1280 on both FEPs of a 9000-byte link: packets of a 1280-byte path, whole."""
    pcap = tmp_path / "mtu1280.pcap"
    env = dict(softuet_env, SOFTUET_MTU="1280")
    with NamespacePair(mtu=9000) as pair:
        with pair.capture("a", pcap, filter=None):
            runs = [run_pair(pair, [argv[0], "-p", "softuet", *argv[1:]], env=env, timeout=60)
                    for argv in (["fi_rdm_tagged_bw", "-S", "5000", "-W", "16", "-I", "20"],
                                 ["fi_rma_bw", "-e", "rdm", "-o", "read", "-S", "10000", "-I", "10"])]
    assert all(run.ok for run in runs), "\n".join(run.describe() for run in runs)
    problems, _ = fragmentation_problems(pcap)
    assert not problems, "\n".join(problems[:20])
    records = uet_records(cmd_uet_decode, pcap)
    want = payload_mtu(1280)  # 1168
    request = largest(records, REQUEST_LAYERS, standard_only=True)
    assert request is not None and request["payload_len"] == want, request
    assert request["fields"]["ip.len"] == IP_UDP + STD_REQUEST + want, request
    response = largest(records, {"uet.ses.response_data"})
    assert response is not None and response["payload_len"] == want, response


def test_configured_mtu_above_the_links_fails_the_send_instead_of_fragmenting(softuet_env, tmp_path):
    """SOFTUET_MTU=9000 on a 1500-byte link: a 3000-byte datagram does not fit the path, and fragmentation is
    off, so the send fails with FI_EMSGSIZE and nothing of it reaches the wire in pieces."""
    pcap = tmp_path / "too_large.pcap"
    env = dict(softuet_env, SOFTUET_MTU="9000")
    with NamespacePair(mtu=1500) as pair:
        with pair.capture("a", pcap, filter=None):
            run = run_pair(pair, ["fi_pingpong", "-p", "softuet", "-e", "dgram", "-S", "3000", "-I", "5"], env=env,
                           timeout=30)
    assert run.client_rc != 0, run.describe()
    assert "Message too long" in run.client_output, run.describe()
    problems, _ = fragmentation_problems(pcap)
    assert not problems, "\n".join(problems[:20])
