#include "conformance.hpp"

#include "cell_plan.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace uet::cases {

codec::DecodeOptions decode_options(uint16_t udp_port) {
  codec::DecodeOptions opts;
  opts.udp_port = udp_port;
  opts.spec_version = manifest().checked_spec_version;
  return opts;
}

bool Manifest::claims_profile(const std::string& p) const {
  return std::find(profiles.begin(), profiles.end(), p) != profiles.end();
}

bool Manifest::claims_job_method(const std::string& method) const {
  return std::find(job_id_methods.begin(), job_id_methods.end(), method) != job_id_methods.end();
}

std::string Manifest::profile_needing_job_method(const std::string& method) const {
  if (method == "av" && claims_profile("hpc")) return "HPC's AV JobID method (2.2.4.1-s), which job_id_methods leaves out";
  return "";
}

const Manifest& manifest() { return is_target_process() ? cell_plan().target : cell_plan().initiator; }

const Manifest& target_manifest() { return cell_plan().target; }

void split_env(const Env& env, std::map<std::string, std::string>* set, std::vector<std::string>* unset) {
  for (const auto& [k, v] : env) {
    if (v) (*set)[k] = *v;
    else if (unset) unset->push_back(k);
  }
}

bool pair_claims(const std::string& profile) {
  return manifest().claims_profile(profile) && target_manifest().claims_profile(profile);
}

namespace {
std::vector<std::string>& left_out() {
  static std::vector<std::string> patterns;
  return patterns;
}
}  // namespace

bool leave_out_instance(const char* pattern) {
  left_out().push_back(pattern);
  return true;
}

std::string without_left_out_instances(const std::string& filter) {
  std::string out = filter.empty() ? "*" : filter;
  bool negative = out.find('-') != std::string::npos;
  for (const auto& p : left_out()) {
    out += (negative ? ":" : "-") + p;
    negative = true;
  }
  return out;
}

std::vector<Kind> claimed_kinds() {
  std::vector<Kind> out;
  for (fi_ep_type t : manifest().endpoint_types) out.push_back({t, t == FI_EP_RDM ? "rdm" : "dgram"});
  return out;
}

void should(bool met, const std::string& what) {
  if (!met) {
    ::testing::Test::RecordProperty("warning", "SHOULD not met: " + what);
    std::fprintf(stderr, "warning: SHOULD not met: %s\n", what.c_str());
  }
}

std::optional<uint64_t> provider_size_setting(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 0);
  if (errno || end == v || *end || n == 0 || n > kMaxSettingBytes) {
    ADD_FAILURE() << name << "=" << v << " in the manifest's environment is not a size from 1 to " << kMaxSettingBytes
                  << " bytes: give the provider's real size, or leave it out if the provider has no such feature";
    return std::nullopt;
  }
  return n;
}

uint64_t provider_size_or_default(const char* name, uint64_t fallback, const char* choice) {
  const char* v = std::getenv(name);
  if (!v || !*v) {
    rests_on_choice(choice);
    return fallback;
  }
  return provider_size_setting(name).value_or(0);
}

std::string to_hex(const void* data, size_t len) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < len; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

const AddressLayout& layout_of(const Manifest& side) {
  const AddressLayout& layout = side.address_layout;
  note("address_layout_" + side.name, layout.basis());
  return layout;  // what the verdict rests on is recorded as the case reads through it (AddressLayout::reads)
}

void teardown_finding(Side side, const std::string& what) {
  // A note, not a "warning" property: the verdict of what the case checked stands (a pass stays a pass).
  const char* who = side == Side::initiator ? "initiator" : "target";
  const std::string finding = std::string("teardown: the ") + who + ": " + what;
  note(std::string("teardown_") + who, finding);
  std::fprintf(stderr, "note: %s\n", finding.c_str());
}

void expect_clean_end(int wait_status, const std::string& error) {
  if (wait_status == 0) return;
  teardown_finding(Side::target, "its process did not exit cleanly (wait status " + std::to_string(wait_status) + ")" +
                                     (error.empty() ? "" : ": " + error));
}

InfoPtr hints_for(fi_ep_type ep_type) {
  InfoPtr hints(fi_allocinfo(), fi_freeinfo);
  hints->ep_attr->type = ep_type;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup(manifest().provider.c_str());
  return hints;
}

InfoPtr getinfo(const fi_info* hints, int* rc, uint32_t version, const char* node, uint64_t flags) {
  fi_info* info = nullptr;
  const int r = fi_getinfo(version, node, nullptr, flags, hints, &info);
  if (rc) *rc = r;
  return InfoPtr(r == 0 ? info : nullptr, fi_freeinfo);
}

}  // namespace uet::cases
