"""Golden malformed frames, for make_golden.py (malformed.pcap): truncated and invalid headers, each with
the diagnostics (kind, header, field) its decode must give."""

from golden_build import *  # noqa: F401,F403

def _udp_with(payload, v6=False, dport=UDP_PORT):
    return (eth() / (ip6() if v6 else ip4()) / udp(dport=dport) / Raw(payload))


def malformed():
    c = Capture("malformed.pcap", 1, "Malformed frames: every header truncated at several "
                "points, reserved bits, unknown values, invalid values, bad lengths, "
                "snaplen-truncated frames")
    T = "truncated"
    std = bytes(req() / UET_SES_STD(message_id=1, request_length=4))
    # -- truncation, with consistent IP/UDP lengths: the UDP payload simply ends early
    for cut in (1, 6, 11):
        c.add("RUD request cut at %d bytes" % cut, _udp_with(std[:cut]),
              diags=[(T, "uet.pds.rud_rod_req", None)],
              layers=["eth", "ip", "udp"])
    for cut in (12, 20, 30, 55):
        c.add("standard header cut at %d bytes of the UDP payload" % cut,
              _udp_with(std[:cut]), diags=[(T, "uet.ses.std", None)],
              layers=["eth", "ip", "udp", "uet.pds.rud_rod_req"])
    cc = bytes(UET_PDS_RUD_ROD_REQ(type=RUD_CC_REQ) / UET_PDS_REQ_CC(ccc_id=1) /
               UET_SES_STD(message_id=1))
    c.add("RUD_CC extension cut (14 of 16 bytes)", _udp_with(cc[:14]),
          diags=[(T, "uet.pds.req_cc", None)], layers=["eth", "ip", "udp",
                                                       "uet.pds.rud_rod_req"])
    for cls, cuts in ((UET_PDS_RUDI, (2, 7)), (UET_PDS_UUD, (1, 3)), (UET_PDS_ACK, (3, 11)),
                      (UET_PDS_NACK, (4, 15)), (UET_PDS_CP, (2, 9, 15))):
        for cut in cuts:
            c.add("%s cut at %d bytes" % (cls.__name__, cut),
                  _udp_with(bytes(cls())[:cut]), diags=[(T, cls.uet_header, None)],
                  layers=["eth", "ip", "udp"])
    for ext, cut in ((UET_PDS_ACK_CC, 20), (UET_PDS_ACK_CC, 12), (UET_PDS_ACK_CC, 31),
                     (UET_PDS_ACK_CCX, 30), (UET_PDS_ACK_CCX, 39)):
        raw = bytes(UET_PDS_ACK() / ext())
        c.add("%s cut at %d bytes" % (ext.__name__, cut), _udp_with(raw[:cut]),
              diags=[(T, ext.uet_header, None)],
              layers=["eth", "ip", "udp", "uet.pds.ack"])
    raw = bytes(UET_PDS_NACK() / UET_PDS_NACK_CCX())
    for cut in (17, 31):
        c.add("NACK_CCX cut at %d bytes" % cut, _udp_with(raw[:cut]),
              diags=[(T, "uet.pds.nack_ccx", None)])
    raw = bytes(UET_PDS_RUD_ROD_REQ(type=ROD_CC_REQ) / UET_PDS_REQ_CC())
    c.add("ROD_CC extension cut (13 of 16 bytes)", _udp_with(raw[:13]),
          diags=[(T, "uet.pds.req_cc", None)])
    for sp, cut in ((0, 3), (1, 6), (0, 10), (1, 15)):
        c.add("TSS SP=%d cut at %d bytes" % (sp, cut),
              _udp_with(bytes(UET_TSS(sp=sp))[:cut]), diags=[(T, "uet.tss", None)],
              layers=["eth", "ip", "udp"])
    for cls, cuts in ((UET_SES_SMALL, (1, 10, 19)), (UET_SES_MEDIUM, (12, 25, 31)),
                      (UET_SES_RESPONSE, (2, 11)), (UET_SES_RESPONSE_DATA, (8, 15, 19)),
                      (UET_SES_RESPONSE_DATA_SMALL, (5, 11))):
        pds_hdr = UET_PDS_ACK() if "RESPONSE" in cls.__name__ else req()
        raw = bytes(pds_hdr / cls())
        for cut in cuts:
            c.add("%s cut at %d bytes" % (cls.__name__, cut),
                  _udp_with(raw[:len(bytes(pds_hdr)) + cut]),
                  diags=[(T, cls.uet_header, None)])
    raw = bytes(req() / UET_SES_RTR(message_id=1))
    c.add("ready-to-restart cut at 20 bytes (its second piece is 32 bytes)",
          _udp_with(raw[:12 + 20]), diags=[(T, "uet.ses.std", None)])
    raw = bytes(req() / UET_SES_STD(opcode=UET_ATOMIC, message_id=1) / UET_SES_ATOMIC())
    c.add("atomic extension cut at 2 bytes", _udp_with(raw[:12 + 44 + 2]),
          diags=[(T, "uet.ses.atomic", None)])
    raw = bytes(req() / UET_SES_STD(opcode=UET_FETCHING_ATOMIC, message_id=1) /
                UET_SES_ATOMIC(atomic_opcode=0x0D) / UET_SES_CAS())
    c.add("CAS extension cut at 20 of 32 bytes", _udp_with(raw[:12 + 44 + 4 + 20]),
          diags=[(T, "uet.ses.cas", None)])
    raw = bytes(req() / UET_SES_STD(opcode=UET_RENDEZVOUS_SEND, message_id=1) /
                UET_SES_RENDEZVOUS())
    c.add("rendezvous extension cut at 8 of 24 bytes", _udp_with(raw[:12 + 44 + 8]),
          diags=[(T, "uet.ses.rendezvous", None)])
    c.add("entropy header cut at 2 bytes (IP protocol 253)",
          eth() / ip4(proto=253) / Raw(b"\x12\x34"), diags=[(T, "uet.entropy", None)])
    c.add("entropy header with nothing after it", eth() / ip4() / UET_ENTROPY(entropy=1),
          diags=[(T, "uet", None)])
    c.add("empty UDP payload to 4793 (IPv4)", eth() / ip4() / udp(),
          diags=[(T, "uet", None)], layers=["eth", "ip", "udp"])
    c.add("empty UDP payload to 4793 (IPv6)", eth() / ip6() / udp(),
          diags=[(T, "uet", None)], layers=["eth", "ipv6", "udp"])
    c.add("Ethernet header cut at 10 bytes", bytes(eth())[:10], diags=[(T, "eth", None)],
          layers=[])
    c.add("802.1Q tag cut", bytes(eth() / Dot1Q(vlan=5))[:16], diags=[(T, "vlan", None)])
    c.add("IPv4 header cut at 15 bytes", bytes(eth() / ip4())[:14 + 15],
          diags=[(T, "ip", None)], layers=["eth"])
    c.add("IPv6 header cut at 30 bytes", bytes(eth() / ip6())[:14 + 30],
          diags=[(T, "ipv6", None)], layers=["eth"])
    c.add("UDP header cut at 5 bytes (ip.len consistent)",
          eth() / ip4(proto=17) / Raw(bytes(udp())[:5]), diags=[(T, "udp", None)])
    c.add("standard header cut at 30 bytes with reserved bits and message_id 0 in its "
          "complete first 12 bytes",
          _udp_with(bytes(req() / UET_SES_STD(rsvd_op=2, message_id=0))[:12 + 30]),
          diags=[(T, "uet.ses.std", None), ("reserved_nonzero", "uet.ses.std", None),
                 ("invalid_value", "uet.ses.std", "uet.ses.message_id")])
    # -- truncation of the captured frame itself (caplen == len): the IP/UDP lengths now claim
    #    more bytes than are present
    full = v4(req(), UET_SES_STD(message_id=1, request_length=64), pay(64))
    c.add("frame cut inside the standard header (caplen == len): also ip.len and udp.length "
          "too large", full, cut=14 + 20 + 8 + 12 + 20,
          diags=[(T, "uet.ses.std", None), ("inconsistent_length", "ip", "ip.len"),
                 ("inconsistent_length", "udp", "udp.length")])
    # -- snaplen-truncated frames (caplen < len): bounds beyond the capture are not diagnosed
    for snap, diag in ((10, (T, "eth", None)), (14 + 12, (T, "ip", None)),
                       (14 + 20 + 4, (T, "udp", None)),
                       (14 + 20 + 8 + 6, (T, "uet.pds.rud_rod_req", None)),
                       (14 + 20 + 8 + 12 + 30, (T, "uet.ses.std", None))):
        c.add("snaplen %d (caplen < len)" % snap, full, snap=snap, diags=[diag])
    c.add("snaplen 128 cuts only the payload of a SOM=1 packet: no diagnostic", full,
          snap=14 + 20 + 8 + 12 + 44 + 20, status="uet")
    c.add("snaplen cuts the payload of a SOM=0 packet: the capture, not the sender, shortened it: "
          "no diagnostic",
          v4(req(), UET_SES_STD(som=0, message_id=1, request_length=64), pay(64)),
          snap=14 + 20 + 8 + 12 + 44 + 20, status="uet")
    # -- reserved bits
    R = "reserved_nonzero"
    for case, layers, header in (
            ("RUD request flag b6", [UET_PDS_RUD_ROD_REQ(rsvd_f6=1)], "uet.pds.rud_rod_req"),
            ("RUD request flags b1..b0", [UET_PDS_RUD_ROD_REQ(rsvd_f10=3)],
             "uet.pds.rud_rod_req"),
            ("RUD request SYN overlay bits 14..12",
             [UET_PDS_RUD_ROD_REQ(syn=1, rsvd_syn=5)], "uet.pds.rud_rod_req"),
            ("RUDI flags and bytes 2-3", [UET_PDS_RUDI(rsvd_f30=1, rsvd=0x100)],
             "uet.pds.rudi"),
            ("UUD flags", [UET_PDS_UUD(rsvd_flags=0x40)], "uet.pds.uud"),
            ("UUD bytes 2-3", [UET_PDS_UUD(rsvd=1)], "uet.pds.uud"),
            ("ACK flag b6", [UET_PDS_ACK(rsvd_f6=1)], "uet.pds.ack"),
            ("ACK flag b0", [UET_PDS_ACK(rsvd_f0=1)], "uet.pds.ack"),
            ("ACK_CC Credit bytes 27-29", [UET_PDS_ACK(), UET_PDS_ACK_CC(
                cc_type=1, rsvd_credit=0x010000)], "uet.pds.ack_cc"),
            ("NACK flags b2..b0", [UET_PDS_NACK(rsvd_f20=4)], "uet.pds.nack"),
            ("control packet bytes 2-3 (not PROBE)", [UET_PDS_CP(ctl_type=0, rsvd_2=1)],
             "uet.pds.cp"),
            ("control packet flag b6", [UET_PDS_CP(ctl_type=1, rsvd_f6=1)], "uet.pds.cp"),
            ("TSS bit 25", [UET_TSS(rsvd_b25=1)], "uet.tss"),
            ("SES byte 0 bits 7..6", [req(), UET_SES_STD(rsvd_op=3)], "uet.ses.std"),
            ("SES pid_on_fep reserved nibble", [req(), UET_SES_STD(rsvd_pid=1)],
             "uet.ses.std"),
            ("SES resource_index reserved nibble", [req(), UET_SES_STD(rsvd_ri=8)],
             "uet.ses.std"),
            ("SES SOM=0 reserved bits 31..14", [req(), UET_SES_STD(som=0, rsvd_pl=1,
                                                                   payload_length=0)],
             "uet.ses.std"),
            ("small header hd bit", [req(), UET_SES_SMALL(rsvd_hd=1)], "uet.ses.small"),
            ("small header request_length reserved bits", [req(), UET_SES_SMALL(rsvd_len=2)],
             "uet.ses.small"),
            ("medium header request_length reserved bits",
             [req(), UET_SES_MEDIUM(rsvd_len=1)], "uet.ses.medium"),
            ("atomic semantic control bits 7..2",
             [req(), UET_SES_STD(opcode=UET_ATOMIC), UET_SES_ATOMIC(rsvd_sc=0x20)],
             "uet.ses.atomic"),
            ("atomic extension byte 3",
             [req(), UET_SES_STD(opcode=UET_ATOMIC), UET_SES_ATOMIC(rsvd=0xFF)],
             "uet.ses.atomic"),
            ("response with data byte 4", [UET_PDS_ACK(), UET_SES_RESPONSE_DATA(rsvd4=1)],
             "uet.ses.response_data"),
            ("response with data payload_length reserved bits",
             [UET_PDS_ACK(), UET_SES_RESPONSE_DATA(rsvd_pl=1)], "uet.ses.response_data"),
            ("response with small data reserved bits",
             [UET_PDS_ACK(), UET_SES_RESPONSE_DATA_SMALL(rsvd_pl=3, rsvd4=9)],
             "uet.ses.response_data_small")):
        c.add("reserved: " + case, v4(*layers), diags=[(R, header, None)])
    c.add("reserved: entropy header bytes 2-3",
          eth() / ip4() / UET_ENTROPY(entropy=1, rsvd=0x8000) / UET_PDS_UUD(),
          diags=[(R, "uet.entropy", None)])
    # -- unknown values
    U = "unknown_value"
    for t in (0, 15, 31):
        c.add("unknown PDS type %d" % t, _udp_with(bytes([t << 3, 0]) + bytes(14)),
              diags=[(U, "uet.pds", "uet.pds.type")], layers=["eth", "ip", "udp"])
    for nh in (7, 15):
        c.add("unknown next_hdr %d after a RUD request" % nh,
              v4(UET_PDS_RUD_ROD_REQ(next_hdr=nh), pay(44)),
              diags=[(U, "uet.pds.rud_rod_req", "uet.pds.next_hdr")])
    c.add("unknown next_hdr 9 after an ACK_CC",
          v4(UET_PDS_ACK(next_hdr=9), UET_PDS_ACK_CC(), pay(12)),
          diags=[(U, "uet.pds.ack", "uet.pds.next_hdr")])
    for ctl in (10, 15):
        c.add("unknown control-packet type %d" % ctl, v4(UET_PDS_CP(ctl_type=ctl)),
              diags=[(U, "uet.pds.cp", "uet.pds.ctl_type")])
    for code in (0x00, 0x0C, 0x1B, 0xFC):
        c.add("unknown NACK code %#04x" % code, v4(UET_PDS_NACK(nack_code=code)),
              diags=[(U, "uet.pds.nack", "uet.pds.nack_code")])
    c.add("ACK REQ=3 (reserved)", v4(UET_PDS_ACK(req=3)),
          diags=[(U, "uet.pds.ack", "uet.pds.flags.req")])
    c.add("ACK_CC cc_type 2 (neither NSCC nor Credit)",
          v4(UET_PDS_ACK(), UET_PDS_ACK_CC(cc_type=2, cc_state=b"\x01" * 6, ooo_count=1)),
          diags=[(U, "uet.pds.ack_cc", "uet.pds.cc_type")])
    for op in (0x10, 0x2F):
        c.add("unknown SES request opcode %#04x" % op,
              v4(req(), UET_SES_STD(opcode=op), pay(4)),
              diags=[(U, "uet.ses.std", "uet.ses.opcode")])
    c.add("unknown SES request opcode 0x11 in the small header",
          v4(req(), UET_SES_SMALL(opcode=0x11)), diags=[(U, "uet.ses.small", "uet.ses.opcode")])
    for ver in (1, 3):
        c.add("SES version %d" % ver, v4(req(), UET_SES_STD(version=ver)),
              diags=[(U, "uet.ses.std", "uet.ses.version")])
    c.add("medium header version 2", v4(req(), UET_SES_MEDIUM(version=2)),
          diags=[(U, "uet.ses.medium", "uet.ses.version")])
    c.add("unknown response opcode 0x04", v4(UET_PDS_ACK(), UET_SES_RESPONSE(opcode=4)),
          diags=[(U, "uet.ses.response", "uet.ses.rsp.opcode")])
    c.add("response version 1", v4(UET_PDS_ACK(), UET_SES_RESPONSE(version=1)),
          diags=[(U, "uet.ses.response", "uet.ses.rsp.version")])
    for rc in (0x25, 0x38, 0x3F):
        c.add("unknown return code %#04x" % rc,
              v4(UET_PDS_ACK(), UET_SES_RESPONSE(return_code=rc)),
              diags=[(U, "uet.ses.response", "uet.ses.rsp.return_code")])
    c.add("unknown return code 0x2A in a response with data",
          v4(UET_PDS_ACK(), UET_SES_RESPONSE_DATA(return_code=0x2A)),
          diags=[(U, "uet.ses.response_data", "uet.ses.rsp.return_code")])
    for amo in (0x15, 0xDF, 0xFF):
        c.add("unknown AMO opcode %#04x" % amo,
              v4(req(), UET_SES_STD(opcode=UET_ATOMIC), UET_SES_ATOMIC(atomic_opcode=amo),
                 pay(8)),
              diags=[(U, "uet.ses.atomic", "uet.ses.atomic_opcode")])
    for dt in (0x12, 0xFF):
        c.add("unknown AMO datatype %#04x" % dt,
              v4(req(), UET_SES_STD(opcode=UET_ATOMIC), UET_SES_ATOMIC(atomic_datatype=dt),
                 pay(8)),
              diags=[(U, "uet.ses.atomic", "uet.ses.atomic_datatype")])
    # -- invalid values
    V = "invalid_value"
    c.add("message_id 0 in the standard header", v4(req(), UET_SES_STD(message_id=0)),
          diags=[(V, "uet.ses.std", "uet.ses.message_id")])
    c.add("message_id 0 in a deferrable send",
          v4(req(), UET_SES_DEFERRABLE(message_id=0)),
          diags=[(V, "uet.ses.std", "uet.ses.message_id")])
    # -- a request without a JobID (choice job-id-zero-invalid): a diagnostic of its own
    for ses in (UET_SES_STD(job_id=0), UET_SES_SMALL(job_id=0), UET_SES_MEDIUM(job_id=0)):
        c.add("JobID 0 in a request (%s, choice job-id-zero-invalid)" % ses.uet_header, v4(req(), ses),
              diags=[("job_id_zero", ses.uet_header, "uet.ses.job_id")])
    c.add("ethertype IPv4, version nibble 6 (ihl 5): ip.version invalid, decoding goes on",
          eth(type=0x0800) / ip4(version=6) / udp() / UET_PDS_UUD(),
          diags=[(V, "ip", "ip.version")])
    c.add("ethertype IPv6 carrying version 4 bits",
          eth(type=0x86DD) / Raw(b"\x40" + bytes(bytes(ip6() / udp() /
                                                       UET_PDS_UUD())[1:])),
          diags=[(V, "ipv6", "ipv6.version")])
    for ihl in (0, 4):
        c.add("ip.ihl %d (< 5): the ip fields are kept, decoding stops" % ihl,
              eth() / ip4(ihl=ihl) / udp() / UET_PDS_UUD(),
              diags=[(V, "ip", "ip.ihl")], layers=["eth", "ip"])
    c.add("ip.ihl 15 but the frame is shorter than 60 bytes of IP header",
          eth() / ip4(ihl=15) / udp() / UET_PDS_UUD(), diags=[(T, "ip", None)],
          layers=["eth"])
    # -- bounds
    L = "inconsistent_length"
    c.add("ip.len 10: smaller than the IP header", eth() / ip4(len=10) / udp() / UET_PDS_UUD(),
          diags=[(L, "ip", "ip.len")], layers=["eth", "ip"])
    c.add("ip.len 24: trims the UDP header", eth() / ip4(len=24) / udp() / UET_PDS_UUD(),
          diags=[(T, "udp", None)], layers=["eth", "ip"])
    c.add("ip.len 100 bytes larger than the frame",
          eth() / ip4(len=20 + 8 + 4 + 100) / udp() / UET_PDS_UUD(),
          diags=[(L, "ip", "ip.len")])
    c.add("ipv6.plen 300 larger than the frame", eth() / ip6(plen=300) / udp() / UET_PDS_UUD(),
          diags=[(L, "ipv6", "ipv6.plen")])
    c.add("ipv6.plen 4: trims the UDP header", eth() / ip6(plen=4) / udp() / UET_PDS_UUD(),
          diags=[(T, "udp", None)])
    c.add("udp.length 4: smaller than the UDP header",
          eth() / ip4() / udp(len=4) / UET_PDS_UUD(), diags=[(L, "udp", "udp.length")],
          layers=["eth", "ip", "udp"])
    c.add("udp.length 10: trims the PDS header to 2 bytes",
          eth() / ip4() / udp(len=10) / req(), diags=[(T, "uet.pds.rud_rod_req", None)])
    c.add("udp.length 200 larger than the datagram",
          eth() / ip4() / udp(len=200) / UET_PDS_UUD(), diags=[(L, "udp", "udp.length")])
    c.add("udp.length too large with Ethernet padding present",
          eth() / ip4() / udp(len=30) / UET_PDS_UUD() / Padding(load=bytes(14)),
          diags=[(L, "udp", "udp.length")])
    c.add("payload_length 100 with 10 payload bytes (standard SOM=0)",
          v4(req(), UET_SES_STD(som=0, message_id=1, payload_length=100), pay(10)),
          diags=[(L, "uet.ses.std", "uet.ses.payload_length")])
    c.add("payload_length 4 with 10 payload bytes (standard SOM=0 + atomic extension): 6 trailing",
          v4(req(), UET_SES_STD(opcode=UET_ATOMIC, som=0, message_id=1, payload_length=4),
             UET_SES_ATOMIC(), pay(10)),
          diags=[("trailing_bytes", "uet.ses.std", "uet.ses.payload_length")])
    c.add("payload_length 0 with 16 bytes (response with data): 16 trailing",
          v4(UET_PDS_ACK(), UET_SES_RESPONSE_DATA(payload_length=0), pay(16)),
          diags=[("trailing_bytes", "uet.ses.response_data", "uet.ses.rsp.payload_length")])
    c.add("payload_length 8 with 4 bytes (response with small data)",
          v4(UET_PDS_ACK(), UET_SES_RESPONSE_DATA_SMALL(payload_length=8), pay(4)),
          diags=[(L, "uet.ses.response_data_small", "uet.ses.rsp.payload_length")])
    # -- several problems at once
    c.add("several diagnostics: reserved flag, unknown opcode, message_id 0, unknown AMO",
          v4(UET_PDS_RUD_ROD_REQ(rsvd_f6=1), UET_SES_STD(opcode=UET_ATOMIC, message_id=0,
                                                         version=2),
             UET_SES_ATOMIC(atomic_opcode=0x99, rsvd=1), pay(8)),
          diags=[(R, "uet.pds.rud_rod_req", None), (U, "uet.ses.std", "uet.ses.version"),
                 (V, "uet.ses.std", "uet.ses.message_id"),
                 (U, "uet.ses.atomic", "uet.ses.atomic_opcode"), (R, "uet.ses.atomic", None)])
    return c
