// The verdict of every case, written by the case binaries themselves: the `verdict` JUnit property
// (pass, fail, not_applicable, warning) with its reason, the side a failure is blamed on and the
// evidence it rests on; and, into the cell plan's results file, one JSON line per case as it ends
// (and one as it starts), each written by one write(2) at once: a binary that crashes or hangs still
// leaves the verdicts of the cases before, and the harness knows which case was running.
//
// The provider under test runs in this process and could write to that file too. So each line is signed:
// "<hex HMAC-SHA-256(key, json)> <json>", the JSON numbered by "seq", with a key the harness hands over on
// the descriptor UET_CASES_VERDICT_KEY_FD, read and closed here before any provider is loaded (libfabric
// loads providers at the first fi_getinfo, inside a case). The harness drops every line it cannot verify
// (harness/run/verdict_channel.py). A provider that reads this process's memory could still find the key:
// the signature keeps out forgeries and stray writes, not code that attacks the suite's own process.
#include "cell_plan.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "uet/agent/auth.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {

namespace {

// The distinct diagnostics of malformed frames one case's verdict line carries, each with its frame count.
constexpr size_t kMaxDiagnosticsKept = 32;

struct CaseState {
  Side subject = Side::initiator;
  std::string basis = "api: the initiator's own call";
  bool blamed = false;
  Side blamed_side = Side::initiator;
  std::string blamed_basis;
  std::string claimed_unsupported;  // what a side claims and lacks: the verdict line's field of that name
  // covers(): the statements the case checks, a list on the verdict line (the JUnit property joins them).
  std::vector<std::string> statements;
  // Each UET_NOT_APPLICABLE of the case: its code and why apart, and the skip message they made.
  struct Skip {
    std::string code, why, message;
  };
  std::vector<Skip> skips;
  std::vector<nlohmann::json> frames;
  std::vector<std::string> choices;
  nlohmann::json notes = nlohmann::json::object();
  nlohmann::json captures = nlohmann::json::array();
  nlohmann::json diagnostics = nlohmann::json::array();
  std::map<std::string, uint64_t> diagnostic_frames;  // by diagnostic_key
  // The failures the case had, and those a malformed frame's diagnostic stands for: what is left are failures
  // of the case's own checks (own_failures), which the report groups under the case's statements.
  int failures = 0;
  int diagnostic_failures = 0;
  // A refused call (evidence_refusal) waits here until a failure follows it, which it then explains; a later
  // call that is not refused clears it.
  nlohmann::json pending_refusal;
  nlohmann::json refused = nlohmann::json::array();
  std::chrono::steady_clock::time_point started;
  // liveness.hpp: the evidence of the last liveness wait while it stands (it expired on a starved host), and
  // that evidence once the case's first failure came while it stood.
  std::string starved_wait;
  std::string inconclusive;
};

CaseState& state() {
  static CaseState s;
  return s;
}

const char* side_name(Side s) { return s == Side::initiator ? "initiator" : "target"; }

// A target that did not get what the initiator sent malformed (the capture holds a diagnostic against the
// initiator's frame) was silent because of the initiator: the failure is the initiator's.
void blame_silence_on_malformed_request() {
  CaseState& s = state();
  if (s.blamed_side != Side::target || s.blamed_basis != kTargetObservedBasis) return;
  for (const auto& d : s.diagnostics) {
    if (d.value("sender", "") != "initiator") continue;
    s.blamed_side = Side::initiator;
    s.blamed_basis = "wire: the initiator sent a malformed frame (" + d.value("kind", std::string("?")) + " in " +
                     d.value("header", std::string("?")) + "): what the target did not get is the initiator's";
    return;
  }
}

std::string diagnostic_key(const std::string& sender, const std::string& kind, const std::string& header,
                           const std::string& field) {
  return sender + '\n' + kind + '\n' + header + '\n' + field;
}

std::string first_lines(const std::string& text, size_t max_chars) {
  return text.size() <= max_chars ? text : text.substr(0, max_chars) + " ...";
}

// The key on UET_CASES_VERDICT_KEY_FD, its descriptor closed; empty without one. Exits 2 on a descriptor
// named and unreadable: a run whose verdicts cannot be signed must not look like one that ran.
std::string take_verdict_key() {
  const char* named = std::getenv("UET_CASES_VERDICT_KEY_FD");
  if (!named || !*named) return {};
  char* end = nullptr;
  const long fd = std::strtol(named, &end, 10);
  std::string key;
  if (end && *end == '\0' && fd >= 3 && fd < 1024) {
    char buf[256];
    for (ssize_t n; (n = ::read(static_cast<int>(fd), buf, sizeof buf)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || key.size() + static_cast<size_t>(n) > 1024) {
        key.clear();
        break;
      }
      key.append(buf, static_cast<size_t>(n));
    }
    ::close(static_cast<int>(fd));
  }
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  ::unsetenv("UET_CASES_VERDICT_KEY_FD");
  if (key.size() < 32) {
    std::fprintf(stderr, "uet cases: no verdict key on UET_CASES_VERDICT_KEY_FD=%s\n", named);
    std::exit(2);
  }
  return key;
}

// What googletest's {ASSERT,EXPECT}_NO_FATAL_FAILURE says of a statement that failed inside it.
constexpr const char* kRestated = "doesn't generate new fatal failures in the current thread";

class VerdictRecorder : public ::testing::EmptyTestEventListener {
 public:
  VerdictRecorder(int out, std::string key) : out_(out), key_(std::move(key)) {}

