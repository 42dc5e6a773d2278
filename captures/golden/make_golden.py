#!/usr/bin/python3
"""Build the golden corpus of UET captures and their expected decode records.

    /usr/bin/python3 captures/golden/make_golden.py [OUTDIR]

Every frame is built with the scapy_uet layers (or, for truncated headers, from the bytes those
layers build). The expected record of each frame is the decode of scapy_uet.record.decode_record
(for fragments.pcap, of the capture read whole: scapy_uet.reassembly.decode_capture),
but only after this script has checked, frame by frame:
  * every field value set explicitly when building the frame appears unchanged in the record
    (for every header the record lists);
  * a well-formed UET frame lists exactly the headers it was built from, and has the status the
    case intends (uet / non-uet);
  * a malformed frame has status "malformed" and every diagnostic (kind, header, field) the case
    intends.
Output is deterministic (fixed timestamps, addresses and MACs): regenerating gives byte-identical
files. See README.md.
"""

import json
import os
import socket
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import warnings  # noqa: E402

warnings.filterwarnings("ignore")

from scapy.config import conf  # noqa: E402
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_NOP, IPOption_EOL  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import ARP, CookedLinux, CookedLinuxV2, Dot1Q, Ether  # noqa: E402
from scapy.packet import NoPayload, Packet, Padding, Raw  # noqa: E402

from scapy_uet.layers import *  # noqa: E402,F401,F403
from scapy_uet.layers import _UETPacket  # noqa: E402
from scapy_uet.__main__ import full_record  # noqa: E402
from scapy_uet.reassembly import decode_capture  # noqa: E402
from scapy_uet.spec import DEFAULT_VERSION  # noqa: E402
from scapy_uet.pcapio import Frame, write_pcap, write_pcapng_ns  # noqa: E402

import datagram_cases  # noqa: E402
import tss_cases  # noqa: E402

conf.verb = 0

MAC_A, MAC_B = "02:00:00:00:00:01", "02:00:00:00:00:02"
IP_A, IP_B = "198.18.0.1", "198.18.0.2"
IP6_A, IP6_B = "2001:db8::1", "2001:db8::2"
TS_SEC = 1700000000
SPORT = 0xC001          # the entropy of most frames (digest I.1: entropy in the UDP source port)
ALT_PORT = 4800         # the non-default UET port of port4800.pcap

ENCAP_NAMES = {
    Ether: ("eth", {"dst": "eth.dst", "src": "eth.src", "type": "eth.type"}),
    Dot1Q: ("vlan", {"prio": "vlan.priority", "id": "vlan.dei", "vlan": "vlan.id",
                     "type": "vlan.etype"}),
    CookedLinux: ("sll", {"pkttype": "sll.pkttype", "lladdrtype": "sll.hatype",
                          "lladdrlen": "sll.halen", "src": "sll.src", "proto": "sll.etype"}),
    CookedLinuxV2: ("sll2", {"proto": "sll.etype", "reserved": "sll.reserved",
                             "ifindex": "sll.ifindex", "lladdrtype": "sll.hatype",
                             "pkttype": "sll.pkttype", "lladdrlen": "sll.halen",
                             "src": "sll.src"}),
    IP: ("ip", {"version": "ip.version", "ihl": "ip.ihl", "len": "ip.len", "id": "ip.id",
                "flags": "ip.flags", "frag": "ip.frag_offset", "ttl": "ip.ttl",
                "proto": "ip.proto", "chksum": "ip.checksum", "src": "ip.src", "dst": "ip.dst"}),
    IPv6: ("ipv6", {"version": "ipv6.version", "fl": "ipv6.flow", "plen": "ipv6.plen",
                    "nh": "ipv6.nxt", "hlim": "ipv6.hlim", "src": "ipv6.src", "dst": "ipv6.dst"}),
    UDP: ("udp", {"sport": "udp.srcport", "dport": "udp.dstport", "len": "udp.length",
                  "chksum": "udp.checksum"}),
}


# ---------------------------------------------------------------------------------------------
# builders


def eth(**kw):
    return Ether(src=MAC_A, dst=MAC_B, **kw)


def ip4(**kw):
    return IP(src=IP_A, dst=IP_B, **kw)


def ip6(**kw):
    return IPv6(src=IP6_A, dst=IP6_B, **kw)


def udp(dport=UDP_PORT, sport=SPORT, **kw):
    return UDP(sport=sport, dport=dport, **kw)


def v4(*layers, dport=UDP_PORT):
    """Ethernet / IPv4 / UDP / layers..."""
    pkt = eth() / ip4() / udp(dport=dport)
    for layer in layers:
        pkt = pkt / layer
    return pkt


def v6(*layers, dport=UDP_PORT):
    pkt = eth() / ip6() / udp(dport=dport)
    for layer in layers:
        pkt = pkt / layer
    return pkt


def pay(n, seed=0x41):
    return Raw(bytes((seed + i) & 0xFF for i in range(n)))


def req():
    """A plain RUD request to carry a SES header."""
    return UET_PDS_RUD_ROD_REQ(psn=0x1000, spdcid=0x11, dpdcid=0x22)


# ---------------------------------------------------------------------------------------------
# checks


class CorpusError(AssertionError):
    pass


def _norm(value):
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, str):
        try:
            return socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, value))
        except OSError:
            return value.lower()
    return int(value)


def _present(layer, name):
    for fld in layer.fields_desc:
        if fld.name == name:
            from scapy.fields import ConditionalField
            return not isinstance(fld, ConditionalField) or fld._evalcond(layer)
    return False


def explicit_fields(pkt):
    """(header, record field name, value) of every field set explicitly when building `pkt`."""
    out = []
    layer = pkt
    while not isinstance(layer, (NoPayload, Raw, Padding)):
        if isinstance(layer, _UETPacket):
            for name, value in layer.fields.items():
                if value is None or name.startswith("rsvd") or not _present(layer, name):
                    continue
                if name == "type" and layer.uet_header.startswith("uet.pds"):
                    out.append(("uet.pds", "uet.pds.type", value))
                    continue
                if name in layer.uet_noemit or not layer.uet_emit(name):
                    continue
                out.append((layer.uet_header, layer.uet_record_name(name), _norm(value)))
        else:
            for cls, (header, names) in ENCAP_NAMES.items():
                if type(layer) is cls:
                    for name, value in layer.fields.items():
                        if value is None:
                            continue
                        if name in names:
                            out.append((header, names[name], _norm(value)))
                        elif name == "tos":
                            out.append((header, "ip.dsfield.dscp", value >> 2))
                            out.append((header, "ip.dsfield.ecn", value & 3))
                        elif name == "tc":
                            out.append((header, "ipv6.tclass.dscp", value >> 2))
                            out.append((header, "ipv6.tclass.ecn", value & 3))
        layer = layer.payload
    return out


def built_uet_headers(pkt):
    out = []
    layer = pkt
    while not isinstance(layer, NoPayload):
        if isinstance(layer, _UETPacket):
            out.append(layer.uet_header)
        layer = layer.payload
    return out


# ---------------------------------------------------------------------------------------------
# corpus files


