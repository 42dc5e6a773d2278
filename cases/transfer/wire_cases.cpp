// What the wire shows of the libfabric mapping below SES (UEC 1.0 §2.2.10.1–3) and of the CAS operands
// (§2.2.10.4): the IP and UDP headers of a FEP's packets (Table 2-36, MISSING: digest I.2), the PDS
// header of each delivery mode (UUD carries no PDC, RUD/ROD their PDC's state, Table 2-37 MISSING), the
// SES fields that place a request (PIDonFEP, RI and JobID of its destination, a nonzero message_id;
// Table 2-39) and the compare and swap values of fi_compare_atomic in the CAS extension header. UET
// statements, so UET providers only.
//
// These checks compare byte strings (IP addresses, 16-byte CAS operands), which the suite's Capture
// decodes as offsets into a frame it does not keep; FrameCapture below keeps each frame's bytes. It also
// decodes both directions (requests to the target's UET port, ACKs to the initiator's), in arrival order.
#include <poll.h>
#include <rdma/fi_atomic.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "area_traits.hpp"
#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 3);

namespace uet::cases {
namespace {

namespace w = uet::wire;

// Any DSCP other than the default data class (choice default-data-tc) tells the two apart.
constexpr uint32_t kDscp = 46;

using Frame = WireFrame;

bool request(const Frame& f) { return is_request(f); }

class Wire : public TwoSided {
 protected:
  void SetUp() override { UET_REQUIRE_UET_PROVIDER(); }
  bool rdm() const { return GetParam().ep_type == FI_EP_RDM; }
  // Sends `len` bytes to a posted receive `id` of the target; the case checks the wire, then Arrived().
  void Send(size_t len, int id, int* ctx) {
    ASSERT_EQ(target.post_recv(id, len + 64), 0) << target.error();
    data_[id] = std::vector<uint8_t>(len, static_cast<uint8_t>(0x40 + id));
    ASSERT_EQ(me.post([&] { return fi_send(me.ep, data_[id].data(), data_[id].size(), nullptr, dest, ctx); }), 0);
  }
  // Opens both sides with `spec` and, with the capture running, sends `len` bytes to receive 1: the first
  // SES request on the wire in `f` (the case checks it, then Arrived(1, ctx)).
  void SendCaptured(const EndpointSpec& spec, size_t len, int* ctx, std::optional<Frame>* f) {
    ASSERT_NO_FATAL_FAILURE(OpenBoth(spec));
    if (IsSkipped()) return;
    ASSERT_TRUE(cap.start()) << cap.error();
    ASSERT_NO_FATAL_FAILURE(Send(len, 1, ctx));
    *f = cap.find(Side::initiator, request);
    ASSERT_TRUE(*f) << "no SES request captured";
  }
  // The send completed at the initiator and the target received its bytes.
  void Arrived(int id, int* ctx) {
    ASSERT_EQ(me.wait(ctx).state, Outcome::completed);
    const RecvResult r = target.completion(id, kArrivalMs);
    ASSERT_EQ(r.state, RecvResult::completed) << target.error();
    EXPECT_EQ(r.bytes, data_[id]) << "the message the target received";
  }
  // UET goes over UDP to destination port 4793 (digest I.1; Table 2-36's UDP row, MISSING: choice
  // uet-udp-port). Only a port a provider chose says anything: where the suite gave a side its port ({port} in
  // its manifest, so that cells run side by side) that side did as it was told. A side whose manifest names
  // another number, or `auto` (it binds a port of its own; personality own-port), is blamed for its port: the
  // target's requests, or (RDM) the initiator's ACKs, go elsewhere than 4793.
  void ExpectUetPortWhereChosen(const Frame& request) {
    if (target_manifest().wire.udp_port_chosen_by != "suite") {
      rests_on_choice("uet-udp-port");
      observing(Side::target, "wire: the UDP port the target takes UET on (the " +
                                  target_manifest().wire.udp_port_chosen_by + "'s choice)");
      EXPECT_EQ(request.get(w::Field::udp_dstport), w::kUdpPort)
          << "requests go to the target's UDP port " << request.get(w::Field::udp_dstport).value_or(0)
          << ", not UET's " << w::kUdpPort << " " << per_choice("uet-udp-port");
    }
    if (manifest().wire.udp_port_chosen_by != "suite" && rdm()) {
      rests_on_choice("uet-udp-port");
      const auto ack = cap.find(Side::target, [](const Frame&) { return true; });
      observing(Side::initiator, "wire: the UDP port the initiator takes UET on (the " +
                                     manifest().wire.udp_port_chosen_by + "'s choice)");
      ASSERT_TRUE(ack) << "no frame from the target (an ACK of the RDM request) to learn the initiator's UET port";
      EXPECT_EQ(ack->get(w::Field::udp_dstport), w::kUdpPort)
          << "the target's ACKs go to the initiator's UDP port " << ack->get(w::Field::udp_dstport).value_or(0)
          << ", not UET's " << w::kUdpPort << " " << per_choice("uet-udp-port");
    }
  }
  std::map<int, std::vector<uint8_t>> data_;
  Capture cap;
};

std::string hex(const std::vector<uint8_t>& b) { return b.empty() ? "(none)" : to_hex(b.data(), b.size()); }

// The IP header of a request follows the endpoints' addresses and the data traffic class (Table 2-36,
// MISSING; digest I.2): IP version per address flag bit 6, source = the initiator's FA, destination = the
// target's FA, UDP (protocol 17) to the target's UET port (the manifest's `wire: udp_port`), DSCP = the
// domain's tclass (FI_TC_DSCP|46 here), and an ECN field the sender never sets to CE (congestion marks
// are the network's; NSCC owns the rest). Knob wrong_dscp breaks the DSCP; no softuet knob breaks the
// addresses, protocol, port or ECN (a provider that got them wrong would not reach the target at all); a UET
// port a provider chose must be 4793 (ExpectUetPortWhereChosen; personality own-port breaks it).
TEST_P(Wire, IpHeaderFollowsTheAddressesAndTrafficClass) {
  covers({"2.2.10.1-a"});
  if (IsSkipped()) return;
  rests_on_choice("uet-address-layout");
  EndpointSpec spec = Spec(FI_MSG);
  spec.tclass = fi_tc_dscp_set(kDscp);
  int ctx = 0;
  std::optional<Frame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(spec, 64, &ctx, &f));
  if (IsSkipped()) return;
  bool my_v6 = false, their_v6 = false;
  const std::vector<uint8_t> my_fa = fabric_address(manifest(), me.name(), &my_v6), their_fa = fabric_address(target_manifest(), target.name(), &their_v6);
  ASSERT_FALSE(their_fa.empty()) << "the target's address is shorter than a UET address";
  ASSERT_FALSE(my_fa.empty()) << "the initiator's address is shorter than a UET address";
  if (their_v6) {
    EXPECT_EQ(f->get(w::Field::ipv6_version), 6u) << "the target's address has the IPv6 flag";
    EXPECT_EQ(f->field_bytes(w::Field::ipv6_src), my_fa) << "IPv6 source: the initiator's FA " << hex(my_fa) << ", got "
                                                         << hex(f->field_bytes(w::Field::ipv6_src));
    EXPECT_EQ(f->field_bytes(w::Field::ipv6_dst), their_fa) << "IPv6 destination: the target's FA " << hex(their_fa)
                                                            << ", got " << hex(f->field_bytes(w::Field::ipv6_dst));
    EXPECT_EQ(f->get(w::Field::ipv6_nxt), 17u) << "next header UDP";
    EXPECT_EQ(f->get(w::Field::ipv6_tclass_dscp), kDscp) << "fi_domain_attr.tclass FI_TC_DSCP|" << kDscp;
    EXPECT_NE(f->get(w::Field::ipv6_tclass_ecn), 3u) << "the sender marked its own packet CE";
  } else {
    EXPECT_EQ(f->get(w::Field::ip_version), 4u) << "the target's address has no IPv6 flag";
    EXPECT_EQ(f->field_bytes(w::Field::ip_src), my_fa) << "IPv4 source: the initiator's FA " << hex(my_fa) << ", got "
                                                       << hex(f->field_bytes(w::Field::ip_src));
    EXPECT_EQ(f->field_bytes(w::Field::ip_dst), their_fa) << "IPv4 destination: the target's FA " << hex(their_fa)
                                                          << ", got " << hex(f->field_bytes(w::Field::ip_dst));
    EXPECT_EQ(f->get(w::Field::ip_proto), 17u) << "protocol UDP";
    EXPECT_EQ(f->get(w::Field::ip_dsfield_dscp), kDscp) << "fi_domain_attr.tclass FI_TC_DSCP|" << kDscp;
    EXPECT_NE(f->get(w::Field::ip_dsfield_ecn), 3u) << "the sender marked its own packet CE";
  }
  EXPECT_EQ(my_v6, their_v6) << "the two FEPs' addresses are of different IP versions";
  // The target's UET port: what its address says where its layout has a port, else its manifest's (an `auto`
  // port with neither is the one the capture learned, and says nothing more).
  const auto in_address = layout_of(target_manifest()).get(target.name(), AddrField::udp_port);
  const uint64_t port = in_address ? *in_address : target_manifest().wire.udp_port.automatic ? cap.uet_port(Side::target)
                                                                                            : target_manifest().wire.udp_port.number;
  EXPECT_EQ(f->get(w::Field::udp_dstport), port) << "UDP destination: the target's UET port ("
                                                 << (in_address ? "its address" : "its manifest") << ")";
  ASSERT_NO_FATAL_FAILURE(Arrived(1, &ctx));
  ExpectUetPortWhereChosen(*f);
}

// 2.2.10.3-a: UUD uses no PDC, and RUD/ROD requests carry their PDC's state. A datagram is a UUD request,
// whose PDS header has no PDC ids and no PSN (knob dgram_over_rud breaks it). Two messages of an RDM
// endpoint to one target (the same JobID, destination, traffic class and mode: the inputs Table 2-37 is
// taken to list, digest I.4) go on one PDC: the same source PDC id, consecutive PSNs (knob psn_reuse
// breaks it); the target's ACK names that PDC as its destination, and once the PDC is established
// (SYN clear) the initiator's requests name the target's PDC id its ACK gave (knob no_ack breaks it).
// RUDI (no PDC either) is not reached here.
TEST_P(Wire, PdsHeaderCarriesThePdcOfItsDeliveryMode) {
  covers({"2.2.10.3-a"});
  if (IsSkipped()) return;
  UET_OPEN_BOTH(Spec(FI_MSG));
  bool v6 = false;
  ASSERT_TRUE(cap.start(Capture::Toward::target, fabric_address(target_manifest(), target.name(), &v6))) << cap.error();
  int c1 = 0, c2 = 0;
  ASSERT_NO_FATAL_FAILURE(Send(64, 1, &c1));
  const auto first = cap.find(Side::initiator, request);
  ASSERT_TRUE(first) << "no SES request captured";
  if (!rdm()) {
    ASSERT_NO_FATAL_FAILURE(Send(64, 2, &c2));
    const auto second = cap.find(Side::initiator, request);
    ASSERT_TRUE(second) << "no second SES request captured";
    for (const auto* f : {&*first, &*second}) {
      EXPECT_EQ(f->get(w::Field::uet_pds_type), w::pds_type::UUD_REQ) << "FI_EP_DGRAM is UUD, which uses no PDC";
      EXPECT_FALSE(f->get(w::Field::uet_pds_spdcid)) << "a UUD request carries a source PDC id";
      EXPECT_FALSE(f->get(w::Field::uet_pds_dpdcid)) << "a UUD request carries a destination PDC id";
      EXPECT_FALSE(f->get(w::Field::uet_pds_psn)) << "a UUD request carries a PSN";
    }
    ASSERT_NO_FATAL_FAILURE(Arrived(1, &c1));
    ASSERT_NO_FATAL_FAILURE(Arrived(2, &c2));
    return;
  }
  // The second message goes once the first completed (its SES response came back in an ACK).
  ASSERT_NO_FATAL_FAILURE(Arrived(1, &c1));
  ASSERT_NO_FATAL_FAILURE(Send(64, 2, &c2));
  const auto type = first->get(w::Field::uet_pds_type);
  ASSERT_TRUE(type == w::pds_type::RUD_REQ || type == w::pds_type::ROD_REQ)
      << "an RDM send without ordering or RUDI criteria: RUD or ROD; PDS type " << type.value_or(~0ull);
  const auto spdcid = first->get(w::Field::uet_pds_spdcid), psn = first->get(w::Field::uet_pds_psn);
  ASSERT_TRUE(spdcid && psn) << "a " << (type == w::pds_type::RUD_REQ ? "RUD" : "ROD") << " request without its PDC's id or PSN";
  // The target's ACK of that request: to the initiator's PDC.
  const auto ack = cap.find(Side::target, [&](const Frame& f) {
    const auto t = f.get(w::Field::uet_pds_type);
    return (t == w::pds_type::ACK || t == w::pds_type::ACK_CC || t == w::pds_type::ACK_CCX) &&
           f.get(w::Field::uet_pds_dpdcid) == spdcid;
  });
  ASSERT_TRUE(ack) << "no ACK from the target to the initiator's PDC " << *spdcid;
  const auto target_pdc = ack->get(w::Field::uet_pds_spdcid);
  ASSERT_TRUE(target_pdc) << "the target's ACK names no PDC of its own";
  // The second message's request, told by its payload, as first sent (not a retransmission).
  const auto second = cap.find(Side::initiator, [&](const Frame& f) {
    return request(f) && f.first_payload_byte() == data_[2][0] && f.get(w::Field::uet_pds_flags_retx) != 1u;
  });
  ASSERT_TRUE(second) << "no request of the second message captured";
  EXPECT_EQ(second->get(w::Field::uet_pds_type), type) << "two messages of one endpoint in one delivery mode";
  EXPECT_EQ(second->get(w::Field::uet_pds_spdcid), spdcid)
      << "the second message to the same target, JobID and traffic class went on another PDC";
  EXPECT_EQ(second->get(w::Field::uet_pds_psn), (*psn + 1) & 0xFFFFFFFFu) << "the next PSN of the PDC";
  if (second->get(w::Field::uet_pds_flags_syn) == 0u) {
    EXPECT_EQ(second->get(w::Field::uet_pds_dpdcid), target_pdc) << "the destination PDC id the target's ACK gave";
  }
  ASSERT_NO_FATAL_FAILURE(Arrived(2, &c2));
}

// 2.2.10.4-l: fi_compare_atomic's compare operand goes to ses.compare_value and its swap operand (buf) to
// ses.swap_value of the CAS extension header (16 bytes each). An operand shorter than 16 bytes fills the
// field as a 128-bit integer would: its bytes at one end, zeros at the other (which end, and the byte
// order, no source gives, so the operands here are byte palindromes and either end passes, the same end
// for both). Checked for FI_CSWAP on FI_UINT64 and FI_MSWAP on FI_UINT32 where the provider reports them
// valid. MSWAP has no CAS header (choice cas-for-mswap): its value then its mask travel as payload. No
// softuet knob moves the operands; the case also checks ses.atomic_opcode, which knob wrong_amo_opcode breaks.
UET_RDM_ONLY(Wire, CompareAndSwapValuesTravelInTheCasHeader, "fi_atomic is not available on DGRAM endpoints (2.2.5.4.4-a)");
TEST_P(Wire, CompareAndSwapValuesTravelInTheCasHeader) {
  covers({"2.2.10.4-l"});
  if (IsSkipped()) return;
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 64, 0, "any", &mr)) << target.error();
  ASSERT_TRUE(cap.start()) << cap.error();
  struct Cas {
    fi_op op;
    fi_datatype dt;
    size_t size;
    uint64_t compare, swap, initial, after;
  };
  // CSWAP: the target holds the compare value, so it swaps. MSWAP: compare is the mask of the bits that
  // take the swap value's (libfabric fi_atomic(3)).
  const Cas cases[] = {
      {FI_CSWAP, FI_UINT64, 8, 0x1122334444332211ull, 0x5566778888776655ull, 0x1122334444332211ull, 0x5566778888776655ull},
      {FI_MSWAP, FI_UINT32, 4, 0xF00F0FF0ull, 0x5AA5A55Aull, 0x12345678ull, (0x5AA5A55Aull & 0xF00F0FF0ull) | (0x12345678ull & ~0xF00F0FF0ull)},
  };
  int checked = 0;
  std::set<uint64_t> psns;  // requests already matched (a retransmission repeats its PSN)
  for (const Cas& c : cases) {
    SCOPED_TRACE(fi_tostr(&c.op, FI_TYPE_ATOMIC_OP));
    size_t count = 0;
    if (fi_compare_atomicvalid(me.ep, c.dt, c.op, &count) != 0 || count < 1) continue;
    if (c.op == FI_MSWAP) rests_on_choice("cas-for-mswap");
    uint8_t initial[8] = {}, compare[8] = {}, swap[8] = {}, old[8] = {};
    std::memcpy(initial, &c.initial, c.size);
    std::memcpy(compare, &c.compare, c.size);
    std::memcpy(swap, &c.swap, c.size);
    ASSERT_TRUE(target.write_mr(1, 0, std::vector<uint8_t>(initial, initial + c.size))) << target.error();
    int ctx = 0;
    ASSERT_EQ(me.post([&] { return fi_compare_atomic(me.ep, swap, 1, nullptr, compare, nullptr, old, nullptr, dest, mr.base,
                                                     mr.key, c.dt, c.op, &ctx); }), 0);
    const Outcome o = me.wait(&ctx);
    ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
    EXPECT_EQ(std::vector<uint8_t>(old, old + c.size), std::vector<uint8_t>(initial, initial + c.size)) << "the old value returned";
    uint8_t after[8] = {};
    std::memcpy(after, &c.after, c.size);
    EXPECT_EQ(target.read_mr(1, 0, c.size), std::vector<uint8_t>(after, after + c.size)) << "the target's value after the operation";
    const bool mswap = c.op == FI_MSWAP;
    const auto f = cap.find(Side::initiator, [&](const Frame& f) {
      return f.get(w::Field::uet_ses_atomic_datatype).has_value() && !psns.count(f.get(w::Field::uet_pds_psn).value_or(~0ull));
    });
    ASSERT_TRUE(f) << "no request with an atomic extension header captured";
    if (const auto psn = f->get(w::Field::uet_pds_psn)) psns.insert(*psn);
    EXPECT_EQ(f->get(w::Field::uet_ses_opcode), w::ses_request_opcode::UET_FETCHING_ATOMIC) << "fi_compare_atomic (Table 2-26)";
    EXPECT_EQ(f->get(w::Field::uet_ses_atomic_opcode), *w::libfabric::amo_opcode_of(c.op)) << "ses.atomic_opcode";
    EXPECT_EQ(f->get(w::Field::uet_ses_atomic_datatype), *w::libfabric::amo_datatype_of(c.dt)) << "ses.atomic_datatype";
    if (mswap) {
      rests_on_choice("cas-for-mswap");  // the verdict rests on it, pass or fail
      EXPECT_FALSE(f->get(w::Field::uet_ses_compare_value)) << "MSWAP carries no compare-and-swap extension " << per_choice("cas-for-mswap");
      std::vector<uint8_t> want(swap, swap + c.size);
      want.insert(want.end(), compare, compare + c.size);
      const std::vector<uint8_t> got(f->bytes.begin() + std::min<size_t>(f->payload_offset, f->bytes.size()),
                                     f->bytes.begin() + std::min<size_t>(f->payload_offset + f->payload_len, f->bytes.size()));
      EXPECT_EQ(got, want) << "MSWAP's payload " << hex(got) << ": want the value then the mask " << hex(want);
      ++checked;
      continue;
    }
    const std::vector<uint8_t> got_compare = f->field_bytes(w::Field::uet_ses_compare_value);
    const std::vector<uint8_t> got_swap = f->field_bytes(w::Field::uet_ses_swap_value);
    ASSERT_EQ(got_compare.size(), 16u);
    ASSERT_EQ(got_swap.size(), 16u);
    // The operand at the start (then zeros) or at the end (after zeros) of the 16-byte field.
    const auto field = [&](const uint8_t* v, bool at_start) {
      std::vector<uint8_t> out(16, 0);
      std::copy(v, v + c.size, out.begin() + (at_start ? 0 : static_cast<long>(16 - c.size)));
      return out;
    };
    const bool at_start = got_compare == field(compare, true);
    EXPECT_TRUE(at_start || got_compare == field(compare, false))
        << "ses.compare_value " << hex(got_compare) << ": want the compare operand " << hex(std::vector<uint8_t>(compare, compare + c.size))
        << " at one end of 16 bytes, zeros elsewhere";
    EXPECT_EQ(got_swap, field(swap, at_start))
        << "ses.swap_value " << hex(got_swap) << ": want the swap operand " << hex(std::vector<uint8_t>(swap, swap + c.size)) << " at the "
        << (at_start ? "start" : "end") << " of 16 bytes (as compare_value), zeros elsewhere";
    ++checked;
  }
  UET_NOT_APPLICABLE_IF(checked == 0, reason::kNotClaimedFeature, "the provider reports neither FI_CSWAP on FI_UINT64 nor FI_MSWAP on FI_UINT32 valid "
                                      "(fi_compare_atomicvalid)");
}

