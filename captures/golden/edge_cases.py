"""Golden frames of edge values (all-ones fields, zero lengths, maximum sizes), for make_golden.py (edge.pcap)."""

from golden_build import *  # noqa: F401,F403

def edge():
    c = Capture("edge.pcap", 1, "Edge values: all-ones fields, zero lengths, maximum sizes")
    M64, M32 = (1 << 64) - 1, (1 << 32) - 1
    c.add("RUD_REQ all ones (psn 0xFFFFFFFF) + standard header with every field at maximum",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ, retx=1, ar=1, clear_psn_offset=-1, psn=M32,
                                 spdcid=0xFFFF, dpdcid=0xFFFF),
             UET_SES_STD(opcode=0x3F, version=0, dc=1, ie=1, rel=1, hd=1, eom=1, som=1,
                         message_id=0xFFFF, ri_generation=0xFF, job_id=0xFFFFFF,
                         pid_on_fep=0xFFF, resource_index=0xFFF, buffer_offset=M64,
                         initiator=M32, match_bits=M64, header_data=M64,
                         request_length=M32)))
    c.add("standard header all zero except message_id 1; request_length 0, no payload",
          v4(UET_PDS_RUD_ROD_REQ(type=RUD_REQ), UET_SES_STD(opcode=UET_NO_OP, som=0, eom=0,
                                                           message_id=1, request_length=0)))
    c.add("SOM=0: payload_length 16383 with 16383 payload bytes, message_offset 0xFFFFFFFF",
          v4(UET_PDS_RUD_ROD_REQ(psn=1), UET_SES_STD(
              opcode=UET_WRITE, som=0, eom=1, message_id=0xFFFF, memory_key=M64,
              message_offset=M32, payload_length=16383, request_length=M32), pay(16383)))
    c.add("small header request_length 16383, buffer_offset max",
          v4(req(), UET_SES_SMALL(opcode=UET_WRITE, request_length=16383, buffer_offset=M64,
                                  job_id=0xFFFFFF, pid_on_fep=0xFFF, resource_index=0xFFF,
                                  ri_generation=0xFF, dc=1, ie=1, rel=1)))
    c.add("medium header request_length 16383, all keys max",
          v4(req(), UET_SES_MEDIUM(opcode=UET_READ, request_length=16383, buffer_offset=M64,
                                   initiator=M32, memory_key=M64, job_id=0xFFFFFF)))
    c.add("medium header request_length 0",
          v4(req(), UET_SES_MEDIUM(opcode=UET_SEND, request_length=0)))
    c.add("response with data payload_length 16383 (16383 bytes), all ids max",
          v4(UET_PDS_ACK(cack_psn=M32), UET_SES_RESPONSE_DATA(
              list=3, opcode=2, return_code=0x3E, message_id=0xFFFF, job_id=0xFFFFFF,
              read_request_message_id=0xFFFF, payload_length=16383, modified_length=M32,
              message_offset=M32), pay(16383)))
    c.add("response with small data, payload_length 0, job_id 0xFFFFFF (fallback JobID)",
          v4(UET_PDS_ACK(cack_psn=0), UET_SES_RESPONSE_DATA_SMALL(
              opcode=2, return_code=1, payload_length=0, job_id=0xFFFFFF,
              original_request_psn=M32)))
    c.add("response all ones (list 3, vendor opcode 0x3F, modified_length max)",
          v4(UET_PDS_ACK(m=1, retx=1, p=1, probe_opaque=0xFFFF, cack_psn=M32, spdcid=0xFFFF,
                         dpdcid=0xFFFF),
             UET_SES_RESPONSE(list=3, opcode=0x3F, return_code=0x3E, message_id=0xFFFF,
                              ri_generation=0xFF, job_id=0xFFFFFF, modified_length=M32)))
    c.add("ACK_CC NSCC all ones",
          v4(UET_PDS_ACK(ack_psn_offset=-1, cack_psn=M32),
             UET_PDS_ACK_CC(cc_type=0, cc_flags=0xF, mpr=0xFF, sack_psn_offset=-1,
                            sack_bitmap=M64, service_time=0xFFFF, restore_cwnd=1,
                            rcv_cwnd_pend=0x7F, rcvd_bytes=0xFFFFFF, ooo_count=0xFFFF)))
    c.add("ACK_CC Credit all ones",
          v4(UET_PDS_ACK(ack_psn_offset=32767, cack_psn=M32),
             UET_PDS_ACK_CC(cc_type=1, cc_flags=0xF, mpr=0xFF, sack_psn_offset=32767,
                            sack_bitmap=M64, credit=0xFFFFFF, ooo_count=0xFFFF)))
    c.add("ACK_CCX all ones",
          v4(UET_PDS_ACK(cack_psn=M32), UET_PDS_ACK_CCX(ccx_type=0xF, cc_flags=0xF, mpr=0xFF,
                                                        sack_psn_offset=-32768,
                                                        sack_bitmap=M64,
                                                        ccx_state=b"\xff" * 16)))
    c.add("NACK all ones",
          v4(UET_PDS_NACK(m=1, retx=1, nack_code=0xFF, vendor_code=0xFF, nack_psn=M32,
                          spdcid=0xFFFF, dpdcid=0xFFFF, nack_payload=M32)))
    c.add("NACK_CCX all ones",
          v4(UET_PDS_NACK(nt=1, nack_code=0xFD, nack_pkt_id=M32),
             UET_PDS_NACK_CCX(nccx_type=0xF, nccx_state_head=0xF, nccx_state=b"\xff" * 15)))
    c.add("control packet all ones (CREDIT_REQ, SYN overlay max)",
          v4(UET_PDS_CP(ctl_type=8, isrod=1, retx=1, ar=1, syn=1, psn=M32, spdcid=0xFFFF,
                        use_rsv_pdc=1, psn_offset=0xFFF, cp_payload=M32)))
    c.add("RUDI pkt_id max",
          v4(UET_PDS_RUDI(m=1, retx=1, pkt_id=M32),
             UET_SES_STD(opcode=UET_WRITE, message_id=1, memory_key=M64), pay(1)))
    c.add("RUD_CC credit_target 0xFFFFFF",
          v4(UET_PDS_RUD_ROD_REQ(type=ROD_CC_REQ, psn=M32),
             UET_PDS_REQ_CC(ccc_id=0xFF, credit_target=0xFFFFFF)))
    c.add("TSS all ones",
          v4(UET_TSS(sp=1, an=1, sdi=0xFFFFFF, ssi=M32, epoch=0xFFFF, tsc=(1 << 48) - 1)))
    c.add("rendezvous extension all ones",
          v4(req(), UET_SES_STD(opcode=UET_RENDEZVOUS_TSEND, message_id=1, match_bits=M64,
                                request_length=M32),
             UET_SES_RENDEZVOUS(eager_length=M32, ri_generation=0xFF, pid_on_fep=0xFFF,
                                resource_index=0xFFF, read_offset=M64, read_key=M64)))
    c.add("CAS values all ones, CSWAP_GT, vendor datatype 0xFE",
          v4(req(), UET_SES_STD(opcode=UET_FETCHING_ATOMIC, message_id=1, memory_key=M64),
             UET_SES_ATOMIC(atomic_opcode=0x12, atomic_datatype=0xFE, cacheable=1,
                            cpu_coherent=1),
             UET_SES_CAS(compare_value=b"\xff" * 16, swap_value=b"\xff" * 16)))
    c.add("MSWAP: plain atomic extension, value and mask as payload (choice cas-for-mswap)",
          v4(req(), UET_SES_STD(opcode=UET_FETCHING_ATOMIC, message_id=1, memory_key=M64, request_length=16),
             UET_SES_ATOMIC(atomic_opcode=0x13, atomic_datatype=0x07), Raw(b"\xff" * 16)))
    c.add("deferrable send restart tokens max",
          v4(req(), UET_SES_DEFERRABLE(opcode=UET_DEFERRABLE_SEND, message_id=1,
                                       initiator_restart_token=M32, target_restart_token=M32,
                                       request_length=M32)))
    c.add("entropy 0xFFFF over IP protocol 253",
          eth() / ip4() / UET_ENTROPY(entropy=0xFFFF) / UET_PDS_UUD()
          / UET_SES_STD(opcode=UET_DATAGRAM_SEND, message_id=1))
    c.add("UDP source port 0, IPv4 ttl 0",
          eth() / ip4(ttl=0) / udp(sport=0) / UET_PDS_UUD() / Padding(load=bytes(14)))
    c.add("UDP source port 65535, IPv4 ttl 255, id 65535",
          eth() / ip4(ttl=255, id=0xFFFF) / udp(sport=65535) / UET_PDS_UUD() /
          Padding(load=bytes(14)))
    return c