class Capture(object):
    def __init__(self, name, linktype, description, port=UDP_PORT, fmt="pcap", versions=None, conf_offsets=()):
        self.name = name
        self.linktype = linktype
        self.description = description
        self.port = port
        self.fmt = fmt
        # The spec versions this file keeps an expected decode for (the default first), and the TSS
        # confidentiality offsets it keeps one for under the default version.
        self.versions = versions or [DEFAULT_VERSION]
        self.conf_offsets = list(conf_offsets)
        self.settings = [(v, 0) for v in self.versions] + [(DEFAULT_VERSION, n) for n in self.conf_offsets]
        self.frames = []   # (case, data, wirelen, {(spec version, conf offset): record})

    def add(self, case, pkt, status=None, diags=(), cut=None, snap=None, layers=None, by_version=None,
            build_version=DEFAULT_VERSION, by_offset=None):
        """Add one frame.
        status: the intended status ("uet", "non-uet"); implied "malformed" when diags is given.
        diags:  (kind, header, field) tuples that must be among the record's diagnostics.
        cut:    keep only the first `cut` bytes (the frame as captured is shorter, caplen == len).
        snap:   keep only the first `snap` bytes but record the full length (caplen < len).
        layers: the exact `layers` list expected (default: checked from the built UET layers).
        by_version: {spec version: {status/diags/layers}} where a version's decode is meant to differ.
        build_version: the spec version the layers build the packet by (and whose decode must give back
                the values it was built with).
        by_offset: {TSS confidentiality offset: {status/diags/layers}} for the decodes under an offset.
        """
        with spec_version(build_version):
            data = bytes(pkt) if isinstance(pkt, Packet) else bytes(pkt)
        wirelen = len(data)
        if cut is not None:
            data = data[:cut]
            wirelen = len(data)
        if snap is not None:
            data = data[:snap]
        index = len(self.frames) + 1
        ts_usec = index
        frame = Frame(data, self.linktype, len(data), wirelen,
                      "%d.%06d" % (TS_SEC, ts_usec) if self.fmt == "pcap"
                      else "%d.%09d" % (TS_SEC, ts_usec * 1000 + 7))
        records = {}
        for version, offset in self.settings:
            want = dict(status=status, diags=diags, layers=layers)
            want.update((by_offset or {}).get(offset, {}) if offset else (by_version or {}).get(version, {}))
            built = pkt if isinstance(pkt, Packet) and version == build_version else None
            with spec_version(build_version):
                records[version, offset] = self._checked(case, index, frame, version, offset, built, cut, snap,
                                                         **want)
        self.frames.append((case, data, wirelen, records))
        return records[self.settings[0]]

    def _checked(self, case, index, frame, version, offset, pkt, cut, snap, status, diags, layers):
        """The record of `frame` decoded by `version` and TSS confidentiality offset `offset`, refused
        unless it is what the case intends."""
        rec = full_record(index, frame, self.port, version, offset)
        where = "%s frame %d (%s)%s%s" % (self.name, index, case,
                                          "" if version == DEFAULT_VERSION else " by spec " + version,
                                          " with TSS confidentiality offset %d" % offset if offset else "")
        if status is None:
            status = "malformed" if diags else "uet"
        if rec["status"] != status:
            raise CorpusError("%s: status %s, intended %s; diagnostics %s"
                              % (where, rec["status"], status, rec["diagnostics"]))
        got = {(d["kind"], d["header"], d["field"]) for d in rec["diagnostics"]}
        for want in diags:
            if tuple(want) not in got:
                raise CorpusError("%s: diagnostic %s missing; got %s" % (where, want, sorted(
                    got, key=str)))
        if isinstance(pkt, Packet):
            for header, name, value in explicit_fields(pkt):
                if header == "uet.pds":
                    if "uet.pds.type" in rec["fields"] and rec["fields"]["uet.pds.type"] != value:
                        raise CorpusError("%s: uet.pds.type %s != %s"
                                          % (where, rec["fields"]["uet.pds.type"], value))
                    continue
                if header not in rec["layers"]:
                    continue
                if rec["fields"].get(name) != value:
                    raise CorpusError("%s: %s = %r in the record, built with %r"
                                      % (where, name, rec["fields"].get(name), value))
            if layers is None and status == "uet" and cut is None and snap is None:
                want = built_uet_headers(pkt)
                got_uet = [h for h in rec["layers"] if h.startswith("uet")]
                if got_uet != want:
                    raise CorpusError("%s: layers %s, built %s" % (where, got_uet, want))
        if layers is not None and rec["layers"] != layers:
            raise CorpusError("%s: layers %s, intended %s" % (where, rec["layers"], layers))
        return rec

    def write(self, outdir):
        path = os.path.join(outdir, self.name)
        records = [(TS_SEC, i + 1, data, wirelen)
                   for i, (_c, data, wirelen, _r) in enumerate(self.frames)]
        if self.fmt == "pcap":
            write_pcap(path, self.linktype, records)
        else:
            write_pcapng_ns(path, self.linktype,
                            [(s, u * 1000 + 7, d, w) for s, u, d, w in records])
        base = self.name.rsplit(".", 1)[0]
        for version, offset in self.settings:
            # As harness.decode_compare.DecodeSettings.label names them.
            parts = ([] if version == DEFAULT_VERSION else [version]) + (["conf%d" % offset] if offset else [])
            suffix = "".join("." + p for p in parts)
            with open(os.path.join(outdir, base + suffix + ".expected.jsonl"), "w") as fh:
                for case, _d, _w, records in self.frames:
                    out = {"case": case}
                    out.update(records[version, offset])
                    fh.write(json.dumps(out) + "\n")


class ReassembledCapture(Capture):
    """A capture whose records depend on each other: read whole, as uet-decode reads it, with IP
    fragments reassembled across frames (scapy_uet.reassembly). Frames are added, then finish()
    decodes them all and checks each record against what its case intends."""

    def __init__(self, *args, **kw):
        Capture.__init__(self, *args, **kw)
        self.intents = []

    def add(self, case, pkt, status=None, diags=(), layers=None, reassembled_from=None):
        """status/diags/layers as Capture.add; reassembled_from: the frame numbers this frame's record
        says the datagram came from (status then defaults to "uet")."""
        data = bytes(pkt)
        self.frames.append((case, data, len(data), None))
        self.intents.append((status, diags, layers, reassembled_from))

    def finish(self):
        frames = [Frame(data, self.linktype, len(data), wirelen, "%d.%06d" % (TS_SEC, i + 1))
                  for i, (_c, data, wirelen, _r) in enumerate(self.frames)]
        records = list(decode_capture(frames, self.port))
        for i, (rec, (status, diags, layers, parts)) in enumerate(zip(records, self.intents)):
            case, data, wirelen, _r = self.frames[i]
            where = "%s frame %d (%s)" % (self.name, i + 1, case)
            status = status or ("malformed" if diags else "uet")
            got = {(d["kind"], d["header"], d["field"]) for d in rec["diagnostics"]}
            if rec["status"] != status or not set(map(tuple, diags)) <= got:
                raise CorpusError("%s: status %s, diagnostics %s; intended %s, %s"
                                  % (where, rec["status"], sorted(got, key=str), status, list(diags)))
            if rec.get("reassembled_from") != parts:
                raise CorpusError("%s: reassembled from %s, intended %s" % (where, rec.get("reassembled_from"), parts))
            if layers is not None and rec["layers"] != layers:
                raise CorpusError("%s: layers %s, intended %s" % (where, rec["layers"], layers))
            self.frames[i] = (case, data, wirelen, {(DEFAULT_VERSION, 0): rec})
        return self


# ---------------------------------------------------------------------------------------------
# encapsulations


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


# ---------------------------------------------------------------------------------------------
# PDS


