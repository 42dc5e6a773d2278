#include "job_id_methods.hpp"

namespace uet::cases {

namespace {

std::string side_named(const Manifest& side, const std::string& who) { return who + " " + side.name; }

}  // namespace

std::string auth_key_method(size_t auth_key_size) {
  if (auth_key_size == 3) return "direct";
  if (auth_key_size == FI_AV_AUTH_KEY) return "av";
  return "";
}

std::string chosen_job_method(const Manifest& side) {
  if (side.claims_job_method("direct")) return "direct";
  return "av";
}

std::string job_method_missing(const Manifest& side, const std::string& method, const std::string& who) {
  if (method == kChosen) {
    if (side.claims_job_method("direct") || side.claims_job_method("av")) return "";
    if (!side.profile_needing_job_method("av").empty()) return job_method_missing(side, "av", who);
    return side_named(side, who) + " claims neither the direct nor the av JobID method (job_id_methods), one of "
                                   "which this case needs to give it a JobID of its choosing";
  }
  if (side.claims_job_method(method)) return "";
  if (method == "indirect") {
    return side_named(side, who) + " does not claim the indirect JobID method (job_id_methods), which this case "
                                   "needs; that every UET provider has it (2.2.4.1-p) is judged by " + kIndirectJudge;
  }
  if (const std::string profile = side.profile_needing_job_method(method); !profile.empty()) {
    claimed_but_unsupported(profile);
    return "";
  }
  return side_named(side, who) + " does not claim the " + method + " JobID method (job_id_methods), which this case needs";
}

bool declared_no_job_id(Side sender) {
  const Manifest& side = sender == Side::initiator ? manifest() : target_manifest();
  if (!side.job_id_methods.empty()) return false;
  note("JobID", std::string("0 in the requests of ") + (sender == Side::initiator ? "the initiator " : "the target ") +
                    side.name + ", which claims no JobID method (job_id_methods: []): judged by " + kIndirectJudge);
  return true;
}

std::string no_shared_job_id(const Manifest& initiator, const Manifest& target) {
  if (initiator.job_id_methods.empty() == target.job_id_methods.empty()) return "";
  const bool initiator_none = initiator.job_id_methods.empty();
  return (initiator_none ? side_named(initiator, "the initiator") : side_named(target, "the target")) +
         " takes no JobID (job_id_methods: []) and " +
         (initiator_none ? side_named(target, "the target") : side_named(initiator, "the initiator")) +
         " has JobIDs: their endpoints share none, so neither takes the other's requests (JobID 0 is judged by " +
         kIndirectJudge + ")";
}

std::string takes_no_job_id(const Manifest& side, const std::string& who) {
  if (!side.job_id_methods.empty()) return "";
  return side_named(side, who) + " takes no JobID (job_id_methods: []), so none can be granted or configured for it; "
                                 "that every UET provider has the indirect method (2.2.4.1-p) is judged by " +
         kIndirectJudge;
}

}  // namespace uet::cases
