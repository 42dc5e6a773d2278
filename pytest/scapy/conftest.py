"""Fixtures of the Scapy UET tests (run: /usr/bin/python3 -m pytest -q pytest/scapy); the helpers they share
are in scapy_frames.py."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import pytest  # noqa: E402

from scapy_frames import eth_ip_udp  # noqa: E402


@pytest.fixture
def udp_frame():
    return eth_ip_udp
