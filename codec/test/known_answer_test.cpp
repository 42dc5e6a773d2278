// Frames written by hand, in hex, from the digest's byte layouts (part I), with the values they must
// decode to. Unlike the round trip, these do not go through the generated tables on the way in, so a
// layout misread in spec/wire.yaml shows up here.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "uet/codec/decoded.hpp"

namespace uet::codec::test {
namespace {

using wire::Field;

std::vector<uint8_t> hex(const std::string& text) {
  std::vector<uint8_t> out;
  std::string digits;
  for (char c : text)
    if (std::isxdigit(static_cast<unsigned char>(c))) digits += c;
  for (size_t i = 0; i + 1 < digits.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  return out;
}

// Raw IPv4 (LINKTYPE_RAW) 198.18.0.1 -> 198.18.0.2, UDP 49152 -> 4793, around `uet` bytes.
std::vector<uint8_t> ipv4_udp(const std::vector<uint8_t>& uet, uint8_t tos = 0) {
  const size_t udp_len = 8 + uet.size(), ip_len = 20 + udp_len;
  std::vector<uint8_t> f = {0x45, tos, static_cast<uint8_t>(ip_len >> 8), static_cast<uint8_t>(ip_len), 0, 1, 0x40, 0,
                            64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
                            0xC0, 0x00, 0x12, 0xB9, static_cast<uint8_t>(udp_len >> 8), static_cast<uint8_t>(udp_len), 0, 0};
  f.resize(28 + uet.size());
  std::copy(uet.begin(), uet.end(), f.begin() + 28);
  return f;
}

class KnownAnswer : public ::testing::Test {
 protected:
  Decoded d;
  std::vector<uint8_t> frame;  // kept: byte-string fields of `d` point into it
  void run(std::vector<uint8_t> bytes) {
    frame = std::move(bytes);
    decode(frame.data(), static_cast<uint32_t>(frame.size()), static_cast<uint32_t>(frame.size()),
           *root_for_linktype(101), DecodeOptions{}, d);
  }
  void expect(Field f, uint64_t v) {
    ASSERT_TRUE(d.get(f).has_value()) << wire::field_name(f) << " missing";
    EXPECT_EQ(*d.get(f), v) << wire::field_name(f);
  }
};

TEST_F(KnownAnswer, RodRequestWithSynAndStandardSend) {
  run(ipv4_udp(hex(
      // PDS: type 3 (ROD_REQ), next_hdr 3 (std), flags AR+SYN = 0x0C -> 0001 1001 1000 1100
      "198C FFFE 01020304 0A0B 8123"
      // SES std SOM=1: opcode 5, hd+eom+som, msg 0x1234, rigen 0x56, job 0xABCDEF, pid 0x789, ri 0xFFF
      "05 07 1234 56 ABCDEF 0789 0FFF"
      "1122334455667788 DEADBEEF 0102030405060708 CAFEBABE00000001 00000100"
      "AABBCC"), 0xB8));
  EXPECT_EQ(d.status(), Status::uet) << d.n_diags;
  expect(Field::ip_dsfield_dscp, 46);
  expect(Field::udp_dstport, 4793);
  expect(Field::uet_pds_type, 3);
  expect(Field::uet_pds_next_hdr, 3);
  expect(Field::uet_pds_flags, 0x0C);
  expect(Field::uet_pds_flags_ar, 1);
  expect(Field::uet_pds_flags_syn, 1);
  expect(Field::uet_pds_flags_retx, 0);
  expect(Field::uet_pds_clear_psn_offset, static_cast<uint64_t>(-2));
  expect(Field::uet_pds_psn, 0x01020304);
  expect(Field::uet_pds_spdcid, 0x0A0B);
  expect(Field::uet_pds_use_rsv_pdc, 1);
  expect(Field::uet_pds_psn_offset, 0x123);
  EXPECT_FALSE(d.get(Field::uet_pds_dpdcid)) << "dpdcid is overlaid when SYN=1";
  expect(Field::uet_ses_opcode, 5);
  expect(Field::uet_ses_hd, 1);
  expect(Field::uet_ses_eom, 1);
  expect(Field::uet_ses_som, 1);
  expect(Field::uet_ses_message_id, 0x1234);
  expect(Field::uet_ses_ri_generation, 0x56);
  expect(Field::uet_ses_job_id, 0xABCDEF);
  expect(Field::uet_ses_pid_on_fep, 0x789);
  expect(Field::uet_ses_resource_index, 0xFFF);
  expect(Field::uet_ses_buffer_offset, 0x1122334455667788);
  expect(Field::uet_ses_initiator, 0xDEADBEEF);
  expect(Field::uet_ses_match_bits, 0x0102030405060708);
  expect(Field::uet_ses_header_data, 0xCAFEBABE00000001);
  expect(Field::uet_ses_request_length, 0x100);
  EXPECT_EQ(d.payload_len, 3u);
}

TEST_F(KnownAnswer, AckCcNsccWithResponse) {
  run(ipv4_udp(hex(
      // PDS: type 8 (ACK_CC), next_hdr 4 (response), flags M + REQ=2 = 0x24 -> 0100 0010 0010 0100
      "4224 0005 00000064 0001 0002"
      // cc_type 0 (NSCC) + cc_flags 3, mpr 8, sack_psn_offset -1, sack bitmap, NSCC state
      "03 08 FFFF 8000000000000001 0102 85 000400 0003"
      // SES response: list 1 (overflow) + UET_RESPONSE, rc 0x17 PERM_VIOLATION, msg 0x42, job 0x123, 64 bytes
      "41 17 0042 00 000123 00000040")));
  EXPECT_EQ(d.status(), Status::uet) << d.n_diags;
  expect(Field::uet_pds_type, 8);
  expect(Field::uet_pds_flags_m, 1);
  expect(Field::uet_pds_flags_req, 2);
  expect(Field::uet_pds_ack_psn_offset, 5);
  expect(Field::uet_pds_cack_psn, 100);
  expect(Field::uet_pds_cc_type, 0);
  expect(Field::uet_pds_cc_flags, 3);
  expect(Field::uet_pds_mpr, 8);
  expect(Field::uet_pds_sack_psn_offset, static_cast<uint64_t>(-1));
  expect(Field::uet_pds_sack_bitmap, 0x8000000000000001);
  expect(Field::uet_pds_nscc_service_time, 0x0102);
  expect(Field::uet_pds_nscc_restore_cwnd, 1);
  expect(Field::uet_pds_nscc_rcv_cwnd_pend, 5);
  expect(Field::uet_pds_nscc_rcvd_bytes, 0x400);
  expect(Field::uet_pds_ooo_count, 3);
  expect(Field::uet_ses_rsp_list, 1);
  expect(Field::uet_ses_rsp_opcode, 1);
  expect(Field::uet_ses_rsp_return_code, 0x17);
  expect(Field::uet_ses_rsp_message_id, 0x42);
  expect(Field::uet_ses_rsp_job_id, 0x123);
  expect(Field::uet_ses_rsp_modified_length, 64);
  EXPECT_EQ(std::string(d.uncertain_of(Field::uet_pds_sack_psn_offset)), "sack-psn-offset-signed");
}

TEST_F(KnownAnswer, RudiNackCarriesPacketId) {
  // PDS NACK: type 10, next_hdr 0, flags NT = 0x08 -> 0101 0000 0000 1000; code 0x16, vendor 0x7F
  run(ipv4_udp(hex("5008 16 7F 0000BEEF 0000 0000 00000011")));
  EXPECT_EQ(d.status(), Status::uet) << d.n_diags;
  expect(Field::uet_pds_flags_nt, 1);
  expect(Field::uet_pds_nack_code, 0x16);
  expect(Field::uet_pds_vendor_code, 0x7F);
  expect(Field::uet_pds_nack_pkt_id, 0xBEEF);
  EXPECT_FALSE(d.get(Field::uet_pds_nack_psn));
  expect(Field::uet_pds_nack_payload, 0x11);
}

TEST_F(KnownAnswer, SmallRmaWriteWithAtomicAndCas) {
  run(ipv4_udp(hex(
      // PDS RUD_REQ: type 2, next_hdr 1 (small), no flags -> 0001 0000 1000 0000
      "1080 0000 00000007 0003 0004"
      // SES small: opcode 4 (FETCHING_ATOMIC), eom+som, request_length 0x3FFF, job 1, ri 0x00A, offset
      "04 03 3FFF 00 000001 0001 000A 0000000000001000"
      // atomic: CSWAP (0x0D), UINT64 (0x07), semantic control cacheable+coherent
      "0D 07 03 00"
      "000000000000000000000000000000AA 000000000000000000000000000000BB")));
  EXPECT_EQ(d.status(), Status::uet) << d.n_diags;
  expect(Field::uet_ses_opcode, 4);
  expect(Field::uet_ses_request_length, 0x3FFF);
  expect(Field::uet_ses_resource_index, 0xA);
  expect(Field::uet_ses_buffer_offset, 0x1000);
  expect(Field::uet_ses_atomic_opcode, 0x0D);
  expect(Field::uet_ses_atomic_datatype, 7);
  expect(Field::uet_ses_semantic_control_cacheable, 1);
  expect(Field::uet_ses_semantic_control_cpu_coherent, 1);
  EXPECT_EQ(format_value(d, Field::uet_ses_compare_value), "000000000000000000000000000000aa");
  EXPECT_EQ(format_value(d, Field::uet_ses_swap_value), "000000000000000000000000000000bb");
  EXPECT_TRUE(d.has_layer(wire::Header::uet_ses_cas));
}

TEST_F(KnownAnswer, TssWithSsiStopsDecoding) {
  // TSS: type 1, sp=1, an=1, sdi 0x123456; ssi; epoch 7, tsc 0x0000000000FF; then ciphertext
  run(ipv4_udp(hex("0D 123456 AABBCCDD 0007 0000000000FF 112233445566")));
  EXPECT_EQ(d.status(), Status::uet) << d.n_diags;
  expect(Field::uet_tss_type, 1);
  expect(Field::uet_tss_sp, 1);
  expect(Field::uet_tss_an, 1);
  expect(Field::uet_tss_sdi, 0x123456);
  expect(Field::uet_tss_ssi, 0xAABBCCDD);
  expect(Field::uet_tss_epoch, 7);
  expect(Field::uet_tss_tsc, 0xFF);
  EXPECT_EQ(d.payload_len, 6u);
  EXPECT_FALSE(d.get(Field::uet_pds_type));
}

TEST_F(KnownAnswer, RendezvousExtension) {
  run(ipv4_udp(hex(
      "1180 0000 00000001 0001 0002"  // RUD_REQ, next_hdr 3
      "06 03 0001 00 000005 0002 0003 0000000000000000 00000009 0000000000000000 0000000000000000 00002000"
      // rendezvous ext: eager 0x800; rigen 9, pid 0x00A, ri 0x00B; read offset; read key
      "00000800 09 00A 00B 0000000000000040 4000000000000123")));
  EXPECT_EQ(d.status(), Status::uet) << d.n_diags;
  expect(Field::uet_ses_opcode, 6);
  expect(Field::uet_ses_rdv_eager_length, 0x800);
  expect(Field::uet_ses_rdv_ri_generation, 9);
  expect(Field::uet_ses_rdv_pid_on_fep, 0xA);
  expect(Field::uet_ses_rdv_resource_index, 0xB);
  expect(Field::uet_ses_rdv_read_offset, 0x40);
  expect(Field::uet_ses_rdv_read_key, 0x4000000000000123);
}

}  // namespace
}  // namespace uet::codec::test
