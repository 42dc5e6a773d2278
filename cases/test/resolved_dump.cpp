// Prints what this binary reads of each side of the cell plan UET_CASES_PLAN names, as records
// ({"initiator": ..., "target": ...}): the C++ half of the resolved side's agreement test
// (pytest/cases/test_resolved_side.py). A malformed plan or record ends it as it ends a case binary (exit 3).
#include <nlohmann/json.hpp>

#include <cstdio>

#include "cell_plan.hpp"

int main() {
  const auto& plan = uet::cases::cell_plan();
  const nlohmann::json out = {{"initiator", uet::cases::resolved_side_json(plan.initiator)},
                              {"target", uet::cases::resolved_side_json(plan.target)}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
