// What the wire shows of a transfer between two processes: the packet delivery mode (UEC 1.0 §2.2.6), the
// data traffic class (§2.2.7) and the SES header format (§2.2.10.4), from a capture of the initiator's
// side; and that a target takes a request in each header format. UET statements, so UET providers only.
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "area_traits.hpp"
#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/profiles.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 20);

namespace uet::cases {
namespace {

namespace w = uet::wire;

// Any DSCP other than the default data class (choice default-data-tc) tells the two apart.
constexpr uint32_t kDscp = 46;
// The JobID of the cases that check where a request goes (direct method on both sides).
constexpr uint32_t kPlacedJob = 0x0C0C03;

class Delivery : public TwoSided {
 protected:
  // Opens both sides with `spec`, sends `len` bytes to a posted receive with a capture running and returns
  // the first SES request on the wire.
  void SendCaptured(const EndpointSpec& spec, size_t len, std::optional<WireFrame>* request) {
    ASSERT_NO_FATAL_FAILURE(OpenBoth(spec));
    if (IsSkipped()) return;
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
  // Both sides with fi_rma, which DGRAM endpoints do not offer (`placed`: with PlacedSpec).
  void OpenForRma(bool placed = false) {
    UET_NOT_APPLICABLE_IF(!rdm(), reason::kNoSuchCombination, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
    ASSERT_NO_FATAL_FAILURE(OpenBoth(placed ? PlacedSpec(FI_MSG | FI_RMA) : Spec(FI_MSG | FI_RMA)));
  }
  // Both sides with the direct JobID kPlacedJob where both claim it, so that a case knows the JobID a request
  // must carry (placed_job_; else it checks the request's address without it).
  EndpointSpec PlacedSpec(uint64_t caps) { return SpecWithKnownJob(caps, kPlacedJob, &placed_job_); }
  std::optional<uint32_t> placed_job_;
  // The one-packet operation with context `ctx` just posted (both sides opened with PlacedSpec), if the
  // initiator sent it in SES header `next_hdr` (else the case does not apply: nothing shows how the target
  // reads that header) to the target endpoint (else the initiator is at fault: Wire.RequestsAddressTheTarget-
  // Endpoint). Its outcome at the initiator is read before what the target shows, so that a target that
  // drops the request is the side blamed, not the initiator whose operation then never completes.
  void SentInHeader(uint64_t opcode, uint64_t next_hdr, const char* header, int* ctx, Outcome* sent) {
    const auto f = cap.find([&](const WireFrame& f) { return f.get(w::Field::uet_ses_opcode) == opcode; });
    ASSERT_TRUE(f) << "no request of SES opcode " << opcode << " captured";
    UET_NOT_APPLICABLE_IF(f->get(w::Field::uet_pds_next_hdr) != next_hdr, reason::kNotObservable,
                          "the initiator did not use the " << header << " (next_hdr " << next_hdr << ")");
    const std::vector<uint8_t>& theirs = target.name();
    Partial placed = {{w::Field::uet_ses_pid_on_fep, address_field(target_manifest(), theirs, AddrField::pid_on_fep, w::k_pid_on_fep_bits)}};
    if (placed_job_) placed.emplace_back(w::Field::uet_ses_job_id, *placed_job_);
    // The optimized header names the MR, not the endpoint, in ses.resource_index.
    if (next_hdr != w::pds_next_hdr::UET_HDR_REQUEST_SMALL)
      placed.emplace_back(w::Field::uet_ses_resource_index,
                          address_field(target_manifest(), theirs, AddrField::start_index, w::k_resource_index_bits));
    ASSERT_TRUE(matches(*f, placed)) << "the request does not address the target endpoint: " << differences(*f, placed);
    *sent = me.wait(ctx, kArrivalMs);
  }
  // Registers MR `id` of the target with an OPTIMIZED key; the case does not apply when the key is not
  // OPTIMIZED or the target FEP does not take the optimized header.
  void RegisterOptimizedMr(int id, RemoteMr* mr) {
    ASSERT_TRUE(target.register_mr(id, 256, 0, "optimized+any", mr)) << target.error();
    UET_NOT_APPLICABLE_IF(!(mr->key & (uint64_t{1} << w::k_mr_key_optimized_bit)), reason::kNotObservable,
                          "the target's key is not OPTIMIZED (a SHOULD of 2.2.5.3.4.1-o, checked there)");
    const std::vector<uint8_t> name = target.name();
    const auto caps = layout_of(target_manifest()).get(name, AddrField::caps);
    ASSERT_TRUE(caps) << "the target's fi_getname: " << layout_of(target_manifest()).misfit(name.size());
    UET_NOT_APPLICABLE_IF(!(*caps & (1u << w::k_cap_optimized_header)), reason::kNotObservable,
                          "the target FEP does not take the optimized header (address capability bit 7)");
  }
  // Both sides open for RMA; a one-packet write to an MR of the target (OPTIMIZED key for the optimized
  // header, else a plain one), judged by what reaches the MR, if the initiator sent it in header `next_hdr`.
  void ExpectWriteTaken(uint64_t next_hdr, const char* header) {
    ASSERT_NO_FATAL_FAILURE(OpenForRma(true));
    if (IsSkipped()) return;
    RemoteMr mr;
    if (next_hdr == w::pds_next_hdr::UET_HDR_REQUEST_SMALL) {
      ASSERT_NO_FATAL_FAILURE(RegisterOptimizedMr(1, &mr));
      if (IsSkipped()) return;
    } else {
      ASSERT_TRUE(target.register_mr(1, 256, 0, "any", &mr)) << target.error();
    }
    ASSERT_TRUE(cap.start()) << cap.error();
    const std::vector<uint8_t> src(64, static_cast<uint8_t>(0x60 + next_hdr));
    int ctx = 0;
    ASSERT_EQ(me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, mr.base, mr.key, &ctx); }), 0);
    Outcome sent;
    ASSERT_NO_FATAL_FAILURE(SentInHeader(w::ses_request_opcode::UET_WRITE, next_hdr, header, &ctx, &sent));
    if (IsSkipped()) return;
    EXPECT_EQ(target.read_mr(1, 0, src.size()), src) << "a one-packet write in the " << header << " did not reach the MR";
    ExpectCompleted(sent);
  }
  // After the target's side was judged: the initiator's operation completed.
  static void ExpectCompleted(const Outcome& sent) {
    observing(Side::initiator, "api: the initiator's completion");
    EXPECT_EQ(sent.state, Outcome::completed) << "the initiator's operation: err " << sent.error.err << ", prov_errno "
                                              << sent.error.prov_errno;
  }
  Capture cap;
};

TEST_P(Delivery, EndpointTypeSelectsTheDeliveryMode) {
  covers({"2.2.6-a", "2.2.6-b"});
  UET_REQUIRE_UET_PROVIDER();
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(Spec(FI_MSG), 64, &f));
  if (IsSkipped()) return;
  const uint64_t type = *f->get(w::Field::uet_pds_type);
  if (rdm()) {
    EXPECT_TRUE(type == w::pds_type::RUD_REQ || type == w::pds_type::ROD_REQ || type == w::pds_type::RUDI_REQ)
        << "FI_EP_RDM needs reliable delivery; PDS type " << type;
  } else {
    EXPECT_EQ(type, w::pds_type::UUD_REQ) << "FI_EP_DGRAM is UUD";
  }
}

