"""Reading a capture as uet-decode does: one record per frame, IP fragments reassembled across frames
(codec/DECODE-OUTPUT.md, "IP fragments").

A fragment frame decodes to status ``fragment`` (record.py stops at it). The Reassembler keeps the
fragments of each datagram, keyed as Wireshark keys them (IP version, source, destination,
identification, protocol), whatever their order; the frame whose fragment completes a datagram reports
the decode of the whole datagram, with ``reassembled_from``. Written from RFC 791 and RFC 8200 4.5,
independently of the C++ reassembly (codec/src/reassembly.cpp); the golden corpus compares the two.
"""

from scapy.utils import checksum

from .layers import UDP_PORT
from . import spec
from .record import decode_located

# Datagrams held at once: a fragment of a new datagram beyond this drops the one held longest (its
# frames stay reported as fragments). Each datagram is at most MAX_DATAGRAM bytes.
MAX_DATAGRAMS = 256
MAX_DATAGRAM = 65535


class _Datagram(object):
    def __init__(self):
        self.data = bytearray()
        self.pieces = []       # (start, length, frame number); never overlapping
        self.end = None        # the datagram's length, once its last fragment came
        self.received = 0
        self.head = None       # link-layer and IP header of the fragment at offset 0
        self.ip_at = 0


class Reassembler(object):

    def __init__(self, max_datagrams=MAX_DATAGRAMS):
        self.max_datagrams = max_datagrams
        self.held = {}         # key -> _Datagram, oldest first

    def add(self, number, data, record, ip_at, data_at):
        """Take frame `number` (its bytes, its record, where its IP header and fragment data begin).
        Returns (frame bytes, frame numbers in offset order) when this fragment completes its
        datagram, else None. A fragment that overlaps one held or contradicts the datagram's length
        gets a diagnostic in `record` and is not used."""
        if record["status"] != "fragment" or record["caplen"] != record["len"]:
            return None
        f = record["fields"]
        if "ipv6.fraghdr.ident" in f:
            where = ("ipv6.fraghdr", data_at - 8)
            start, more = f["ipv6.fraghdr.offset"] * 8, f["ipv6.fraghdr.more"] == 1
            key = (6, f["ipv6.fraghdr.nxt"], f["ipv6.fraghdr.ident"], f["ipv6.src"], f["ipv6.dst"])
        else:
            where = ("ip", ip_at)
            start, more = f["ip.frag_offset"] * 8, f["ip.flags"] & 1 == 1
            key = (4, f["ip.proto"], f["ip.id"], f["ip.src"], f["ip.dst"])
        length = record["payload_len"]
        end = start + length
        if more and (length == 0 or length % 8):
            return _refuse(record, where, "fragment_inconsistent",
                           "a fragment other than the last holds %d bytes, not a positive multiple of 8"
                           % length)
        if end > MAX_DATAGRAM:
            return _refuse(record, where, "fragment_inconsistent",
                           "the fragment ends at byte %d, beyond the largest IP datagram" % end)
        dg = self.held.get(key)
        if dg is not None:
            beyond = "fragments end beyond the %d bytes the last fragment gives"
            if not more:
                if dg.end is not None and dg.end != end:
                    return _refuse(record, where, "fragment_inconsistent",
                                   "a second last fragment gives %d bytes, not %d" % (end, dg.end))
                if any(s + n > end for s, n, _ in dg.pieces):
                    return _refuse(record, where, "fragment_inconsistent", beyond % end)
            elif dg.end is not None and end > dg.end:
                return _refuse(record, where, "fragment_inconsistent", beyond % dg.end)
            for s, n, frame in dg.pieces:
                if s < end and start < s + n:
                    return _refuse(record, where, "fragment_overlap",
                                   "bytes %d..%d overlap those of frame %d" % (start, end, frame))
        else:
            if len(self.held) >= self.max_datagrams and self.held:
                del self.held[next(iter(self.held))]
            if self.max_datagrams == 0:
                return None
            dg = self.held[key] = _Datagram()
        if len(dg.data) < end:
            dg.data.extend(bytes(end - len(dg.data)))
        dg.data[start:end] = data[data_at:data_at + length]
        dg.pieces.append((start, length, number))
        dg.received += length
        if not more:
            dg.end = end
        if start == 0:
            # The whole datagram's frame begins as this one does, without an IPv6 fragment header.
            dg.head, dg.ip_at = bytes(data[:ip_at + 40 if key[0] == 6 else data_at]), ip_at
        if dg.end is None or dg.received != dg.end:
            return None
        del self.held[key]
        return _whole(dg, key, record, where)


def _refuse(record, where, kind, message):
    record["diagnostics"].append({"kind": kind, "header": where[0], "field": None, "offset": where[1],
                                  "message": message + "; the fragment is not used"})
    record["status"] = "malformed"
    return None


def _whole(dg, key, record, where):
    """The frame of the reassembled datagram: IP header rewritten as if never fragmented."""
    frame = bytearray(dg.head + dg.data[:dg.end])
    ip = dg.ip_at
    if key[0] == 6:
        frame[ip + 4:ip + 6] = dg.end.to_bytes(2, "big")   # payload length, fragment header gone
        frame[ip + 6] = key[1]                               # next header: the fragment header's
    else:
        header = len(dg.head) - ip
        if header + dg.end > MAX_DATAGRAM:
            return _refuse(record, where, "fragment_inconsistent",
                           "the reassembled datagram would be %d bytes" % (header + dg.end))
        frame[ip + 2:ip + 4] = (header + dg.end).to_bytes(2, "big")
        frame[ip + 6] &= 0xC0                                # reserved and DF stay; MF and offset go
        frame[ip + 7] = 0
        frame[ip + 10:ip + 12] = b"\0\0"
        frame[ip + 10:ip + 12] = checksum(bytes(frame[ip:ip + header])).to_bytes(2, "big")
    return bytes(frame), [n for _, _, n in sorted(dg.pieces)]


def decode_capture(frames, udp_port=UDP_PORT, spec_version=spec.DEFAULT_VERSION, tss_conf_offset=0):
    """The full record (with `frame` and `ts`) of each frame of `frames` (pcapio.Frame), in order."""
    reassembler = Reassembler()
    for number, frame in enumerate(frames, 1):
        record, ip_at, data_at = decode_located(frame.data, frame.linktype, frame.caplen, frame.wirelen,
                                                udp_port, spec_version, tss_conf_offset)
        whole = reassembler.add(number, frame.data, record, ip_at, data_at)
        extra = {}
        if whole is not None:
            data, parts = whole
            record = decode_located(data, frame.linktype, len(data), len(data), udp_port, spec_version,
                                    tss_conf_offset)[0]
            extra = {"reassembled_from": parts}
        out = {"frame": number, "ts": frame.ts}
        out.update(record)
        out.update(extra)
        yield out
