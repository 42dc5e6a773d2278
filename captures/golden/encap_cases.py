"""Golden frames of every link type and encapsulation UET arrives in, for make_golden.py: Ethernet (with
VLAN, padding and IP options), Linux cooked captures v1 and v2, raw IP, UET over IP protocol 253, IPv4 and
IPv6, pcapng with nanosecond timestamps."""

from golden_build import *  # noqa: F401,F403

def encap_eth():
    c = Capture("encap.pcap", 1, "Ethernet link type: IPv4, IPv6, 802.1Q, padding, IP options, "
                "UET over IP protocol 253 with the entropy header, TSS, non-UET traffic")
    std = lambda **kw: UET_SES_STD(opcode=UET_SEND, message_id=0x101, job_id=0x1234,  # noqa
                                   request_length=16, **kw)
    c.add("IPv4 UDP 4793: RUD request + standard SEND + 16 bytes",
          v4(req(), std(), pay(16)))
    c.add("IPv6 UDP 4793: ROD request + standard TAGGED_SEND",
          v6(UET_PDS_RUD_ROD_REQ(type=ROD_REQ, psn=7), UET_SES_STD(
              opcode=UET_TAGGED_SEND, message_id=2, match_bits=0xFEEDFACECAFEBEEF,
              request_length=8), pay(8)))
    c.add("802.1Q VLAN 100 prio 5 DEI 1, IPv4 UET",
          eth() / Dot1Q(prio=5, id=1, vlan=100) / ip4() / udp() / req() / std() / pay(16))
    c.add("802.1Q VLAN 4095 prio 7, IPv6 UET",
          eth() / Dot1Q(prio=7, id=0, vlan=4095) / ip6() / udp() / req() / std() / pay(16))
    c.add("Ethernet padding after a short IPv4 UET frame (UUD, no SES)",
          eth() / ip4() / udp() / UET_PDS_UUD() / Padding(load=b"\0" * 14))
    c.add("Ethernet padding (non-zero) after an IPv4 ACK",
          eth() / ip4() / udp() / UET_PDS_ACK(cack_psn=5) / Padding(load=b"\xAA" * 2))
    c.add("IPv4 DSCP 46 ECN 2, DF, ttl 3",
          eth() / ip4(tos=0xBA, flags=2, ttl=3, id=0x4242) / udp() / req() / std() / pay(16))
    c.add("IPv4 header with options (ihl 6)",
          eth() / ip4(options=[IPOption_NOP(), IPOption_NOP(), IPOption_NOP(),
                               IPOption_EOL()]) / udp() / req() / std() / pay(16))
    c.add("IPv6 traffic class 0xB9, flow label 0xABCDE, hop limit 7",
          eth() / ip6(tc=0xB9, fl=0xABCDE, hlim=7) / udp() / req() / std() / pay(16))
    c.add("IPv4 UDP with checksum 0",
          eth() / ip4() / udp(chksum=0) / req() / std() / pay(16))
    c.add("IPv4 protocol 253: entropy header + RUDI request + standard WRITE",
          eth() / ip4() / UET_ENTROPY(entropy=0xBEEF) / UET_PDS_RUDI(pkt_id=77) /
          UET_SES_STD(opcode=UET_WRITE, memory_key=0x8000000000000ABC, request_length=4) /
          pay(4))
    c.add("IPv6 next header 253: entropy header + UUD + small (optimized) WRITE",
          eth() / ip6() / UET_ENTROPY(entropy=0x0102) / UET_PDS_UUD() /
          UET_SES_SMALL(opcode=UET_WRITE, request_length=8, buffer_offset=0x40) / pay(8))
    c.add("IPv4 protocol 253: entropy header + TSS (SP=1) + ciphertext",
          eth() / ip4() / UET_ENTROPY(entropy=0x7777) /
          UET_TSS(sp=1, an=1, sdi=0x123456, ssi=0xA5A5A5A5, epoch=3, tsc=0x10) / pay(40))
    c.add("UDP 4793: TSS SP=0 (12 bytes) + ciphertext and ICV",
          v4(UET_TSS(sp=0, an=0, sdi=0x42, epoch=1, tsc=0xABCDEF), pay(48)))
    c.add("UDP 4793 over IPv6: TSS SP=1 (16 bytes)",
          v6(UET_TSS(sp=1, an=1, sdi=0xFFFF, ssi=9, epoch=0x8000, tsc=1), pay(32)))
    c.add("ARP request (non-UET)",
          eth(type=0x0806) / ARP(hwtype=1, ptype=0x0800, hwlen=6, plen=4, op=1, hwsrc=MAC_A,
                                 psrc=IP_A, hwdst="00:00:00:00:00:00", pdst=IP_B),
          status="non-uet", layers=["eth"])
    c.add("TCP SYN (non-UET)",
          eth() / ip4() / TCP(sport=40000, dport=4793, flags="S", seq=1, window=1024),
          status="non-uet", layers=["eth", "ip"])
    c.add("UDP to port 53 (non-UET)",
          eth() / ip4() / udp(dport=53) / Raw(b"\x12\x34\x01\x00\x00\x01\x00\x00"),
          status="non-uet", layers=["eth", "ip", "udp"])
    c.add("UDP from port 4793 to port 9 (non-UET: only the destination port counts)",
          eth() / ip4() / udp(sport=UDP_PORT, dport=9) / req() / std(),
          status="non-uet", layers=["eth", "ip", "udp"])
    c.add("ICMP echo (non-UET)",
          eth() / ip4() / ICMP(id=1, seq=1) / Raw(b"ping"),
          status="non-uet", layers=["eth", "ip"])
    c.add("IPv6 ICMPv6-like next header 58 (non-UET)",
          eth() / ip6(nh=58) / Raw(b"\x80\0\0\0\0\1\0\1"),
          status="non-uet", layers=["eth", "ipv6"])
    c.add("LLDP ethertype 0x88cc (non-UET)",
          eth(type=0x88CC) / Raw(b"\x02\x07\x04\x02\x00\x00\x00\x00\x01\x00\x00"),
          status="non-uet", layers=["eth"])
    c.add("802.1Q with ARP inside (non-UET)",
          eth() / Dot1Q(vlan=10, type=0x0806) / Raw(bytes(28)),
          status="non-uet", layers=["eth", "vlan"])
    c.add("non-UET UDP with Ethernet padding",
          eth() / ip4() / udp(dport=7) / Raw(b"x") / Padding(load=bytes(17)),
          status="non-uet")
    return c


