// The fixture of two-process cases: the initiator (this process) and a target peer, each with one
// endpoint of the kind under test, the target's address in the initiator's AV. A capability set the
// provider does not offer is "not applicable" for a non-UET provider and a failure for a UET provider
// whose manifest claims the profile that requires it ("claimed but unsupported").
#pragma once

#include <gtest/gtest.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "address_crossing.hpp"
#include "capture.hpp"
#include "conformance.hpp"
#include "endpoint.hpp"
#include "job_id_methods.hpp"
#include "target.hpp"
#include "uet/wire/libfabric_gen.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {

// True when a side must offer fi_tagged: a non-UET provider (generic semantics) is asked anyway; a UET
// provider must when it claims AI Full or HPC (2.2.5.4.2-b).
inline bool offers_tagged(const Manifest& m) { return !m.uet || m.claims_profile("ai_full") || m.claims_profile("hpc"); }
// Both sides of the pair must offer it.
inline bool tagged_required() { return offers_tagged(manifest()) && offers_tagged(target_manifest()); }

// The FEP-capabilities byte a side's claimed profiles give (what its address must advertise).
inline uint8_t claimed_caps(const Manifest& m) {
  uint8_t caps = 0;
  if (m.claims_profile("ai_base")) caps |= static_cast<uint8_t>(1u << uet::wire::k_cap_ai_base);
  if (m.claims_profile("ai_full")) caps |= static_cast<uint8_t>(1u << uet::wire::k_cap_ai_full);
  if (m.claims_profile("hpc")) caps |= static_cast<uint8_t>(1u << uet::wire::k_cap_hpc);
  return caps;
}

// A field of a side's address, read through the layout that side's manifest gives (0 where the blob is too
// short for it), masked to `bits`.
inline uint64_t address_field(const Manifest& side, const std::vector<uint8_t>& name, AddrField field, uint64_t bits) {
  return layout_of(side).get(name, field).value_or(0) & ((uint64_t{1} << bits) - 1);
}

// A pair has a case only where both sides claim what it needs; the side that lacks it is named.
inline bool claims_type(const Manifest& side, fi_ep_type type) {
  return std::find(side.endpoint_types.begin(), side.endpoint_types.end(), type) != side.endpoint_types.end();
}
inline bool target_claims_type(fi_ep_type type) { return claims_type(target_manifest(), type); }

#define UET_REQUIRE_TARGET_CLAIMS_KIND()                                                                       \
  UET_NOT_APPLICABLE_IF(!::uet::cases::target_claims_type(GetParam().ep_type),                                \
                        ::uet::cases::reason::kNotClaimedEndpointType,                                         \
                        "the target, " << ::uet::cases::target_manifest().name << ", claims no "            \
                                       << GetParam().name << " endpoints")
// The initiator's claim matters too where a suite is instantiated for a kind whatever it claims (RDM-only suites).
#define UET_REQUIRE_PAIR_CLAIMS_KIND()                                                                         \
  UET_NOT_APPLICABLE_IF(!::uet::cases::claims_type(::uet::cases::manifest(), GetParam().ep_type),              \
                        ::uet::cases::reason::kNotClaimedEndpointType,                                         \
                        "the initiator, " << ::uet::cases::manifest().name << ", claims no " << GetParam().name \
                                          << " endpoints");                                                    \
  UET_REQUIRE_TARGET_CLAIMS_KIND()

// The target's fi_av_insert of `me`'s address (for its sends and directed receives) into *out, FI_ADDR_NOTAVAIL
// when refused, for the caller to assert on; not applicable (IsSkipped) when the address it refused is one
// Table 2-10's version 0 does not describe.
inline void target_inserts_me(Target& target, Endpoint& me, fi_addr_t* out) {
  *out = FI_ADDR_NOTAVAIL;
  UET_REQUIRE_ADDRESSES_CROSS(Side::initiator);
  *out = target.insert(me.name());
  if (*out == FI_ADDR_NOTAVAIL) judge_refused_address(Side::initiator, manifest(), me.name(), target_manifest());
  UET_REQUIRE_ADDRESSES_CROSS(Side::initiator);
}

// How long a case waits for a message the target must get (the initiator's completion came first).
inline constexpr int kArrivalMs = 3000;

// A failed operation's error entry: err is the libfabric code of SES return code `rc`, prov_errno the
// code itself (spec 2.2.5.6).
inline void expect_error_entry(const Outcome& o, uint64_t rc) {
  ASSERT_EQ(o.state, Outcome::failed) << "the operation did not fail";
  EXPECT_EQ(o.error.err, uet::wire::libfabric::fi_errno_of_ses_rc(rc)) << "err (choice " << uet::wire::libfabric::ses_rc_errno_choice() << ")";
  EXPECT_EQ(static_cast<uint64_t>(o.error.prov_errno), rc) << "prov_errno is the SES return code";
}

