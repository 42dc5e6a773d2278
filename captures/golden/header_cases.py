"""Golden frames of every PDS and SES header, type, opcode and flag, for make_golden.py (pds.pcap, ses.pcap)."""

from golden_build import *  # noqa: F401,F403

def pds():
    c = Capture("pds.pcap", 1, "Every PDS packet type, flag, control-packet type and NACK "
                "code (Ethernet / IPv4 / UDP 4793)")
    ses = lambda: UET_SES_STD(message_id=0x55, job_id=0x42, request_length=8)  # noqa
    c.add("RUD_REQ, no flags", v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, psn=1, spdcid=2, dpdcid=3),
                                  ses(), pay(8)))
    c.add("RUD_REQ RETX AR, clear_psn_offset -5",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, retx=1, ar=1, clear_psn_offset=-5, psn=100,
                                 spdcid=0x10, dpdcid=0x20), ses(), pay(8)))
    c.add("RUD_REQ SYN=1: use_rsv_pdc 1, psn_offset 0xABC",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, syn=1, use_rsv_pdc=1, psn_offset=0xABC,
                                 psn=0x10000, spdcid=0x31), ses(), pay(8)))
    c.add("RUD_REQ SYN=1: use_rsv_pdc 0, psn_offset 0",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, syn=1, psn=5, spdcid=0x31), ses(), pay(8)))
    c.add("ROD_REQ, clear_psn_offset +32767",
          v4(UET_PDS_RUD_ROD_REQ(type=ROD_REQ, clear_psn_offset=32767, psn=9, spdcid=1,
                                 dpdcid=2), ses(), pay(8)))
    c.add("ROD_REQ, clear_psn_offset -32768",
          v4(UET_PDS_RUD_ROD_REQ(type=ROD_REQ, clear_psn_offset=-32768, psn=9), ses(), pay(8)))
    c.add("RUD_REQ with next_hdr UET_HDR_NONE (no SES header)",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, next_hdr=0, psn=3)))
    c.add("RUD_CC_REQ: ccc_id 7, credit_target 0x010203",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_CC_REQ, psn=11, spdcid=1, dpdcid=2),
             UET_PDS_REQ_CC(ccc_id=7, credit_target=0x010203), ses(), pay(8)))
    c.add("ROD_CC_REQ SYN=1: ccc_id 255",
          v4(UET_PDS_RUD_ROD_REQ(type=ROD_CC_REQ, syn=1, psn_offset=1, psn=12),
             UET_PDS_REQ_CC(ccc_id=255, credit_target=0), ses(), pay(8)))
    c.add("RUDI_REQ M RETX, pkt_id 0xDEADBEEF",
          v4(UET_PDS_RUDI(type=RUDI_REQ, m=1, retx=1, pkt_id=0xDEADBEEF),
             UET_SES_STD(opcode=UET_WRITE, message_id=9, memory_key=0x1234), pay(16)))
    c.add("RUDI_RESP + response",
          v4(UET_PDS_RUDI(type=RUDI_RESP, pkt_id=0xDEADBEEF),
             UET_SES_RESPONSE(message_id=9, modified_length=16)))
    c.add("UUD_REQ + standard DATAGRAM_SEND",
          v4(UET_PDS_UUD(), UET_SES_STD(opcode=UET_DATAGRAM_SEND, message_id=1,
                                        request_length=32), pay(32)))
    c.add("ACK, ack_psn_offset -3",
          v4(UET_PDS_ACK(ack_psn_offset=-3, cack_psn=1000, spdcid=0x22, dpdcid=0x11)))
    c.add("ACK P=1 (probe reply), probe_opaque 0xBEEF",
          v4(UET_PDS_ACK(p=1, probe_opaque=0xBEEF, cack_psn=1000)))
    c.add("ACK M RETX, REQ=1 (CLEAR)",
          v4(UET_PDS_ACK(m=1, retx=1, req=1, cack_psn=7)))
    c.add("ACK REQ=2 (CLOSE)", v4(UET_PDS_ACK(req=2, cack_psn=8)))
    c.add("ACK + response (next_hdr 4)",
          v4(UET_PDS_ACK(cack_psn=100), UET_SES_RESPONSE(opcode=1, return_code=1,
                                                         message_id=0x55, job_id=0x42,
                                                         modified_length=8)))
    c.add("ACK_CC NSCC state",
          v4(UET_PDS_ACK(cack_psn=200, spdcid=1, dpdcid=2),
             UET_PDS_ACK_CC(cc_type=0, cc_flags=5, mpr=64, sack_psn_offset=-2,
                            sack_bitmap=0x00FF00FF00FF00FF, service_time=1500, restore_cwnd=1,
                            rcv_cwnd_pend=33, rcvd_bytes=0x123456, ooo_count=4)))
    c.add("ACK_CC Credit state",
          v4(UET_PDS_ACK(cack_psn=201),
             UET_PDS_ACK_CC(cc_type=1, cc_flags=0, mpr=8, sack_psn_offset=16,
                            sack_bitmap=1, credit=0xABCDEF, ooo_count=0x100)))
    c.add("ACK_CC (NSCC) + response",
          v4(UET_PDS_ACK(cack_psn=202), UET_PDS_ACK_CC(cc_type=0, service_time=1),
             UET_SES_RESPONSE(message_id=2)))
    for ccx in (0, 7, 14, 15):
        c.add("ACK_CCX ccx_type %d" % ccx,
              v4(UET_PDS_ACK(cack_psn=300 + ccx),
                 UET_PDS_ACK_CCX(ccx_type=ccx, cc_flags=1, mpr=2, sack_psn_offset=3,
                                 sack_bitmap=4, ccx_state=bytes(range(ccx, ccx + 16)))))
    for code in sorted(k for k in PDS_NACK_CODES):
        c.add("NACK code %#04x %s" % (code, PDS_NACK_CODES[code]),
              v4(UET_PDS_NACK(nack_code=code, vendor_code=0, nack_psn=0x500 + code,
                              spdcid=0x21, dpdcid=0x12, nack_payload=0x501 + code)))
    c.add("NACK NT=1 (RUDI): nack_pkt_id, M RETX, vendor_code 0x5A",
          v4(UET_PDS_NACK(nt=1, m=1, retx=1, nack_code=0x07, vendor_code=0x5A,
                          nack_pkt_id=0xDEADBEEF, spdcid=0, dpdcid=0)))
    c.add("NACK_CCX nccx_type 3",
          v4(UET_PDS_NACK(nack_code=0x01, nack_psn=5),
             UET_PDS_NACK_CCX(nccx_type=3, nccx_state_head=5, nccx_state=bytes(range(1, 16)))))
    for ctl in sorted(PDS_CTL_TYPES):
        kw = dict(ctl_type=ctl, psn=0x700 + ctl, spdcid=0x33, dpdcid=0x44,
                  cp_payload=0x10000 + ctl)
        if ctl == 6:
            kw["probe_opaque"] = 0x1234
        c.add("control packet %d %s" % (ctl, PDS_CTL_TYPES[ctl]), v4(UET_PDS_CP(**kw)))
    c.add("control packet NOOP ISROD RETX AR SYN: use_rsv_pdc 1, psn_offset 0x321",
          v4(UET_PDS_CP(ctl_type=0, isrod=1, retx=1, ar=1, syn=1, use_rsv_pdc=1,
                        psn_offset=0x321, psn=1)))
    c.add("control packet PROBE with SYN overlay",
          v4(UET_PDS_CP(ctl_type=6, syn=1, probe_opaque=0xFFFF, psn=2, psn_offset=7,
                        cp_payload=1)))
    return c