def pds():
    c = Capture("pds.pcap", 1, "Every PDS packet type, flag, control-packet type and NACK "
                "code (Ethernet / IPv4 / UDP 4793)")
    ses = lambda: UET_SES_STD(message_id=0x55, job_id=0x42, request_length=8)  # noqa
    c.add("RUD_REQ, no flags", v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, psn=1, spdcid=2, dpdcid=3),
                                  ses(), pay(8)))
    c.add("RUD_REQ RETX AR, clear_psn_offset -5",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, retx=1, ar=1, clear_psn_offset=-5, psn=100,
                                 spdcid=0x10, dpdcid=0x20), ses(), pay(8)))
    c.add("RUD_REQ SYN=1: use_rsv_pdc 1, psn_offset 0xABC",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, syn=1, use_rsv_pdc=1, psn_offset=0xABC,
                                 psn=0x10000, spdcid=0x31), ses(), pay(8)))
    c.add("RUD_REQ SYN=1: use_rsv_pdc 0, psn_offset 0",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, syn=1, psn=5, spdcid=0x31), ses(), pay(8)))
    c.add("ROD_REQ, clear_psn_offset +32767",
          v4(UET_PDS_RUD_ROD_REQ(type=ROD_REQ, clear_psn_offset=32767, psn=9, spdcid=1,
                                 dpdcid=2), ses(), pay(8)))
    c.add("ROD_REQ, clear_psn_offset -32768",
          v4(UET_PDS_RUD_ROD_REQ(type=ROD_REQ, clear_psn_offset=-32768, psn=9), ses(), pay(8)))
    c.add("RUD_REQ with next_hdr UET_HDR_NONE (no SES header)",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, next_hdr=0, psn=3)))
    c.add("RUD_CC_REQ: ccc_id 7, credit_target 0x010203",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_CC_REQ, psn=11, spdcid=1, dpdcid=2),
             UET_PDS_REQ_CC(ccc_id=7, credit_target=0x010203), ses(), pay(8)))
    c.add("ROD_CC_REQ SYN=1: ccc_id 255",
          v4(UET_PDS_RUD_ROD_REQ(type=ROD_CC_REQ, syn=1, psn_offset=1, psn=12),
             UET_PDS_REQ_CC(ccc_id=255, credit_target=0), ses(), pay(8)))
    c.add("RUDI_REQ M RETX, pkt_id 0xDEADBEEF",
          v4(UET_PDS_RUDI(type=RUDI_REQ, m=1, retx=1, pkt_id=0xDEADBEEF),
             UET_SES_STD(opcode=UET_WRITE, message_id=9, memory_key=0x1234), pay(16)))
    c.add("RUDI_RESP + response",
          v4(UET_PDS_RUDI(type=RUDI_RESP, pkt_id=0xDEADBEEF),
             UET_SES_RESPONSE(message_id=9, modified_length=16)))
    c.add("UUD_REQ + standard DATAGRAM_SEND",
          v4(UET_PDS_UUD(), UET_SES_STD(opcode=UET_DATAGRAM_SEND, message_id=1,
                                        request_length=32), pay(32)))
    c.add("ACK, ack_psn_offset -3",
          v4(UET_PDS_ACK(ack_psn_offset=-3, cack_psn=1000, spdcid=0x22, dpdcid=0x11)))
    c.add("ACK P=1 (probe reply), probe_opaque 0xBEEF",
          v4(UET_PDS_ACK(p=1, probe_opaque=0xBEEF, cack_psn=1000)))
    c.add("ACK M RETX, REQ=1 (CLEAR)",
          v4(UET_PDS_ACK(m=1, retx=1, req=1, cack_psn=7)))
    c.add("ACK REQ=2 (CLOSE)", v4(UET_PDS_ACK(req=2, cack_psn=8)))
    c.add("ACK + response (next_hdr 4)",
          v4(UET_PDS_ACK(cack_psn=100), UET_SES_RESPONSE(opcode=1, return_code=1,
                                                         message_id=0x55, job_id=0x42,
                                                         modified_length=8)))
    c.add("ACK_CC NSCC state",
          v4(UET_PDS_ACK(cack_psn=200, spdcid=1, dpdcid=2),
             UET_PDS_ACK_CC(cc_type=0, cc_flags=5, mpr=64, sack_psn_offset=-2,
                            sack_bitmap=0x00FF00FF00FF00FF, service_time=1500, restore_cwnd=1,
                            rcv_cwnd_pend=33, rcvd_bytes=0x123456, ooo_count=4)))
    c.add("ACK_CC Credit state",
          v4(UET_PDS_ACK(cack_psn=201),
             UET_PDS_ACK_CC(cc_type=1, cc_flags=0, mpr=8, sack_psn_offset=16,
                            sack_bitmap=1, credit=0xABCDEF, ooo_count=0x100)))
    c.add("ACK_CC (NSCC) + response",
          v4(UET_PDS_ACK(cack_psn=202), UET_PDS_ACK_CC(cc_type=0, service_time=1),
             UET_SES_RESPONSE(message_id=2)))
    for ccx in (0, 7, 14, 15):
        c.add("ACK_CCX ccx_type %d" % ccx,
              v4(UET_PDS_ACK(cack_psn=300 + ccx),
                 UET_PDS_ACK_CCX(ccx_type=ccx, cc_flags=1, mpr=2, sack_psn_offset=3,
                                 sack_bitmap=4, ccx_state=bytes(range(ccx, ccx + 16)))))
    for code in sorted(k for k in PDS_NACK_CODES):
        c.add("NACK code %#04x %s" % (code, PDS_NACK_CODES[code]),
              v4(UET_PDS_NACK(nack_code=code, vendor_code=0, nack_psn=0x500 + code,
                              spdcid=0x21, dpdcid=0x12, nack_payload=0x501 + code)))
    c.add("NACK NT=1 (RUDI): nack_pkt_id, M RETX, vendor_code 0x5A",
          v4(UET_PDS_NACK(nt=1, m=1, retx=1, nack_code=0x07, vendor_code=0x5A,
                          nack_pkt_id=0xDEADBEEF, spdcid=0, dpdcid=0)))
    c.add("NACK_CCX nccx_type 3",
          v4(UET_PDS_NACK(nack_code=0x01, nack_psn=5),
             UET_PDS_NACK_CCX(nccx_type=3, nccx_state_head=5, nccx_state=bytes(range(1, 16)))))
    for ctl in sorted(PDS_CTL_TYPES):
        kw = dict(ctl_type=ctl, psn=0x700 + ctl, spdcid=0x33, dpdcid=0x44,
                  cp_payload=0x10000 + ctl)
        if ctl == 6:
            kw["probe_opaque"] = 0x1234
        c.add("control packet %d %s" % (ctl, PDS_CTL_TYPES[ctl]), v4(UET_PDS_CP(**kw)))
    c.add("control packet NOOP ISROD RETX AR SYN: use_rsv_pdc 1, psn_offset 0x321",
          v4(UET_PDS_CP(ctl_type=0, isrod=1, retx=1, ar=1, syn=1, use_rsv_pdc=1,
                        psn_offset=0x321, psn=1)))
    c.add("control packet PROBE with SYN overlay",
          v4(UET_PDS_CP(ctl_type=6, syn=1, probe_opaque=0xFFFF, psn=2, psn_offset=7,
                        cp_payload=1)))
    return c


# ---------------------------------------------------------------------------------------------
# SES


