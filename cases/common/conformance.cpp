#include "conformance.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace uet::cases {

namespace {

[[noreturn]] void bad_manifest(const std::string& path, const std::string& why) {
  std::fprintf(stderr, "uet cases: manifest %s: %s\n", path.c_str(), why.c_str());
  std::exit(3);
}

Manifest load_manifest() {
  const char* path = std::getenv("UET_CASES_MANIFEST");
  if (!path || !*path) bad_manifest("(none)", "set UET_CASES_MANIFEST to the provider's manifest (cases/manifests/*.yaml)");
  Manifest m;
  m.path = path;
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    bad_manifest(path, e.what());
  }
  try {
    m.provider = doc["provider"].as<std::string>();
    m.uet = doc["uet"].as<bool>();
    for (const auto& p : doc["profiles"]) {
      const std::string name = p.as<std::string>();
      if (name != "ai_base" && name != "ai_full" && name != "hpc")
        bad_manifest(path, "profiles: '" + name + "' is not one of ai_base, ai_full, hpc");
      m.profiles.push_back(name);
    }
    for (const auto& e : doc["endpoint_types"]) {
      const std::string name = e.as<std::string>();
      if (name == "rdm") {
        m.endpoint_types.push_back(FI_EP_RDM);
      } else if (name == "dgram") {
        m.endpoint_types.push_back(FI_EP_DGRAM);
      } else {
        bad_manifest(path, "endpoint_types: '" + name + "' is not rdm or dgram");
      }
    }
  } catch (const YAML::Exception& e) {
    bad_manifest(path, std::string("needs provider, uet, profiles, endpoint_types: ") + e.what());
  }
  if (m.uet && m.profiles.empty()) bad_manifest(path, "a UET provider claims at least one profile");
  return m;
}

}  // namespace

bool Manifest::claims_profile(const std::string& p) const {
  return std::find(profiles.begin(), profiles.end(), p) != profiles.end();
}

const Manifest& manifest() {
  static const Manifest m = load_manifest();
  return m;
}

std::vector<Kind> claimed_kinds() {
  std::vector<Kind> out;
  for (fi_ep_type t : manifest().endpoint_types) out.push_back({t, t == FI_EP_RDM ? "rdm" : "dgram"});
  return out;
}

std::vector<std::string> manifest_list(const std::string& key) {
  std::vector<std::string> out;
  try {
    const YAML::Node doc = YAML::LoadFile(manifest().path);
    if (doc[key] && doc[key].IsSequence())
      for (const auto& v : doc[key]) out.push_back(v.as<std::string>());
  } catch (const YAML::Exception& e) {
    bad_manifest(manifest().path, key + ": " + e.what());
  }
  return out;
}

void covers(std::initializer_list<const char*> ids) {
  std::string joined;
  for (const char* id : ids) joined += (joined.empty() ? "" : ",") + std::string(id);
  ::testing::Test::RecordProperty("requirements", joined);
}

void should(bool met, const std::string& what) {
  if (!met) {
    ::testing::Test::RecordProperty("warning", "SHOULD not met: " + what);
    std::fprintf(stderr, "warning: SHOULD not met: %s\n", what.c_str());
  }
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
