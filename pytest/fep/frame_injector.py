"""Hostile copies of a FEP's own frames, for the hostile-traffic wire test (test_hostile_traffic.py).

Run inside one side's namespace: every UET frame that side's FEP sends (seen leaving the veth on a packet
socket) is sent again COPIES times, each copy mutated, from the same address and port to the same peer,
through a raw IP socket. The PDC IDs stay right, so the copies reach the PDCs of the transfer. A mutation is
one of:
  field    one header field (any UET header of the frame, by the Scapy layers) gets a random value
  psn-old  the PSN (requests) or cumulative ACK PSN (ACKs) moves 1..64 back: an old packet again
  psn-far  the PSN moves 2^31 away: far outside any window
  cut      the frame is cut short
  extend   random bytes are appended
Fields that name the position of a packet in the PDC (psn, cack_psn, ack_psn_offset, nack_psn) change only
by psn-old and psn-far, never to a value inside the receiver's window: a forged in-window PSN is the real
packet as far as any receiver can tell (UET leaves that defence to TSS), so no transport could survive it.
The copies leave with IP TTL 17, so the injector never copies its own frames.

    frame_injector.py IFNAME SRC_IP DST_IP SEED COPIES

Prints "ready" once it listens, "injected N" every 250 copies, and on SIGTERM one JSON line with what it saw
and injected; then exits.
"""
import ctypes
import json
import random
import signal
import socket
import struct
import sys

from scapy.config import conf

from scapy_uet.layers import UET

UET_PORT = 4793
MARK_TTL = 17
ETH_P_ALL, ETH_P_IP = 0x0003, 0x0800  # a packet socket sees outgoing frames only with ETH_P_ALL
PACKET_OUTGOING = 4
SO_ATTACH_FILTER, SO_RCVBUFFORCE = 26, 33  # socket.h; Python's socket module lacks it (root may exceed rmem_max with it)
POSITION_FIELDS = {"psn", "cack_psn", "ack_psn_offset", "nack_psn", "spdcid", "dpdcid"}
HEADERS_MAX = 160  # more than the longest run of UET headers softuet sends (PDS, SES and extensions)
PROGRESS_EVERY = 250
KINDS = ["field", "field", "field", "psn-old", "psn-far", "cut", "extend"]


def field_width(fld):
    """The width in bits of a Scapy field (BitField: size; a fixed-size field: 8 * sz)."""
    fld = getattr(fld, "fld", fld)  # ConditionalField
    if hasattr(fld, "size") and isinstance(fld.size, int):
        return fld.size
    return 8 * getattr(fld, "sz", 0)


def uet_layers(pkt):
    layer = pkt
    while layer is not None and not isinstance(layer, conf.raw_layer) and layer.name != "NoPayload":
        yield layer
        layer = layer.payload if layer.payload else None


def field_masks(payload):
    """(header length, {field name: mask}) of the UET headers of `payload`: where each field lies in the
    headers, found by building the frame again with the field's bits all flipped (so that a mutation costs
    no Scapy call)."""
    head = payload[:HEADERS_MAX]  # the headers: building a 4 KiB payload once per field costs too much
    pkt = UET(head)
    raw = pkt.getlayer(conf.raw_layer)
    header_len = len(head) - (len(raw.load) if raw is not None else 0)
    whole = int.from_bytes(payload[:header_len], "big")
    masks = {}
    for layer in uet_layers(pkt):
        for f in layer.fields_desc:
            width = field_width(f)
            if f.name not in layer.fields or not width:
                continue
            old = layer.getfieldval(f.name) or 0
            for flipped in (old ^ (2**width - 1), ~old):  # unsigned, then signed fields
                try:
                    layer.setfieldval(f.name, flipped)
                    built = bytes(pkt)
                    break
                except Exception:  # noqa: BLE001 (Scapy refuses a value out of a signed field's range)
                    built = None
            layer.setfieldval(f.name, old)
            if built is not None and len(built) == len(head):
                masks[f.name] = whole ^ int.from_bytes(built[:header_len], "big")
    return header_len, masks