def _sll_cases(c, header_cls, extra):
    lladdr = b"\x02\0\0\0\0\x01\0\0"
    c.add("IPv4 UET", header_cls(pkttype=0, lladdrtype=1, lladdrlen=6, src=lladdr, **extra) /
          ip4() / udp() / req() / UET_SES_STD(message_id=3) / pay(4))
    c.add("IPv6 UET, outgoing packet type",
          header_cls(pkttype=4, lladdrtype=1, lladdrlen=6, src=lladdr, **extra) /
          ip6() / udp() / UET_PDS_ACK(cack_psn=9) / UET_SES_RESPONSE(message_id=3))
    c.add("ARP (non-UET)", header_cls(pkttype=1, lladdrtype=1, lladdrlen=6, src=lladdr,
                                      proto=0x0806, **extra) / Raw(bytes(28)),
          status="non-uet")
    c.add("IPv4 UDP to another port (non-UET)",
          header_cls(pkttype=0, lladdrtype=1, lladdrlen=6, src=lladdr, **extra) / ip4() /
          udp(dport=4791) / Raw(bytes(12)), status="non-uet")


def encap_sll():
    c = Capture("encap_sll.pcap", 113, "Linux cooked capture v1 (LINKTYPE_LINUX_SLL 113)")
    _sll_cases(c, CookedLinux, {})
    c.add("SLL header cut at 10 bytes", bytes(CookedLinux(src=b"\x02" + bytes(7)))[:10],
          diags=[("truncated", "sll", None)], layers=[])
    return c