  void OnTestStart(const ::testing::TestInfo& info) override {
    state() = CaseState{};
    state().started = std::chrono::steady_clock::now();
    write({{"event", "start"}, {"case", name(info)}});
  }

  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    // googletest's ASSERT_NO_FATAL_FAILURE restates a failure already counted: not one of the case's own.
    if (std::strstr(r.message(), kRestated)) return;
    ++state().failures;
    if (!state().pending_refusal.is_null()) {
      if (state().refused.size() < 16) state().refused.push_back(state().pending_refusal);
      state().pending_refusal = nullptr;
    }
    if (state().blamed) return;
    // The first failure decides: one that follows a wait the host cut short is the host's, not the provider's.
    state().inconclusive = state().starved_wait;
    state().blamed = true;
    state().blamed_side = state().subject;
    state().blamed_basis = state().basis;
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    const auto* result = info.result();
    std::string verdict = "pass", reason, reason_code, message, warning;
    for (int i = 0; i < result->test_property_count(); ++i) {
      const auto& p = result->GetTestProperty(i);
      if (std::string(p.key()) == "warning") warning = p.value();
    }
    // The first of a skip and a failure decides: a case that found itself not applicable and went on (a helper's
    // skip its caller did not stop at) failed only at what it should never have run; a failure before the skip
    // stands, with its own message, not the skip's. Of several skips before any failure the last gives the
    // reason: the fixture's SetUp is more particular than the pair's claims its constructor checks first.
    bool skipped_first = false, failed_yet = false;
    for (int i = 0; i < result->total_part_count(); ++i) {
      const auto& part = result->GetTestPartResult(i);
      if (!failed_yet && part.skipped()) skipped_first = true, reason = part.message();
      failed_yet = failed_yet || part.failed();
      if (part.failed())
        message += (message.empty() ? "" : "\n") + std::string(part.file_name() ? part.file_name() : "?") + ":" +
                   std::to_string(part.line_number()) + ": " + part.message();
    }
    const bool failed = result->Failed() && !skipped_first;
    if (failed) reason.clear();
    if (failed && !state().inconclusive.empty()) {
      // A starved host is never a fail (liveness.hpp): the case could not tell whether the provider would have.
      verdict = "error";
      reason = "inconclusive: the host was busy: " + state().inconclusive;
    } else if (failed) {
      verdict = "fail";
      blame_silence_on_malformed_request();
    } else if (skipped_first) {
      // Every skip of the suite is UET_NOT_APPLICABLE's, which handed over its code and why apart (never read
      // back from the message); any other skip is a harness error. The code travels as reason_code; the
      // harness checks it is declared.
      const auto& skips = state().skips;
      const auto skip = std::find_if(skips.rbegin(), skips.rend(), [&](const auto& k) { return k.message == reason; });
      if (skip == skips.rend()) {
        verdict = "error";
        reason = "skipped without a reason code: " + reason;
      } else {
        verdict = "not_applicable";
        reason_code = skip->code;
        reason = "not applicable: " + skip->why;
      }
      message.clear();
    } else if (!warning.empty()) {
      verdict = "warning";
      reason = warning;
    }
    ::testing::Test::RecordProperty("verdict", verdict);
    if (!reason.empty()) ::testing::Test::RecordProperty("reason", reason);
    if (!reason_code.empty()) ::testing::Test::RecordProperty("reason_code", reason_code);
    const auto& s = state();
    nlohmann::json line = {{"event", "end"},        {"case", name(info)},   {"verdict", verdict},
                           {"statements", s.statements}, {"seconds", seconds()}};
    if (!reason.empty()) line["reason"] = reason;
    if (!reason_code.empty()) line["reason_code"] = reason_code;
    if (verdict == "error") line["message"] = first_lines(message, 4000);
    if (verdict == "fail") {
      line["message"] = first_lines(message, 4000);
      line["blamed_side"] = side_name(s.blamed_side);
      line["blame_basis"] = s.blamed_basis;
      ::testing::Test::RecordProperty("blamed_side", side_name(s.blamed_side));
      if (!s.claimed_unsupported.empty()) {
        const std::string detail = "claimed but unsupported: " + s.claimed_unsupported;
        line["detail"] = detail;
        line["claimed_unsupported"] = s.claimed_unsupported;
        ::testing::Test::RecordProperty("detail", detail);
      }
      if (!s.frames.empty()) line["frames"] = s.frames;
      line["own_failures"] = std::max(0, s.failures - s.diagnostic_failures);
      if (!s.refused.empty()) line["refused"] = s.refused;
    }
    if (!s.choices.empty()) line["choices"] = s.choices;
    if (!s.notes.empty()) line["notes"] = s.notes;
    if (!s.captures.empty()) line["captures"] = s.captures;
    if (!s.diagnostics.empty()) {
      line["diagnostics"] = s.diagnostics;
      for (auto& d : line["diagnostics"]) {
        const auto n = s.diagnostic_frames.find(diagnostic_key(d["sender"], d["kind"], d["header"], d.value("field", "")));
        d["frames"] = n == s.diagnostic_frames.end() ? 1 : n->second;
      }
    }
    write(line);
  }