def ses():
    c = Capture("ses.pcap", 1, "Every SES header, request opcode, response opcode, return "
                "code, AMO opcode and datatype (Ethernet / IPv4 / UDP 4793)")
    common = dict(job_id=0x00ABCD, pid_on_fep=0x123, resource_index=0x456, ri_generation=2,
                  initiator=0x77)
    for op in range(0x10):
        name = SES_REQ_OPCODES[op]
        if op in DEFERRABLE_OPCODES:
            hdr = UET_SES_DEFERRABLE(opcode=op, message_id=0x100 + op, initiator_restart_token=
                                     0x1000 + op, target_restart_token=0, match_bits=0xABC,
                                     request_length=64, **common)
            layers = [hdr, pay(64)]
        elif op == UET_DEFERRABLE_RTR:
            hdr = UET_SES_RTR(opcode=op, message_id=0x100 + op, buffer_offset=0x800,
                              initiator_restart_token=0x100C, target_restart_token=0x2001,
                              header_data=0x1122334455667788, request_length=64, **common)
            layers = [hdr]
        else:
            kw = dict(common)
            if op in MEMORY_KEY_OPCODES:
                kw["memory_key"] = 0x4000000000000000 | op
            else:
                kw["match_bits"] = 0x0102030405060708 + op
            hdr = UET_SES_STD(opcode=op, message_id=0x100 + op, buffer_offset=op * 0x100,
                              request_length=0 if op == UET_NO_OP else 8, **kw)
            layers = [hdr]
            if op in ATOMIC_OPCODES:
                layers.append(UET_SES_ATOMIC(atomic_opcode=0x02, atomic_datatype=0x07,
                                             cacheable=1))
            if op in RENDEZVOUS_OPCODES:
                layers.append(UET_SES_RENDEZVOUS(eager_length=8, ri_generation=1,
                                                 pid_on_fep=0x321, resource_index=0x654,
                                                 read_offset=0x1000, read_key=0x99))
            if op != UET_NO_OP:
                layers.append(pay(8))
        c.add("standard SOM=1 opcode %#04x %s" % (op, name), v4(req(), *layers))
    c.add("standard SEND hd=1 header_data, dc ie rel",
          v4(req(), UET_SES_STD(opcode=UET_SEND, hd=1, dc=1, ie=1, rel=1, message_id=3,
                                header_data=0xCAFEF00DCAFEF00D, request_length=8, **common),
             pay(8)))
    c.add("standard SEND SOM=1 EOM=0 (first packet)",
          v4(req(), UET_SES_STD(opcode=UET_SEND, som=1, eom=0, message_id=4,
                                request_length=4096, **common), pay(32)))
    c.add("standard SEND SOM=0 EOM=0 (middle packet): payload_length, message_offset",
          v4(req(), UET_SES_STD(opcode=UET_SEND, som=0, eom=0, message_id=4,
                                message_offset=32, request_length=4096, **common), pay(32)))
    c.add("standard SEND SOM=0 EOM=1 (last packet), explicit payload_length 32",
          v4(req(), UET_SES_STD(opcode=UET_SEND, som=0, eom=1, message_id=4,
                                payload_length=32, message_offset=4064, request_length=4096,
                                **common), pay(32)))
    c.add("standard WRITE SOM=0 memory_key",
          v4(req(), UET_SES_STD(opcode=UET_WRITE, som=0, eom=1, message_id=5,
                                memory_key=0x8000000000000001, buffer_offset=0x10000,
                                message_offset=16, request_length=32, **common), pay(16)))
    c.add("standard ATOMIC SOM=0 + atomic extension (choice atomic-ext-every-packet)",
          v4(req(), UET_SES_STD(opcode=UET_ATOMIC, som=0, eom=1, message_id=6,
                                memory_key=0x10, message_offset=16, request_length=32,
                                **common),
             UET_SES_ATOMIC(atomic_opcode=0x02, atomic_datatype=0x04), pay(16)))
    c.add("standard RENDEZVOUS_SEND SOM=0: no rendezvous extension",
          v4(req(), UET_SES_STD(opcode=UET_RENDEZVOUS_SEND, som=0, message_id=7,
                                message_offset=8, request_length=16, **common), pay(8)))
    c.add("deferrable TSEND SOM=0",
          v4(req(), UET_SES_DEFERRABLE(opcode=UET_DEFERRABLE_TSEND, som=0, message_id=8,
                                       initiator_restart_token=1, target_restart_token=2,
                                       match_bits=3, message_offset=8, request_length=16,
                                       **common), pay(8)))
    c.add("vendor request opcode 0x30", v4(req(), UET_SES_STD(opcode=0x30, message_id=9),
                                           pay(4)))
    c.add("extended request opcode 0x3F", v4(req(), UET_SES_STD(opcode=0x3F, message_id=9)))
    # small (optimized non-matching) header
    c.add("small header WRITE",
          v4(req(), UET_SES_SMALL(opcode=UET_WRITE, request_length=64, buffer_offset=0x1000,
                                  resource_index=0xABC, job_id=5, pid_on_fep=1), pay(64)))
    c.add("small header READ, rel dc",
          v4(req(), UET_SES_SMALL(opcode=UET_READ, rel=1, dc=1, request_length=128,
                                  buffer_offset=8, resource_index=1, job_id=5)))
    c.add("small header ATOMIC + atomic extension",
          v4(req(), UET_SES_SMALL(opcode=UET_ATOMIC, request_length=8, buffer_offset=0x40,
                                  resource_index=2),
             UET_SES_ATOMIC(atomic_opcode=0x0A, atomic_datatype=0x07, cpu_coherent=1),
             pay(8)))
    c.add("small header FETCHING_ATOMIC + CAS",
          v4(req(), UET_SES_SMALL(opcode=UET_FETCHING_ATOMIC, request_length=8,
                                  resource_index=3),
             UET_SES_ATOMIC(atomic_opcode=0x0D, atomic_datatype=0x07),
             UET_SES_CAS(compare_value=(5).to_bytes(16, "little"),
                         swap_value=(6).to_bytes(16, "little"))))
    # medium header
    c.add("medium header SEND hd=0 buffer_offset",
          v4(req(), UET_SES_MEDIUM(opcode=UET_SEND, request_length=100, buffer_offset=0,
                                   initiator=0x10, **{k: v for k, v in common.items()
                                                       if k != "initiator"}), pay(100)))
    c.add("medium header SEND hd=1 header_data",
          v4(req(), UET_SES_MEDIUM(opcode=UET_SEND, hd=1, request_length=4,
                                   header_data=0xFFEEDDCCBBAA9988, initiator=0x10), pay(4)))
    c.add("medium header TAGGED_SEND match_bits",
          v4(req(), UET_SES_MEDIUM(opcode=UET_TAGGED_SEND, request_length=4,
                                   match_bits=0x1111222233334444, initiator=0x10), pay(4)))
    c.add("medium header WRITE memory_key (small RMA)",
          v4(req(), UET_SES_MEDIUM(opcode=UET_WRITE, request_length=4, buffer_offset=0x200,
                                   memory_key=0xC000000000000FFF, initiator=0x10), pay(4)))
    c.add("medium header TSEND_ATOMIC + atomic extension",
          v4(req(), UET_SES_MEDIUM(opcode=UET_TSEND_ATOMIC, request_length=8,
                                   match_bits=0x5, initiator=0x10),
             UET_SES_ATOMIC(atomic_opcode=0x07, atomic_datatype=0x05), pay(8)))
    # atomics
    for amo in sorted(AMO_OPCODES):
        if 0x15 <= amo < 0xE0 or amo in range(0xE1, 0xFE):
            continue
        layers = [UET_SES_ATOMIC(atomic_opcode=amo, atomic_datatype=0x06, cacheable=1,
                                 cpu_coherent=amo & 1)]
        if amo in CAS_AMO_OPCODES:
            layers.append(UET_SES_CAS(compare_value=bytes(range(16)),
                                      swap_value=bytes(range(16, 32))))
        else:
            layers.append(pay(8))
        opcode = UET_FETCHING_ATOMIC if amo in CAS_AMO_OPCODES else UET_ATOMIC
        c.add("AMO opcode %#04x %s" % (amo, AMO_OPCODES[amo]),
              v4(req(), UET_SES_STD(opcode=opcode, message_id=0x200 + amo,
                                    memory_key=0x20, request_length=8), *layers))
    for dt in sorted(AMO_DATATYPES):
        if 0x12 <= dt < 0xE0 or dt in range(0xE1, 0xFE):
            continue
        c.add("AMO datatype %#04x %s" % (dt, AMO_DATATYPES[dt]),
              v4(req(), UET_SES_STD(opcode=UET_ATOMIC, message_id=0x300 + dt,
                                    memory_key=0x30, request_length=16),
                 UET_SES_ATOMIC(atomic_opcode=0x02, atomic_datatype=dt), pay(16)))
    c.add("TSEND_FETCH_ATOMIC + CAS (CSWAP_GT)",
          v4(req(), UET_SES_STD(opcode=UET_TSEND_FETCH_ATOMIC, message_id=0x400,
                                match_bits=0x77, request_length=16),
             UET_SES_ATOMIC(atomic_opcode=0x12, atomic_datatype=0x09),
             UET_SES_CAS(compare_value=b"\x11" * 16, swap_value=b"\x22" * 16)))
    # responses
    for rop in (0, 1, 3, 0x30, 0x3F):
        c.add("response opcode %#04x %s" % (rop, SES_RSP_OPCODES[rop]),
              v4(UET_PDS_ACK(cack_psn=1), UET_SES_RESPONSE(opcode=rop, return_code=1,
                                                           message_id=0x10 + rop, job_id=0x42,
                                                           modified_length=64)))
    for lst in range(4):
        c.add("response list %d" % lst,
              v4(UET_PDS_ACK(cack_psn=2), UET_SES_RESPONSE(list=lst, opcode=1, return_code=1,
                                                           message_id=0x20, job_id=1)))
    for rc in sorted(SES_RETURN_CODES):
        if 0x31 <= rc <= 0x36:
            continue
        c.add("return code %#04x %s" % (rc, SES_RETURN_CODES[rc]),
              v4(UET_PDS_ACK(cack_psn=3), UET_SES_RESPONSE(opcode=1, return_code=rc,
                                                           message_id=0x30, ri_generation=rc,
                                                           job_id=0x42, modified_length=rc)))
    c.add("response with data (READ data), 64 bytes",
          v4(UET_PDS_ACK(cack_psn=4), UET_SES_RESPONSE_DATA(
              opcode=2, return_code=1, message_id=0x41, job_id=0x42,
              read_request_message_id=0x40, modified_length=64, message_offset=0), pay(64)))
    c.add("response with data, second packet: message_offset 64",
          v4(UET_PDS_RUDI(type=RUDI_RESP, pkt_id=3), UET_SES_RESPONSE_DATA(
              opcode=2, return_code=1, message_id=0x41, job_id=0x42,
              read_request_message_id=0x40, modified_length=128, message_offset=64,
              payload_length=64), pay(64)))
    c.add("response with small data, 8 bytes",
          v4(UET_PDS_ACK(cack_psn=5), UET_SES_RESPONSE_DATA_SMALL(
              opcode=2, return_code=1, job_id=0x42, original_request_psn=0x1000), pay(8)))
    c.add("response with data, error return code, no data",
          v4(UET_PDS_ACK(cack_psn=6), UET_SES_RESPONSE_DATA(
              opcode=2, return_code=0x1C, message_id=0x42, job_id=0x42,
              read_request_message_id=0x40)))
    c.add("NACK + response (next_hdr 4)",
          v4(UET_PDS_NACK(nack_code=0x09, nack_psn=1), UET_SES_RESPONSE(return_code=0x1F)))
    return c


# ---------------------------------------------------------------------------------------------
# edge values


