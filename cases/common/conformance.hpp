// The conformance-case toolkit: what the provider under test claims (its manifest), the kinds one
// case body runs over (gVisor-style), requirement tracing into the JUnit XML, and honest verdicts.
//
// Verdicts: a passing case passes; a failing one fails; a case that does not apply to what the
// provider claims is skipped with "not applicable: <why>"; a SHOULD that is not met passes with a
// `warning` property. A provider that claims a feature and lacks it fails ("claimed but unsupported").
#pragma once

#include <gtest/gtest.h>
#include <rdma/fabric.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace uet::cases {

struct Manifest {
  std::string path;
  std::string provider;
  bool uet = false;
  std::vector<std::string> profiles;      // ai_base, ai_full, hpc
  std::vector<fi_ep_type> endpoint_types;
  bool claims_profile(const std::string& p) const;
};

// The manifest named by UET_CASES_MANIFEST; a missing or malformed manifest ends the run with a message.
const Manifest& manifest();

// One endpoint type the provider claims: the parameter of per-kind cases.
struct Kind {
  fi_ep_type ep_type;
  std::string name;  // "rdm" / "dgram"
};
std::vector<Kind> claimed_kinds();
inline void PrintTo(const Kind& k, std::ostream* os) { *os << k.name; }

// Names the catalogue statements (spec/catalogue.yaml ids) a case checks; they reach the JUnit XML as
// the `requirements` property, which harness/coverage.py reads.
void covers(std::initializer_list<const char*> ids);

// A top-level list of strings in the manifest (e.g. `predefined_service_names`); empty if absent.
std::vector<std::string> manifest_list(const std::string& key);

// A SHOULD-level check: not met is a warning on the case, not a failure.
void should(bool met, const std::string& what);

using InfoPtr = std::unique_ptr<fi_info, void (*)(fi_info*)>;
// Hints for the provider under test and this endpoint type (caps FI_MSG, API 2.0 semantics).
InfoPtr hints_for(fi_ep_type ep_type);
// fi_getinfo for the provider under test: nullptr (with the return code) when it has no match.
InfoPtr getinfo(const fi_info* hints, int* rc = nullptr, uint32_t version = FI_VERSION(2, 0),
                const char* node = nullptr, uint64_t flags = 0);

}  // namespace uet::cases

// Skip a case whose statement does not apply to what the provider claims, saying why.
#define UET_NOT_APPLICABLE_IF(condition, why) \
  if (condition) GTEST_SKIP() << "not applicable: " << why << " (" #condition ")"

// UET-specific statements do not apply to a provider that does not claim UET.
#define UET_REQUIRE_UET_PROVIDER()                                                                     \
  UET_NOT_APPLICABLE_IF(!::uet::cases::manifest().uet, "the provider does not claim UET (manifest " \
                                                           << ::uet::cases::manifest().path << ")")