// Ends a pair once its checks are done. The initiator closes first: a provider may hold its target's close
// until its initiator's has gone. What goes wrong here is a finding of its own (teardown_finding); the
// verdict of what the case checked stands.
inline void end_both(Endpoint& initiator, Target& target, int close_ms = 10000) {
  if (!initiator.close_within(close_ms)) {
    teardown_finding(Side::initiator, "its fi_close calls (endpoint, CQ, AV, domain, fabric) did not return within " +
                                          std::to_string(close_ms / 1000) + " s");
  }
  expect_clean_end(target.finish(), target.error());
}

class TwoSided : public ::testing::TestWithParam<Kind> {
 protected:
  // The instances of a pair's cases are made from the initiator's claims: one whose kind the target does not
  // claim is not applicable before a fixture's SetUp or body runs it, whatever path it takes to the target.
  TwoSided() { RequireTargetClaimsKind(); }
  // Opens both sides (call through UET_OPEN_BOTH). `target_spec` defaults to `spec`.
  // `target_unset` and `before_open` as Target::start takes them.
  void OpenBoth(const EndpointSpec& spec, const EndpointSpec* target_spec = nullptr,
                const std::map<std::string, std::string>& target_env = {},
                const std::vector<std::string>& target_unset = {},
                const std::function<bool(pid_t, std::string*)>& before_open = {}) {
    const Manifest& mine = manifest();
    const Manifest& theirs = target_manifest();
    RequireCommonWireProtocol();
    if (IsSkipped()) return;
    UET_REQUIRE_PAIR_CLAIMS_KIND();
    if (!job_ids_may_differ_) {
      UET_REQUIRE_SHARED_JOB_IDS(mine, theirs);
    }
    UET_REQUIRE_ADDRESSES_CROSS(Side::target);  // an earlier case found they do not: no target is started for it
    // An endpoint without an auth key (JobMethod::indirect) has its provider's JobID, whatever the manifest
    // claims: a case that needs the indirect method's JobID asks for it itself (job_id_methods.hpp).
    const JobMethod their_method = (target_spec ? *target_spec : spec).method;
    if (spec.method != JobMethod::indirect) {
      UET_REQUIRE_JOB_METHOD(mine, job_method_name(spec.method), "the initiator");
    }
    if (their_method != JobMethod::indirect) {
      UET_REQUIRE_JOB_METHOD(theirs, job_method_name(their_method), "the target");
    }
    const int rc = me.open(spec);
    if (rc == -FI_ENODATA && !manifest().uet) {
      UET_NOT_APPLICABLE(reason::kNonUetProviderLacks, manifest().provider << " offers no " << GetParam().name
                   << " endpoint with caps " << fi_tostr(&spec.caps, FI_TYPE_CAPS));
    }
    if (rc != 0 && manifest().uet) claimed_but_unsupported(std::string("an endpoint with caps ") + fi_tostr(&spec.caps, FI_TYPE_CAPS));
    ASSERT_EQ(rc, 0) << fi_refused(me.failed, rc) << " (caps " << fi_tostr(&spec.caps, FI_TYPE_CAPS) << ")";
    observing(Side::target, "api: the target's endpoint");
    ASSERT_TRUE(target.start(target_spec ? *target_spec : spec, target_env, target_unset, before_open)) << target.error();
    const std::vector<uint8_t> their_name = target.name();
    if (theirs.uet) {
      ASSERT_EQ(layout_of(theirs).misfit(their_name.size()), "")
          << "the target's fi_getname does not fit its layout: " << to_hex(their_name.data(), their_name.size());
    }
    pair_addresses(me.name(), their_name);
    const std::vector<uint8_t> to_insert = target.name_for_initiator(me.name());
    if (to_insert.empty()) remember_uncrossable(Side::target, uncrossable_reason(theirs, mine, target.error()));
    UET_REQUIRE_ADDRESSES_CROSS(Side::target);
    // Blame follows the call: from here on, what the initiator's own calls return is the initiator's.
    observing(Side::initiator, "api: the initiator's fi_av_insert of the target's address");
    dest = me.insert(to_insert);
    if (dest == FI_ADDR_NOTAVAIL) judge_refused_address(Side::target, theirs, their_name, mine);
    UET_REQUIRE_ADDRESSES_CROSS(Side::target);
    ASSERT_NE(dest, FI_ADDR_NOTAVAIL) << "the initiator's fi_av_insert refused the target's address "
                                      << to_hex(to_insert.data(), to_insert.size())
                                      << (to_insert == their_name ? "" : " (translated from its own "
                                          + to_hex(their_name.data(), their_name.size()) + ")");
    observing(Side::initiator, "api: the initiator's calls");
  }
  void TearDown() override {
    end_both(me, target);
  }
  EndpointSpec Spec(uint64_t caps) const {
    EndpointSpec s;
    s.type = GetParam().ep_type;
    s.caps = caps;
    return s;
  }
  // Spec(caps) with JobID `job` given by the direct method when both sides claim it, so that a wire check
  // knows the JobID a request must carry; else the indirect method and nullopt in *known (the check looks at
  // what it can without it, and says so): a check is not gated by a capability it does not test.
  EndpointSpec SpecWithKnownJob(uint64_t caps, uint32_t job, std::optional<uint32_t>* known) const {
    EndpointSpec s = Spec(caps);
    if (manifest().claims_job_method("direct") && target_manifest().claims_job_method("direct")) {
      s.method = JobMethod::direct;
      s.job = job;
      *known = job;
    } else {
      *known = std::nullopt;
      note("JobID", "not checked: a side claims no direct JobID method (job_id_methods), so the case cannot "
                    "give both endpoints a JobID it knows");
    }
    return s;
  }