// 2.2.10.4-a (Table 2-39, MISSING: digest I.9): the fields of a request that say where it goes come from
// the destination's UET address and the endpoint's JobID: ses.pid_on_fep is the PIDonFEP of dest_addr,
// ses.resource_index its RI (never 0: RI 0 is reserved for a provider-to-provider control channel,
// digest C.2), and ses.job_id the JobID the endpoint was given (§2.2.4.4; the direct method where both
// sides claim it, so the case knows it; else the JobID is not checked here). Checked on the wire, not through the target's answer, which depends on how the target
// refuses a request it cannot place. Knobs own_address_in_request (the initiator's own PIDonFEP and RI)
// and job_and_ri_zero break it.
TEST_P(Wire, RequestsAddressTheTargetEndpoint) {
  covers({"2.2.10.4-a", "2.2.4.4-b"});
  if (IsSkipped()) return;
  rests_on_choice("uet-address-layout");
  std::optional<uint32_t> job;
  const EndpointSpec spec = SpecWithKnownJob(FI_MSG, 0x0C0C03, &job);
  int ctx = 0;
  std::optional<Frame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(spec, 64, &ctx, &f));
  if (IsSkipped()) return;
  const std::vector<uint8_t> theirs = target.name(), mine = me.name();
  const uint64_t their_pid = address_field(target_manifest(), theirs, AddrField::pid_on_fep, w::k_pid_on_fep_bits);
  const uint64_t their_ri = address_field(target_manifest(), theirs, AddrField::start_index, w::k_resource_index_bits);
  const uint64_t my_pid = address_field(manifest(), mine, AddrField::pid_on_fep, w::k_pid_on_fep_bits);
  const uint64_t my_ri = address_field(manifest(), mine, AddrField::start_index, w::k_resource_index_bits);
  // Where the two addresses agree, the wire cannot tell the target's value from the initiator's own.
  note("addresses", "target PIDonFEP " + std::to_string(their_pid) + " RI " + std::to_string(their_ri) +
                        ", initiator PIDonFEP " + std::to_string(my_pid) + " RI " + std::to_string(my_ri));
  Partial want = {{w::Field::uet_ses_pid_on_fep, their_pid}, {w::Field::uet_ses_resource_index, their_ri}};
  if (job) want.emplace_back(w::Field::uet_ses_job_id, *job);
  EXPECT_TRUE(matches(*f, want)) << "the request does not address the target endpoint: " << differences(*f, want);
  EXPECT_NE(f->get(w::Field::uet_ses_resource_index), 0u) << "resource index 0 is reserved for provider-to-provider control";
  ASSERT_NO_FATAL_FAILURE(Arrived(1, &ctx));
}