UET_RDM_ONLY(Delivery, MessageOrderingSelectsRod, "DGRAM endpoints offer no ordering (UUD)");
TEST_P(Delivery, MessageOrderingSelectsRod) {
  covers({"2.2.6-c"});
  UET_REQUIRE_UET_PROVIDER();
  EndpointSpec spec = Spec(FI_MSG);
  spec.msg_order = FI_ORDER_SAS;
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(spec, 64, &f));
  if (IsSkipped()) return;
  EXPECT_EQ(f->get(w::Field::uet_pds_type), w::pds_type::ROD_REQ) << "send-after-send ordering asks for ROD";
}

TEST_P(Delivery, PacketsCarryTheDomainTrafficClass) {
  covers({"2.2.7-d"});
  UET_REQUIRE_UET_PROVIDER();
  EndpointSpec spec = Spec(FI_MSG);
  spec.tclass = fi_tc_dscp_set(kDscp);
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(spec, 64, &f));
  if (IsSkipped()) return;
  const auto dscp = f->get(w::Field::ip_dsfield_dscp) ? f->get(w::Field::ip_dsfield_dscp) : f->get(w::Field::ipv6_tclass_dscp);
  ASSERT_TRUE(dscp) << "no IP header in the capture";
  EXPECT_EQ(*dscp, kDscp) << "fi_domain_attr.tclass FI_TC_DSCP|" << kDscp;
}

TEST_P(Delivery, RequestsCarryRiGenerationZero) {
  covers({"2.2.10.4-a"});
  UET_REQUIRE_UET_PROVIDER();
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(Spec(FI_MSG), 64, &f));
  if (IsSkipped()) return;
  EXPECT_EQ(f->get(w::Field::uet_ses_ri_generation), 0u) << "no resource index of the target uses generations";
}

UET_RDM_ONLY(Delivery, OnePacketSendUsesTheSmallMessageHeader, "datagrams keep the standard header (choice small-message-criteria)");
TEST_P(Delivery, OnePacketSendUsesTheSmallMessageHeader) {
  covers({"2.2.10.4-d"});
  UET_REQUIRE_UET_PROVIDER();
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(Spec(FI_MSG), 64, &f));
  if (IsSkipped()) return;
  should(f->get(w::Field::uet_pds_next_hdr) == w::pds_next_hdr::UET_HDR_REQUEST_MEDIUM,
         std::string("a one-packet 64-byte send uses the small message header ") + per_choice("small-message-criteria"));
}

