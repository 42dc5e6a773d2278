"""Minimal, deterministic pcap / pcapng reading and writing.

Reading yields ``Frame`` tuples (data, linktype, caplen, wirelen, ts) where ``ts`` is the capture
time as text ``seconds.fraction`` with 6 digits (microsecond files) or 9 digits (nanosecond files).
Writing is used by the golden-corpus generator: fixed timestamps give byte-identical files.
"""

import collections
import struct

Frame = collections.namedtuple("Frame", "data linktype caplen wirelen ts")


class PcapError(Exception):
    pass


PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D
PCAPNG_SHB = 0x0A0D0D0A
PCAPNG_BOM = 0x1A2B3C4D


def _ts(seconds, fraction, digits):
    return "%d.%0*d" % (seconds, digits, fraction)


def read_frames(path):
    """Yield the frames of a pcap or pcapng file. Raises OSError / PcapError."""
    with open(path, "rb") as fh:
        for frame in _frames(fh, path):
            yield frame


def frame_ends(fh, name="capture"):
    """Yield, for each frame of the pcap or pcapng file open in `fh` (binary, from its start), the offset just
    after it: a place where the file can be cut and stay a valid capture of the frames before. Raises OSError /
    PcapError."""
    for _frame in _frames(fh, name):
        yield fh.tell()


def _frames(fh, path):
    head = fh.read(4)
    if len(head) < 4:
        raise PcapError("%s: not a pcap or pcapng file (too short)" % path)
    fh.seek(0)
    (magic_le,) = struct.unpack("<I", head)
    (magic_be,) = struct.unpack(">I", head)
    if magic_le == PCAPNG_SHB:
        reader = _read_pcapng(fh, path)
    elif PCAP_MAGIC_US in (magic_le, magic_be) or PCAP_MAGIC_NS in (magic_le, magic_be):
        reader = _read_pcap(fh, path)
    else:
        raise PcapError("%s: not a pcap or pcapng file (magic %s)" % (path, head.hex()))
    try:
        for frame in reader:
            yield frame
    except struct.error as exc:
        raise PcapError("%s: corrupt capture file (%s)" % (path, exc))


def _read_pcap(fh, path):
    header = fh.read(24)
    if len(header) < 24:
        raise PcapError("%s: truncated pcap file header" % path)
    for endian in ("<", ">"):
        magic = struct.unpack(endian + "I", header[:4])[0]
        if magic in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
            break
    digits = 9 if magic == PCAP_MAGIC_NS else 6
    _vmaj, _vmin, _zone, _sig, _snaplen, linktype = struct.unpack(endian + "HHiIII", header[4:])
    linktype &= 0x0FFFFFFF
    while True:
        rec = fh.read(16)
        if not rec:
            return
        if len(rec) < 16:
            raise PcapError("%s: truncated packet record header" % path)
        sec, frac, caplen, wirelen = struct.unpack(endian + "IIII", rec)
        data = fh.read(caplen)
        if len(data) < caplen:
            raise PcapError("%s: truncated packet data" % path)
        yield Frame(data, linktype, caplen, wirelen, _ts(sec, frac, digits))


