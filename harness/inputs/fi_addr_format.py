"""The numbers fi_info cannot print: a provider's address format as fi_getinfo returns it, and its src_addr.

fi_info names an address format only if its libfabric's enum has it and prints "Unknown" otherwise; upstream
libfabric has no FI_ADDR_UET (digest C.1), so a UET provider's format shows as "Unknown". This asks
fi_getinfo through ctypes (no compiler needed: only the libfabric.so fi_info uses) and prints one JSON list:

    /usr/bin/python3 -m harness.inputs.fi_addr_format LIBFABRIC_SO PROVIDER
    [{"ep_type": 3, "addr_format": 1430672384, "src_addrlen": 40, "src_addr": "00ff..."}, ...]

It runs as a process of its own: a provider that crashes or hangs in fi_getinfo takes it, not the harness.
No hints: a hint of mode 0 would hide a provider that needs a mode bit; FI_PROVIDER, set by the caller,
keeps the other providers out. Only the leading fields of struct fi_info are read, whose layout has not
changed since libfabric 1.0.
"""
from __future__ import annotations

import ctypes
import json
import sys

MAX_ADDRLEN = 4096  # a longer src_addrlen is not an address: not read


class FabricAttr(ctypes.Structure):
    _fields_ = [("fabric", ctypes.c_void_p), ("name", ctypes.c_char_p), ("prov_name", ctypes.c_char_p)]


class EpAttr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int)]


class FiInfo(ctypes.Structure):
    pass


FiInfo._fields_ = [
    ("next", ctypes.POINTER(FiInfo)), ("caps", ctypes.c_uint64), ("mode", ctypes.c_uint64),
    ("addr_format", ctypes.c_uint32), ("src_addrlen", ctypes.c_size_t), ("dest_addrlen", ctypes.c_size_t),
    ("src_addr", ctypes.c_void_p), ("dest_addr", ctypes.c_void_p), ("handle", ctypes.c_void_p),
    ("tx_attr", ctypes.c_void_p), ("rx_attr", ctypes.c_void_p), ("ep_attr", ctypes.POINTER(EpAttr)),
    ("domain_attr", ctypes.c_void_p), ("fabric_attr", ctypes.POINTER(FabricAttr)), ("nic", ctypes.c_void_p)]


def probe(library: str, provider: str) -> list[dict]:
    lib = ctypes.CDLL(library)
    lib.fi_version.restype = ctypes.c_uint32
    lib.fi_getinfo.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64,
                               ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(FiInfo))]
    lib.fi_freeinfo.argtypes = [ctypes.POINTER(FiInfo)]
    head = ctypes.POINTER(FiInfo)()
    rc = lib.fi_getinfo(lib.fi_version(), None, None, 0, None, ctypes.byref(head))
    if rc:
        return []
    found, node = [], head
    while node:
        info = node.contents
        fabric = info.fabric_attr.contents if info.fabric_attr else None
        if fabric and fabric.prov_name and fabric.prov_name.decode(errors="replace") == provider:
            length = info.src_addrlen
            raw = ctypes.string_at(info.src_addr, length) if info.src_addr and 0 < length <= MAX_ADDRLEN else b""
            found.append({"ep_type": info.ep_attr.contents.type if info.ep_attr else 0,
                          "addr_format": info.addr_format, "src_addrlen": length, "src_addr": raw.hex()})
        node = info.next
    lib.fi_freeinfo(head)
    return found


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python3 -m harness.inputs.fi_addr_format LIBFABRIC_SO PROVIDER")
    print(json.dumps(probe(sys.argv[1], sys.argv[2])))