def edge():
    c = Capture("edge.pcap", 1, "Edge values: all-ones fields, zero lengths, maximum sizes")
    M64, M32 = (1 << 64) - 1, (1 << 32) - 1
    c.add("RUD_REQ all ones (psn 0xFFFFFFFF) + standard header with every field at maximum",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, retx=1, ar=1, clear_psn_offset=-1, psn=M32,
                                 spdcid=0xFFFF, dpdcid=0xFFFF),
             UET_SES_STD(opcode=0x3F, version=0, dc=1, ie=1, rel=1, hd=1, eom=1, som=1,
                         message_id=0xFFFF, ri_generation=0xFF, job_id=0xFFFFFF,
                         pid_on_fep=0xFFF, resource_index=0xFFF, buffer_offset=M64,
                         initiator=M32, match_bits=M64, header_data=M64,
                         request_length=M32)))
    c.add("standard header all zero except message_id 1; request_length 0, no payload",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ), UET_SES_STD(opcode=UET_NO_OP, som=0, eom=0,
                                                           message_id=1, request_length=0)))
    c.add("SOM=0: payload_length 16383 with 16383 payload bytes, message_offset 0xFFFFFFFF",
          v4(UET_PDS_RUD_ROD_REQ(psn=1), UET_SES_STD(
              opcode=UET_WRITE, som=0, eom=1, message_id=0xFFFF, memory_key=M64,
              message_offset=M32, payload_length=16383, request_length=M32), pay(16383)))
    c.add("small header request_length 16383, buffer_offset max",
          v4(req(), UET_SES_SMALL(opcode=UET_WRITE, request_length=16383, buffer_offset=M64,
                                  job_id=0xFFFFFF, pid_on_fep=0xFFF, resource_index=0xFFF,
                                  ri_generation=0xFF, dc=1, ie=1, rel=1)))
    c.add("medium header request_length 16383, all keys max",
          v4(req(), UET_SES_MEDIUM(opcode=UET_READ, request_length=16383, buffer_offset=M64,
                                   initiator=M32, memory_key=M64, job_id=0xFFFFFF)))
    c.add("medium header request_length 0",
          v4(req(), UET_SES_MEDIUM(opcode=UET_SEND, request_length=0)))
    c.add("response with data payload_length 16383 (16383 bytes), all ids max",
          v4(UET_PDS_ACK(cack_psn=M32), UET_SES_RESPONSE_DATA(
              list=3, opcode=2, return_code=0x3E, message_id=0xFFFF, job_id=0xFFFFFF,
              read_request_message_id=0xFFFF, payload_length=16383, modified_length=M32,
              message_offset=M32), pay(16383)))
    c.add("response with small data, payload_length 0, job_id 0xFFFFFF (fallback JobID)",
          v4(UET_PDS_ACK(cack_psn=0), UET_SES_RESPONSE_DATA_SMALL(
              opcode=2, return_code=1, payload_length=0, job_id=0xFFFFFF,
              original_request_psn=M32)))
    c.add("response all ones (list 3, vendor opcode 0x3F, modified_length max)",
          v4(UET_PDS_ACK(m=1, retx=1, p=1, probe_opaque=0xFFFF, cack_psn=M32, spdcid=0xFFFF,
                         dpdcid=0xFFFF),
             UET_SES_RESPONSE(list=3, opcode=0x3F, return_code=0x3E, message_id=0xFFFF,
                              ri_generation=0xFF, job_id=0xFFFFFF, modified_length=M32)))
    c.add("ACK_CC NSCC all ones",
          v4(UET_PDS_ACK(ack_psn_offset=-1, cack_psn=M32),
             UET_PDS_ACK_CC(cc_type=0, cc_flags=0xF, mpr=0xFF, sack_psn_offset=-1,
                            sack_bitmap=M64, service_time=0xFFFF, restore_cwnd=1,
                            rcv_cwnd_pend=0x7F, rcvd_bytes=0xFFFFFF, ooo_count=0xFFFF)))
    c.add("ACK_CC Credit all ones",
          v4(UET_PDS_ACK(ack_psn_offset=32767, cack_psn=M32),
             UET_PDS_ACK_CC(cc_type=1, cc_flags=0xF, mpr=0xFF, sack_psn_offset=32767,
                            sack_bitmap=M64, credit=0xFFFFFF, ooo_count=0xFFFF)))
    c.add("ACK_CCX all ones",
          v4(UET_PDS_ACK(cack_psn=M32), UET_PDS_ACK_CCX(ccx_type=0xF, cc_flags=0xF, mpr=0xFF,
                                                        sack_psn_offset=-32768,
                                                        sack_bitmap=M64,
                                                        ccx_state=b"\xff" * 16)))
    c.add("NACK all ones",
          v4(UET_PDS_NACK(m=1, retx=1, nack_code=0xFF, vendor_code=0xFF, nack_psn=M32,
                          spdcid=0xFFFF, dpdcid=0xFFFF, nack_payload=M32)))
    c.add("NACK_CCX all ones",
          v4(UET_PDS_NACK(nt=1, nack_code=0xFD, nack_pkt_id=M32),
             UET_PDS_NACK_CCX(nccx_type=0xF, nccx_state_head=0xF, nccx_state=b"\xff" * 15)))
    c.add("control packet all ones (CREDIT_REQ, SYN overlay max)",
          v4(UET_PDS_CP(ctl_type=8, isrod=1, retx=1, ar=1, syn=1, psn=M32, spdcid=0xFFFF,
                        use_rsv_pdc=1, psn_offset=0xFFF, cp_payload=M32)))
    c.add("RUDI pkt_id max",
          v4(UET_PDS_RUDI(m=1, retx=1, pkt_id=M32),
             UET_SES_STD(opcode=UET_WRITE, message_id=1, memory_key=M64), pay(1)))
    c.add("RUD_CC credit_target 0xFFFFFF",
          v4(UET_PDS_RUD_ROD_REQ(type=ROD_CC_REQ, psn=M32),
             UET_PDS_REQ_CC(ccc_id=0xFF, credit_target=0xFFFFFF)))
    c.add("TSS all ones",
          v4(UET_TSS(sp=1, an=1, sdi=0xFFFFFF, ssi=M32, epoch=0xFFFF, tsc=(1 << 48) - 1)))
    c.add("rendezvous extension all ones",
          v4(req(), UET_SES_STD(opcode=UET_RENDEZVOUS_TSEND, message_id=1, match_bits=M64,
                                request_length=M32),
             UET_SES_RENDEZVOUS(eager_length=M32, ri_generation=0xFF, pid_on_fep=0xFFF,
                                resource_index=0xFFF, read_offset=M64, read_key=M64)))
    c.add("CAS values all ones, CSWAP_GT, vendor datatype 0xFE",
          v4(req(), UET_SES_STD(opcode=UET_FETCHING_ATOMIC, message_id=1, memory_key=M64),
             UET_SES_ATOMIC(atomic_opcode=0x12, atomic_datatype=0xFE, cacheable=1,
                            cpu_coherent=1),
             UET_SES_CAS(compare_value=b"\xff" * 16, swap_value=b"\xff" * 16)))
    c.add("MSWAP: plain atomic extension, value and mask as payload (choice cas-for-mswap)",
          v4(req(), UET_SES_STD(opcode=UET_FETCHING_ATOMIC, message_id=1, memory_key=M64, request_length=16),
             UET_SES_ATOMIC(atomic_opcode=0x13, atomic_datatype=0x07), Raw(b"\xff" * 16)))
    c.add("deferrable send restart tokens max",
          v4(req(), UET_SES_DEFERRABLE(opcode=UET_DEFERRABLE_SEND, message_id=1,
                                       initiator_restart_token=M32, target_restart_token=M32,
                                       request_length=M32)))
    c.add("entropy 0xFFFF over IP protocol 253",
          eth() / ip4() / UET_ENTROPY(entropy=0xFFFF) / UET_PDS_UUD()
          / UET_SES_STD(opcode=UET_DATAGRAM_SEND, message_id=1))
    c.add("UDP source port 0, IPv4 ttl 0",
          eth() / ip4(ttl=0) / udp(sport=0) / UET_PDS_UUD() / Padding(load=bytes(14)))
    c.add("UDP source port 65535, IPv4 ttl 255, id 65535",
          eth() / ip4(ttl=255, id=0xFFFF) / udp(sport=65535) / UET_PDS_UUD() /
          Padding(load=bytes(14)))
    return c


# ---------------------------------------------------------------------------------------------
# malformed


def _udp_with(payload, v6=False, dport=UDP_PORT):
    return (eth() / (ip6() if v6 else ip4()) / udp(dport=dport) / Raw(payload))


