// The cell plan: what the harness tells a case binary about the area it runs (cases/plan/cell-plan.schema.yaml,
// written by harness/run/cell_plan.py, named by UET_CASES_PLAN). Read once, as structs; both sides of a pair
// read the same plan and the process's role says which side it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "manifest.hpp"

namespace uet::cases {

// Where a target peer runs.
struct TargetPlace {
  enum class Kind { beside, netns, agent };
  Kind kind = Kind::beside;
  std::string netns;        // netns: /run/netns/<netns>
  std::string agent;        // agent: [address]:port of the agent that starts it
  std::string secret_file;  // agent: the run's secret (a 0600 file)
};

// The counted loss the harness applies to the test link for this area.
struct LossPlan {
  uint32_t every = 0, offset = 0;
  uint64_t seed = 0;
  std::string pattern;  // in words, as the report prints it
};

struct CellPlan {
  std::string path;
  std::string cell, area;
  Manifest initiator, target;  // each side's resolved record: the plan is the one file a binary reads
  std::string results;     // the initiator's verdict lines
  std::string captures;    // the folder of the cases' pcap evidence
  uint64_t capture_cap_bytes = 0;  // the most one capture file of it holds (its head)
  std::string target_log;  // the target peer's output; empty: the initiator's own
  std::string control_listen;  // the initiator's control-link address; empty: an inherited socketpair
  TargetPlace target_place;
  std::string target_binary;   // the binary the target runs; empty: this one (/proc/self/exe)
  std::optional<LossPlan> loss;
};

// This process's plan (UET_CASES_PLAN). A missing or malformed plan ends the process with a message naming
// it (exit 3): nothing runs on a guess.
const CellPlan& cell_plan();
// The plan when UET_CASES_PLAN names one, else nullptr (a binary listing its cases needs none).
const CellPlan* cell_plan_if_named();

// Which side of the pair this process is: the initiator (the googletest cases) unless main() started it in
// a peer role. Set once, before anything reads a manifest.
void act_as_target();
bool is_target_process();

}  // namespace uet::cases
