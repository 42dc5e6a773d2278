// What the wire shows of a transfer between two processes: the packet delivery mode (UEC 1.0 §2.2.6), the
// data traffic class (§2.2.7) and the SES header format (§2.2.10.4), from a capture of the initiator's
// side. UET statements, so UET providers only.
#include <rdma/fi_rma.h>

#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {
namespace {

namespace w = uet::wire;

// Any DSCP other than the default data class (choice default-data-tc) tells the two apart.
constexpr uint32_t kDscp = 46;

class Delivery : public TwoSided {
 protected:
  // Opens both sides with `spec`, sends `len` bytes to a posted receive with a capture running and returns
  // the first SES request on the wire.
  void SendCaptured(const EndpointSpec& spec, size_t len, std::optional<WireFrame>* request) {
    ASSERT_NO_FATAL_FAILURE(OpenBoth(spec));
    ASSERT_TRUE(cap.start()) << cap.error();
    ASSERT_EQ(target.post_recv(1, len + 64), 0) << target.error();
    const std::vector<uint8_t> data(len, 0x5A);
    int ctx = 0;
    ASSERT_EQ(me.post([&] { return fi_send(me.ep, data.data(), data.size(), nullptr, dest, &ctx); }), 0);
    ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
    ASSERT_EQ(target.completion(1, kArrivalMs).state, RecvResult::completed) << target.error();
    *request = cap.find([](const WireFrame& f) { return is_request(f); });
    ASSERT_TRUE(*request) << "no SES request captured";
  }
  bool rdm() const { return GetParam().ep_type == FI_EP_RDM; }
  Capture cap;
};

TEST_P(Delivery, EndpointTypeSelectsTheDeliveryMode) {
  covers({"2.2.6-a", "2.2.6-b"});
  UET_REQUIRE_UET_PROVIDER();
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(Spec(FI_MSG), 64, &f));
  const uint64_t type = *f->get(w::Field::uet_pds_type);
  if (rdm()) {
    EXPECT_TRUE(type == w::pds_type::RUD_REQ || type == w::pds_type::ROD_REQ || type == w::pds_type::RUDI_REQ)
        << "FI_EP_RDM needs reliable delivery; PDS type " << type;
  } else {
    EXPECT_EQ(type, w::pds_type::UUD_REQ) << "FI_EP_DGRAM is UUD";
  }
}

TEST_P(Delivery, MessageOrderingSelectsRod) {
  covers({"2.2.6-c"});
  UET_REQUIRE_UET_PROVIDER();
  UET_NOT_APPLICABLE_IF(!rdm(), "DGRAM endpoints offer no ordering (UUD)");
  EndpointSpec spec = Spec(FI_MSG);
  spec.msg_order = FI_ORDER_SAS;
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(spec, 64, &f));
  EXPECT_EQ(f->get(w::Field::uet_pds_type), w::pds_type::ROD_REQ) << "send-after-send ordering asks for ROD";
}

TEST_P(Delivery, PacketsCarryTheDomainTrafficClass) {
  covers({"2.2.7-d"});
  UET_REQUIRE_UET_PROVIDER();
  EndpointSpec spec = Spec(FI_MSG);
  spec.tclass = fi_tc_dscp_set(kDscp);
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(spec, 64, &f));
  const auto dscp = f->get(w::Field::ip_dsfield_dscp) ? f->get(w::Field::ip_dsfield_dscp) : f->get(w::Field::ipv6_tclass_dscp);
  ASSERT_TRUE(dscp) << "no IP header in the capture";
  EXPECT_EQ(*dscp, kDscp) << "fi_domain_attr.tclass FI_TC_DSCP|" << kDscp;
}

TEST_P(Delivery, RequestsCarryRiGenerationZero) {
  covers({"2.2.10.4-a"});
  UET_REQUIRE_UET_PROVIDER();
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(Spec(FI_MSG), 64, &f));
  EXPECT_EQ(f->get(w::Field::uet_ses_ri_generation), 0u) << "no resource index of the target uses generations";
}

TEST_P(Delivery, OnePacketSendUsesTheSmallMessageHeader) {
  covers({"2.2.10.4-d"});
  UET_REQUIRE_UET_PROVIDER();
  UET_NOT_APPLICABLE_IF(!rdm(), "datagrams keep the standard header (choice small-message-criteria)");
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(Spec(FI_MSG), 64, &f));
  should(f->get(w::Field::uet_pds_next_hdr) == w::pds_next_hdr::UET_HDR_REQUEST_MEDIUM,
         "a one-packet 64-byte send uses the small message header (choice small-message-criteria)");
}

