// Configuration from the environment (fep/DESIGN.md "Configuration"; digest A.5 for UET_PROVIDER_*).
// Read at every fi_getinfo/fi_domain, so a test can change it between calls of one process.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "softuet.hpp"

namespace softuet {

namespace {

std::optional<uint64_t> parse_uint(const char* text, uint64_t max) {
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (errno || *end || v > max || text[0] == '-') return std::nullopt;
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

}  // namespace

std::optional<Config> load_config(std::string* error) {
  Config cfg;
  const char* profiles = std::getenv("SOFTUET_PROFILES");
  cfg.profiles = profiles ? profiles : "ai_base,ai_full,hpc";
  for (const std::string& p : split(cfg.profiles, ',')) {
    if (p == "ai_base") cfg.fep_caps |= kCapAiBase;
    else if (p == "ai_full") cfg.fep_caps |= kCapAiFull;
    else if (p == "hpc") cfg.fep_caps |= kCapHpc;
    else {
      *error = "SOFTUET_PROFILES='" + cfg.profiles + "': unknown profile '" + p +
               "' (expected a non-empty subset of ai_base,ai_full,hpc)";
      return std::nullopt;
    }
  }
  if (!cfg.fep_caps) {
    *error = "SOFTUET_PROFILES='" + cfg.profiles + "': no profile (expected a non-empty subset of ai_base,ai_full,hpc)";
    return std::nullopt;
  }
  // softuet takes the optimized non-matching header (for RMA and atomics to OPTIMIZED keys) whatever its
  // profiles, and says so in its address (digest C.4).
  cfg.fep_caps |= kCapOptimizedHeader;

  cfg.udp_port = static_cast<uint16_t>(uet::wire::k_udp_port);
  if (const char* port = std::getenv("SOFTUET_UDP_PORT"); port && std::string(port) != "auto") {
    auto v = parse_uint(port, 65535);  // 0 and auto: the kernel picks (personality.cpp)
    if (!v || (*v == 0 && std::string(port) != "0")) {
      *error = std::string("SOFTUET_UDP_PORT='") + port + "': not a UDP port (1..65535, or auto: the kernel picks one)";
      return std::nullopt;
    }
    cfg.udp_port = static_cast<uint16_t>(*v);
  }

  // The JobID is 24 bits on the wire (constants.job_id_bits); 0 is not a JobID a launcher hands out.
  if (const char* job = std::getenv("SOFTUET_JOB_ID")) {
    auto v = parse_uint(job, (uint64_t{1} << uet::wire::k_job_id_bits) - 1);
    if (!v || *v == 0) {
      *error = std::string("SOFTUET_JOB_ID='") + job + "': not a JobID (1..2^24-1)";
      return std::nullopt;
    }
    cfg.job_id = static_cast<uint32_t>(*v);
  }

  if (const char* sock = std::getenv("UET_ENTITY_SOCKET")) cfg.entity_socket = sock;
  if (const char* service = std::getenv("SOFTUET_ENTITY_SERVICE")) {
    if (!*service || std::strlen(service) > uet::wire::k_service_name_max) {
      *error = std::string("SOFTUET_ENTITY_SERVICE='") + service + "': not a service name (1.." +
               std::to_string(uet::wire::k_service_name_max) + " bytes)";
      return std::nullopt;
    }
    cfg.entity_service = service;
  }

  // The default data traffic class as a DSCP (digest A.5, G.3).
  if (const char* tc = std::getenv("UET_PROVIDER_DEF_DATA_TC")) {
    auto v = parse_uint(tc, 63);
    if (!v) {
      *error = std::string("UET_PROVIDER_DEF_DATA_TC='") + tc + "': not a DSCP (0..63)";
      return std::nullopt;
    }
    cfg.def_data_dscp = static_cast<uint8_t>(*v);
  }

  // The path MTU packets are sized for, when the interface's is not the path's (a route through a smaller
  // link, a tunnel).
  if (const char* mtu = std::getenv("SOFTUET_MTU")) {
    auto v = parse_uint(mtu, kMaxLinkMtu);
    if (!v || *v < kMinLinkMtu) {
      *error = std::string("SOFTUET_MTU='") + mtu + "': not an MTU (" + std::to_string(kMinLinkMtu) + ".." +
               std::to_string(kMaxLinkMtu) + ")";
      return std::nullopt;
    }
    cfg.mtu = static_cast<uint32_t>(*v);
  }

  // Large messages (digest A.5): the rendezvous thresholds (choice rendezvous-size-default) are message
  // sizes (request_length is 32 bits); the eager part of a rendezvous travels in its one request packet, so
  // it is at most a payload MTU (choice max-eager-size-default): the largest one here, and on a smaller
  // path the domain carries no more than that path's payload MTU (rendezvous.cpp).
  struct SizeVar {
    const char* name;
    uint64_t Config::*field;
    uint64_t fallback, min, max;
  };
  const SizeVar sizes[] = {
      {"UET_PROVIDER_MSG_RENDEZVOUS_SIZE", &Config::msg_rendezvous_size, uet::wire::k_rendezvous_size_default, 1, 0xFFFFFFFFu},
      {"UET_PROVIDER_TAG_RENDEZVOUS_SIZE", &Config::tag_rendezvous_size, uet::wire::k_rendezvous_size_default, 1, 0xFFFFFFFFu},
      {"UET_PROVIDER_MAX_EAGER_SIZE", &Config::max_eager_size, uet::wire::k_max_eager_size_default, 0, kMaxPayloadMtu},
  };
  for (const SizeVar& v : sizes) {
    cfg.*v.field = v.fallback;
    const char* text = std::getenv(v.name);
    if (!text) continue;
    const auto n = parse_uint(text, v.max);
    if (!n || *n < v.min) {
      *error = std::string(v.name) + "='" + text + "': not a size in bytes (" + std::to_string(v.min) + ".." +
               std::to_string(v.max) + ")";
      return std::nullopt;
    }
    cfg.*v.field = *n;
  }

  if (const char* fb = std::getenv("SOFTUET_FALLBACK_JOB_ID")) {
    const std::string v = fb;
    if (v != "0" && v != "1") {
      *error = "SOFTUET_FALLBACK_JOB_ID='" + v + "': expected 0 or 1";
      return std::nullopt;
    }
    cfg.fallback_job_id = v == "1";
  }

  if (const char* gso = std::getenv("SOFTUET_UDP_GSO")) {
    const std::string v = gso;
    if (v != "0" && v != "1") {
      *error = "SOFTUET_UDP_GSO='" + v + "': expected 0 or 1";
      return std::nullopt;
    }
    cfg.udp_gso = v == "1";
  }

  if (const char* init = std::getenv("UET_PROVIDER_INITIATOR_ID")) {
    auto v = parse_uint(init, 0xFFFFFFFFu);
    if (!v) {
      *error = std::string("UET_PROVIDER_INITIATOR_ID='") + init + "': not a 32-bit initiator ID";
      return std::nullopt;
    }
    cfg.initiator_id = static_cast<uint32_t>(*v);
  }

  // Fault knobs (fep/src/faults.def): an unknown name is refused, never ignored, so a typo cannot make
  // a mutation run pass for the wrong reason.
  if (const char* faults = std::getenv("SOFTUET_FAULTS")) {
    for (const std::string& f : split(faults, ',')) {
      if (f.empty()) continue;
      const std::optional<Fault> k = fault_by_name(f);
      if (!k) {
        std::string known;
        for (const FaultInfo& i : kFaults) known += (known.empty() ? "" : ",") + std::string(i.name);
        *error = std::string("SOFTUET_FAULTS: unknown fault '") + f + "' (known: " + known + ")";
        return std::nullopt;
      }
      cfg.faults |= fault_bit(*k);
    }
  }

  if (const char* version = std::getenv("SOFTUET_SPEC_VERSION")) {
    const auto v = uet::wire::spec_version_by_name(version);
    if (!v) {
      std::string known;
      for (size_t i = 0; i < uet::wire::kSpecVersionCount; ++i)
        known += (known.empty() ? "" : ", ") + std::string(uet::wire::spec_version_name(static_cast<uet::wire::SpecVersion>(i)));
      *error = std::string("SOFTUET_SPEC_VERSION='") + version + "': not a spec version softuet knows (" + known + ")";
      return std::nullopt;
    }
    cfg.spec_version = *v;
  }

  if (const char* addr = std::getenv("SOFTUET_ADDR")) cfg.addr = addr;
  if (!load_personality(cfg, error)) return std::nullopt;
  return cfg;
}

}  // namespace softuet
