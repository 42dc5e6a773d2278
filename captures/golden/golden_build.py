"""What every golden case module builds with (make_golden.py and the *_cases.py beside it): the
addresses and ports of the corpus, the frame builders (eth, ip4, ip6, udp, v4, v6, pay, req), the checks a
built frame must pass against its decode record, and Capture, which writes a pcap and its expected records.
A case module takes these names with `from golden_build import *`."""

import json
import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import warnings  # noqa: E402

warnings.filterwarnings("ignore")

# The Scapy layers the case modules build with come to them through this module.
from scapy.config import conf  # noqa: E402
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_NOP, IPOption_EOL  # noqa: E402,F401
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import ARP, CookedLinux, CookedLinuxV2, Dot1Q, Ether  # noqa: E402,F401
from scapy.packet import NoPayload, Packet, Padding, Raw  # noqa: E402,F401

from scapy_uet.layers import *  # noqa: E402,F401,F403
from scapy_uet.layers import _UETPacket  # noqa: E402
from scapy_uet.__main__ import full_record  # noqa: E402
from scapy_uet.reassembly import decode_capture  # noqa: E402
from scapy_uet.spec import DEFAULT_VERSION  # noqa: E402
from scapy_uet.pcapio import Frame, write_pcap, write_pcapng_ns  # noqa: E402

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


class GsoIntent(object):
    """The UDP GSO run a frame is built to hold: its segment count and stride, and the Scapy packets of
    segments 1.. (each must come back in its segment's record with the values it was built with, its UET
    headers listed, and the diagnostics given for it: {segment number: [(kind, header, field)]})."""

    def __init__(self, count, stride, segments, diags=None):
        self.count, self.stride, self.segments, self.diags = count, stride, list(segments), diags or {}

    def check(self, rec, where):
        run = rec.get("gso")
        if len(self.segments) != self.count - 1:
            raise CorpusError("%s: %d segments built for a run of %d" % (where, len(self.segments), self.count))
        if not run or (run["count"], run["stride"]) != (self.count, self.stride):
            raise CorpusError("%s: GSO run %s, intended %d segments of %d bytes" % (where, run, self.count, self.stride))
        for i, (built, got) in enumerate(zip(self.segments, rec["segments"]), 1):
            here = "%s segment %d" % (where, i)
            if got["gso"] != {"segment": i, "offset": run["offset"] + i * self.stride, "stride": self.stride}:
                raise CorpusError("%s: placed at %s" % (here, got["gso"]))
            if got["layers"] != built_uet_headers(built):
                raise CorpusError("%s: layers %s, built %s" % (here, got["layers"], built_uet_headers(built)))
            for _header, name, value in explicit_fields(built):
                if got["fields"].get(name) != value:
                    raise CorpusError("%s: %s = %r, built with %r" % (here, name, got["fields"].get(name), value))
            kinds = {(d["kind"], d["header"], d["field"]) for d in got["diagnostics"]}
            if kinds != set(map(tuple, self.diags.get(i, ()))):
                raise CorpusError("%s: diagnostics %s, intended %s" % (here, sorted(kinds, key=str), self.diags.get(i)))


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
            build_version=DEFAULT_VERSION, by_offset=None, gso=None):
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
        gso:    the UDP GSO run the frame holds: GsoIntent (None: the record has no run).
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
            want = dict(status=status, diags=diags, layers=layers, gso=gso)
            want.update((by_offset or {}).get(offset, {}) if offset else (by_version or {}).get(version, {}))
            built = pkt if isinstance(pkt, Packet) and version == build_version else None
            with spec_version(build_version):
                records[version, offset] = self._checked(case, index, frame, version, offset, built, cut, snap,
                                                         **want)
        self.frames.append((case, data, wirelen, records))
        return records[self.settings[0]]

    def _checked(self, case, index, frame, version, offset, pkt, cut, snap, status, diags, layers, gso):
        """The record of `frame` decoded by `version` and TSS confidentiality offset `offset`, refused
        unless it is what the case intends."""
        rec = full_record(index, frame, self.port, version, offset)
        where = "%s frame %d (%s)%s%s" % (self.name, index, case,
                                          "" if version == DEFAULT_VERSION else " by spec " + version,
                                          " with TSS confidentiality offset %d" % offset if offset else "")
        if gso is None and "gso" in rec:
            raise CorpusError("%s: a GSO run %s, none intended" % (where, rec["gso"]))
        if gso is not None:
            gso.check(rec, where)
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
            # As harness.wire.decode_compare.DecodeSettings.label names them.
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
