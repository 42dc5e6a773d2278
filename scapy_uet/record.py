"""Decode one captured frame into the suite's decode record (codec/DECODE-OUTPUT.md).

The frame is dissected header by header with Scapy's encapsulation layers (Ether, Dot1Q,
CookedLinux, CookedLinuxV2, IP, IPv6, UDP) and this package's UET layers; the walk follows each
UET layer's own ``guess_payload_class``. Each header is dissected from exactly its own bytes, after
checking that they are all there, so that truncation, bounds and diagnostics follow the contract:

  * ``truncated``: a header (or a piece of it, a "node") needs more bytes than remain; the header
    contributes no fields and is not listed; decoding stops;
  * ``reserved_nonzero``: a reserved field (``rsvd*`` in the layers) is not zero;
  * ``unknown_value``: a value outside its value table (reported once per field); decoding stops
    when the value was needed to choose the next header;
  * ``invalid_value``: ip.version != 4, ipv6.version != 6, ip.ihl < 5 (keeps the ip fields, stops),
    SES message_id 0;
  * ``job_id_zero``: an SES request with JobID 0 (choice job-id-zero-invalid, named in the diagnostic);
  * ``inconsistent_length``: ip.len / ipv6.plen / udp.length smaller than the header (stops) or
    larger than the bytes present when caplen == len; a payload_length field above payload_len;
  * ``trailing_bytes``: bytes after a complete UET packet: after a header the parse graph of
    spec/wire.yaml marks ``payload: none``, or beyond a payload_length field.

An IP fragment (IPv4 MF or offset, IPv6 Fragment header with M or an offset) is not decoded past IP:
its status is ``fragment``; putting fragments together is the capture reader's job (reassembly.py).
A UDP GSO super-datagram (several UET packets at a fixed stride) is decoded packet by packet (gso.py).

``decode_record`` never raises.
"""

import socket

from scapy.config import conf
from scapy.fields import ConditionalField, StrFixedLenField, _BitField, _EnumField
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment
from scapy.layers.l2 import CookedLinux, CookedLinuxV2, Dot1Q, Ether

from . import gso, spec
from .layers import (DECODING, PDS_CLASSES, TSS, UDP_PORT, UET_DEFERRABLE_RTR, UET_ENTROPY, UET_IP_PROTO,
                     UET_PDS_CP, UET_TSS, _PDSPacket)
from .layers import spec_version as spec_version_of

# pcap LINKTYPE -> first node
LINKTYPES = {1: "eth", 101: "raw", 12: "raw", 228: "ip", 229: "ipv6", 113: "sll", 276: "sll2"}

ETH_IPV4, ETH_IPV6, ETH_VLAN = 0x0800, 0x86DD, 0x8100
IPV6_FRAGMENT = 44   # next header value of the IPv6 Fragment header


class _EtherII(Ether):
    """Scapy's Ether without its dispatch to Dot3 for type values <= 1500: the record always
    reads bytes 12-13 as eth.type."""
    name = "Ethernet"


def _mac(value):
    return str(value).lower()


def _ipv4(value):
    return socket.inet_ntop(socket.AF_INET, socket.inet_pton(socket.AF_INET, str(value)))


def _ipv6(value):
    return socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, str(value)))


def _value(value):
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return int(value)


def _layout(pkt):
    """(name, field, bit offset, bit width) of every field present in a dissected UET layer."""
    out = []
    bit = 0
    for fld in pkt.fields_desc:
        if isinstance(fld, ConditionalField):
            if not fld._evalcond(pkt):
                continue
            fld = fld.fld
        if isinstance(fld, _BitField):
            width = fld.size
        elif isinstance(fld, StrFixedLenField):
            width = fld.length_from(pkt) * 8
        else:
            width = fld.sz * 8
        out.append((fld.name, fld, bit, width))
        bit += width
    return out


def _known(pkt, name, fld, value):
    """Is `value` a valid value of the enum field `name` in the spec version being decoded?"""
    if value not in fld.i2s:
        return False
    enum_name = pkt.uet_enum_versions.get(name)
    return enum_name is None or spec.value_held(enum_name, value, DECODING.version)


