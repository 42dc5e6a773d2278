"""python3 -m scapy_uet FILE.pcap[ng] [--port N] [--spec-version V] [--tss-conf-offset N]

Prints one JSON decode record (codec/DECODE-OUTPUT.md) per packet on stdout.
"""

import argparse
import json
import os
import sys

from . import spec
from .layers import UDP_PORT
from .pcapio import PcapError, read_frames
from .reassembly import decode_capture
from .record import decode_record


def full_record(index, frame, udp_port=UDP_PORT, spec_version=spec.DEFAULT_VERSION, tss_conf_offset=0):
    """The record of one frame on its own (no reassembly: a fragment stays a fragment)."""
    rec = decode_record(frame.data, frame.linktype, frame.caplen, frame.wirelen, udp_port, spec_version,
                        tss_conf_offset)
    out = {"frame": index, "ts": frame.ts}
    out.update(rec)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m scapy_uet",
        description="Decode the UET packets of a pcap/pcapng file with the scapy_uet layers; "
                    "print one JSON record per packet (codec/DECODE-OUTPUT.md).")
    parser.add_argument("file", help="capture file (pcap or pcapng)")
    parser.add_argument("--port", type=int, default=UDP_PORT,
                        help="UDP destination port of UET (default %(default)s)")
    parser.add_argument("--spec-version", choices=spec.VERSIONS, default=spec.DEFAULT_VERSION,
                        help="the UEC spec version to decode by (default %(default)s)")
    parser.add_argument("--tss-conf-offset", type=int, default=0, metavar="N",
                        help="bytes of clear text after a TSS header (the secure domain's confidentiality "
                             "offset), decoded from the PDS header on (default 0: nothing after TSS)")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error("--port must be between 0 and 65535")
    if not 0 <= args.tss_conf_offset <= 65535:
        parser.error("--tss-conf-offset must be between 0 and 65535")
    out = sys.stdout
    try:
        for record in decode_capture(read_frames(args.file), args.port, args.spec_version,
                                     args.tss_conf_offset):
            out.write(json.dumps(record) + "\n")
    except BrokenPipeError:          # e.g. piped into `head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except OSError as exc:
        sys.stderr.write("scapy_uet: cannot read %s: %s\n" % (args.file, exc.strerror or exc))
        return 2
    except PcapError as exc:
        sys.stderr.write("scapy_uet: %s\n" % exc)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
