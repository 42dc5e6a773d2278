#include "conformance.hpp"

#include "cell_plan.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace uet::cases {

namespace {

[[noreturn]] void bad_manifest(const std::string& path, const std::string& why) {
  std::fprintf(stderr, "uet cases: manifest %s: %s\n", path.c_str(), why.c_str());
  std::exit(3);
}

Env env_of(const nlohmann::json& j) {
  Env out;
  if (j.is_object())
    for (const auto& [k, v] : j.items()) out[k] = v.is_null() ? std::nullopt : std::optional<std::string>(v.get<std::string>());
  return out;
}

// The resolved record of harness/inputs/manifest.py; YAML is refused here so placeholders and `extends` have
// one reader (the Python one).
Manifest load_manifest(const std::string& p, const char* side) {
  if (p.empty()) bad_manifest("(none)", std::string("the cell plan names no ") + side + " manifest");
  if (p.size() > 5 && (p.ends_with(".yaml") || p.ends_with(".yml")))
    bad_manifest(p, "is YAML; the cases read the resolved record: python3 -m harness.inputs.manifest resolve " + p +
                        " -o side.json, and the cell plan names side.json");
  std::ifstream in(p);
  if (!in) bad_manifest(p, std::string("cannot read: ") + std::strerror(errno));
  Manifest m;
  m.path = p;
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    m.name = doc.at("name").get<std::string>();
    m.provider = doc.at("provider").get<std::string>();
    m.uet = doc.at("uet").get<bool>();
    m.profiles = doc.at("profiles").get<std::vector<std::string>>();
    for (const auto& e : doc.at("endpoint_types")) {
      const std::string name = e.get<std::string>();
      if (name != "rdm" && name != "dgram") bad_manifest(p, "endpoint_types: '" + name + "' is not rdm or dgram");
      m.endpoint_types.push_back(name == "rdm" ? FI_EP_RDM : FI_EP_DGRAM);
    }
    m.environment = env_of(doc.value("environment", nlohmann::json::object()));
    if (doc.contains("wire") && doc["wire"].is_object()) {
      m.wire_interface = doc["wire"].at("interface").get<std::string>();
      const auto& port = doc["wire"].at("udp_port");
      m.wire_udp_port_auto = port.is_string() && port.get<std::string>() == "auto";
      if (!m.wire_udp_port_auto) m.wire_udp_port = port.get<uint16_t>();
      m.wire_udp_port_chosen_by = doc["wire"].value("udp_port_chosen_by", "suite");
    }
    m.indirect_job_id_environment = env_of(doc.value("indirect_job_id_environment", nlohmann::json::object()));
    if (doc.contains("indirect_job_id") && !doc["indirect_job_id"].is_null())
      m.indirect_job_id = doc["indirect_job_id"].get<uint32_t>();
    m.fallback_job_id_environment = env_of(doc.value("fallback_job_id_environment", nlohmann::json::object()));
    m.predefined_service_names = doc.value("predefined_service_names", std::vector<std::string>{});
    m.address_layout = address_layout_from_json(doc.at("address_layout"));
    m.job_id_methods = doc.value("job_id_methods", std::vector<std::string>{"indirect", "direct", "av"});
    if (doc.contains("privileged_entity") && doc["privileged_entity"].is_object()) {
      const auto& pe = doc["privileged_entity"];
      m.privileged_entity.declared = true;
      m.privileged_entity.environment = env_of(pe.value("environment", nlohmann::json::object()));
      m.privileged_entity.grant = pe.at("grant").get<std::vector<std::string>>();
      m.privileged_entity.revoke = pe.at("revoke").get<std::vector<std::string>>();
      if (pe.contains("trace") && pe["trace"].is_string()) m.privileged_entity.trace = pe["trace"].get<std::string>();
      if (pe.contains("job") && pe["job"].is_object()) {
        m.privileged_entity.job_grant = pe["job"].at("grant").get<std::vector<std::string>>();
        m.privileged_entity.job_end = pe["job"].at("end").get<std::vector<std::string>>();
      }
      if (pe.contains("allocation_grant") && pe["allocation_grant"].is_array())
        m.privileged_entity.allocation_grant = pe["allocation_grant"].get<std::vector<std::string>>();
      if (pe.contains("security") && pe["security"].is_object()) {
        m.privileged_entity.security_bind = pe["security"].at("bind").get<std::vector<std::string>>();
        m.privileged_entity.security_key_update = pe["security"].at("key_update").get<std::vector<std::string>>();
      }
      if (pe.contains("impostor") && pe["impostor"].is_object()) {
        const auto& im = pe["impostor"];
        m.privileged_entity.has_impostor = true;
        m.privileged_entity.impostor_start = im.at("start").get<std::vector<std::string>>();
        m.privileged_entity.impostor_grant = im.at("grant").get<std::vector<std::string>>();
        m.privileged_entity.impostor_environment = env_of(im.value("environment", nlohmann::json::object()));
        m.privileged_entity.impostor_user = im.value("user", "");
      }
    }
    if (doc.contains("checked_spec_version")) {
      const std::string v = doc["checked_spec_version"].get<std::string>();
      const auto version = wire::spec_version_by_name(v.c_str());
      if (!version) bad_manifest(p, "checked_spec_version: '" + v + "' is not a spec version of spec/wire.yaml");
      m.checked_spec_version = *version;
    }
  } catch (const std::exception& e) {  // nlohmann's errors, and an address layout's unknown field
    bad_manifest(p, std::string("not a resolved manifest: ") + e.what());
  }
  return m;
}

}  // namespace

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

const Manifest& manifest() {
  static const Manifest m = is_target_process() ? load_manifest(cell_plan().target_manifest, "target")
                                                 : load_manifest(cell_plan().initiator_manifest, "initiator");
  return m;
}

const Manifest& target_manifest() {
  static const Manifest m = is_target_process() ? manifest() : load_manifest(cell_plan().target_manifest, "target");
  return m;
}

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