  // For directed receives: inserts into the target's AV this initiator's address and one of another
  // initiator (the same UET address with another initiator ID and PIDonFEP), which must differ.
  void InsertOtherInitiatorAndMe(fi_addr_t* src_other, fi_addr_t* src_me) {
    std::vector<uint8_t> other = me.name();
    const AddressLayout& layout = layout_of(manifest());
    ASSERT_EQ(layout.misfit(other.size()), "") << "the initiator's fi_getname";
    ASSERT_TRUE(layout.set(other, AddrField::initiator_id, *layout.get(other, AddrField::initiator_id) ^ 1));
    ASSERT_TRUE(layout.set(other, AddrField::pid_on_fep, *layout.get(other, AddrField::pid_on_fep) ^ 1));
    *src_other = target.insert(other);
    TargetInsertsMe(src_me);
    if (IsSkipped()) return;
    ASSERT_NE(*src_other, FI_ADDR_NOTAVAIL) << target.error();
    ASSERT_NE(*src_me, FI_ADDR_NOTAVAIL) << target.error();
    ASSERT_NE(*src_other, *src_me);
  }

  void TargetInsertsMe(fi_addr_t* out) { target_inserts_me(target, me, out); }

  Target target;  // declared first: closed last, after the initiator's endpoint
  Endpoint me;
  fi_addr_t dest = FI_ADDR_NOTAVAIL;
  // A case that looks only at what one side sends opens a pair whose sides share no JobID (job_id_methods.hpp).
  bool job_ids_may_differ_ = false;

 private:
  // Where the initiator does not claim the kind either (a suite instantiated for RDM whatever it claims), the
  // fixture says why first (not UET, not claimed), as it always has.
  void RequireTargetClaimsKind() {
    RequireCommonWireProtocol();
    if (IsSkipped()) return;
    if (claims_type(manifest(), GetParam().ep_type)) {
      UET_REQUIRE_TARGET_CLAIMS_KIND();
    }
  }
  // Two providers talk only over a protocol both speak: UET, or the same non-UET provider. Said before what
  // either side claims: no endpoint type of one can meet the other's without it.
  void RequireCommonWireProtocol() {
    const Manifest& mine = manifest();
    const Manifest& theirs = target_manifest();
    UET_NOT_APPLICABLE_IF(mine.uet != theirs.uet, reason::kNoCommonWireProtocol, "no common wire protocol: " << mine.name << " ("
                              << (mine.uet ? "UET" : mine.provider) << ") initiates, " << theirs.name << " ("
                              << (theirs.uet ? "UET" : theirs.provider) << ") is the target");
    UET_NOT_APPLICABLE_IF(!mine.uet && mine.provider != theirs.provider, reason::kNoCommonWireProtocol,
                          "no common wire protocol: two non-UET providers, " << mine.provider << " and " << theirs.provider);
  }
};

}  // namespace uet::cases

#define UET_OPEN_BOTH(...)                       \
  ASSERT_NO_FATAL_FAILURE(OpenBoth(__VA_ARGS__)); \
  if (IsSkipped()) return

// A suite whose every case is about RDM (fi_rma, fi_atomic, fi_tagged, RUD and the authorization of requests
// that are answered) has no DGRAM instance: that combination exists for no provider. Its RDM instance is made
// whatever the initiator claims, so a side that claims no RDM reads as not claimed rather than vanishing.
#define UET_INSTANTIATE_TWO_SIDED_RDM(suite)                                                                \
  INSTANTIATE_TEST_SUITE_P(Claimed, suite, ::testing::Values(::uet::cases::rdm_kind()), \
                           [](const auto& info) { return info.param.name; })

#define UET_INSTANTIATE_TWO_SIDED(suite)                                                                  \
  INSTANTIATE_TEST_SUITE_P(Claimed, suite, ::testing::ValuesIn(::uet::cases::claimed_kinds()), \
                           [](const auto& info) { return info.param.name; })