class _Decoder(object):

    def __init__(self, frame, linktype, caplen, wirelen, udp_port, tss_conf_offset=0):
        self.data = bytes(frame)
        self.linktype = linktype
        self.end = len(self.data)
        self.caplen = len(self.data) if caplen is None else int(caplen)
        self.wirelen = self.caplen if wirelen is None else int(wirelen)
        self.whole = self.caplen == self.wirelen
        # UET's UDP port, or several: each side's own, every frame decoded as UET under the port it goes to
        self.udp_ports = (udp_port,) if isinstance(udp_port, int) else tuple(udp_port)
        self.tss_conf_offset = tss_conf_offset
        self.cipher_end = None     # set after TSS with a confidentiality offset: the end of the ciphertext
        self.pos = 0
        self.last = 0              # end of the last header listed in `layers`
        self.layers = []
        self.fields = {}
        self.field_header = {}
        self.diags = []
        self.unknown_reported = set()
        self.payload_length_fields = []
        self.reached_uet = False
        self.fragment = False      # decoding stopped at an IP fragment
        self.ended_normally = False   # the last walk of UET headers reached an end of the graph
        self.end_node = None       # the wire.yaml node it ended at
        self.ip_at = None          # offset of the IPv4 / IPv6 header (for reassembly)
        self.uet_at = None         # offset of the first UET header after UDP (a GSO run's first segment)

    # -- helpers -------------------------------------------------------------------------------

    def diag(self, kind, header, field, offset, message, choice=None):
        if kind == "unknown_value":
            if field in self.unknown_reported:
                return
            self.unknown_reported.add(field)
        entry = {"kind": kind, "header": header, "field": field, "offset": offset, "message": message}
        if choice:
            entry["choice"] = choice
        self.diags.append(entry)

    def emit(self, header, name, value):
        self.fields[name] = value
        self.field_header[name] = header

    def need(self, size, header):
        avail = self.end - self.pos
        if avail < size:
            self.diag("truncated", header, None, self.pos,
                      "%s needs %d bytes, %d left" % (header, size, avail))
            return False
        return True

    def listed(self, header, size):
        self.layers.append(header)
        self.pos += size
        self.last = self.pos

    def bound(self, header, field, start, total, hdr_size):
        """Apply a bounds field: `total` bytes from `start` belong to this header and its payload.
        Returns False when decoding must stop (bound smaller than the header)."""
        if total < hdr_size:
            self.diag("inconsistent_length", header, field, start,
                      "%s = %d is smaller than the %d-byte header" % (field, total, hdr_size))
            return False
        present = self.end - start
        if total > present:
            if self.whole:
                self.diag("inconsistent_length", header, field, start,
                          "%s says %d bytes, %d present" % (field, total, present))
        else:
            self.end = start + total
        return True

    # -- encapsulation -------------------------------------------------------------------------

    def n_eth(self):
        if not self.need(14, "eth"):
            return None
        pkt = _EtherII(self.data[self.pos:self.pos + 14])
        self.emit("eth", "eth.dst", _mac(pkt.dst))
        self.emit("eth", "eth.src", _mac(pkt.src))
        self.emit("eth", "eth.type", int(pkt.type))
        self.listed("eth", 14)
        return self.ethertype(int(pkt.type), vlan_ok=True)

    @staticmethod
    def ethertype(etype, vlan_ok=False):
        if etype == ETH_IPV4:
            return "ip"
        if etype == ETH_IPV6:
            return "ipv6"
        if etype == ETH_VLAN and vlan_ok:
            return "vlan"
        return None

    def n_vlan(self):
        if not self.need(4, "vlan"):
            return None
        pkt = Dot1Q(self.data[self.pos:self.pos + 4])
        self.emit("vlan", "vlan.priority", int(pkt.prio))
        self.emit("vlan", "vlan.dei", int(pkt.id))
        self.emit("vlan", "vlan.id", int(pkt.vlan))
        self.emit("vlan", "vlan.etype", int(pkt.type))
        self.listed("vlan", 4)
        return self.ethertype(int(pkt.type))

    def n_sll(self):
        if not self.need(16, "sll"):
            return None
        pkt = CookedLinux(self.data[self.pos:self.pos + 16])
        self.emit("sll", "sll.pkttype", int(pkt.pkttype))
        self.emit("sll", "sll.hatype", int(pkt.lladdrtype))
        self.emit("sll", "sll.halen", int(pkt.lladdrlen))
        self.emit("sll", "sll.src", bytes(pkt.src).hex())
        self.emit("sll", "sll.etype", int(pkt.proto))
        self.listed("sll", 16)
        return self.ethertype(int(pkt.proto))

    def n_sll2(self):
        if not self.need(20, "sll2"):
            return None
        pkt = CookedLinuxV2(self.data[self.pos:self.pos + 20])
        self.emit("sll2", "sll.etype", int(pkt.proto))
        self.emit("sll2", "sll.reserved", int(pkt.reserved))
        self.emit("sll2", "sll.ifindex", int(pkt.ifindex))
        self.emit("sll2", "sll.hatype", int(pkt.lladdrtype))
        self.emit("sll2", "sll.pkttype", int(pkt.pkttype))
        self.emit("sll2", "sll.halen", int(pkt.lladdrlen))
        self.emit("sll2", "sll.src", bytes(pkt.src).hex())
        self.listed("sll2", 20)
        return self.ethertype(int(pkt.proto))

    def n_raw(self):
        if not self.need(1, "raw"):
            return None
        version = self.data[self.pos] >> 4
        return {4: "ip", 6: "ipv6"}.get(version)

    def n_ip(self):
        start = self.pos
        if not self.need(20, "ip"):
            return None
        pkt = IP(self.data[start:start + 20])
        tos = int(pkt.tos)
        self.emit("ip", "ip.version", int(pkt.version))
        self.emit("ip", "ip.ihl", int(pkt.ihl))
        self.emit("ip", "ip.dsfield.dscp", tos >> 2)
        self.emit("ip", "ip.dsfield.ecn", tos & 3)
        self.emit("ip", "ip.len", int(pkt.len))
        self.emit("ip", "ip.id", int(pkt.id))
        self.emit("ip", "ip.flags", int(pkt.flags))
        self.emit("ip", "ip.frag_offset", int(pkt.frag))
        self.emit("ip", "ip.ttl", int(pkt.ttl))
        self.emit("ip", "ip.proto", int(pkt.proto))
        self.emit("ip", "ip.checksum", int(pkt.chksum))
        self.emit("ip", "ip.src", _ipv4(pkt.src))
        self.emit("ip", "ip.dst", _ipv4(pkt.dst))
        if pkt.version != 4:
            self.diag("invalid_value", "ip", "ip.version", start,
                      "ip.version = %d, expected 4" % pkt.version)
        self.layers.append("ip")
        # Contract: a size below its minimum keeps the header's fields and stops decoding.
        ihl = self.data[start] & 0x0F
        size = ihl * 4
        if size < 20:
            self.diag("invalid_value", "ip", "ip.ihl", start,
                      "ip.ihl = %d: the header would be %d bytes (< 20)" % (ihl, size))
            return None
        if not self.need(size, "ip"):
            # Contract: a truncated header contributes no fields and is not listed.
            for name in [n for n, h in self.field_header.items() if h == "ip"]:
                del self.fields[name]
                del self.field_header[name]
            self.layers.pop()
            return None
        ok = self.bound("ip", "ip.len", start, int(pkt.len), size)
        self.pos = start + size
        self.last = self.pos
        self.ip_at = start
        if not ok:
            return None
        if int(pkt.flags) & 1 or int(pkt.frag):     # MF, or not the first fragment (RFC 791)
            self.fragment = True
            return None
        return self.ip_next(int(pkt.proto))

    def ip_next(self, proto):
        if proto == 17:
            return "udp"
        if proto == UET_IP_PROTO:
            self.reached_uet = True
            return "entropy"
        return None

    def n_ipv6(self):
        start = self.pos
        if not self.need(40, "ipv6"):
            return None
        pkt = IPv6(self.data[start:start + 40])
        tclass = int(pkt.tc)
        self.emit("ipv6", "ipv6.version", int(pkt.version))
        self.emit("ipv6", "ipv6.tclass.dscp", tclass >> 2)
        self.emit("ipv6", "ipv6.tclass.ecn", tclass & 3)
        self.emit("ipv6", "ipv6.flow", int(pkt.fl))
        self.emit("ipv6", "ipv6.plen", int(pkt.plen))
        self.emit("ipv6", "ipv6.nxt", int(pkt.nh))
        self.emit("ipv6", "ipv6.hlim", int(pkt.hlim))
        self.emit("ipv6", "ipv6.src", _ipv6(pkt.src))
        self.emit("ipv6", "ipv6.dst", _ipv6(pkt.dst))
        if pkt.version != 6:
            self.diag("invalid_value", "ipv6", "ipv6.version", start,
                      "ipv6.version = %d, expected 6" % pkt.version)
        self.layers.append("ipv6")
        ok = self.bound("ipv6", "ipv6.plen", start, int(pkt.plen) + 40, 40)
        self.pos = start + 40
        self.last = self.pos
        self.ip_at = start
        if not ok:
            return None
        if int(pkt.nh) == IPV6_FRAGMENT:
            return "fraghdr"
        return self.ip_next(int(pkt.nh))

    def n_fraghdr(self):
        """IPv6 Fragment header (RFC 8200 4.5). Offset 0 without M is an atomic fragment (RFC 6946),
        decoded on; a real fragment stops here."""
        start = self.pos
        if not self.need(8, "ipv6.fraghdr"):
            return None
        pkt = IPv6ExtHdrFragment(self.data[start:start + 8])
        self.emit("ipv6.fraghdr", "ipv6.fraghdr.nxt", int(pkt.nh))
        for name, offset in (("res1", start + 1), ("res2", start + 3)):
            if int(getattr(pkt, name)):
                self.diag("reserved_nonzero", "ipv6.fraghdr", None, offset,
                          "reserved bits (%s) = %#x" % (name, int(getattr(pkt, name))))
        self.emit("ipv6.fraghdr", "ipv6.fraghdr.offset", int(pkt.offset))
        self.emit("ipv6.fraghdr", "ipv6.fraghdr.more", int(pkt.m))
        self.emit("ipv6.fraghdr", "ipv6.fraghdr.ident", int(pkt.id))
        self.listed("ipv6.fraghdr", 8)
        if int(pkt.m) or int(pkt.offset):
            self.fragment = True
            return None
        return self.ip_next(int(pkt.nh))

    def n_udp(self):
        start = self.pos
        if not self.need(8, "udp"):
            return None
        pkt = UDP(self.data[start:start + 8])
        self.emit("udp", "udp.srcport", int(pkt.sport))
        self.emit("udp", "udp.dstport", int(pkt.dport))
        self.emit("udp", "udp.length", int(pkt.len))
        self.emit("udp", "udp.checksum", int(pkt.chksum))
        self.layers.append("udp")
        ok = self.bound("udp", "udp.length", start, int(pkt.len), 8)
        self.pos = start + 8
        self.last = self.pos
        if not ok:
            return None
        if int(pkt.dport) in self.udp_ports:
            self.reached_uet = True
            return "uet"
        return None

    # -- UET -------------------------------------------------------------------------------------

    def n_entropy(self):
        return "uet" if self.walk(UET_ENTROPY, single=True) else None

    def n_uet(self):
        self.ended_normally = False
        if self.uet_at is None:
            self.uet_at = self.pos
        if not self.need(1, "uet"):
            return None
        first = self.data[self.pos] >> 3
        if first == TSS:
            if self.walk(UET_TSS) and self.tss_conf_offset:
                self.clear_text()
            return None
        return self.pds()

    def clear_text(self):
        """Choice tss-coverage: the secure domain's confidentiality offset leaves that many bytes after
        the TSS header in clear (never the ICV at the end); they are decoded from the PDS header on.
        The ciphertext and ICV that follow count as payload, unchecked."""
        self.cipher_end = self.end
        room = max(0, self.end - self.pos - spec.TSS_ICV_BYTES)
        self.end = self.pos + min(self.tss_conf_offset, room)
        self.pds()
        self.end = self.cipher_end

    def pds(self):
        if not self.need(1, "uet.pds"):
            return None
        first = self.data[self.pos] >> 3
        self.emit("uet.pds", "uet.pds.type", first)
        cls = PDS_CLASSES.get(first)
        if cls is None:
            self.diag("unknown_value", "uet.pds", "uet.pds.type", self.pos,
                      "unknown PDS type %d" % first)
            return None
        self.walk(cls)
        return None

    def walk(self, cls, single=False):
        """Decode a chain of UET layers, each choosing the next by guess_payload_class.
        Returns False if a header was truncated."""
        prev = None
        while cls is not None and cls is not conf.raw_layer:
            start = self.pos
            chunk = self.data[start:self.end]
            bounds = cls.uet_node_bounds(chunk)
            total = bounds[-1]
            if len(chunk) < total:
                done = max([b for b in bounds if b <= len(chunk)] or [0])
                if done:
                    # The first pieces of this header are complete: their checks still apply.
                    pkt = cls(chunk[:done] + bytes(total - done), _underlayer=prev)
                    self.uet_fields(pkt, start, limit=done)
                    header = pkt.uet_header
                else:
                    header = cls.uet_header
                self.diag("truncated", header, None, start,
                          "%s needs %d bytes, %d left" % (header, total, len(chunk)))
                return False
            pkt = cls(chunk[:total], _underlayer=prev)
            self.uet_fields(pkt, start)
            self.listed(pkt.uet_header, total)
            if single:
                return True
            prev = pkt
            cls = pkt.guess_payload_class(b"")
        self.end_node = self.end_node_of(prev)
        self.ended_normally = self.end_node is not None
        return True

    def end_node_of(self, pkt):
        """The spec/wire.yaml node at which the parse graph ends after `pkt`, the last UET header
        decoded; None when it stops at an unknown next_hdr (a select error, not an end)."""
        header = pkt.uet_header
        if header == "uet.pds.cp":
            return "uet.pds.cp.negotiation" if "uet.pds.neg.type" in self.fields else "uet.pds.cp.payload"
        if header.startswith("uet.pds."):
            return "uet.pds.next" if self.fields.get("uet.pds.next_hdr") == 0 else None
        if header == "uet.ses.std":
            if self.fields.get("uet.ses.opcode") == UET_DEFERRABLE_RTR:
                return "uet.ses.std.rtr"
            return "uet.ses.std.som" if self.fields.get("uet.ses.som") == 1 else "uet.ses.std.cont"
        if header == "uet.tss":
            return "uet.tss.tsc"
        return header    # a header of one node: the node has its name

    def uet_fields(self, pkt, start, limit=None):
        """Report the fields of a UET layer and check them. With `limit`, only the fields inside
        the first `limit` bytes are checked and nothing is reported (truncated header)."""
        header = pkt.uet_header
        for name, fld, bit, width in _layout(pkt):
            if limit is not None and bit + width > limit * 8:
                continue
            offset = start + bit // 8
            value = pkt.getfieldval(name)
            if name.startswith("rsvd"):
                if (any(value) if isinstance(value, (bytes, bytearray)) else value):
                    self.diag("reserved_nonzero", header, None, offset,
                              "reserved bits (%s) = %#x" % (name, _value(value)
                                                             if not isinstance(value, bytes)
                                                             else int.from_bytes(value, "big")))
                continue
            rec = pkt.uet_record_name(name)
            if isinstance(fld, _EnumField) and fld.i2s is not None and not _known(pkt, name, fld, value):
                self.diag("unknown_value", header, rec, offset,
                          "%s = %#x is not a known value" % (rec, value))
            if pkt.uet_is_invalid(name, value):
                self.diag("invalid_value", header, rec, offset,
                          "%s = %#x is invalid" % (rec, value))
            ruled_out = pkt.uet_choice_diagnostic(name, value)
            if ruled_out:
                self.diag(ruled_out[0], header, rec, offset,
                          "%s = %#x is ruled out by choice %s" % (rec, value, ruled_out[1]), choice=ruled_out[1])
            if limit is not None or name in pkt.uet_noemit or not pkt.uet_emit(name):
                continue
            self.emit(header, rec, _value(value))
            if name == "payload_length":
                self.payload_length_fields.append((header, rec, offset))
            if isinstance(pkt, _PDSPacket) and name in ("next_hdr", "ctl_type"):
                self.emit(header, "uet.pds.flags", pkt.uet_flags())
            if isinstance(pkt, UET_PDS_CP) and name == "syn_retx_transfer":
                self.emit(header, "uet.pds.neg.features", pkt.uet_features())

    # -- the whole frame -------------------------------------------------------------------------

    def packet_payload(self, left):
        """The payload of the UET packet among the `left` bytes after its last header: bytes after a
        complete packet are trailing_bytes, not payload. Only when the graph ended normally, and not
        after TSS (the packet ends inside the ciphertext)."""
        if not self.ended_normally or self.cipher_end is not None:
            return left
        if self.end_node in spec.PAYLOAD_NONE:
            if left:
                self.diag("trailing_bytes", self.layers[-1], None, self.last,
                          "%d bytes follow the end of the UET packet" % left)
            return 0
        if not self.payload_length_fields:
            return left
        header, name, offset = self.payload_length_fields[-1]
        said = self.fields[name]
        if left > said:
            self.diag("trailing_bytes", header, name, self.last + said,
                      "%d bytes follow the %d payload bytes %s gives" % (left - said, said, name))
            return said
        # Contract: only a frame captured whole can fall short of its payload_length.
        if left < said and self.whole:
            self.diag("inconsistent_length", header, name, offset,
                      "%s = %d but %d payload bytes follow" % (name, said, left))
        return left

    def follow(self, node):
        """Decode on from node `node` (a method n_<node>) until the graph ends or stops."""
        while node is not None:
            node = getattr(self, "n_" + node)()

    def status(self):
        if self.diags:
            return "malformed"
        if self.fragment:
            return "fragment"
        return "uet" if self.reached_uet else "non-uet"

    def packet(self):
        """What the record says of the packet decoded, from `layers` to `confidence` (after follow())."""
        payload_len = self.packet_payload(max(0, self.end - self.last))
        uncertain = {}
        for name in self.fields:
            choice = spec.uncertain_choice(self.field_header[name], name, self.fields)
            if choice:
                uncertain[name] = choice
        return {"layers": self.layers, "fields": self.fields,
                "payload_len": payload_len, "diagnostics": self.diags,
                "uncertain": uncertain,
                "confidence": {c: spec.confidence(c) for c in sorted(set(uncertain.values()))}}

    def run(self):
        self.follow(LINKTYPES.get(self.linktype))
        packet = self.packet()
        record = {"caplen": self.caplen, "len": self.wirelen, "status": self.status()}
        record.update(packet)
        return record

    def segment(self, start, stop):
        """The bytes [start, stop) of this frame decoded on their own from the UET layer, offsets still
        counted in the frame (a segment of a GSO run): its status and packet part, and whether its walk
        reached an end of the graph."""
        seg = _Decoder(self.data, self.linktype, self.caplen, self.wirelen, self.udp_ports, self.tss_conf_offset)
        seg.pos = seg.last = start
        seg.end = stop
        seg.reached_uet = True
        seg.follow("uet")
        packet = seg.packet()
        record = {"status": seg.status()}
        record.update(packet)
        return record, seg.ended_normally