// 2.2.10.4-a (Table 2-39: ses.message_id is provider-allocated per message, never 0, which the standard
// header reserves as invalid). A message too long for the small message header (request_length has 14
// bits there) travels in standard headers, each with the message's message_id. RDM only: what a datagram
// (UET_DATAGRAM_SEND) carries in message_id depends on the spec version. Knob message_id_zero breaks it.
UET_RDM_ONLY(Wire, NumberedRequestsCarryANonzeroMessageId, "RDM requests are numbered; a datagram's message_id depends on the spec version");
TEST_P(Wire, NumberedRequestsCarryANonzeroMessageId) {
  covers({"2.2.10.4-a"});
  if (IsSkipped()) return;
  int ctx = 0;
  std::optional<Frame> f;
  ASSERT_NO_FATAL_FAILURE(SendCaptured(Spec(FI_MSG), w::k_small_message_max_length + 1, &ctx, &f));
  if (IsSkipped()) return;
  ASSERT_TRUE(f->get(w::Field::uet_ses_message_id)) << "a " << w::k_small_message_max_length + 1
                                                    << "-byte message's request has no standard header (no message_id)";
  EXPECT_NE(f->get(w::Field::uet_ses_message_id), 0u) << "ses.message_id 0 is invalid in a numbered request";
  ASSERT_NO_FATAL_FAILURE(Arrived(1, &ctx));
}

UET_INSTANTIATE_TWO_SIDED(Wire);

}  // namespace
}  // namespace uet::cases
