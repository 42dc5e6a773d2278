#include "liveness.hpp"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

namespace uet::cases {

// The verdict side of the rule (verdict.cpp): the evidence of the last liveness wait, if it starved.
void record_starved_wait(const std::string& evidence);
void clear_starved_wait();

namespace {

std::mutex& watched_mutex() {
  static std::mutex m;
  return m;
}
std::map<pid_t, std::string>& watched() {
  static std::map<pid_t, std::string> w;
  return w;
}

// The second field of /proc/PID/task/TID/schedstat: nanoseconds the thread spent runnable on a run queue
// without running (needs CONFIG_SCHED_INFO, which Debian's kernels have).
void add_threads(pid_t pid, SchedSnapshot* out) {
  const std::string dir = pid == 0 ? "/proc/self/task" : "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;  // gone, or in a PID namespace of its own: its own replies carry its evidence
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(dir + "/" + e->d_name + "/schedstat");
    uint64_t on_cpu = 0, delay = 0;
    if (f >> on_cpu >> delay) out->run_delay_ns[{pid, static_cast<pid_t>(std::atoi(e->d_name))}] = delay;
  }
  ::closedir(d);
}

std::string seconds(std::chrono::nanoseconds ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", std::chrono::duration<double>(ns).count());
  return buf;
}

}  // namespace

void watch_process(pid_t pid, const std::string& role) {
  std::lock_guard lock(watched_mutex());
  watched()[pid] = role;
}

void unwatch_process(pid_t pid) {
  std::lock_guard lock(watched_mutex());
  watched().erase(pid);
}

SchedSnapshot SchedSnapshot::take() {
  SchedSnapshot s;
  add_threads(0, &s);
  std::map<pid_t, std::string> others;
  {
    std::lock_guard lock(watched_mutex());
    others = watched();
  }
  for (const auto& [pid, role] : others) add_threads(pid, &s);
  return s;
}

Starvation starvation_between(const SchedSnapshot& before, const SchedSnapshot& after) {
  Starvation worst;
  for (const auto& [thread, delay] : after.run_delay_ns) {
    const auto was = before.run_delay_ns.find(thread);
    const uint64_t base = was == before.run_delay_ns.end() ? 0 : std::min(was->second, delay);
    const std::chrono::nanoseconds grew(delay - base);
    if (grew <= worst.worst) continue;
    worst.worst = grew;
    std::string role = "this process's";
    if (thread.first != 0) {
      std::lock_guard lock(watched_mutex());
      const auto it = watched().find(thread.first);
      role = (it == watched().end() ? "process " + std::to_string(thread.first) : it->second) + "'s";
    }
    worst.whose = role + " thread " + std::to_string(thread.second);
  }
  return worst;
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(f >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

LivenessDeadline::LivenessDeadline(int timeout_ms)
    : timeout_ms_(std::max(timeout_ms, 0)), started_(Clock::now()), window_start_(started_) {
  // Windows are not extended: reading /proc for them would only cost time.
  if (timeout_ms_ >= kLivenessFloorMs) at_start_ = SchedSnapshot::take();
}

std::chrono::nanoseconds LivenessDeadline::extension_cap() const {
  return std::chrono::milliseconds(std::min(kMaxExtensionFactor * timeout_ms_, kMaxExtensionMs));
}

int LivenessDeadline::left_ms() {
  const auto length = std::chrono::milliseconds(timeout_ms_);
  const auto end = [&] { return std::min(window_start_ + length, started_ + kMaxProgressFactor * length) + extension_; };
  auto now = Clock::now();
  if (now >= end() && timeout_ms_ >= kLivenessFloorMs && extension_ < extension_cap()) {
    seen_ = starvation_between(at_start_, SchedSnapshot::take());
    extension_ = std::min<std::chrono::nanoseconds>(seen_.worst, extension_cap());
    now = Clock::now();
  }
  if (now >= end()) return 0;
  return static_cast<int>(std::max<int64_t>(1, std::chrono::ceil<std::chrono::milliseconds>(end() - now).count()));
}

void LivenessDeadline::progressed() {
  window_start_ = Clock::now();
  progress_seen_ = true;
}

void LivenessDeadline::waited_elsewhere() {
  const auto past = Clock::now() - started_ - std::chrono::milliseconds(timeout_ms_);
  extension_ = std::max(extension_, std::clamp<std::chrono::nanoseconds>(past, std::chrono::nanoseconds(0), extension_cap()));
}

std::string LivenessDeadline::timed_out() {
  if (timeout_ms_ < kLivenessFloorMs) return {};
  seen_ = starvation_between(at_start_, SchedSnapshot::take());
  const auto waited = Clock::now() - started_;
  // What the host took and the extension did not give back; a provider seen at work had its chance anyway.
  const auto uncompensated = seen_.worst - extension_;
  const auto length = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::milliseconds(timeout_ms_));
  if (progress_seen_ || uncompensated < std::chrono::duration_cast<std::chrono::nanoseconds>(length * kBusyShare)) {
    clear_starved_wait();
    return {};
  }
  std::ostringstream why;
  why << "a wait of " << seconds(std::chrono::milliseconds(timeout_ms_)) << " ended after "
      << seconds(std::chrono::duration_cast<std::chrono::nanoseconds>(waited)) << " with nothing, and "
      << seen_.whose << " had been runnable but not running for " << seconds(seen_.worst)
      << " of it (" << seconds(uncompensated) << " more than the wait was extended by); load average "
      << load_average();
  record_starved_wait(why.str());
  return why.str();
}

void LivenessDeadline::ended() { clear_starved_wait(); }

void LivenessDeadline::starved_elsewhere(const std::string& evidence) { record_starved_wait(evidence); }

}  // namespace uet::cases