def decode_record(frame, linktype, caplen, wirelen, udp_port=UDP_PORT, spec_version=spec.DEFAULT_VERSION,
                  tss_conf_offset=0):
    """The decode record of one frame (codec/DECODE-OUTPUT.md) without `frame` and `ts`, which
    the caller adds. `caplen` is the captured length, `wirelen` the length on the wire (a
    bounds field beyond the captured bytes is only a diagnostic when they are equal).
    `spec_version` names the spec version the decode follows (a key of wire.yaml spec_versions);
    `tss_conf_offset` the bytes of clear text after a TSS header (choice tss-coverage, default 0).
    `udp_port` is UET's UDP port, or a tuple of them (each side's). Never raises."""
    return decode_located(frame, linktype, caplen, wirelen, udp_port, spec_version, tss_conf_offset)[0]


def decode_located(frame, linktype, caplen, wirelen, udp_port=UDP_PORT, spec_version=spec.DEFAULT_VERSION,
                   tss_conf_offset=0):
    """decode_record, and where the frame's IP header and the bytes after its last header begin
    (None when there is no IP header): what reassembly needs of a fragment. Never raises."""
    try:
        with spec_version_of(spec_version):
            decoder = _Decoder(frame, linktype, caplen, wirelen, udp_port, tss_conf_offset)
            return gso.with_run(decoder, decoder.run()), decoder.ip_at, decoder.last
    except Exception as exc:  # pragma: no cover - a bug; the robustness test guards against it
        return {"caplen": caplen, "len": wirelen, "status": "malformed", "layers": [],
                "fields": {},
                "payload_len": 0,
                "diagnostics": [{"kind": "decoder_error", "header": None, "field": None,
                                 "offset": 0, "message": "%s: %s" % (type(exc).__name__, exc)}],
                "uncertain": {}, "confidence": {}}, None, None


def _strict_decode(frame, linktype, caplen, wirelen, udp_port=UDP_PORT, spec_version_name=spec.DEFAULT_VERSION,
                   tss_conf_offset=0):
    """decode_record without the safety net (used by the robustness test)."""
    with spec_version_of(spec_version_name):
        decoder = _Decoder(frame, linktype, caplen, wirelen, udp_port, tss_conf_offset)
        return gso.with_run(decoder, decoder.run())