def _read_pcapng(fh, path):
    endian = "<"
    interfaces = []
    while True:
        head = fh.read(8)
        if not head:
            return
        if len(head) < 8:
            raise PcapError("%s: truncated pcapng block header" % path)
        if head[:4] == b"\x0a\x0d\x0d\x0a":      # section header block (palindromic type)
            btype = PCAPNG_SHB
            bom = fh.read(4)
            if len(bom) < 4:
                raise PcapError("%s: truncated section header block" % path)
            endian = "<" if struct.unpack("<I", bom)[0] == PCAPNG_BOM else ">"
            if struct.unpack(endian + "I", bom)[0] != PCAPNG_BOM:
                raise PcapError("%s: bad pcapng byte-order magic" % path)
            blen = struct.unpack(endian + "I", head[4:])[0]
            body = bom + fh.read(max(0, blen - 16))
            interfaces = []
        else:
            btype, blen = struct.unpack(endian + "II", head)
            body = fh.read(max(0, blen - 12))
        if blen < 12 or len(body) != blen - 12:
            raise PcapError("%s: truncated or corrupt pcapng block" % path)
        fh.read(4)   # trailing block length
        if btype == 1:       # interface description block
            linktype, _r, snaplen = struct.unpack(endian + "HHI", body[:8])
            interfaces.append([linktype, snaplen, 6, 10 ** 6])
            opts = body[8:]
            while len(opts) >= 4:
                code, olen = struct.unpack(endian + "HH", opts[:4])
                value = opts[4:4 + olen]
                opts = opts[4 + ((olen + 3) & ~3):]
                if code == 0:
                    break
                if code == 9 and olen >= 1:   # if_tsresol
                    res = value[0]
                    per_second = 2 ** (res & 0x7F) if res & 0x80 else 10 ** res
                    interfaces[-1][3] = per_second
                    interfaces[-1][2] = 6 if per_second <= 10 ** 6 else 9
        elif btype in (6, 2):   # enhanced packet block, obsolete packet block
            if btype == 6:
                ifid, ts_hi, ts_lo, caplen, wirelen = struct.unpack(endian + "IIIII", body[:20])
            else:
                ifid, _drops, ts_hi, ts_lo, caplen, wirelen = struct.unpack(endian + "HHIIII",
                                                                              body[:20])
            if ifid >= len(interfaces):
                raise PcapError("%s: packet for an undeclared interface" % path)
            linktype, _snap, digits, per_second = interfaces[ifid]
            if len(body) < 20 + caplen:
                raise PcapError("%s: truncated packet data" % path)
            ticks = (ts_hi << 32) | ts_lo
            sec, rem = divmod(ticks, per_second)
            frac = rem * 10 ** digits // per_second
            yield Frame(body[20:20 + caplen], linktype, caplen, wirelen, _ts(sec, frac, digits))
        elif btype == 3:     # simple packet block
            if not interfaces:
                raise PcapError("%s: packet for an undeclared interface" % path)
            (wirelen,) = struct.unpack(endian + "I", body[:4])
            linktype, snaplen, digits, _ = interfaces[0]
            caplen = min(wirelen, snaplen) if snaplen else wirelen
            yield Frame(body[4:4 + caplen], linktype, caplen, wirelen, _ts(0, 0, digits))


# ---------------------------------------------------------------------------------------------
# Writers


def write_pcap(path, linktype, records, snaplen=262144):
    """records: iterable of (sec, usec, data, wirelen)."""
    out = [struct.pack("<IHHiIII", PCAP_MAGIC_US, 2, 4, 0, 0, snaplen, linktype)]
    for sec, usec, data, wirelen in records:
        out.append(struct.pack("<IIII", sec, usec, len(data), wirelen))
        out.append(bytes(data))
    with open(path, "wb") as fh:
        fh.write(b"".join(out))


def _block(btype, body):
    body = body + b"\0" * ((-len(body)) % 4)
    blen = len(body) + 12
    return struct.pack("<II", btype, blen) + body + struct.pack("<I", blen)


def write_pcapng_ns(path, linktype, records, snaplen=262144):
    """One section, one interface with if_tsresol = 9 (nanoseconds).
    records: iterable of (sec, nsec, data, wirelen)."""
    shb = _block(PCAPNG_SHB, struct.pack("<IHHq", PCAPNG_BOM, 1, 0, -1) + struct.pack("<HH", 0, 0))
    opts = struct.pack("<HH", 9, 1) + b"\x09\0\0\0" + struct.pack("<HH", 0, 0)
    idb = _block(1, struct.pack("<HHI", linktype, 0, snaplen) + opts)
    out = [shb, idb]
    for sec, nsec, data, wirelen in records:
        ticks = sec * 10 ** 9 + nsec
        out.append(_block(6, struct.pack("<IIIII", 0, ticks >> 32, ticks & 0xFFFFFFFF,
                                         len(data), wirelen) + bytes(data)))
    with open(path, "wb") as fh:
        fh.write(b"".join(out))