def encap_sll2():
    c = Capture("encap_sll2.pcap", 276, "Linux cooked capture v2 (LINKTYPE_LINUX_SLL2 276)")
    _sll_cases(c, CookedLinuxV2, {"ifindex": 3})
    c.add("SLL2 with a non-zero reserved field (a plain field, not a diagnostic)",
          CookedLinuxV2(reserved=0x1234, ifindex=0xFFFFFFFF, pkttype=0, lladdrtype=1,
                        lladdrlen=6, src=b"\x02\0\0\0\0\x02\0\0") / ip4() / udp() / req() /
          UET_SES_STD(message_id=4))
    c.add("SLL2 header cut at 19 bytes", bytes(CookedLinuxV2(ifindex=1))[:19],
          diags=[("truncated", "sll2", None)], layers=[])
    return c


def encap_raw():
    c = Capture("encap_raw.pcap", 101, "Raw IP (LINKTYPE_RAW 101): IPv4 and IPv6 without a "
                "link header")
    c.add("raw IPv4 UET", ip4() / udp() / req() / UET_SES_STD(message_id=5) / pay(3))
    c.add("raw IPv6 UET", ip6() / udp() / UET_PDS_NACK(nack_code=0x0B, nack_psn=3))
    c.add("raw IPv4 protocol 253 + entropy + ACK",
          ip4() / UET_ENTROPY(entropy=0xABCD) / UET_PDS_ACK(cack_psn=1))
    c.add("raw IPv4 TCP (non-UET)", ip4() / TCP(sport=1, dport=2, flags="A", seq=5, ack=6,
                                                window=100), status="non-uet")
    c.add("raw frame whose version nibble is 5 (neither IPv4 nor IPv6)",
          b"\x50" + bytes(27), status="non-uet", layers=[])
    c.add("empty raw frame", b"", diags=[("truncated", "raw", None)], layers=[])
    c.add("raw IPv4 header cut at 12 bytes", bytes(ip4() / udp())[:12],
          diags=[("truncated", "ip", None)], layers=[])
    return c


def encap_ipv4():
    c = Capture("encap_ipv4.pcap", 228, "LINKTYPE_IPV4 228")
    c.add("IPv4 UET", ip4() / udp() / UET_PDS_UUD() / UET_SES_STD(opcode=UET_DATAGRAM_SEND,
                                                                  message_id=6) / pay(2))
    c.add("version nibble 6 (ihl 5) under LINKTYPE_IPV4: ip.version is not 4",
          ip4(version=6) / udp() / UET_PDS_UUD(), diags=[("invalid_value", "ip", "ip.version")])
    return c


def encap_ipv6():
    c = Capture("encap_ipv6.pcap", 229, "LINKTYPE_IPV6 229")
    c.add("IPv6 UET", ip6() / udp() / UET_PDS_RUDI(type=RUDI_RESP, pkt_id=1) /
          UET_SES_RESPONSE(message_id=7))
    c.add("IPv6 proto 253 + entropy + TSS",
          ip6() / UET_ENTROPY(entropy=1) / UET_TSS(sdi=1, tsc=2) / pay(20))
    return c


def encap_ns():
    c = Capture("encap_ns.pcapng", 1, "pcapng, nanosecond timestamps (if_tsresol 9)",
                fmt="pcapng")
    c.add("IPv4 UET in a pcapng file", v4(req(), UET_SES_STD(message_id=8), pay(8)))
    c.add("IPv6 UET in a pcapng file", v6(UET_PDS_ACK(), UET_SES_RESPONSE(message_id=8)))
    c.add("non-UET in a pcapng file", eth() / ip4() / udp(dport=53) / Raw(b"q"),
          status="non-uet")
    return c