# ---------------------------------------------------------------------------------------------
# SES


def ses():
    c = Capture("ses.pcap", 1, "Every SES header, request opcode, response opcode, return "
                "code, AMO opcode and datatype (Ethernet / IPv4 / UDP 4793)")
    common = dict(job_id=0x00ABCD, pid_on_fep=0x123, resource_index=0x456, ri_generation=2,
                  initiator=0x77)
    for op in range(0x10):
        name = SES_REQ_OPCODES[op]
        if op in DEFERRABLE_OPCODES:
            hdr = UET_SES_DEFERRABLE(opcode=op, message_id=0x100 + op, initiator_restart_token=
                                     0x1000 + op, target_restart_token=0, match_bits=0xABC,
                                     request_length=64, **common)
            layers = [hdr, pay(64)]
        elif op == UET_DEFERRABLE_RTR:
            hdr = UET_SES_RTR(opcode=op, message_id=0x100 + op, buffer_offset=0x800,
                              initiator_restart_token=0x100C, target_restart_token=0x2001,
                              header_data=0x1122334455667788, request_length=64, **common)
            layers = [hdr]
        else:
            kw = dict(common)
            if op in MEMORY_KEY_OPCODES:
                kw["memory_key"] = 0x4000000000000000 | op
            else:
                kw["match_bits"] = 0x0102030405060708 + op
            hdr = UET_SES_STD(opcode=op, message_id=0x100 + op, buffer_offset=op * 0x100,
                              request_length=0 if op == UET_NO_OP else 8, **kw)
            layers = [hdr]
            if op in ATOMIC_OPCODES:
                layers.append(UET_SES_ATOMIC(atomic_opcode=0x02, atomic_datatype=0x07,
                                             cacheable=1))
            if op in RENDEZVOUS_OPCODES:
                layers.append(UET_SES_RENDEZVOUS(eager_length=8, ri_generation=1,
                                                 pid_on_fep=0x321, resource_index=0x654,
                                                 read_offset=0x1000, read_key=0x99))
            if op != UET_NO_OP:
                layers.append(pay(8))
        c.add("standard SOM=1 opcode %#04x %s" % (op, name), v4(req(), *layers))
    c.add("standard SEND hd=1 header_data, dc ie rel",
          v4(req(), UET_SES_STD(opcode=UET_SEND, hd=1, dc=1, ie=1, rel=1, message_id=3,
                                header_data=0xCAFEF00DCAFEF00D, request_length=8, **common),
             pay(8)))
    c.add("standard SEND SOM=1 EOM=0 (first packet)",
          v4(req(), UET_SES_STD(opcode=UET_SEND, som=1, eom=0, message_id=4,
                                request_length=4096, **common), pay(32)))
    c.add("standard SEND SOM=0 EOM=0 (middle packet): payload_length, message_offset",
          v4(req(), UET_SES_STD(opcode=UET_SEND, som=0, eom=0, message_id=4,
                                message_offset=32, request_length=4096, **common), pay(32)))
    c.add("standard SEND SOM=0 EOM=1 (last packet), explicit payload_length 32",
          v4(req(), UET_SES_STD(opcode=UET_SEND, som=0, eom=1, message_id=4,
                                payload_length=32, message_offset=4064, request_length=4096,
                                **common), pay(32)))
    c.add("standard WRITE SOM=0 memory_key",
          v4(req(), UET_SES_STD(opcode=UET_WRITE, som=0, eom=1, message_id=5,
                                memory_key=0x8000000000000001, buffer_offset=0x10000,
                                message_offset=16, request_length=32, **common), pay(16)))
    c.add("standard ATOMIC SOM=0 + atomic extension (choice atomic-ext-every-packet)",
          v4(req(), UET_SES_STD(opcode=UET_ATOMIC, som=0, eom=1, message_id=6,
                                memory_key=0x10, message_offset=16, request_length=32,
                                **common),
             UET_SES_ATOMIC(atomic_opcode=0x02, atomic_datatype=0x04), pay(16)))
    c.add("standard RENDEZVOUS_SEND SOM=0: no rendezvous extension",
          v4(req(), UET_SES_STD(opcode=UET_RENDEZVOUS_SEND, som=0, message_id=7,
                                message_offset=8, request_length=16, **common), pay(8)))
    c.add("deferrable TSEND SOM=0",
          v4(req(), UET_SES_DEFERRABLE(opcode=UET_DEFERRABLE_TSEND, som=0, message_id=8,
                                       initiator_restart_token=1, target_restart_token=2,
                                       match_bits=3, message_offset=8, request_length=16,
                                       **common), pay(8)))
    c.add("vendor request opcode 0x30", v4(req(), UET_SES_STD(opcode=0x30, message_id=9),
                                           pay(4)))
    c.add("extended request opcode 0x3F", v4(req(), UET_SES_STD(opcode=0x3F, message_id=9)))
    # small (optimized non-matching) header
    c.add("small header WRITE",
          v4(req(), UET_SES_SMALL(opcode=UET_WRITE, request_length=64, buffer_offset=0x1000,
                                  resource_index=0xABC, job_id=5, pid_on_fep=1), pay(64)))
    c.add("small header READ, rel dc",
          v4(req(), UET_SES_SMALL(opcode=UET_READ, rel=1, dc=1, request_length=128,
                                  buffer_offset=8, resource_index=1, job_id=5)))
    c.add("small header ATOMIC + atomic extension",
          v4(req(), UET_SES_SMALL(opcode=UET_ATOMIC, request_length=8, buffer_offset=0x40,
                                  resource_index=2),
             UET_SES_ATOMIC(atomic_opcode=0x0A, atomic_datatype=0x07, cpu_coherent=1),
             pay(8)))
    c.add("small header FETCHING_ATOMIC + CAS",
          v4(req(), UET_SES_SMALL(opcode=UET_FETCHING_ATOMIC, request_length=8,
                                  resource_index=3),
             UET_SES_ATOMIC(atomic_opcode=0x0D, atomic_datatype=0x07),
             UET_SES_CAS(compare_value=(5).to_bytes(16, "little"),
                         swap_value=(6).to_bytes(16, "little"))))
    # medium header
    c.add("medium header SEND hd=0 buffer_offset",
          v4(req(), UET_SES_MEDIUM(opcode=UET_SEND, request_length=100, buffer_offset=0,
                                   initiator=0x10, **{k: v for k, v in common.items()
                                                       if k != "initiator"}), pay(100)))
    c.add("medium header SEND hd=1 header_data",
          v4(req(), UET_SES_MEDIUM(opcode=UET_SEND, hd=1, request_length=4,
                                   header_data=0xFFEEDDCCBBAA9988, initiator=0x10), pay(4)))
    c.add("medium header TAGGED_SEND match_bits",
          v4(req(), UET_SES_MEDIUM(opcode=UET_TAGGED_SEND, request_length=4,
                                   match_bits=0x1111222233334444, initiator=0x10), pay(4)))
    c.add("medium header WRITE memory_key (small RMA)",
          v4(req(), UET_SES_MEDIUM(opcode=UET_WRITE, request_length=4, buffer_offset=0x200,
                                   memory_key=0xC000000000000FFF, initiator=0x10), pay(4)))
    c.add("medium header TSEND_ATOMIC + atomic extension",
          v4(req(), UET_SES_MEDIUM(opcode=UET_TSEND_ATOMIC, request_length=8,
                                   match_bits=0x5, initiator=0x10),
             UET_SES_ATOMIC(atomic_opcode=0x07, atomic_datatype=0x05), pay(8)))
    # atomics
    for amo in sorted(AMO_OPCODES):
        if 0x15 <= amo < 0xE0 or amo in range(0xE1, 0xFE):
            continue
        layers = [UET_SES_ATOMIC(atomic_opcode=amo, atomic_datatype=0x06, cacheable=1,
                                 cpu_coherent=amo & 1)]
        if amo in CAS_AMO_OPCODES:
            layers.append(UET_SES_CAS(compare_value=bytes(range(16)),
                                      swap_value=bytes(range(16, 32))))
        else:
            layers.append(pay(8))
        opcode = UET_FETCHING_ATOMIC if amo in CAS_AMO_OPCODES else UET_ATOMIC
        c.add("AMO opcode %#04x %s" % (amo, AMO_OPCODES[amo]),
              v4(req(), UET_SES_STD(opcode=opcode, message_id=0x200 + amo,
                                    memory_key=0x20, request_length=8), *layers))
    for dt in sorted(AMO_DATATYPES):
        if 0x12 <= dt < 0xE0 or dt in range(0xE1, 0xFE):
            continue
        c.add("AMO datatype %#04x %s" % (dt, AMO_DATATYPES[dt]),
              v4(req(), UET_SES_STD(opcode=UET_ATOMIC, message_id=0x300 + dt,
                                    memory_key=0x30, request_length=16),
                 UET_SES_ATOMIC(atomic_opcode=0x02, atomic_datatype=dt), pay(16)))
    c.add("TSEND_FETCH_ATOMIC + CAS (CSWAP_GT)",
          v4(req(), UET_SES_STD(opcode=UET_TSEND_FETCH_ATOMIC, message_id=0x400,
                                match_bits=0x77, request_length=16),
             UET_SES_ATOMIC(atomic_opcode=0x12, atomic_datatype=0x09),
             UET_SES_CAS(compare_value=b"\x11" * 16, swap_value=b"\x22" * 16)))
    # responses
    for rop in (0, 1, 3, 0x30, 0x3F):
        c.add("response opcode %#04x %s" % (rop, SES_RSP_OPCODES[rop]),
              v4(UET_PDS_ACK(cack_psn=1), UET_SES_RESPONSE(opcode=rop, return_code=1,
                                                           message_id=0x10 + rop, job_id=0x42,
                                                           modified_length=64)))
    for lst in range(4):
        c.add("response list %d" % lst,
              v4(UET_PDS_ACK(cack_psn=2), UET_SES_RESPONSE(list=lst, opcode=1, return_code=1,
                                                           message_id=0x20, job_id=1)))
    for rc in sorted(SES_RETURN_CODES):
        if 0x31 <= rc <= 0x36:
            continue
        c.add("return code %#04x %s" % (rc, SES_RETURN_CODES[rc]),
              v4(UET_PDS_ACK(cack_psn=3), UET_SES_RESPONSE(opcode=1, return_code=rc,
                                                           message_id=0x30, ri_generation=rc,
                                                           job_id=0x42, modified_length=rc)))
    c.add("response with data (READ data), 64 bytes",
          v4(UET_PDS_ACK(cack_psn=4), UET_SES_RESPONSE_DATA(
              opcode=2, return_code=1, message_id=0x41, job_id=0x42,
              read_request_message_id=0x40, modified_length=64, message_offset=0), pay(64)))
    c.add("response with data, second packet: message_offset 64",
          v4(UET_PDS_RUDI(type=RUDI_RESP, pkt_id=3), UET_SES_RESPONSE_DATA(
              opcode=2, return_code=1, message_id=0x41, job_id=0x42,
              read_request_message_id=0x40, modified_length=128, message_offset=64,
              payload_length=64), pay(64)))
    c.add("response with small data, 8 bytes",
          v4(UET_PDS_ACK(cack_psn=5), UET_SES_RESPONSE_DATA_SMALL(
              opcode=2, return_code=1, job_id=0x42, original_request_psn=0x1000), pay(8)))
    c.add("response with data, error return code, no data",
          v4(UET_PDS_ACK(cack_psn=6), UET_SES_RESPONSE_DATA(
              opcode=2, return_code=0x1C, message_id=0x42, job_id=0x42,
              read_request_message_id=0x40)))
    c.add("NACK + response (next_hdr 4)",
          v4(UET_PDS_NACK(nack_code=0x09, nack_psn=1), UET_SES_RESPONSE(return_code=0x1F)))
    return c