UET_RDM_ONLY(Delivery, OnePacketWriteUsesTheSmallRmaHeader, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(Delivery, OnePacketWriteUsesTheSmallRmaHeader) {
  covers({"2.2.10.4-f", "2.2.5.3.4.1-k"});
  UET_REQUIRE_UET_PROVIDER();
  ASSERT_NO_FATAL_FAILURE(OpenForRma());
  if (IsSkipped()) return;
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
         std::string("a one-packet 64-byte write uses the small RMA header ") + per_choice("small-rma-criteria"));
}

UET_RDM_ONLY(Delivery, WriteToAnOptimizedKeyUsesTheOptimizedHeader, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(Delivery, WriteToAnOptimizedKeyUsesTheOptimizedHeader) {
  covers({"2.2.5.3.4.1-i", "2.2.5.3.4.1-j", "2.2.10.4-c"});
  UET_REQUIRE_UET_PROVIDER();
  ASSERT_NO_FATAL_FAILURE(OpenForRma());
  if (IsSkipped()) return;
  RemoteMr mr;
  ASSERT_NO_FATAL_FAILURE(RegisterOptimizedMr(5, &mr));
  if (IsSkipped()) return;
  ASSERT_TRUE(cap.start()) << cap.error();
  const std::vector<uint8_t> src(64, 0x44);
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, mr.base, mr.key, &ctx); }), 0);
  ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
  EXPECT_EQ(target.read_mr(5, 0, src.size()), src);
  const auto f = cap.find([](const WireFrame& f) { return f.get(w::Field::uet_ses_opcode) == w::ses_request_opcode::UET_WRITE; });
  ASSERT_TRUE(f) << "no UET_WRITE captured";
  should(f->get(w::Field::uet_pds_next_hdr) == w::pds_next_hdr::UET_HDR_REQUEST_SMALL,
         std::string("a one-packet write to an OPTIMIZED key uses the optimized non-matching header ") + per_choice("optimized-header-criteria"));
  if (f->get(w::Field::uet_pds_next_hdr) == w::pds_next_hdr::UET_HDR_REQUEST_SMALL) {
    EXPECT_EQ(f->get(w::Field::uet_ses_resource_index), mr.key & w::k_mr_key_optimized_rkey_mask) << "the RKEY/INDEX (2.2.10.4)";
  }
}

// When neither the optimized nor the small RMA criteria hold, RMA uses the standard header
// (2.2.5.3.4.1-l): a write with remote CQ data (the small headers' header_data would displace
// buffer_offset, choice small-rma-criteria) and a write of several packets.
UET_RDM_ONLY(Delivery, WriteOutsideTheSmallCriteriaUsesTheStandardHeader, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(Delivery, WriteOutsideTheSmallCriteriaUsesTheStandardHeader) {
  covers({"2.2.5.3.4.1-l"});
  UET_REQUIRE_UET_PROVIDER();
  ASSERT_NO_FATAL_FAILURE(OpenForRma());
  if (IsSkipped()) return;
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
  rests_on_choice("small-rma-criteria");  // the verdict rests on it, pass or fail
  EXPECT_EQ(with_data->get(w::Field::uet_pds_next_hdr), w::pds_next_hdr::UET_HDR_REQUEST_STD)
      << "a write with remote CQ data meets neither the small RMA nor the optimized criteria " << per_choice("small-rma-criteria");
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
UET_RDM_ONLY(Delivery, RudiOnlyToIdempotentSafeKeys, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(Delivery, RudiOnlyToIdempotentSafeKeys) {
  covers({"2.2.5.3.4.1-b", "2.2.5.3.4.1-m", "2.2.6-b"});
  UET_REQUIRE_UET_PROVIDER();
  ASSERT_NO_FATAL_FAILURE(OpenForRma());
  if (IsSkipped()) return;
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
         std::string("a write without remote CQ data to an IDEMPOTENT_SAFE key between HPC FEPs uses RUDI ") + per_choice("rudi-criteria"));
}

// 2.2.10.4-a: a target reads every request header format of Table 2-38, not only the standard header: the
// small message header of a one-packet send (next_hdr 2), the small RMA header of a one-packet write
// (next_hdr 2) and the optimized non-matching header of a one-packet write to an OPTIMIZED key of a FEP
// whose address says it takes that header (next_hdr 1). Judged by what arrives at the target, whatever the
// initiator's completion says. Knob standard_header_only breaks all three.
UET_RDM_ONLY(Delivery, TargetTakesASendInTheSmallMessageHeader, "datagrams keep the standard header (choice small-message-criteria)");
TEST_P(Delivery, TargetTakesASendInTheSmallMessageHeader) {
  covers({"2.2.10.4-a"});
  UET_REQUIRE_UET_PROVIDER();
  UET_OPEN_BOTH(PlacedSpec(FI_MSG));
  ASSERT_TRUE(cap.start()) << cap.error();
  ASSERT_EQ(target.post_recv(1, 128), 0) << target.error();
  const std::vector<uint8_t> data(64, 0x6B);
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_send(me.ep, data.data(), data.size(), nullptr, dest, &ctx); }), 0);
  Outcome sent;
  ASSERT_NO_FATAL_FAILURE(SentInHeader(w::ses_request_opcode::UET_SEND, w::pds_next_hdr::UET_HDR_REQUEST_MEDIUM,
                                       "small message header", &ctx, &sent));
  if (IsSkipped()) return;
  const RecvResult r = target.completion(1, kArrivalMs);
  ASSERT_EQ(r.state, RecvResult::completed) << "a one-packet send in the small message header did not arrive " << target.error();
  EXPECT_EQ(r.bytes, data);
  ExpectCompleted(sent);
}

