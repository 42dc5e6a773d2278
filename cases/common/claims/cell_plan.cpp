#include "cell_plan.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace uet::cases {

namespace {

constexpr int kPlanVersion = 2;
bool g_target_process = false;

[[noreturn]] void bad_plan(const std::string& path, const std::string& why) {
  std::fprintf(stderr, "uet cases: cell plan %s: %s\n", path.c_str(), why.c_str());
  std::exit(3);
}

[[noreturn]] void bad_manifest(const std::string& path, const std::string& why) {
  std::fprintf(stderr, "uet cases: manifest %s: %s\n", path.c_str(), why.c_str());
  std::exit(3);
}

// A side of the plan: its resolved record (harness/inputs/manifest.py writes it; YAML and placeholders have
// that one reader), named in messages by the file the harness wrote it to as well.
Manifest side_of(const nlohmann::json& side) {
  Manifest m;
  m.path = side.at("manifest").get<std::string>();
  try {
    read_resolved_side(side.at("resolved"), m);
  } catch (const BadRecord& e) {
    bad_manifest(m.path, e.what());
  } catch (const std::exception& e) {  // nlohmann's errors, and an address layout's unknown field
    bad_manifest(m.path, std::string("not a resolved manifest: ") + e.what());
  }
  return m;
}

TargetPlace place_of(const nlohmann::json& j) {
  TargetPlace p;
  const std::string kind = j.at("kind").get<std::string>();
  if (kind == "beside") return p;
  if (kind == "netns") {
    p.kind = TargetPlace::Kind::netns;
    p.netns = j.at("netns").get<std::string>();
    return p;
  }
  if (kind == "agent") {
    p.kind = TargetPlace::Kind::agent;
    p.agent = j.at("agent").get<std::string>();
    p.secret_file = j.at("secret_file").get<std::string>();
    return p;
  }
  throw std::invalid_argument("target.place.kind '" + kind + "' is not beside, netns or agent");
}

CellPlan load_plan() {
  const char* named = std::getenv("UET_CASES_PLAN");
  if (!named || !*named)
    bad_plan("(none)", "set UET_CASES_PLAN to a cell plan (harness/run/cell_plan.py writes one; its schema is "
                       "cases/plan/cell-plan.schema.yaml)");
  CellPlan plan;
  plan.path = named;
  std::ifstream in(plan.path);
  if (!in) bad_plan(plan.path, std::string("cannot read: ") + std::strerror(errno));
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    if (doc.at("plan_version").get<int>() != kPlanVersion)
      bad_plan(plan.path, "plan_version " + doc["plan_version"].dump() + ", this binary reads " +
                              std::to_string(kPlanVersion) + " (rebuild the cases or the harness)");
    plan.cell = doc.at("cell").get<std::string>();
    plan.area = doc.at("area").get<std::string>();
    plan.initiator = side_of(doc.at("initiator"));
    plan.target = side_of(doc.at("target"));
    plan.target_place = place_of(doc.at("target").at("place"));
    plan.target_binary = doc.at("target").value("binary", "");
    plan.results = doc.at("results").get<std::string>();
    plan.captures = doc.at("captures").get<std::string>();
    plan.capture_cap_bytes = doc.at("capture_cap_bytes").get<uint64_t>();
    plan.target_log = doc.value("target_log", "");
    plan.control_listen = doc.value("control_listen", "");
    if (doc.contains("loss")) {
      const auto& l = doc["loss"];
      plan.loss = LossPlan{l.at("every").get<uint32_t>(), l.at("offset").get<uint32_t>(), l.at("seed").get<uint64_t>(),
                           l.at("pattern").get<std::string>()};
    }
  } catch (const std::exception& e) {  // nlohmann's parse and type errors, an unknown place
    bad_plan(plan.path, std::string("not a cell plan: ") + e.what());
  }
  return plan;
}

}  // namespace

const CellPlan& cell_plan() {
  static const CellPlan plan = load_plan();
  return plan;
}

const CellPlan* cell_plan_if_named() {
  const char* named = std::getenv("UET_CASES_PLAN");
  return named && *named ? &cell_plan() : nullptr;
}

void act_as_target() { g_target_process = true; }
bool is_target_process() { return g_target_process; }

}  // namespace uet::cases
