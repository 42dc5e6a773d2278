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
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import golden_build  # noqa: E402
# CorpusError: what the generator raises for a frame it refuses (pytest/scapy/test_golden.py expects it).
from golden_build import DEFAULT_VERSION, CorpusError  # noqa: E402,F401
from decoder_setting_cases import port_alt, spec_versions  # noqa: E402
from edge_cases import edge  # noqa: E402
from encap_cases import (encap_eth, encap_ipv4, encap_ipv6, encap_ns, encap_raw, encap_sll,  # noqa: E402
                         encap_sll2)
from header_cases import pds, ses  # noqa: E402
from malformed_cases import malformed  # noqa: E402
import datagram_cases  # noqa: E402
import gso_cases  # noqa: E402
import tss_cases  # noqa: E402


def fragments():
    return datagram_cases.fragments(golden_build)


def trailing():
    return datagram_cases.trailing(golden_build)


def gso():
    return gso_cases.gso(golden_build)


def tss_clear():
    return tss_cases.tss_clear(golden_build)


BUILDERS = (encap_eth, encap_sll, encap_sll2, encap_raw, encap_ipv4, encap_ipv6, encap_ns,
            pds, ses, edge, malformed, port_alt, spec_versions, fragments, trailing, gso, tss_clear)


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