 private:
  static std::string name(const ::testing::TestInfo& info) {
    return std::string(info.test_suite_name()) + "." + info.name();
  }
  static double seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - state().started).count();
  }
  void write(nlohmann::json j) {
    if (out_ < 0) return;
    j["seq"] = seq_++;
    const std::string body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // One write(2) a line, so an O_APPEND line is never interleaved with another writer's bytes.
    const std::string text = (key_.empty() ? body : agent::hmac_sha256_hex(key_, body) + " " + body) + "\n";
    for (ssize_t n; (n = ::write(out_, text.data(), text.size())) < 0 && errno == EINTR;) {
    }
  }
  int out_;
  std::string key_;
  uint64_t seq_ = 0;
};

}  // namespace

void observing(Side side, const std::string& basis) {
  state().subject = side;
  state().basis = basis;
}

// The first claim the case found a side cannot keep is the cause; what fails after it (an endpoint that then
// cannot be opened) is its consequence.
void claimed_but_unsupported(const std::string& what) {
  if (state().claimed_unsupported.empty()) state().claimed_unsupported = what;
}

void covers(std::initializer_list<const char*> ids) {
  state().statements.assign(ids.begin(), ids.end());
  std::string joined;
  for (const char* id : ids) joined += (joined.empty() ? "" : ",") + std::string(id);
  ::testing::Test::RecordProperty("requirements", joined);
}

std::string not_applicable_skip(const std::string& code, const std::string& why) {
  state().skips.push_back({code, why, "not applicable [" + code + "]: " + why});
  return state().skips.back().message;
}

void evidence_frame(Side sender, const std::string& summary) {
  if (state().frames.size() < 16) state().frames.push_back({{"sender", side_name(sender)}, {"summary", summary}});
}

bool count_diagnostic(Side sender, const std::string& kind, const std::string& header, const std::string& field) {
  return ++state().diagnostic_frames[diagnostic_key(side_name(sender), kind, header, field)] == 1;
}

void evidence_diagnostic(Side sender, const std::string& kind, const std::string& header, const std::string& field,
                         uint32_t offset, uint64_t value, const std::string& summary, uint64_t first_frame) {
  ++state().diagnostic_failures;
  // Distinct diagnostics, not frames: a provider that breaks one rule in every frame makes one entry.
  if (state().diagnostics.size() >= kMaxDiagnosticsKept) return;
  nlohmann::json d = {{"sender", side_name(sender)}, {"kind", kind}, {"header", header}, {"offset", offset},
                      {"value", value}, {"frame", summary}};
  if (!field.empty()) d["field"] = field;
  if (first_frame) d["first_frame"] = first_frame;
  state().diagnostics.push_back(std::move(d));
}

void evidence_refusal(Side side, const std::string& call, long rc) {
  state().pending_refusal = {{"side", side_name(side)}, {"call", call}, {"rc", rc},
                             {"error", fi_strerror(static_cast<int>(rc < 0 ? -rc : rc))}};
}

void no_refusal() { state().pending_refusal = nullptr; }

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

void evidence_capture(const std::string& path, uint16_t target_port, uint16_t initiator_port) {
  nlohmann::json entry = {{"file", path}, {"port", target_port}};
  if (initiator_port) entry["initiator_port"] = initiator_port;
  for (auto& c : state().captures)
    if (c["file"] == path) return void(c = entry);  // ports learned since the capture began
  state().captures.push_back(std::move(entry));
}

void evidence_capture_cut(const std::string& path, uint64_t kept_bytes, uint64_t frames_dropped) {
  for (auto& c : state().captures)
    if (c["file"] == path) c["cut_at_bytes"] = kept_bytes, c["frames_dropped"] = frames_dropped;
}

void note(const std::string& key, const std::string& value) { state().notes[key] = value; }

void record_starved_wait(const std::string& evidence) { state().starved_wait = evidence; }
void clear_starved_wait() { state().starved_wait.clear(); }

void install_verdict_recorder() {
  std::string key = take_verdict_key();
  int out = -1;
  if (const CellPlan* plan = cell_plan_if_named(); plan && !plan->results.empty()) {
    out = ::open(plan->results.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (out < 0)
      std::fprintf(stderr, "uet cases: cannot append to the plan's results file %s: %s\n", plan->results.c_str(),
                   std::strerror(errno));
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(new VerdictRecorder(out, std::move(key)));
}

}  // namespace uet::cases
