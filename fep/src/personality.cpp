// Personalities: settings that change how softuet looks to an application and to the suite (its port, the
// layout of its addresses, how its close behaves, what it offers), never which rule it breaks (that is the
// fault knobs' job, faults.def). They let the suite run against "a provider that is not softuet-as-usual";
// each has an example manifest in cases/manifests/personalities/ (fep/README.md "Personalities").
#include <cstdlib>
#include <sstream>

#include "softuet.hpp"

namespace softuet {

namespace {

// A comma-separated set of names, each from `known` with its bit; an unknown or empty set is an error
// that lists what the variable takes.
struct Name {
  const char* name;
  uint8_t bit;
};
template <size_t N>
std::optional<uint8_t> name_set(const char* var, const std::string& text, const Name (&known)[N], std::string* error) {
  std::string all;
  for (const Name& k : known) all += (all.empty() ? "" : ",") + std::string(k.name);
  uint8_t bits = 0;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    bool found = false;
    for (const Name& k : known) {
      if (item != k.name) continue;
      bits |= k.bit;
      found = true;
    }
    if (!found) {
      *error = std::string(var) + "='" + text + "': unknown value '" + item + "' (expected a non-empty subset of " + all + ")";
      return std::nullopt;
    }
  }
  if (!bits) *error = std::string(var) + "='" + text + "': empty (expected a non-empty subset of " + all + ")";
  return bits ? std::optional<uint8_t>(bits) : std::nullopt;
}

// One of two words; the first is the default.
std::optional<bool> choice(const char* var, const char* off, const char* on, std::string* error) {
  const char* text = std::getenv(var);
  if (!text || std::string(text) == off) return false;
  if (std::string(text) == on) return true;
  *error = std::string(var) + "='" + text + "': expected " + off + " or " + on;
  return std::nullopt;
}

}  // namespace

bool load_personality(Config& cfg, std::string* error) {
  // The port: SOFTUET_UDP_PORT=auto (or 0, what a socket API means by "any") binds what the kernel gives;
  // config.cpp reads the numbers.
  if (const char* port = std::getenv("SOFTUET_UDP_PORT"); port && (std::string(port) == "auto" || std::string(port) == "0")) {
    cfg.udp_port_auto = true;
    cfg.udp_port = 0;
  }

  if (const char* layout = std::getenv("SOFTUET_ADDR_LAYOUT")) {
    const std::optional<AddrLayout> l = addr_layout_by_name(layout);
    if (!l) {
      *error = std::string("SOFTUET_ADDR_LAYOUT='") + layout + "': expected " + addr_layout_name(AddrLayout::softuet) +
               " or " + addr_layout_name(AddrLayout::wide52);
      return false;
    }
    cfg.addr_layout = *l;
  }

  // Another address format version and flags (a provider that numbers its layout otherwise): what it hands
  // out carries them; it still takes the spec's version 0 (address_layout.cpp).
  if (const char* version = std::getenv("SOFTUET_ADDR_VERSION")) {
    char* end = nullptr;
    const long v = std::strtol(version, &end, 0);
    if (!*version || *end || v < 0 || v > UINT8_MAX) {
      *error = std::string("SOFTUET_ADDR_VERSION='") + version + "': not an address version (0..255)";
      return false;
    }
    cfg.addr_version = static_cast<uint8_t>(v);
  }
  const std::optional<bool> fa_clear = choice("SOFTUET_ADDR_FA_FLAG", "set", "clear", error);
  if (!fa_clear) return false;
  cfg.addr_fa_flag = !*fa_clear;
  if (!cfg.addr_fa_flag && cfg.addr_version == uet::wire::k_addr_version) {
    // A version-0 blob without the flag is a spec address with no FA: it could not be told from one.
    *error = "SOFTUET_ADDR_FA_FLAG=clear needs SOFTUET_ADDR_VERSION other than the spec's " +
             std::to_string(uet::wire::k_addr_version);
    return false;
  }

  const std::optional<bool> no_fetching = choice("SOFTUET_ATOMICS", "all", "non_fetching", error);
  if (!no_fetching) return false;
  cfg.fetching_atomics = !*no_fetching;

  if (const char* types = std::getenv("SOFTUET_EP_TYPES")) {
    constexpr Name kTypes[] = {{"rdm", 1}, {"dgram", 2}};
    const std::optional<uint8_t> bits = name_set("SOFTUET_EP_TYPES", types, kTypes, error);
    if (!bits) return false;
    cfg.offers_rdm = *bits & 1;
    cfg.offers_dgram = *bits & 2;
  }

  const std::optional<bool> eager = choice("SOFTUET_LARGE_SENDS", "rendezvous", "eager", error);
  if (!eager) return false;
  cfg.large_send_protocols = !*eager;

  if (const char* methods = std::getenv("SOFTUET_JOB_ID_METHODS")) {
    // `none`: a provider that takes no JobID at all, whose every packet carries JobID 0 (jobid.cpp).
    if (std::string(methods) == "none") {
      cfg.job_id_methods = 0;
    } else {
      constexpr Name kMethods[] = {{"indirect", kJobIdIndirect}, {"direct", kJobIdDirect}, {"av", kJobIdAv}};
      const std::optional<uint8_t> bits = name_set("SOFTUET_JOB_ID_METHODS", methods, kMethods, error);
      if (!bits) return false;
      // An endpoint opened without an auth key takes the indirect JobID: a softuet that has JobIDs has it.
      if (!(*bits & kJobIdIndirect)) {
        *error = std::string("SOFTUET_JOB_ID_METHODS='") + methods +
                 "': the indirect method cannot be left out (none: no JobID at all)";
        return false;
      }
      cfg.job_id_methods = *bits;
    }
  }

  const std::optional<bool> waits = choice("SOFTUET_CLOSE", "linger", "wait_for_peers", error);
  if (!waits) return false;
  cfg.close_waits_for_peers = *waits;
  if (const char* ms = std::getenv("SOFTUET_CLOSE_WAIT_MS")) {
    char* end = nullptr;
    const long v = std::strtol(ms, &end, 10);
    constexpr long kMaxWaitMs = 600000;  // ten minutes: longer is a hang, whatever the reason
    if (!*ms || *end || v < 1 || v > kMaxWaitMs) {
      *error = std::string("SOFTUET_CLOSE_WAIT_MS='") + ms + "': not a time in ms (1.." + std::to_string(kMaxWaitMs) + ")";
      return false;
    }
    cfg.close_wait_ms = static_cast<uint32_t>(v);
  }
  return true;
}

}  // namespace softuet
