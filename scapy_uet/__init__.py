"""Scapy layers for Ultra Ethernet Transport (UEC 1.0) and a decoder producing the suite's
decode record (codec/DECODE-OUTPUT.md).

    from scapy_uet import *
    pkt = Ether()/IP()/UDP()/UET_PDS_RUD_ROD_REQ(psn=100)/UET_SES_STD(opcode=UET_SEND)
    from scapy_uet.record import decode_record
"""

from .layers import *  # noqa: F401,F403
from .layers import (ALL_LAYERS, UDP_PORT, UET_IP_PROTO, bind_uet_port,  # noqa: F401
                     unbind_uet_port)
