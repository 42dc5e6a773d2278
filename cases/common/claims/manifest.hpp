// One side of a pair as the case binaries see it: its resolved record (the generated ResolvedSide, from the
// record's one declaration: $defs/resolved of cases/manifests/manifest.schema.yaml), carried by the cell plan.
#pragma once

#include <string>

#include "resolved_side_gen.hpp"

namespace uet::cases {

struct Manifest : ResolvedSide {
  std::string path;  // the file the harness wrote the record to as well: messages name the side by it
  bool claims_profile(const std::string& p) const;
  bool claims_job_method(const std::string& method) const;
  // Why a profile it claims needs JobID method `method` (HPC: the AV method, 2.2.4.1-s), or empty.
  std::string profile_needing_job_method(const std::string& method) const;
};

}  // namespace uet::cases