class Mutator:
    """Mutated copies of frames; the field layout of each kind of frame is learnt once."""

    def __init__(self, rng):
        self.rng = rng
        self.layouts = {}

    def layout(self, payload):
        # The PDS header's first bytes (type, next_hdr, flags) and the SES header's (opcode, SOM) decide
        # which headers a frame has.
        key = (payload[:2], payload[12:14])
        if key not in self.layouts:
            try:
                self.layouts[key] = field_masks(payload)
            except Exception:  # noqa: BLE001 (a frame the Scapy layers cannot take apart: cut or extend only)
                self.layouts[key] = (0, {})
        return self.layouts[key]

    def mutate(self, payload):
        """(kind, mutated bytes) of one UET frame."""
        rng = self.rng
        kind = rng.choice(KINDS)
        header_len, masks = self.layout(payload)
        if header_len > len(payload):
            masks = {}
        position = [m for name, m in masks.items() if name in ("psn", "cack_psn")]
        if kind in ("psn-old", "psn-far") and not position:
            kind = "field"
        fields = [m for name, m in masks.items() if name not in POSITION_FIELDS]
        if kind == "field" and not fields:
            kind = "extend"
        if kind == "cut":
            return kind, payload[:rng.randrange(len(payload))]
        if kind == "extend":
            return kind, payload + rng.randbytes(rng.randint(1, 64))
        header = int.from_bytes(payload[:header_len], "big")
        if kind == "field":
            mask = rng.choice(fields)
            header = (header & ~mask) | (rng.getrandbits(8 * header_len) & mask)
        else:
            mask = position[0]
            shift = (mask & -mask).bit_length() - 1
            delta = rng.randint(1, 64) if kind == "psn-old" else 2**31 + rng.randrange(2**16)
            psn = ((header & mask) >> shift) - delta
            header = (header & ~mask) | ((psn % 2**32) << shift)
        return kind, header.to_bytes(header_len, "big") + payload[header_len:]


def outgoing_udp_filter():
    """A classic BPF program for the tap: only UDP over IPv4 leaving the host, not the injector's own copies
    (the tap sees both directions, and the peer's frames and copies would bury this side's own)."""
    ld_b_abs, jeq, ret = 0x30, 0x15, 0x06
    pkttype = 0xFFFFF000 + 4  # SKF_AD_OFF + SKF_AD_PKTTYPE
    program = [
        (ld_b_abs, 0, 0, pkttype), (jeq, 0, 5, PACKET_OUTGOING),
        (ld_b_abs, 0, 0, 9), (jeq, 0, 3, socket.IPPROTO_UDP),  # offsets from the IP header (SOCK_DGRAM)
        (ld_b_abs, 0, 0, 8), (jeq, 1, 0, MARK_TTL),
        (ret, 0, 0, 0x40000), (ret, 0, 0, 0),
    ]
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *insn) for insn in program))
    return code, struct.pack("HL", len(program), ctypes.addressof(code))


def ip_udp(src, dst, sport, dport, payload):
    """An IPv4 header (the kernel fills in the length and checksum) and a UDP header without checksum."""
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 0, 0, 0, MARK_TTL, socket.IPPROTO_UDP, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return ip + struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def main(argv):
    ifname, src, dst, seed, copies = argv[1], argv[2], argv[3], int(argv[4]), int(argv[5])
    mutator = Mutator(random.Random(seed))
    tap = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))  # from the IP header on
    tap.bind((ifname, ETH_P_ALL))
    code, fprog = outgoing_udp_filter()
    tap.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
    # A burst of the transfer's frames waits here while the copies of the earlier ones go out.
    tap.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
    tap.settimeout(0.2)
    out = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    seen = injected = 0
    kinds = {}
    print("ready", flush=True)
    src_bytes, dst_bytes = socket.inet_aton(src), socket.inet_aton(dst)
    while not stop:
        try:
            frame, where = tap.recvfrom(65535)
        except (socket.timeout, InterruptedError):
            continue
        if where[1] != ETH_P_IP or where[2] != PACKET_OUTGOING or len(frame) < 28 or frame[9] != socket.IPPROTO_UDP or frame[8] == MARK_TTL:
            continue
        if frame[12:16] != src_bytes or frame[16:20] != dst_bytes:
            continue
        ihl = (frame[0] & 0xF) * 4
        sport, dport = struct.unpack_from("!HH", frame, ihl)
        if dport != UET_PORT:
            continue
        payload = frame[ihl + 8:]
        seen += 1
        for _ in range(copies):
            kind, copy = mutator.mutate(payload)
            out.sendto(ip_udp(src, dst, sport, dport, copy), (dst, 0))
            injected += 1
            kinds[kind] = kinds.get(kind, 0) + 1
            if injected % PROGRESS_EVERY == 0:
                print(f"injected {injected}", flush=True)
    print(json.dumps({"seen": seen, "injected": injected, "kinds": kinds}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