UET_RDM_ONLY(Delivery, TargetTakesAWriteInTheSmallRmaHeader, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(Delivery, TargetTakesAWriteInTheSmallRmaHeader) {
  covers({"2.2.10.4-a"});
  UET_REQUIRE_UET_PROVIDER();
  ASSERT_NO_FATAL_FAILURE(ExpectWriteTaken(w::pds_next_hdr::UET_HDR_REQUEST_MEDIUM, "small RMA header"));
}

UET_RDM_ONLY(Delivery, TargetTakesAWriteInTheOptimizedHeader, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(Delivery, TargetTakesAWriteInTheOptimizedHeader) {
  covers({"2.2.10.4-a"});
  UET_REQUIRE_UET_PROVIDER();
  ASSERT_NO_FATAL_FAILURE(ExpectWriteTaken(w::pds_next_hdr::UET_HDR_REQUEST_SMALL, "optimized non-matching header"));
}

UET_INSTANTIATE_TWO_SIDED(Delivery);

// ---- Ordering flags one at a time (2.2.6-d/e) --------------------------------------------------------

struct OrderFlag {
  uint64_t bit;
  const char* name;
};
#define UET_ORDER_FLAG(f) OrderFlag{f, #f}
// The flags of the two definitions, as 2.2.6-d and 2.2.6-e list them (digest G.1).
const std::vector<OrderFlag> kSendOrdering = {UET_ORDER_FLAG(FI_ORDER_RAS), UET_ORDER_FLAG(FI_ORDER_SAR),
                                              UET_ORDER_FLAG(FI_ORDER_SAS), UET_ORDER_FLAG(FI_ORDER_SAW),
                                              UET_ORDER_FLAG(FI_ORDER_WAS)};
const std::vector<OrderFlag> kReadWriteOrdering = {
    UET_ORDER_FLAG(FI_ORDER_ATOMIC_RAR), UET_ORDER_FLAG(FI_ORDER_ATOMIC_RAW), UET_ORDER_FLAG(FI_ORDER_ATOMIC_WAR),
    UET_ORDER_FLAG(FI_ORDER_ATOMIC_WAW), UET_ORDER_FLAG(FI_ORDER_RAR),        UET_ORDER_FLAG(FI_ORDER_RAS),
    UET_ORDER_FLAG(FI_ORDER_RAW),        UET_ORDER_FLAG(FI_ORDER_RMA_RAR),    UET_ORDER_FLAG(FI_ORDER_RMA_RAW),
    UET_ORDER_FLAG(FI_ORDER_RMA_WAR),    UET_ORDER_FLAG(FI_ORDER_RMA_WAW),    UET_ORDER_FLAG(FI_ORDER_SAR),
    UET_ORDER_FLAG(FI_ORDER_SAW),        UET_ORDER_FLAG(FI_ORDER_WAR),        UET_ORDER_FLAG(FI_ORDER_WAS)};
#undef UET_ORDER_FLAG

uint64_t all_bits(const std::vector<OrderFlag>& flags) {
  uint64_t bits = 0;
  for (const OrderFlag& f : flags) bits |= f.bit;
  return bits;
}

// A pair of its own for one endpoint configuration, beside the fixture's: the ordering cases open one per
// msg_order. The target is declared first, so it closes after the initiator's endpoint.
struct Pair {
  Target peer;
  Endpoint ep;
  fi_addr_t to = FI_ADDR_NOTAVAIL;
};

// Opens `pair` with `spec` for the initiator (the target takes the same caps, without ordering: msg_order
// is a transmit attribute). With `optional`, false and nothing asserted when the provider offers no such
// endpoint (fi_getinfo -FI_ENODATA: that msg_order is then never configured, and nothing follows from it).
// One pair at a time: a FEP's UDP port is its domain's, so the fixture's pair is not opened beside it.
bool OpenPair(const EndpointSpec& spec, Pair* pair, bool optional) {
  skip_if_uncrossable(Side::target);
  if (::testing::Test::IsSkipped()) return false;
  const int rc = pair->ep.open(spec);
  if (rc == -FI_ENODATA && optional) return false;
  if (rc != 0) claimed_but_unsupported(std::string("an endpoint with caps ") + fi_tostr(&spec.caps, FI_TYPE_CAPS));
  EXPECT_EQ(rc, 0) << fi_refused(pair->ep.failed, rc) << " (caps " << fi_tostr(&spec.caps, FI_TYPE_CAPS)
                   << ", msg_order " << fi_tostr(&spec.msg_order, FI_TYPE_MSG_ORDER) << ")";
  if (rc != 0) return false;
  EndpointSpec theirs = spec;
  theirs.msg_order = 0;
  observing(Side::target, "api: the target's endpoint");
  EXPECT_TRUE(pair->peer.start(theirs)) << pair->peer.error();
  observing(Side::initiator, "api: the initiator's fi_av_insert of the target's address");  // blame follows the call
  pair_addresses(pair->ep.name(), pair->peer.name());
  const std::vector<uint8_t> to_insert = pair->peer.name_for_initiator(pair->ep.name());
  if (to_insert.empty() && !pair->peer.name().empty())  // started, and its address does not fit this side's layout
    remember_uncrossable(Side::target, uncrossable_reason(target_manifest(), manifest(), pair->peer.error()));
  else if ((pair->to = pair->ep.insert(to_insert)) == FI_ADDR_NOTAVAIL)
    judge_refused_address(Side::target, target_manifest(), pair->peer.name(), manifest());
  skip_if_uncrossable(Side::target);
  if (::testing::Test::IsSkipped()) return false;
  EXPECT_FALSE(to_insert.empty()) << pair->peer.error();
  EXPECT_NE(pair->to, FI_ADDR_NOTAVAIL) << "the initiator's fi_av_insert refused the target's address";
  return pair->to != FI_ADDR_NOTAVAIL;
}

class DeliveryOrdering : public Delivery {
 protected:
  // For each flag alone as tx_attr->msg_order: a fresh pair, one `write` (else a send) captured, and it
  // must travel as ROD. Flags the provider does not offer configure no ordering: listed, not checked.
  void EachFlagAloneSelectsRod(const std::vector<OrderFlag>& flags, bool write) {
    UET_REQUIRE_UET_PROVIDER();
    UET_REQUIRE_PAIR_CLAIMS_KIND();
    std::string refused, checked;
    for (const OrderFlag& flag : flags) {
      SCOPED_TRACE(flag.name);
      EndpointSpec spec = Spec(write ? FI_MSG | FI_RMA : FI_MSG);
      spec.msg_order = flag.bit;
      Pair pair;
      if (!OpenPair(spec, &pair, true)) {
        if (HasFailure() || IsSkipped()) return;
        refused += std::string(refused.empty() ? "" : " ") + flag.name;
        continue;
      }
      Capture flag_cap;
      ASSERT_TRUE(flag_cap.start()) << flag_cap.error();
      const std::vector<uint8_t> data(64, 0x0D);
      int ctx = 0;
      uint64_t opcode = w::ses_request_opcode::UET_SEND;
      if (write) {
        RemoteMr mr;
        ASSERT_TRUE(pair.peer.register_mr(1, 256, 0, "any", &mr)) << pair.peer.error();
        opcode = w::ses_request_opcode::UET_WRITE;
        ASSERT_EQ(pair.ep.post([&] { return fi_write(pair.ep.ep, data.data(), data.size(), nullptr, pair.to, mr.base, mr.key, &ctx); }), 0);
      } else {
        ASSERT_EQ(pair.peer.post_recv(1, 128), 0) << pair.peer.error();
        ASSERT_EQ(pair.ep.post([&] { return fi_send(pair.ep.ep, data.data(), data.size(), nullptr, pair.to, &ctx); }), 0);
      }
      const auto f = flag_cap.find([opcode](const WireFrame& f) { return f.get(w::Field::uet_ses_opcode) == opcode; });
      ASSERT_TRUE(f) << "no " << (write ? "UET_WRITE" : "UET_SEND") << " captured";
      EXPECT_EQ(f->get(w::Field::uet_pds_type), w::pds_type::ROD_REQ)
          << "tx_attr->msg_order " << flag.name << " alone makes " << (write ? "read/write" : "send")
          << " ordering active, which selects ROD";
      ASSERT_EQ(pair.ep.wait(&ctx).state, Outcome::completed);
      end_both(pair.ep, pair.peer);
      checked += std::string(checked.empty() ? "" : " ") + flag.name;
    }
    RecordProperty("ordering_checked", checked);
    if (!refused.empty()) RecordProperty("ordering_not_offered", refused);
    UET_NOT_APPLICABLE_IF(checked.empty(), reason::kNotClaimedFeature, "the provider offers none of the flags as msg_order (fi_getinfo: no match for "
                                               << refused << "): no ordering is ever active");
  }
};

// Each flag of the send-ordering set, alone, makes send ordering active (2.2.6-d), and a send with send
// ordering active travels ROD (2.2.6-c). Breaks with knob ordering_ignored.
TEST_P(DeliveryOrdering, EachSendOrderingFlagSelectsRod) {
  covers({"2.2.6-d"});
  EachFlagAloneSelectsRod(kSendOrdering, false);
}

// Each flag of the read/write-ordering set, alone, makes read/write ordering active (2.2.6-e), and an RMA
// write with it active travels ROD. Breaks with knob ordering_ignored.
TEST_P(DeliveryOrdering, EachReadWriteOrderingFlagSelectsRod) {
  covers({"2.2.6-e"});
  EachFlagAloneSelectsRod(kReadWriteOrdering, true);
}

// ---- The delivery-mode tables of the profiles (2.2.6-f/g/h) -----------------------------------------
//
// Tables 2-29 (AI Base), 2-30 (AI Full) and 2-31 (HPC) are MISSING. What they are taken to say is that of
// spec/wire.yaml choice rudi-criteria (with digest G.1/G.2): an RDM operation of an endpoint with no
// ordering travels RUD, one of an endpoint with send and read/write ordering active ROD, whatever the
// operation; RUDI only between FEPs operating in HPC (the table cell "RUD/RUDI" follows vendor policy, so
// either passes there) and only for writes and reads to an IDEMPOTENT_SAFE key of an unordered endpoint.
// Which table applies is the profile the pair operates in (choice profile-priority, uet/wire/profiles.hpp).

struct Observed {
  std::string op;
  bool idempotent_safe_key = false;  // a write or read to an IDEMPOTENT_SAFE key (RUDI may apply)
  uint64_t pds_type = 0;
};

class DeliveryTable : public Delivery {
 protected:
  // Not applicable unless the pair operates in `table`'s profile.
  void RequireOperatingIn(w::Profile table) {
    UET_REQUIRE_UET_PROVIDER();
    UET_REQUIRE_PAIR_CLAIMS_KIND();
    const uint8_t mine = claimed_caps(manifest()), theirs = claimed_caps(target_manifest());
    const w::Profile operating = w::operating_profile(mine, theirs);
    rests_on_choice("profile-priority");
    if (!(mine & theirs)) rests_on_choice("no-common-profile");
    rests_on_choice("rudi-criteria");
    UET_NOT_APPLICABLE_IF(operating != table, reason::kNotClaimedProfile, "the pair (" << manifest().name << " to " << target_manifest().name
                                                           << ") operates in " << w::profile_name(operating) << ", not "
                                                           << w::profile_name(table) << " " << per_choice("profile-priority"));
  }
  uint64_t Caps() const { return FI_MSG | FI_RMA | FI_ATOMIC | (tagged_required() ? FI_TAGGED : 0); }

  // One of each RDM operation over (ep, peer, to): `check` sees the PDS type of each one's request as it
  // is captured (before the operation must complete: a request in the wrong mode may never complete).
  void RunOperations(Endpoint& ep, Target& peer, fi_addr_t to, bool tagged, const std::function<void(const Observed&)>& check) {
    RemoteMr plain, safe;
    ASSERT_TRUE(peer.register_mr(1, 256, 0, "any", &plain)) << peer.error();
    ASSERT_TRUE(peer.register_mr(2, 256, 0, "idempotent+any", &safe)) << peer.error();
    constexpr uint64_t kSafe = uint64_t{1} << w::k_mr_key_idempotent_safe_bit;
    const bool safe_bit = safe.key & kSafe;  // without it (a SHOULD of 2.2.5.3.4.1-o) the key is plain
    Capture ops_cap;
    ASSERT_TRUE(ops_cap.start()) << ops_cap.error();
    std::vector<uint8_t> data(64, 0x6B), back(64);
    const uint64_t one = 1;
    uint64_t old = 0;
    constexpr uint64_t kTag = 0x7AB1E;
    namespace op = w::ses_request_opcode;
    const auto run = [&](const std::string& name, uint64_t opcode, std::optional<uint64_t> key, bool safe_key,
                         const std::function<ssize_t(void*)>& call) {
      int ctx = 0;
      ASSERT_EQ(ep.post([&] { return call(&ctx); }), 0) << name;
      const auto f = ops_cap.find([&](const WireFrame& f) {
        return f.get(w::Field::uet_ses_opcode) == opcode && (!key || f.get(w::Field::uet_ses_memory_key) == key);
      });
      ASSERT_TRUE(f) << "no request of " << name << " captured";
      check({name, safe_key, *f->get(w::Field::uet_pds_type)});
      const Outcome o = ep.wait(&ctx);
      ASSERT_EQ(o.state, Outcome::completed) << name << ": err " << o.error.err << ", prov_errno " << o.error.prov_errno;
    };
    ASSERT_EQ(peer.post_recv(10, 128), 0) << peer.error();
    ASSERT_NO_FATAL_FAILURE(run("fi_send", op::UET_SEND, std::nullopt, false, [&](void* c) {
      return fi_send(ep.ep, data.data(), data.size(), nullptr, to, c);
    }));
    if (tagged) {
      ASSERT_EQ(peer.post_recv(11, 128, true, kTag), 0) << peer.error();
      ASSERT_NO_FATAL_FAILURE(run("fi_tsend", op::UET_TAGGED_SEND, std::nullopt, false, [&](void* c) {
        return fi_tsend(ep.ep, data.data(), data.size(), nullptr, to, kTag, c);
      }));
    }
    for (const RemoteMr* mr : {&plain, &safe}) {
      const bool s = mr == &safe && safe_bit;
      const std::string which = mr == &plain ? " to a plain key" : " to an IDEMPOTENT_SAFE key";
      ASSERT_NO_FATAL_FAILURE(run("fi_write" + which, op::UET_WRITE, mr->key, s, [&](void* c) {
        return fi_write(ep.ep, data.data(), data.size(), nullptr, to, mr->base, mr->key, c);
      }));
      ASSERT_NO_FATAL_FAILURE(run("fi_read" + which, op::UET_READ, mr->key, s, [&](void* c) {
        return fi_read(ep.ep, back.data(), back.size(), nullptr, to, mr->base, mr->key, c);
      }));
    }
    ASSERT_NO_FATAL_FAILURE(run("fi_atomic FI_SUM", op::UET_ATOMIC, plain.key, false, [&](void* c) {
      return fi_atomic(ep.ep, &one, 1, nullptr, to, plain.base + 128, plain.key, FI_UINT64, FI_SUM, c);
    }));
    ASSERT_NO_FATAL_FAILURE(run("fi_fetch_atomic FI_SUM", op::UET_FETCHING_ATOMIC, plain.key, false, [&](void* c) {
      return fi_fetch_atomic(ep.ep, &one, 1, nullptr, &old, nullptr, to, plain.base + 128, plain.key, FI_UINT64, FI_SUM, c);
    }));
    EXPECT_EQ(peer.completion(10, kArrivalMs).state, RecvResult::completed) << "the fi_send did not arrive";
    if (tagged) {
      EXPECT_EQ(peer.completion(11, kArrivalMs).state, RecvResult::completed) << "the fi_tsend did not arrive";
    }
  }

  void FollowsTheTable(w::Profile table) {
    ASSERT_NO_FATAL_FAILURE(RequireOperatingIn(table));
    if (IsSkipped()) return;
    const bool hpc = table == w::Profile::hpc;
    const bool tagged = tagged_required();
    // No ordering: RUD, or under HPC RUD/RUDI where RUDI's criteria can hold.
    {
      Pair pair;
      if (!OpenPair(Spec(Caps()), &pair, false)) return;
      ASSERT_NO_FATAL_FAILURE(RunOperations(pair.ep, pair.peer, pair.to, tagged, [&](const Observed& o) {
        if (hpc && o.idempotent_safe_key) {
          EXPECT_TRUE(o.pds_type == w::pds_type::RUD_REQ || o.pds_type == w::pds_type::RUDI_REQ)
              << o.op << " of an unordered endpoint between HPC FEPs: RUD or RUDI (vendor policy); PDS type " << o.pds_type;
        } else {
          EXPECT_EQ(o.pds_type, w::pds_type::RUD_REQ) << o.op << " of an endpoint without ordering, operating in "
                                                      << w::profile_name(table) << ": RUD";
        }
      }));
      end_both(pair.ep, pair.peer);
    }
    // Send and read/write ordering active: ROD for every operation (and so never RUDI).
    EndpointSpec ordered = Spec(Caps());
    ordered.msg_order = all_bits(kSendOrdering) | all_bits(kReadWriteOrdering);
    Pair pair;
    if (!OpenPair(ordered, &pair, true)) {
      if (HasFailure() || IsSkipped()) return;
      RecordProperty("ordered_column", "not checked: the provider offers no endpoint with every ordering flag");
      return;
    }
    ASSERT_NO_FATAL_FAILURE(RunOperations(pair.ep, pair.peer, pair.to, tagged, [](const Observed& o) {
      EXPECT_EQ(o.pds_type, w::pds_type::ROD_REQ) << o.op << " of an endpoint with send and read/write ordering: ROD";
    }));
    end_both(pair.ep, pair.peer);
  }
};

// Breaks with knob ordering_ignored (the ordered column).
TEST_P(DeliveryTable, AiBaseSelectsRodOrRudPerTable2_29) {
  covers({"2.2.6-f"});
  FollowsTheTable(w::Profile::ai_base);
}

// Breaks with knob ordering_ignored (the ordered column), and between an AI Full+HPC initiator and an AI
// Full target with knob rudi_without_hpc (RUDI to an IDEMPOTENT_SAFE key of a FEP without HPC).
TEST_P(DeliveryTable, AiFullSelectsRodOrRudPerTable2_30) {
  covers({"2.2.6-g"});
  FollowsTheTable(w::Profile::ai_full);
}

// Breaks with knobs ordering_ignored (the ordered column) and rudi_to_unsafe_key (RUDI to a plain key).
TEST_P(DeliveryTable, HpcSelectsRodRudOrRudiPerTable2_31) {
  covers({"2.2.6-h"});
  FollowsTheTable(w::Profile::hpc);
}

// ---- The data traffic class by default and from UET_PROVIDER_DEF_DATA_TC (2.2.7-a/c) ---------------

class DeliveryTrafficClass : public Delivery {
 protected:
  // Opens both sides (the target with `env` over its environment, without `unset`), has the target send
  // a message to this side, and returns its first request as captured toward this side.
  void TargetSendsCaptured(const std::map<std::string, std::string>& env, const std::vector<std::string>& unset,
                           std::optional<WireFrame>* request) {
    const EndpointSpec spec = Spec(FI_MSG);  // tclass FI_TC_UNSPEC: the default data traffic class
    const int rc = me.open(spec);
    if (rc != 0) claimed_but_unsupported(std::string("an endpoint with caps FI_MSG"));
    ASSERT_EQ(rc, 0) << fi_refused(me.failed, rc);
    observing(Side::target, "api: the target's endpoint");
    ASSERT_TRUE(target.start(spec, env, unset)) << target.error();
    fi_addr_t to_me;
    TargetInsertsMe(&to_me);
    if (IsSkipped()) return;
    ASSERT_NE(to_me, FI_ADDR_NOTAVAIL) << target.error();
    std::vector<uint8_t> buf(128);
    int ctx = 0;
    ASSERT_EQ(fi_recv(me.ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, &ctx), 0);
    Capture to_me_cap;
    ASSERT_TRUE(to_me_cap.start(Capture::Toward::initiator)) << to_me_cap.error();
    const RecvResult sent = target.send(to_me, 64, 0x7C);
    *request = to_me_cap.find([](const WireFrame& f) { return is_request(f); });
    ASSERT_TRUE(*request) << "no SES request from the target captured (send: state " << sent.state << ", err "
                          << sent.err << ") " << target.error();
    EXPECT_EQ(sent.state, RecvResult::completed) << "the target's send: err " << sent.err;
    EXPECT_EQ(me.wait(&ctx, kArrivalMs).state, Outcome::completed) << "the target's message did not arrive";
  }
  static std::optional<uint64_t> Dscp(const WireFrame& f) {
    const auto v4 = f.get(w::Field::ip_dsfield_dscp);
    return v4 ? v4 : f.get(w::Field::ipv6_tclass_dscp);
  }
};

// A FEP asked for no traffic class (fi_domain_attr.tclass FI_TC_UNSPEC) and given no
// UET_PROVIDER_DEF_DATA_TC sends its data in the default data TC (Table 2-32 MISSING: constants
// default_data_dscp, choice default-data-tc). No softuet knob breaks it: wrong_dscp sends DSCP 0, which is
// the default.
TEST_P(DeliveryTrafficClass, DataPacketsCarryTheDefaultDataTrafficClass) {
  covers({"2.2.7-a"});
  UET_REQUIRE_UET_PROVIDER();
  rests_on_choice("default-data-tc");
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(TargetSendsCaptured({}, {"UET_PROVIDER_DEF_DATA_TC"}, &f));
  if (IsSkipped()) return;
  const auto dscp = Dscp(*f);
  ASSERT_TRUE(dscp) << "no IP header in the capture";
  rests_on_choice("default-data-tc");  // the verdict rests on it, pass or fail
  EXPECT_EQ(*dscp, w::k_default_data_dscp) << "the default data traffic class " << per_choice("default-data-tc");
}

// UET_PROVIDER_DEF_DATA_TC (Table 2-7; a DSCP, choice default-data-tc) replaces the default data TC of a
// FEP asked for none. The MAY is the user's: a provider of Table 2-7's variables honours it. Breaks with
// knob wrong_dscp.
TEST_P(DeliveryTrafficClass, DefDataTcOverridesTheDefault) {
  covers({"2.2.7-c"});
  UET_REQUIRE_UET_PROVIDER();
  rests_on_choice("default-data-tc");
  static_assert(kDscp != w::k_default_data_dscp, "the override must differ from the default");
  std::optional<WireFrame> f;
  ASSERT_NO_FATAL_FAILURE(TargetSendsCaptured({{"UET_PROVIDER_DEF_DATA_TC", std::to_string(kDscp)}}, {}, &f));
  if (IsSkipped()) return;
  const auto dscp = Dscp(*f);
  ASSERT_TRUE(dscp) << "no IP header in the capture";
  EXPECT_EQ(*dscp, kDscp) << "the target ran with UET_PROVIDER_DEF_DATA_TC=" << kDscp;
}

UET_INSTANTIATE_TWO_SIDED_RDM(DeliveryOrdering);
UET_INSTANTIATE_TWO_SIDED_RDM(DeliveryTable);
UET_INSTANTIATE_TWO_SIDED(DeliveryTrafficClass);

}  // namespace
}  // namespace uet::cases