def malformed():
    c = Capture("malformed.pcap", 1, "Malformed frames: every header truncated at several "
                "points, reserved bits, unknown values, invalid values, bad lengths, "
                "snaplen-truncated frames")
    T = "truncated"
    std = bytes(req() / UET_SES_STD(message_id=1, request_length=4))
    # -- truncation, with consistent IP/UDP lengths: the UDP payload simply ends early
    for cut in (1, 6, 11):
        c.add("RUD request cut at %d bytes" % cut, _udp_with(std[:cut]),
              diags=[(T, "uet.pds.rud_rod_req", None)],
              layers=["eth", "ip", "udp"])
    for cut in (12, 20, 30, 55):
        c.add("standard header cut at %d bytes of the UDP payload" % cut,
              _udp_with(std[:cut]), diags=[(T, "uet.ses.std", None)],
              layers=["eth", "ip", "udp", "uet.pds.rud_rod_req"])
    cc = bytes(UET_PDS_RUD_ROD_REQ(type=RUD_CC_REQ) / UET_PDS_REQ_CC(ccc_id=1) /
               UET_SES_STD(message_id=1))
    c.add("RUD_CC extension cut (14 of 16 bytes)", _udp_with(cc[:14]),
          diags=[(T, "uet.pds.req_cc", None)], layers=["eth", "ip", "udp",
                                                       "uet.pds.rud_rod_req"])
    for cls, cuts in ((UET_PDS_RUDI, (2, 7)), (UET_PDS_UUD, (1, 3)), (UET_PDS_ACK, (3, 11)),
                      (UET_PDS_NACK, (4, 15)), (UET_PDS_CP, (2, 9, 15))):
        for cut in cuts:
            c.add("%s cut at %d bytes" % (cls.__name__, cut),
                  _udp_with(bytes(cls())[:cut]), diags=[(T, cls.uet_header, None)],
                  layers=["eth", "ip", "udp"])
    for ext, cut in ((UET_PDS_ACK_CC, 20), (UET_PDS_ACK_CC, 12), (UET_PDS_ACK_CC, 31),
                     (UET_PDS_ACK_CCX, 30), (UET_PDS_ACK_CCX, 39)):
        raw = bytes(UET_PDS_ACK() / ext())
        c.add("%s cut at %d bytes" % (ext.__name__, cut), _udp_with(raw[:cut]),
              diags=[(T, ext.uet_header, None)],
              layers=["eth", "ip", "udp", "uet.pds.ack"])
    raw = bytes(UET_PDS_NACK() / UET_PDS_NACK_CCX())
    for cut in (17, 31):
        c.add("NACK_CCX cut at %d bytes" % cut, _udp_with(raw[:cut]),
              diags=[(T, "uet.pds.nack_ccx", None)])
    raw = bytes(UET_PDS_RUD_ROD_REQ(type=ROD_CC_REQ) / UET_PDS_REQ_CC())
    c.add("ROD_CC extension cut (13 of 16 bytes)", _udp_with(raw[:13]),
          diags=[(T, "uet.pds.req_cc", None)])
    for sp, cut in ((0, 3), (1, 6), (0, 10), (1, 15)):
        c.add("TSS SP=%d cut at %d bytes" % (sp, cut),
              _udp_with(bytes(UET_TSS(sp=sp))[:cut]), diags=[(T, "uet.tss", None)],
              layers=["eth", "ip", "udp"])
    for cls, cuts in ((UET_SES_SMALL, (1, 10, 19)), (UET_SES_MEDIUM, (12, 25, 31)),
                      (UET_SES_RESPONSE, (2, 11)), (UET_SES_RESPONSE_DATA, (8, 15, 19)),
                      (UET_SES_RESPONSE_DATA_SMALL, (5, 11))):
        pds_hdr = UET_PDS_ACK() if "RESPONSE" in cls.__name__ else req()
        raw = bytes(pds_hdr / cls())
        for cut in cuts:
            c.add("%s cut at %d bytes" % (cls.__name__, cut),
                  _udp_with(raw[:len(bytes(pds_hdr)) + cut]),
                  diags=[(T, cls.uet_header, None)])
    raw = bytes(req() / UET_SES_RTR(message_id=1))
    c.add("ready-to-restart cut at 20 bytes (its second piece is 32 bytes)",
          _udp_with(raw[:12 + 20]), diags=[(T, "uet.ses.std", None)])
    raw = bytes(req() / UET_SES_STD(opcode=UET_ATOMIC, message_id=1) / UET_SES_ATOMIC())
    c.add("atomic extension cut at 2 bytes", _udp_with(raw[:12 + 44 + 2]),
          diags=[(T, "uet.ses.atomic", None)])
    raw = bytes(req() / UET_SES_STD(opcode=UET_FETCHING_ATOMIC, message_id=1) /
                UET_SES_ATOMIC(atomic_opcode=0x0D) / UET_SES_CAS())
    c.add("CAS extension cut at 20 of 32 bytes", _udp_with(raw[:12 + 44 + 4 + 20]),
          diags=[(T, "uet.ses.cas", None)])
    raw = bytes(req() / UET_SES_STD(opcode=UET_RENDEZVOUS_SEND, message_id=1) /
                UET_SES_RENDEZVOUS())
    c.add("rendezvous extension cut at 8 of 24 bytes", _udp_with(raw[:12 + 44 + 8]),
          diags=[(T, "uet.ses.rendezvous", None)])
    c.add("entropy header cut at 2 bytes (IP protocol 253)",
          eth() / ip4(proto=253) / Raw(b"\x12\x34"), diags=[(T, "uet.entropy", None)])
    c.add("entropy header with nothing after it", eth() / ip4() / UET_ENTROPY(entropy=1),
          diags=[(T, "uet", None)])
    c.add("empty UDP payload to 4793 (IPv4)", eth() / ip4() / udp(),
          diags=[(T, "uet", None)], layers=["eth", "ip", "udp"])
    c.add("empty UDP payload to 4793 (IPv6)", eth() / ip6() / udp(),
          diags=[(T, "uet", None)], layers=["eth", "ipv6", "udp"])
    c.add("Ethernet header cut at 10 bytes", bytes(eth())[:10], diags=[(T, "eth", None)],
          layers=[])
    c.add("802.1Q tag cut", bytes(eth() / Dot1Q(vlan=5))[:16], diags=[(T, "vlan", None)])
    c.add("IPv4 header cut at 15 bytes", bytes(eth() / ip4())[:14 + 15],
          diags=[(T, "ip", None)], layers=["eth"])
    c.add("IPv6 header cut at 30 bytes", bytes(eth() / ip6())[:14 + 30],
          diags=[(T, "ipv6", None)], layers=["eth"])
    c.add("UDP header cut at 5 bytes (ip.len consistent)",
          eth() / ip4(proto=17) / Raw(bytes(udp())[:5]), diags=[(T, "udp", None)])
    c.add("standard header cut at 30 bytes with reserved bits and message_id 0 in its "
          "complete first 12 bytes",
          _udp_with(bytes(req() / UET_SES_STD(rsvd_op=2, message_id=0))[:12 + 30]),
          diags=[(T, "uet.ses.std", None), ("reserved_nonzero", "uet.ses.std", None),
                 ("invalid_value", "uet.ses.std", "uet.ses.message_id")])
    # -- truncation of the captured frame itself (caplen == len): the IP/UDP lengths now claim
    #    more bytes than are present
    full = v4(req(), UET_SES_STD(message_id=1, request_length=64), pay(64))
    c.add("frame cut inside the standard header (caplen == len): also ip.len and udp.length "
          "too large", full, cut=14 + 20 + 8 + 12 + 20,
          diags=[(T, "uet.ses.std", None), ("inconsistent_length", "ip", "ip.len"),
                 ("inconsistent_length", "udp", "udp.length")])
    # -- snaplen-truncated frames (caplen < len): bounds beyond the capture are not diagnosed
    for snap, diag in ((10, (T, "eth", None)), (14 + 12, (T, "ip", None)),
                       (14 + 20 + 4, (T, "udp", None)),
                       (14 + 20 + 8 + 6, (T, "uet.pds.rud_rod_req", None)),
                       (14 + 20 + 8 + 12 + 30, (T, "uet.ses.std", None))):
        c.add("snaplen %d (caplen < len)" % snap, full, snap=snap, diags=[diag])
    c.add("snaplen 128 cuts only the payload of a SOM=1 packet: no diagnostic", full,
          snap=14 + 20 + 8 + 12 + 44 + 20, status="uet")
    c.add("snaplen cuts the payload of a SOM=0 packet: the capture, not the sender, shortened it: "
          "no diagnostic",
          v4(req(), UET_SES_STD(som=0, message_id=1, request_length=64), pay(64)),
          snap=14 + 20 + 8 + 12 + 44 + 20, status="uet")
    # -- reserved bits
    R = "reserved_nonzero"
    for case, layers, header in (
            ("RUD request flag b6", [UET_PDS_RUD_ROD_REQ(rsvd_f6=1)], "uet.pds.rud_rod_req"),
            ("RUD request flags b1..b0", [UET_PDS_RUD_ROD_REQ(rsvd_f10=3)],
             "uet.pds.rud_rod_req"),
            ("RUD request SYN overlay bits 14..12",
             [UET_PDS_RUD_ROD_REQ(syn=1, rsvd_syn=5)], "uet.pds.rud_rod_req"),
            ("RUDI flags and bytes 2-3", [UET_PDS_RUDI(rsvd_f30=1, rsvd=0x100)],
             "uet.pds.rudi"),
            ("UUD flags", [UET_PDS_UUD(rsvd_flags=0x40)], "uet.pds.uud"),
            ("UUD bytes 2-3", [UET_PDS_UUD(rsvd=1)], "uet.pds.uud"),
            ("ACK flag b6", [UET_PDS_ACK(rsvd_f6=1)], "uet.pds.ack"),
            ("ACK flag b0", [UET_PDS_ACK(rsvd_f0=1)], "uet.pds.ack"),
            ("ACK_CC Credit bytes 27-29", [UET_PDS_ACK(), UET_PDS_ACK_CC(
                cc_type=1, rsvd_credit=0x010000)], "uet.pds.ack_cc"),
            ("NACK flags b2..b0", [UET_PDS_NACK(rsvd_f20=4)], "uet.pds.nack"),
            ("control packet bytes 2-3 (not PROBE)", [UET_PDS_CP(ctl_type=0, rsvd_2=1)],
             "uet.pds.cp"),
            ("control packet flag b6", [UET_PDS_CP(ctl_type=1, rsvd_f6=1)], "uet.pds.cp"),
            ("TSS bit 25", [UET_TSS(rsvd_b25=1)], "uet.tss"),
            ("SES byte 0 bits 7..6", [req(), UET_SES_STD(rsvd_op=3)], "uet.ses.std"),
            ("SES pid_on_fep reserved nibble", [req(), UET_SES_STD(rsvd_pid=1)],
             "uet.ses.std"),
            ("SES resource_index reserved nibble", [req(), UET_SES_STD(rsvd_ri=8)],
             "uet.ses.std"),
            ("SES SOM=0 reserved bits 31..14", [req(), UET_SES_STD(som=0, rsvd_pl=1,
                                                                   payload_length=0)],
             "uet.ses.std"),
            ("small header hd bit", [req(), UET_SES_SMALL(rsvd_hd=1)], "uet.ses.small"),
            ("small header request_length reserved bits", [req(), UET_SES_SMALL(rsvd_len=2)],
             "uet.ses.small"),
            ("medium header request_length reserved bits",
             [req(), UET_SES_MEDIUM(rsvd_len=1)], "uet.ses.medium"),
            ("atomic semantic control bits 7..2",
             [req(), UET_SES_STD(opcode=UET_ATOMIC), UET_SES_ATOMIC(rsvd_sc=0x20)],
             "uet.ses.atomic"),
            ("atomic extension byte 3",
             [req(), UET_SES_STD(opcode=UET_ATOMIC), UET_SES_ATOMIC(rsvd=0xFF)],
             "uet.ses.atomic"),
            ("response with data byte 4", [UET_PDS_ACK(), UET_SES_RESPONSE_DATA(rsvd4=1)],
             "uet.ses.response_data"),
            ("response with data payload_length reserved bits",
             [UET_PDS_ACK(), UET_SES_RESPONSE_DATA(rsvd_pl=1)], "uet.ses.response_data"),
            ("response with small data reserved bits",
             [UET_PDS_ACK(), UET_SES_RESPONSE_DATA_SMALL(rsvd_pl=3, rsvd4=9)],
             "uet.ses.response_data_small")):
        c.add("reserved: " + case, v4(*layers), diags=[(R, header, None)])
    c.add("reserved: entropy header bytes 2-3",
          eth() / ip4() / UET_ENTROPY(entropy=1, rsvd=0x8000) / UET_PDS_UUD(),
          diags=[(R, "uet.entropy", None)])
    # -- unknown values
    U = "unknown_value"
    for t in (0, 15, 31):
        c.add("unknown PDS type %d" % t, _udp_with(bytes([t << 3, 0]) + bytes(14)),
              diags=[(U, "uet.pds", "uet.pds.type")], layers=["eth", "ip", "udp"])
    for nh in (7, 15):
        c.add("unknown next_hdr %d after a RUD request" % nh,
              v4(UET_PDS_RUD_ROD_REQ(next_hdr=nh), pay(44)),
              diags=[(U, "uet.pds.rud_rod_req", "uet.pds.next_hdr")])
    c.add("unknown next_hdr 9 after an ACK_CC",
          v4(UET_PDS_ACK(next_hdr=9), UET_PDS_ACK_CC(), pay(12)),
          diags=[(U, "uet.pds.ack", "uet.pds.next_hdr")])
    for ctl in (10, 15):
        c.add("unknown control-packet type %d" % ctl, v4(UET_PDS_CP(ctl_type=ctl)),
              diags=[(U, "uet.pds.cp", "uet.pds.ctl_type")])
    for code in (0x00, 0x0C, 0x1B, 0xFC):
        c.add("unknown NACK code %#04x" % code, v4(UET_PDS_NACK(nack_code=code)),
              diags=[(U, "uet.pds.nack", "uet.pds.nack_code")])
    c.add("ACK REQ=3 (reserved)", v4(UET_PDS_ACK(req=3)),
          diags=[(U, "uet.pds.ack", "uet.pds.flags.req")])
    c.add("ACK_CC cc_type 2 (neither NSCC nor Credit)",
          v4(UET_PDS_ACK(), UET_PDS_ACK_CC(cc_type=2, cc_state=b"\x01" * 6, ooo_count=1)),
          diags=[(U, "uet.pds.ack_cc", "uet.pds.cc_type")])
    for op in (0x10, 0x2F):
        c.add("unknown SES request opcode %#04x" % op,
              v4(req(), UET_SES_STD(opcode=op), pay(4)),
              diags=[(U, "uet.ses.std", "uet.ses.opcode")])
    c.add("unknown SES request opcode 0x11 in the small header",
          v4(req(), UET_SES_SMALL(opcode=0x11)), diags=[(U, "uet.ses.small", "uet.ses.opcode")])
    for ver in (1, 3):
        c.add("SES version %d" % ver, v4(req(), UET_SES_STD(version=ver)),
              diags=[(U, "uet.ses.std", "uet.ses.version")])
    c.add("medium header version 2", v4(req(), UET_SES_MEDIUM(version=2)),
          diags=[(U, "uet.ses.medium", "uet.ses.version")])
    c.add("unknown response opcode 0x04", v4(UET_PDS_ACK(), UET_SES_RESPONSE(opcode=4)),
          diags=[(U, "uet.ses.response", "uet.ses.rsp.opcode")])
    c.add("response version 1", v4(UET_PDS_ACK(), UET_SES_RESPONSE(version=1)),
          diags=[(U, "uet.ses.response", "uet.ses.rsp.version")])
    for rc in (0x25, 0x38, 0x3F):
        c.add("unknown return code %#04x" % rc,
              v4(UET_PDS_ACK(), UET_SES_RESPONSE(return_code=rc)),
              diags=[(U, "uet.ses.response", "uet.ses.rsp.return_code")])
    c.add("unknown return code 0x2A in a response with data",
          v4(UET_PDS_ACK(), UET_SES_RESPONSE_DATA(return_code=0x2A)),
          diags=[(U, "uet.ses.response_data", "uet.ses.rsp.return_code")])
    for amo in (0x15, 0xDF, 0xFF):
        c.add("unknown AMO opcode %#04x" % amo,
              v4(req(), UET_SES_STD(opcode=UET_ATOMIC), UET_SES_ATOMIC(atomic_opcode=amo),
                 pay(8)),
              diags=[(U, "uet.ses.atomic", "uet.ses.atomic_opcode")])
    for dt in (0x12, 0xFF):
        c.add("unknown AMO datatype %#04x" % dt,
              v4(req(), UET_SES_STD(opcode=UET_ATOMIC), UET_SES_ATOMIC(atomic_datatype=dt),
                 pay(8)),
              diags=[(U, "uet.ses.atomic", "uet.ses.atomic_datatype")])
    # -- invalid values
    V = "invalid_value"
    c.add("message_id 0 in the standard header", v4(req(), UET_SES_STD(message_id=0)),
          diags=[(V, "uet.ses.std", "uet.ses.message_id")])
    c.add("message_id 0 in a deferrable send",
          v4(req(), UET_SES_DEFERRABLE(message_id=0)),
          diags=[(V, "uet.ses.std", "uet.ses.message_id")])
    c.add("ethertype IPv4, version nibble 6 (ihl 5): ip.version invalid, decoding goes on",
          eth(type=0x0800) / ip4(version=6) / udp() / UET_PDS_UUD(),
          diags=[(V, "ip", "ip.version")])
    c.add("ethertype IPv6 carrying version 4 bits",
          eth(type=0x86DD) / Raw(b"\x40" + bytes(bytes(ip6() / udp() /
                                                       UET_PDS_UUD())[1:])),
          diags=[(V, "ipv6", "ipv6.version")])
    for ihl in (0, 4):
        c.add("ip.ihl %d (< 5): the ip fields are kept, decoding stops" % ihl,
              eth() / ip4(ihl=ihl) / udp() / UET_PDS_UUD(),
              diags=[(V, "ip", "ip.ihl")], layers=["eth", "ip"])
    c.add("ip.ihl 15 but the frame is shorter than 60 bytes of IP header",
          eth() / ip4(ihl=15) / udp() / UET_PDS_UUD(), diags=[(T, "ip", None)],
          layers=["eth"])
    # -- bounds
    L = "inconsistent_length"
    c.add("ip.len 10: smaller than the IP header", eth() / ip4(len=10) / udp() / UET_PDS_UUD(),
          diags=[(L, "ip", "ip.len")], layers=["eth", "ip"])
    c.add("ip.len 24: trims the UDP header", eth() / ip4(len=24) / udp() / UET_PDS_UUD(),
          diags=[(T, "udp", None)], layers=["eth", "ip"])
    c.add("ip.len 100 bytes larger than the frame",
          eth() / ip4(len=20 + 8 + 4 + 100) / udp() / UET_PDS_UUD(),
          diags=[(L, "ip", "ip.len")])
    c.add("ipv6.plen 300 larger than the frame", eth() / ip6(plen=300) / udp() / UET_PDS_UUD(),
          diags=[(L, "ipv6", "ipv6.plen")])
    c.add("ipv6.plen 4: trims the UDP header", eth() / ip6(plen=4) / udp() / UET_PDS_UUD(),
          diags=[(T, "udp", None)])
    c.add("udp.length 4: smaller than the UDP header",
          eth() / ip4() / udp(len=4) / UET_PDS_UUD(), diags=[(L, "udp", "udp.length")],
          layers=["eth", "ip", "udp"])
    c.add("udp.length 10: trims the PDS header to 2 bytes",
          eth() / ip4() / udp(len=10) / req(), diags=[(T, "uet.pds.rud_rod_req", None)])
    c.add("udp.length 200 larger than the datagram",
          eth() / ip4() / udp(len=200) / UET_PDS_UUD(), diags=[(L, "udp", "udp.length")])
    c.add("udp.length too large with Ethernet padding present",
          eth() / ip4() / udp(len=30) / UET_PDS_UUD() / Padding(load=bytes(14)),
          diags=[(L, "udp", "udp.length")])
    c.add("payload_length 100 with 10 payload bytes (standard SOM=0)",
          v4(req(), UET_SES_STD(som=0, message_id=1, payload_length=100), pay(10)),
          diags=[(L, "uet.ses.std", "uet.ses.payload_length")])
    c.add("payload_length 4 with 10 payload bytes (standard SOM=0 + atomic extension): 6 trailing",
          v4(req(), UET_SES_STD(opcode=UET_ATOMIC, som=0, message_id=1, payload_length=4),
             UET_SES_ATOMIC(), pay(10)),
          diags=[("trailing_bytes", "uet.ses.std", "uet.ses.payload_length")])
    c.add("payload_length 0 with 16 bytes (response with data): 16 trailing",
          v4(UET_PDS_ACK(), UET_SES_RESPONSE_DATA(payload_length=0), pay(16)),
          diags=[("trailing_bytes", "uet.ses.response_data", "uet.ses.rsp.payload_length")])
    c.add("payload_length 8 with 4 bytes (response with small data)",
          v4(UET_PDS_ACK(), UET_SES_RESPONSE_DATA_SMALL(payload_length=8), pay(4)),
          diags=[(L, "uet.ses.response_data_small", "uet.ses.rsp.payload_length")])
    # -- several problems at once
    c.add("several diagnostics: reserved flag, unknown opcode, message_id 0, unknown AMO",
          v4(UET_PDS_RUD_ROD_REQ(rsvd_f6=1), UET_SES_STD(opcode=UET_ATOMIC, message_id=0,
                                                         version=2),
             UET_SES_ATOMIC(atomic_opcode=0x99, rsvd=1), pay(8)),
          diags=[(R, "uet.pds.rud_rod_req", None), (U, "uet.ses.std", "uet.ses.version"),
                 (V, "uet.ses.std", "uet.ses.message_id"),
                 (U, "uet.ses.atomic", "uet.ses.atomic_opcode"), (R, "uet.ses.atomic", None)])
    return c