TEST_P(Delivery, OnePacketWriteUsesTheSmallRmaHeader) {
  covers({"2.2.10.4-f", "2.2.5.3.4.1-k"});
  UET_REQUIRE_UET_PROVIDER();
  UET_NOT_APPLICABLE_IF(!rdm(), "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA));
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 256, 0, "any", &mr)) << target.error();
  ASSERT_TRUE(cap.start()) << cap.error();
  const std::vector<uint8_t> src(64, 0x33);
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, mr.base, mr.key, &ctx); }), 0);
  ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
  const auto f = cap.find([](const WireFrame& f) { return f.get(w::Field::uet_ses_opcode) == w::ses_request_opcode::UET_WRITE; });
  ASSERT_TRUE(f) << "no UET_WRITE captured";
  const auto next = f->get(w::Field::uet_pds_next_hdr);
  // The key the target chose is not OPTIMIZED, so the optimized non-matching header does not apply.
  should(next == w::pds_next_hdr::UET_HDR_REQUEST_MEDIUM,
         "a one-packet 64-byte write uses the small RMA header (choice small-rma-criteria)");
}

TEST_P(Delivery, WriteToAnOptimizedKeyUsesTheOptimizedHeader) {
  covers({"2.2.5.3.4.1-i", "2.2.5.3.4.1-j", "2.2.10.4-c"});
  UET_REQUIRE_UET_PROVIDER();
  UET_NOT_APPLICABLE_IF(!rdm(), "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA));
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(5, 256, 0, "optimized+any", &mr)) << target.error();
  constexpr uint64_t kOptimized = uint64_t{1} << w::k_mr_key_optimized_bit;
  UET_NOT_APPLICABLE_IF(!(mr.key & kOptimized), "the target's key is not OPTIMIZED (a SHOULD of 2.2.5.3.4.1-o, checked there)");
  const std::vector<uint8_t> name = target.name();
  ASSERT_GT(name.size(), w::k_addr_offset_caps);
  UET_NOT_APPLICABLE_IF(!(name[w::k_addr_offset_caps] & (1u << w::k_cap_optimized_header)),
                        "the target FEP does not take the optimized header (address capability bit 7)");
  ASSERT_TRUE(cap.start()) << cap.error();
  const std::vector<uint8_t> src(64, 0x44);
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, mr.base, mr.key, &ctx); }), 0);
  ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
  EXPECT_EQ(target.read_mr(5, 0, src.size()), src);
  const auto f = cap.find([](const WireFrame& f) { return f.get(w::Field::uet_ses_opcode) == w::ses_request_opcode::UET_WRITE; });
  ASSERT_TRUE(f) << "no UET_WRITE captured";
  should(f->get(w::Field::uet_pds_next_hdr) == w::pds_next_hdr::UET_HDR_REQUEST_SMALL,
         "a one-packet write to an OPTIMIZED key uses the optimized non-matching header (choice optimized-header-criteria)");
  if (f->get(w::Field::uet_pds_next_hdr) == w::pds_next_hdr::UET_HDR_REQUEST_SMALL) {
    EXPECT_EQ(f->get(w::Field::uet_ses_resource_index), mr.key & w::k_mr_key_optimized_rkey_mask) << "the RKEY/INDEX (2.2.10.4)";
  }
}

