// The verdict of every case, written by the case binaries themselves: the `verdict` JUnit property
// (pass, fail, not_applicable, warning) with its reason, the side a failure is blamed on and the
// evidence it rests on; and, when UET_CASES_RESULTS names a file, one JSON line per case as it ends
// (and one as it starts), flushed at once: a binary that crashes or hangs still leaves the verdicts of
// the cases before, and the harness knows which case was running.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {

namespace {

struct CaseState {
  Side subject = Side::initiator;
  std::string basis = "api: the initiator's own call";
  bool blamed = false;
  Side blamed_side = Side::initiator;
  std::string blamed_basis;
  std::string detail;
  std::vector<nlohmann::json> frames;
  std::vector<std::string> choices;
  nlohmann::json notes = nlohmann::json::object();
  nlohmann::json captures = nlohmann::json::array();
  std::chrono::steady_clock::time_point started;
};

CaseState& state() {
  static CaseState s;
  return s;
}

const char* side_name(Side s) { return s == Side::initiator ? "initiator" : "target"; }

std::string first_lines(const std::string& text, size_t max_chars) {
  return text.size() <= max_chars ? text : text.substr(0, max_chars) + " ...";
}

class VerdictRecorder : public ::testing::EmptyTestEventListener {
 public:
  explicit VerdictRecorder(FILE* out) : out_(out) {}

  void OnTestStart(const ::testing::TestInfo& info) override {
    state() = CaseState{};
    state().started = std::chrono::steady_clock::now();
    write({{"event", "start"}, {"case", name(info)}});
  }

  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed() || state().blamed) return;
    state().blamed = true;
    state().blamed_side = state().subject;
    state().blamed_basis = state().basis;
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    const auto* result = info.result();
    std::string verdict = "pass", reason, message, requirements, warning;
    for (int i = 0; i < result->test_property_count(); ++i) {
      const auto& p = result->GetTestProperty(i);
      if (std::string(p.key()) == "requirements") requirements = p.value();
      if (std::string(p.key()) == "warning") warning = p.value();
    }
    for (int i = 0; i < result->total_part_count(); ++i) {
      const auto& part = result->GetTestPartResult(i);
      if (part.failed() || part.skipped()) {
        message += (message.empty() ? "" : "\n") + std::string(part.file_name() ? part.file_name() : "?") + ":" +
                   std::to_string(part.line_number()) + ": " + part.message();
        if (part.skipped()) reason = part.message();
      }
    }
    if (result->Failed()) {
      verdict = "fail";
    } else if (result->Skipped()) {
      // Every skip of the suite says "not applicable: <why>"; any other skip is a harness error.
      const auto at = reason.find("not applicable:");
      verdict = at == std::string::npos ? "error" : "not_applicable";
      reason = at == std::string::npos ? "skipped without a reason: " + reason : reason.substr(at);
      message.clear();
    } else if (!warning.empty()) {
      verdict = "warning";
      reason = warning;
    }
    ::testing::Test::RecordProperty("verdict", verdict);
    if (!reason.empty()) ::testing::Test::RecordProperty("reason", reason);
    const auto& s = state();
    nlohmann::json line = {{"event", "end"},        {"case", name(info)},   {"verdict", verdict},
                           {"requirements", requirements}, {"seconds", seconds()}};
    if (!reason.empty()) line["reason"] = reason;
    if (verdict == "fail") {
      line["message"] = first_lines(message, 4000);
      line["blamed_side"] = side_name(s.blamed_side);
      line["blame_basis"] = s.blamed_basis;
      ::testing::Test::RecordProperty("blamed_side", side_name(s.blamed_side));
      if (!s.detail.empty()) {
        line["detail"] = s.detail;
        ::testing::Test::RecordProperty("detail", s.detail);
      }
      if (!s.frames.empty()) line["frames"] = s.frames;
    }
    if (!s.choices.empty()) line["choices"] = s.choices;
    if (!s.notes.empty()) line["notes"] = s.notes;
    if (!s.captures.empty()) line["captures"] = s.captures;
    write(line);
  }

 private:
  static std::string name(const ::testing::TestInfo& info) {
    return std::string(info.test_suite_name()) + "." + info.name();
  }
  static double seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - state().started).count();
  }
  void write(const nlohmann::json& j) {
    if (!out_) return;
    const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(text.data(), 1, text.size(), out_);
    std::fflush(out_);
  }
  FILE* out_;
};

}  // namespace

void observing(Side side, const std::string& basis) {
  state().subject = side;
  state().basis = basis;
}

void claimed_but_unsupported(const std::string& what) { state().detail = "claimed but unsupported: " + what; }

void evidence_frame(Side sender, const std::string& summary) {
  if (state().frames.size() < 16) state().frames.push_back({{"sender", side_name(sender)}, {"summary", summary}});
}

void rests_on_choice(const std::string& choice) {
  for (const auto& c : state().choices)
    if (c == choice) return;
  state().choices.push_back(choice);
}

std::string per_choice(const std::string& choice) {
  rests_on_choice(choice);
  for (size_t i = 1; i < static_cast<size_t>(wire::Choice::COUNT); ++i) {
    const wire::ChoiceInfo& info = wire::choice_info(static_cast<wire::Choice>(i));
    if (choice == info.id) return "(choice " + choice + ", confidence " + info.confidence + ")";
  }
  return "(choice " + choice + ", not in spec/wire.yaml)";
}

void evidence_capture(const std::string& path, uint16_t udp_port) {
  state().captures.push_back({{"file", path}, {"port", udp_port}});
}

void note(const std::string& key, const std::string& value) { state().notes[key] = value; }

void install_verdict_recorder() {
  FILE* out = nullptr;
  if (const char* path = std::getenv("UET_CASES_RESULTS"); path && *path) {
    out = std::fopen(path, "a");
    if (!out) std::fprintf(stderr, "uet cases: cannot append to UET_CASES_RESULTS=%s\n", path);
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(new VerdictRecorder(out));
}

}  // namespace uet::cases