# ---------------------------------------------------------------------------------------------
# another UDP port


def port_alt():
    c = Capture("port%d.pcap" % ALT_PORT, 1, "UET on UDP port %d: decode with --port %d"
                % (ALT_PORT, ALT_PORT), port=ALT_PORT)
    c.add("UET on UDP %d (IPv4)" % ALT_PORT,
          v4(req(), UET_SES_STD(message_id=1), pay(4), dport=ALT_PORT))
    c.add("UET on UDP %d (IPv6), ACK + response" % ALT_PORT,
          v6(UET_PDS_ACK(cack_psn=1), UET_SES_RESPONSE(message_id=1), dport=ALT_PORT))
    c.add("UET to UDP 4793 is not UET when the port is %d" % ALT_PORT,
          v4(req(), UET_SES_STD(message_id=1), pay(4)), status="non-uet",
          layers=["eth", "ip", "udp"])
    c.add("empty UDP payload to port %d" % ALT_PORT, eth() / ip4() / udp(dport=ALT_PORT),
          diags=[("truncated", "uet", None)])
    c.add("UET over IP protocol 253 does not depend on the port",
          eth() / ip4() / UET_ENTROPY(entropy=2) / UET_PDS_UUD())
    return c


def spec_versions():
    """Frames whose decode differs between spec 1.0.1 and 1.0.3 (spec_versions in wire.yaml)."""
    c = Capture("spec_versions.pcap", 1, "frames that decode differently by spec version 1.0.1 and 1.0.3: "
                "TRIMMED_ACK, the NEGOTIATION payload, message_id of UET_DATAGRAM_SEND, UET_MSG_ERROR in UUD",
                versions=["1.0.1", "1.0.3"])
    U, I, T = "unknown_value", "invalid_value", "truncated"
    c.add("NACK code 0x03 TRIMMED_ACK (reserved from 1.0.3)",
          v4(UET_PDS_NACK(nack_code=0x03, nack_psn=0x10, spdcid=0x11, dpdcid=0x22)),
          by_version={"1.0.3": dict(diags=[(U, "uet.pds.nack", "uet.pds.nack_code")])})
    negotiation = dict(ctl_type=9, psn=0x900, spdcid=0x33, dpdcid=0x44)
    # Read by 1.0.1, a control packet ends after its 4-byte payload: the other 4 bytes trail it.
    trails = {"1.0.1": dict(diags=[("trailing_bytes", "uet.pds.cp", None)])}
    c.add("NEGOTIATION with the 1.0.3 PDS_NEG_ON_OFF payload 01 02 00 00 00 00 00 01",
          v4(UET_PDS_CP(syn_retx_transfer=1, **negotiation)), build_version="1.0.3", by_version=trails)
    c.add("NEGOTIATION, SYN_RETX_TRANSFER off",
          v4(UET_PDS_CP(syn_retx_transfer=0, **negotiation)), build_version="1.0.3", by_version=trails)
    c.add("NEGOTIATION with neg_type 2 and neg_length 3",
          v4(UET_PDS_CP(neg_type=2, neg_length=3, **negotiation)), build_version="1.0.3",
          by_version=dict(trails, **{"1.0.3": dict(diags=[(I, "uet.pds.cp", "uet.pds.neg.type"),
                                                          (I, "uet.pds.cp", "uet.pds.neg.length")])}))
    c.add("NEGOTIATION with the generic 4-byte payload (16 bytes)",
          v4(UET_PDS_CP(cp_payload=0x0102, **negotiation)),
          by_version={"1.0.3": dict(diags=[(T, "uet.pds.cp", None)])})
    datagram = dict(opcode=UET_DATAGRAM_SEND, request_length=4, job_id=0x123)
    c.add("UET_DATAGRAM_SEND with message_id 0 (what 1.0.3 asks)",
          v4(UET_PDS_UUD(), UET_SES_STD(message_id=0, **datagram), pay(4)),
          diags=[(I, "uet.ses.std", "uet.ses.message_id")], by_version={"1.0.3": dict(diags=())})
    c.add("UET_DATAGRAM_SEND with message_id 5",
          v4(UET_PDS_UUD(), UET_SES_STD(message_id=5, **datagram), pay(4)),
          by_version={"1.0.3": dict(diags=[(I, "uet.ses.std", "uet.ses.message_id")])})
    c.add("UET_MSG_ERROR over UUD (not used in UUD from 1.0.3)",
          v4(UET_PDS_UUD(), UET_SES_STD(opcode=UET_MSG_ERROR, message_id=6, request_length=0)),
          by_version={"1.0.3": dict(diags=[(I, "uet.ses.std", "uet.ses.opcode")])})
    c.add("UET_MSG_ERROR over RUD (both versions)",
          v4(req(), UET_SES_STD(opcode=UET_MSG_ERROR, message_id=7, request_length=0)))
    c.add("UET_SEND with message_id 0 over RUD (invalid in both)",
          v4(req(), UET_SES_STD(opcode=UET_SEND, message_id=0, request_length=4), pay(4)),
          diags=[(I, "uet.ses.std", "uet.ses.message_id")])
    c.add("single-packet UET_DATAGRAM_SEND in the medium header (allowed from 1.0.3)",
          v4(UET_PDS_UUD(), UET_SES_MEDIUM(opcode=UET_DATAGRAM_SEND, request_length=4, job_id=0x123), pay(4)),
          diags=[(I, "uet.ses.medium", "uet.ses.opcode")], by_version={"1.0.3": dict(diags=())})
    return c


