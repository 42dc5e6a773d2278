"""UDP GSO super-datagrams, decoded packet by packet (codec/DECODE-OUTPUT.md, "GSO runs").

A sender with UDP segmentation offload hands the kernel one datagram holding several UET packets at a fixed
stride (gso_size; the last segment may be shorter), and a capture on the sending host shows it as one frame.
The frame's decode reads the first packet and reports the rest as trailing_bytes; with_run finds the run
behind those bytes and decodes its other segments, each on its own from the UET layer. Written from the
contract, apart from the C++ (codec/src/gso.cpp); the golden corpus compares the two.
"""

# A segment whose own lengths do not fill it exactly (bytes left after its packet, or fewer than it says)
# is not one the sender cut at the stride.
_LENGTH_KINDS = ("trailing_bytes", "inconsistent_length")


def _uet_headers(layers):
    return [h for h in layers if h.startswith("uet.")]


def _forms_segment(segment, ended, headers):
    """A segment joins the run when its bytes are one whole UET packet laid out as the first: its walk
    ended normally, it lists the same headers, and its lengths fill it. Its other diagnostics are its own."""
    return (ended and _uet_headers(segment["layers"]) == headers
            and not any(d["kind"] in _LENGTH_KINDS for d in segment["diagnostics"]))


def with_run(decoder, record):
    """`record` (decoder's record of a whole frame) with its GSO run when it has one: the packet after UDP
    followed, at the stride of its own length, by at least one more laid out alike. The run adds `gso`
    (segment 0's place and the count) and `segments` (the other packets' records); the frame's
    trailing_bytes diagnostic moves past the run, or goes when the run takes every byte."""
    diags = record["diagnostics"]
    layers = record["layers"]
    if not diags or diags[-1]["kind"] != "trailing_bytes" or "udp" not in layers or "uet.entropy" in layers:
        return record
    rest = diags[-1]
    offset, end = decoder.uet_at, decoder.end
    if offset is None or rest["offset"] <= offset:
        return record
    stride = rest["offset"] - offset
    headers = _uet_headers(layers)
    segments = []
    start = rest["offset"]
    while start < end:       # start grows by stride > 0 each time
        segment, ended = decoder.segment(start, min(start + stride, end))
        if not _forms_segment(segment, ended, headers):
            break
        place = {"gso": {"segment": len(segments) + 1, "offset": start, "stride": stride}}
        place.update(segment)
        segments.append(place)
        start += stride
    if not segments:
        return record
    if start >= end:
        diags.pop()
    else:
        rest["offset"] = start
        rest["message"] = "%d bytes after the GSO run of %d segments form no segment" % (end - start, 1 + len(segments))
    record["gso"] = {"segment": 0, "offset": offset, "stride": stride, "count": 1 + len(segments)}
    record["segments"] = segments
    malformed = diags or any(s["diagnostics"] for s in segments)
    record["status"] = "malformed" if malformed else "uet"
    return record