// When neither the optimized nor the small RMA criteria hold, RMA uses the standard header
// (2.2.5.3.4.1-l): a write with remote CQ data (the small headers' header_data would displace
// buffer_offset, choice small-rma-criteria) and a write of several packets.
TEST_P(Delivery, WriteOutsideTheSmallCriteriaUsesTheStandardHeader) {
  covers({"2.2.5.3.4.1-l"});
  UET_REQUIRE_UET_PROVIDER();
  UET_NOT_APPLICABLE_IF(!rdm(), "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA));
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 3 * 4096, 0, "any", &mr)) << target.error();
  ASSERT_TRUE(cap.start()) << cap.error();
  const std::vector<uint8_t> small(64, 0x21), large(3 * 4096, 0x22);
  int c1 = 0, c2 = 0;
  ASSERT_EQ(me.post([&] {
    return fi_writedata(me.ep, small.data(), small.size(), nullptr, 0xDA7A, dest, mr.base, mr.key, &c1);
  }), 0);
  ASSERT_EQ(me.wait(&c1).state, Outcome::completed);
  const auto with_data = cap.find([](const WireFrame& f) { return f.get(w::Field::uet_ses_opcode) == w::ses_request_opcode::UET_WRITE; });
  ASSERT_TRUE(with_data) << "no UET_WRITE captured";
  EXPECT_EQ(with_data->get(w::Field::uet_pds_next_hdr), w::pds_next_hdr::UET_HDR_REQUEST_STD)
      << "a write with remote CQ data meets neither the small RMA nor the optimized criteria (choice small-rma-criteria)";
  EXPECT_EQ(target.completion(-1, kArrivalMs).data, 0xDA7Au) << "the remote CQ data at the target";
  ASSERT_EQ(me.post([&] { return fi_write(me.ep, large.data(), large.size(), nullptr, dest, mr.base, mr.key, &c2); }), 0);
  ASSERT_EQ(me.wait(&c2).state, Outcome::completed);
  const auto multi = cap.find([](const WireFrame& f) { return f.get(w::Field::uet_ses_opcode) == w::ses_request_opcode::UET_WRITE; });
  ASSERT_TRUE(multi) << "no UET_WRITE of the large write captured";
  EXPECT_EQ(multi->get(w::Field::uet_pds_next_hdr), w::pds_next_hdr::UET_HDR_REQUEST_STD)
      << "a write of several packets meets neither the small RMA nor the optimized criteria";
  EXPECT_EQ(target.read_mr(1, 0, large.size()), large);
}

// RUDI carries idempotent operations: never to an MR whose key lacks IDEMPOTENT_SAFE (2.2.5.3.4.1-b).
// Between HPC FEPs a write to an IDEMPOTENT_SAFE key SHOULD use RUDI (2.2.5.3.4.1-m, choice rudi-criteria);
// without HPC it MUST NOT (2.2.6-b).
TEST_P(Delivery, RudiOnlyToIdempotentSafeKeys) {
  covers({"2.2.5.3.4.1-b", "2.2.5.3.4.1-m", "2.2.6-b"});
  UET_REQUIRE_UET_PROVIDER();
  UET_NOT_APPLICABLE_IF(!rdm(), "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA));
  RemoteMr unsafe, safe;
  ASSERT_TRUE(target.register_mr(1, 256, 0, "any", &unsafe)) << target.error();
  ASSERT_TRUE(target.register_mr(2, 256, 0, "idempotent+any", &safe)) << target.error();
  constexpr uint64_t kSafe = uint64_t{1} << w::k_mr_key_idempotent_safe_bit;
  ASSERT_EQ(unsafe.key & kSafe, 0u) << "the target's key without IDEMPOTENT_SAFE has the bit";
  ASSERT_TRUE(cap.start()) << cap.error();
  const std::vector<uint8_t> src(64, 0x5D);
  for (const RemoteMr* mr : {&unsafe, &safe}) {
    int ctx = 0;
    ASSERT_EQ(me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, mr->base, mr->key, &ctx); }), 0);
    ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
  }
  EXPECT_EQ(target.read_mr(1, 0, src.size()), src);
  EXPECT_EQ(target.read_mr(2, 0, src.size()), src);
  const auto is_write_to = [](uint64_t key) {
    return [key](const WireFrame& f) {
      return f.get(w::Field::uet_ses_opcode) == w::ses_request_opcode::UET_WRITE && f.get(w::Field::uet_ses_memory_key) == key;
    };
  };
  const auto to_unsafe = cap.find(is_write_to(unsafe.key));
  ASSERT_TRUE(to_unsafe) << "no UET_WRITE to the key without IDEMPOTENT_SAFE captured";
  EXPECT_NE(to_unsafe->get(w::Field::uet_pds_type), w::pds_type::RUDI_REQ)
      << "an idempotent (RUDI) write to an MR whose key lacks IDEMPOTENT_SAFE";
  if (!(safe.key & kSafe)) return;  // the SHOULD of 2.2.5.3.4.1-o, checked there
  const auto to_safe = cap.find(is_write_to(safe.key));
  ASSERT_TRUE(to_safe) << "no UET_WRITE to the IDEMPOTENT_SAFE key captured";
  if (!manifest().claims_profile("hpc")) {
    EXPECT_NE(to_safe->get(w::Field::uet_pds_type), w::pds_type::RUDI_REQ) << "RUDI without HPC (2.2.6-b)";
    return;
  }
  should(to_safe->get(w::Field::uet_pds_type) == w::pds_type::RUDI_REQ,
         "a write without remote CQ data to an IDEMPOTENT_SAFE key between HPC FEPs uses RUDI (choice rudi-criteria)");
}

UET_INSTANTIATE_TWO_SIDED(Delivery);

}  // namespace
}  // namespace uet::cases