def fragments():
    return datagram_cases.fragments(types.SimpleNamespace(**globals()))


def trailing():
    return datagram_cases.trailing(types.SimpleNamespace(**globals()))


def tss_clear():
    return tss_cases.tss_clear(types.SimpleNamespace(**globals()))


BUILDERS = (encap_eth, encap_sll, encap_sll2, encap_raw, encap_ipv4, encap_ipv6, encap_ns,
            pds, ses, edge, malformed, port_alt, spec_versions, fragments, trailing, tss_clear)


def build_all():
    return [builder() for builder in BUILDERS]


def main(argv):
    outdir = argv[1] if len(argv) > 1 else HERE
    os.makedirs(outdir, exist_ok=True)
    captures = build_all()
    manifest = []
    for cap in captures:
        cap.write(outdir)
        entry = {"file": cap.name, "linktype": cap.linktype, "port": cap.port,
                 "frames": len(cap.frames), "description": cap.description}
        if cap.versions != [DEFAULT_VERSION]:
            entry["spec_versions"] = cap.versions
        if cap.conf_offsets:
            entry["tss_conf_offsets"] = cap.conf_offsets
        manifest.append(entry)
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    total = sum(len(c.frames) for c in captures)
    for cap in captures:
        print("%-20s %4d frames" % (cap.name, len(cap.frames)))
    print("%-20s %4d frames" % ("total", total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
