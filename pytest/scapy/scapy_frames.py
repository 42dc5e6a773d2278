"""Frames and decoding helpers the Scapy UET tests share. A module of its own name, not conftest: every test
folder has a conftest, and `from conftest import` takes whichever pytest imported last."""

import os
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

warnings.filterwarnings("ignore", category=SyntaxWarning)

from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402

from scapy_uet.record import decode_record  # noqa: E402

MAC_A, MAC_B = "02:00:00:00:00:01", "02:00:00:00:00:02"
IP_A, IP_B = "198.18.0.1", "198.18.0.2"
IP6_A, IP6_B = "2001:db8::1", "2001:db8::2"

GOLDEN = os.path.join(ROOT, "captures", "golden")


def eth_ip_udp(dport=4793, sport=0xC001):
    return Ether(src=MAC_A, dst=MAC_B) / IP(src=IP_A, dst=IP_B) / UDP(sport=sport, dport=dport)


def eth_ip6_udp(dport=4793, sport=0xC001):
    return Ether(src=MAC_A, dst=MAC_B) / IPv6(src=IP6_A, dst=IP6_B) / UDP(sport=sport,
                                                                         dport=dport)


def decode(pkt, linktype=1, snap=None, port=4793):
    data = bytes(pkt)
    wirelen = len(data)
    if snap is not None:
        data = data[:snap]
    return decode_record(data, linktype, len(data), wirelen, port)


def hexb(text):
    """bytes from a hex string written with spaces for readability."""
    return bytes.fromhex("".join(text.split()))


def diag_set(rec):
    return {(d["kind"], d["header"], d["field"]) for d in rec["diagnostics"]}

