// The profile two FEPs operate in (spec 2.2.2.1), from the FEP-capabilities bytes of their addresses:
// the common profile of highest priority (constants.profile_priority_*, choice profile-priority), and for
// FEPs without one the rule of choice no-common-profile. softuet decides its operations with it and the
// negotiation cases compute what they expect with it, so a corrected Table 2-6 is a data change.
#pragma once

#include <cstdint>

#include "uet/wire/wire_gen.hpp"

namespace uet::wire {

enum class Profile : uint8_t { none = 0, ai_base, ai_full, hpc };

inline constexpr uint8_t profile_cap_bit(Profile p) {
  return p == Profile::ai_base ? static_cast<uint8_t>(1u << k_cap_ai_base)
       : p == Profile::ai_full ? static_cast<uint8_t>(1u << k_cap_ai_full)
       : p == Profile::hpc     ? static_cast<uint8_t>(1u << k_cap_hpc)
                               : uint8_t{0};
}

inline constexpr unsigned profile_priority(Profile p) {
  return p == Profile::ai_base ? k_profile_priority_ai_base
       : p == Profile::ai_full ? k_profile_priority_ai_full
       : p == Profile::hpc     ? k_profile_priority_hpc
                               : 0u;
}

// The profile FEPs with capabilities `a` and `b` (FEP-capabilities bytes) operate in.
inline constexpr Profile operating_profile(uint8_t a, uint8_t b) {
  Profile best = Profile::none;
  for (Profile p : {Profile::ai_base, Profile::ai_full, Profile::hpc}) {
    const uint8_t bit = profile_cap_bit(p);
    if ((a & bit) && (b & bit) && profile_priority(p) > profile_priority(best)) best = p;
  }
  if (best != Profile::none) return best;
  const uint8_t aif = profile_cap_bit(Profile::ai_full), hpc = profile_cap_bit(Profile::hpc);
  if (((a & aif) && (b & hpc)) || ((a & hpc) && (b & aif))) return Profile::ai_full;  // 2.2.2.1-b
  return Profile::none;
}

// What a large send (at least the rendezvous size, from a region the target may read) from `mine` to
// `peer` travels as.
enum class LargeSend : uint8_t { send, deferrable, rendezvous };
inline constexpr LargeSend large_send_kind(uint8_t mine, uint8_t peer) {
  const Profile op = operating_profile(mine, peer);
  if (op == Profile::hpc) return LargeSend::rendezvous;
  if (op == Profile::ai_full && (mine & profile_cap_bit(Profile::ai_full))) return LargeSend::deferrable;
  return LargeSend::send;
}

// RUDI (an HPC delivery mode) only between FEPs operating in HPC.
inline constexpr bool rudi_allowed(uint8_t mine, uint8_t peer) { return operating_profile(mine, peer) == Profile::hpc; }

inline constexpr const char* profile_name(Profile p) {
  return p == Profile::ai_base ? "ai_base" : p == Profile::ai_full ? "ai_full" : p == Profile::hpc ? "hpc" : "none";
}

}  // namespace uet::wire
