// The conformance-case toolkit: what the provider under test claims (its manifest), the kinds one
// case body runs over (gVisor-style), requirement tracing into the JUnit XML, and honest verdicts.
//
// Verdicts: a passing case passes; a failing one fails; a case that does not apply to what the
// provider claims is skipped with "not applicable [<code>]: <why>"; a SHOULD that is not met passes with a
// `warning` property. A provider that claims a feature and lacks it fails ("claimed but unsupported").
#pragma once

#include <gtest/gtest.h>
#include <rdma/fabric.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "address_layout.hpp"
#include "cell_plan.hpp"
#include "not_applicable.hpp"
#include "uet/codec/decoded.hpp"

namespace uet::cases {

// This side's manifest (the cell plan's, cell_plan.hpp). In the initiator: the initiator's; in a target peer:
// the target's. A malformed one ends the run with a message (exit 3), as the plan is read.
const Manifest& manifest();
// The target side's manifest (the same as manifest() in the target peer).
const Manifest& target_manifest();
// An environment overlay as the variables to set and those to unset (null values).
void split_env(const Env& env, std::map<std::string, std::string>* set, std::vector<std::string>* unset);
// How the cases decode frames to `udp_port`: by the spec version the run checks against.
codec::DecodeOptions decode_options(uint16_t udp_port);
// True when both sides claim the profile (what the two FEPs of a pair can use together).
bool pair_claims(const std::string& profile);

// One endpoint type the provider claims: the parameter of per-kind cases.
struct Kind {
  fi_ep_type ep_type;
  std::string name;  // "rdm" / "dgram"
};
std::vector<Kind> claimed_kinds();
// A case of a suite instantiated for every claimed kind that exists only for RDM endpoints (fi_rma on DGRAM,
// UUD ordering): its DGRAM instance is left out of the run as if never instantiated (main adds it to the gtest
// filter's negative part), so the case keeps its name and its RDM instance its id. Write it beside the TEST_P;
// `why` is for the reader.
#define UET_RDM_ONLY(suite, name, why) \
  static const bool uet_rdm_only_##suite##_##name = ::uet::cases::leave_out_instance("*/" #suite "." #name "/dgram")
bool leave_out_instance(const char* pattern);
// `filter` (a --gtest_filter) with every instance left out by UET_RDM_ONLY added to its negative part.
std::string without_left_out_instances(const std::string& filter);
// The RDM kind alone: the parameter of suites that exist only for RDM endpoints.
inline Kind rdm_kind() { return {FI_EP_RDM, "rdm"}; }
inline void PrintTo(const Kind& k, std::ostream* os) { *os << k.name; }

// Names the catalogue statements (spec/catalogue.yaml ids) a case checks; they reach the JUnit XML as
// the `requirements` property, which harness/results/coverage.py reads.
void covers(std::initializer_list<const char*> ids);

// A SHOULD-level check: not met is a warning on the case, not a failure.
void should(bool met, const std::string& what);

// The side whose behaviour the assertions that follow look at: the one blamed when they fail. The
// toolkit sets it as a case reads a result (the initiator's completions, the target's observations,
// a captured frame's sender); a case may set it itself.
enum class Side { initiator, target };
void observing(Side side, const std::string& basis);
// The basis of what the target reports it observed or did (Target::call): a target that reports nothing of
// a request the initiator sent malformed is not blamed for it (verdict.cpp).
inline constexpr const char* kTargetObservedBasis = "api: what the target observed or did";
// Marks the running case's failure as "claimed but unsupported": the provider claims what needs it (`what`,
// the verdict line's claimed_unsupported). The first such mark of a case stands (the cause; later ones are
// its consequences).
void claimed_but_unsupported(const std::string& what);
// A captured frame a failing check rests on, kept as evidence (summary: one line, values by name).
void evidence_frame(Side sender, const std::string& summary);
// A diagnostic of a malformed frame the running case saw, named by its sender, kind, header and field (the
// decoders' names): counted once per frame. True the first time in the case, when the caller reports it
// (evidence_diagnostic); later frames only add to its count.
bool count_diagnostic(Side sender, const std::string& kind, const std::string& header, const std::string& field);
// That diagnostic's evidence: the first frame with it (its number in the case's capture, 0 when it came from
// no capture) and what it held. Its verdict line carries the number of frames with it (count_diagnostic). The
// harness fails the statements it breaks (spec/diagnostic-statements.yaml). Each call stands for one failure its
// report added: the case's other failures are its own checks'.
void evidence_diagnostic(Side sender, const std::string& kind, const std::string& header, const std::string& field,
                         uint32_t offset, uint64_t value, const std::string& summary, uint64_t first_frame);
// A call `side` made that its provider refused with fi_* code `rc`: the cause of the failure that follows it
// (the result's `refused`), unless a call of the same side's protocol succeeds first (no_refusal).
void evidence_refusal(Side side, const std::string& call, long rc);
void no_refusal();
// A capture file the running case made, kept with the case's result, with the UDP port UET goes to on each
// side (0: not known, an `auto` port not learned): its frames are decoded as UET under both.
void evidence_capture(const std::string& path, uint16_t target_port, uint16_t initiator_port);
// That capture file stopped at the cell plan's cap: it holds `kept_bytes`, and `frames_dropped` later frames
// were left out of it.
void evidence_capture_cut(const std::string& path, uint64_t kept_bytes, uint64_t frames_dropped);
// A spec choice (spec/wire.yaml choices) the running case's verdict rests on.
void rests_on_choice(const std::string& choice);
// rests_on_choice, and the words a message gives it: "(choice ID, confidence C)", so that the failure
// text and the report say the same.
std::string per_choice(const std::string& choice);
// A fact the running case computed that the report shows beside its verdict (e.g. the operating profile).
void note(const std::string& key, const std::string& value);
// A size the provider's environment gives the cases (UET_PROVIDER_MSG_RENDEZVOUS_SIZE, ...): nullopt when the
// manifest leaves it out (the provider has no such feature: the case is not applicable); a value that is not
// a number of bytes up to kMaxSettingBytes (no case sends gigabytes because a setting meant "never") is a
// failure naming it, and nullopt.
inline constexpr uint64_t kMaxSettingBytes = uint64_t{64} << 20;
std::optional<uint64_t> provider_size_setting(const char* name);
// provider_size_setting, or `fallback` (the spec's default) where the manifest leaves it out, the verdict then
// resting on `choice`; 0 when the value is out of range (a failure already).
uint64_t provider_size_or_default(const char* name, uint64_t fallback, const char* choice);
// Lower-case hex of `len` bytes, for messages and evidence.
std::string to_hex(const void* data, size_t len);
// The layout of a side's fi_getname (its manifest's address_layout), noted; the running case's verdict rests
// on its spec choice (uet-address-layout) only once the case reads a field the choice places (or finds an
// address too short for the choice's size): having the layout at hand is not reading an address. Every case
// reads addresses through this.
const AddressLayout& layout_of(const Manifest& side);
// A side that did not end cleanly once the case's checks were done (a close that blocked or failed, a target
// process that crashed on its way out): its own finding, the note teardown_<side> naming the side and the
// call, which leaves the verdict of what the case checked standing.
void teardown_finding(Side side, const std::string& what);
// teardown_finding for a target process's wait status (0: it ended cleanly, nothing to say).
void expect_clean_end(int wait_status, const std::string& error = "");
// Writes each case's verdict (JUnit property, and the lines of the cell plan's results file); the binaries' main calls it.
void install_verdict_recorder();

using InfoPtr = std::unique_ptr<fi_info, void (*)(fi_info*)>;
// Hints for the provider under test and this endpoint type (caps FI_MSG, API 2.0 semantics).
InfoPtr hints_for(fi_ep_type ep_type);
// fi_getinfo for the provider under test: nullptr (with the return code) when it has no match.
InfoPtr getinfo(const fi_info* hints, int* rc = nullptr, uint32_t version = FI_VERSION(2, 0),
                const char* node = nullptr, uint64_t flags = 0);

}  // namespace uet::cases

// UET-specific statements do not apply to a provider that does not claim UET (either side of a pair).
#define UET_REQUIRE_UET_PROVIDER()                                                                            \
  UET_NOT_APPLICABLE_IF(!::uet::cases::manifest().uet, ::uet::cases::reason::kNotUetProvider,                \
                        "the provider does not claim UET (manifest " << ::uet::cases::manifest().name << ")"); \
  UET_NOT_APPLICABLE_IF(!::uet::cases::target_manifest().uet, ::uet::cases::reason::kNotUetProvider,         \
                        "the target's provider does not claim UET (manifest "                                \
                            << ::uet::cases::target_manifest().name << ")")
