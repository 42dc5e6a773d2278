"""A second, independent encoder of Control API messages for the tests: the netlink-style layout written
out here, the numbers read from spec/control.yaml (as the entity's own tables are generated from it)."""
import pathlib
import socket
import struct

import yaml

SPEC = yaml.safe_load((pathlib.Path(__file__).resolve().parents[2] / "spec" / "control.yaml").read_text())
FAMILY = SPEC["family"]["id"]
VERSION = SPEC["family"]["version"]
REQUEST = SPEC["netlink"]["flags"]["request"] | SPEC["netlink"]["flags"]["ack"]
ERROR = SPEC["netlink"]["error_type"]
DONE = SPEC["netlink"]["done_type"]
MULTI = SPEC["netlink"]["flags"]["multi"]
NESTED = SPEC["netlink"]["nested_flag"]
CMD = {name: c["id"] for name, c in SPEC["commands"].items()}
ATTR = {name: a["id"] for name, a in SPEC["attributes"].items()}
NEST = {nest: {name: a["id"] for name, a in attrs.items()} for nest, attrs in SPEC["nests"].items()}
ACK = {name: a["id"] for name, a in SPEC["ack_attributes"].items()}
WIDTH = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q"}


def attr(aid: int, value: bytes, nested: bool = False) -> bytes:
    body = struct.pack("=HH", 4 + len(value), aid | (NESTED if nested else 0)) + value
    return body + b"\0" * (-len(body) % 4)


def u32(name: str, v: int) -> bytes:
    return attr(ATTR[name], struct.pack("=I", v))


def string(name: str, s: str) -> bytes:
    return attr(ATTR[name], s.encode() + b"\0")


def message(cmd: str | int, *attrs: bytes, seq: int = 1, flags: int = REQUEST, family: int = FAMILY,
            version: int = VERSION, length: int | None = None) -> bytes:
    body = struct.pack("=BBH", CMD.get(cmd, cmd) if isinstance(cmd, str) else cmd, version, 0) + b"".join(attrs)
    return struct.pack("=IHHII", length if length is not None else 16 + len(body), family, flags, seq, 0) + body


def parse_attrs(data: bytes) -> list[tuple[int, bytes]]:
    out, pos = [], 0
    while pos + 4 <= len(data):
        length, aid = struct.unpack_from("=HH", data, pos)
        out.append((aid & ~NESTED, data[pos + 4:pos + length]))
        pos += (length + 3) & ~3
    return out


def parse_reply(data: bytes) -> dict:
    length, mtype, flags, seq, _port = struct.unpack_from("=IHHII", data)
    assert length == len(data), f"reply length {length} != {len(data)}"
    if mtype == DONE:
        return {"done": True, "error": 0, "seq": seq}
    if mtype == ERROR:
        (err,) = struct.unpack_from("=i", data, 16)
        acks = dict(parse_attrs(data[16 + 4 + 16:]))
        what = acks.get(ACK["msg"], b"\0").split(b"\0")[0].decode("ascii")
        return {"error": -err, "seq": seq, "what": what,
                "attr": struct.unpack("=H", acks[ACK["attr"]])[0] if ACK["attr"] in acks else None}
    return {"error": 0, "seq": seq, "cmd": data[16], "attrs": parse_attrs(data[20:]), "multi": bool(flags & MULTI)}


class Connection:
    """One connection to the entity; each call sends a message and waits (with a deadline) for its reply."""

    def __init__(self, path, timeout: float = 5.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))

    def receive(self) -> dict:
        reply = self.sock.recv(65536)
        if not reply:
            raise ConnectionResetError("the entity closed the connection")
        return parse_reply(reply)

    def call_all(self, data: bytes) -> list[dict]:
        """Every reply to `data`: one, or the parts of a dump (flagged multi) without its closing NLMSG_DONE."""
        self.sock.send(data)
        replies = [self.receive()]
        while replies[-1].get("multi"):
            reply = self.receive()
            if reply.get("done"):
                break
            replies.append(reply)
        return replies

    def call(self, data: bytes) -> dict:
        return self.call_all(data)[0]

    def close(self):
        self.sock.close()
