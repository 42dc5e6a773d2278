// The one rule for every wait of a case that ends in a verdict (issue 33): a verdict must not change with
// the host's load. A wait for something the provider must do (a completion, a reply of the target, a frame
// on the wire) is a liveness deadline, and:
//  - it is measured in time the case's processes could have run: the time their threads were runnable but
//    not running (the kernel's run delay, /proc/PID/task/TID/schedstat) extends it, so a starved provider
//    gets the time the case meant to give it;
//  - it starts again whenever the caller sees progress (another completion, another frame);
//  - when it expires with nothing seen (no progress at all) after the host starved the case's threads for
//    more than the extension gave back, the failure it leads to is not the provider's: the case is an
//    `error`, "inconclusive: the host was busy", with the run delay and the load seen (verdict.cpp). A wait
//    whose starvation the extension made good gave the provider its whole length to answer, and one that
//    saw progress saw the provider at work: their expiry stays a failure, on a busy host as on an idle one,
//    so a provider that answers wrongly or never delivers fails whatever the load.
// Every wait loop of cases/common uses LivenessDeadline; none keeps a wall-clock deadline of its own.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace uet::cases {

// Waits shorter than this are observation windows ("nothing more arrives within 300 ms"), not liveness
// deadlines: expiring is their expected end, so it is never taken as evidence of anything.
inline constexpr int kLivenessFloorMs = 1000;
// A wait is extended by the run delay it saw up to this many times its own length (and kMaxExtensionMs), so
// that a case stays inside the harness's case deadline (harness/run/run_cases.py CASE_DEADLINE_S, 90 s).
inline constexpr int kMaxExtensionFactor = 2;
inline constexpr int kMaxExtensionMs = 20000;
// A wait that expired after its threads had waited for a CPU this share of its length or more beyond what the
// extension gave back was cut short by the host: one tenth is far above what an idle host shows (microseconds per wake-up) and far below
// what a load of two runnable tasks per core gives.
inline constexpr double kBusyShare = 0.10;
// Progress gives a wait its full length again, up to this many times its length in all.
inline constexpr int kMaxProgressFactor = 4;

// Processes besides this one whose threads a wait's run delay includes (the target peer of a two-process
// case, where this process can read its /proc entry). Registered while they run.
void watch_process(pid_t pid, const std::string& role);
void unwatch_process(pid_t pid);

// Run delay of every thread of this process and the watched ones, at one moment.
struct SchedSnapshot {
  std::map<std::pair<pid_t, pid_t>, uint64_t> run_delay_ns;  // (process, thread) -> cumulative run delay
  static SchedSnapshot take();
};
// The largest run delay one thread accrued between two snapshots (a thread born in between counts all of
// its own), and whose thread it was ("the target's thread 1234").
struct Starvation {
  std::chrono::nanoseconds worst{0};
  std::string whose;
};
Starvation starvation_between(const SchedSnapshot& before, const SchedSnapshot& after);
// "/proc/loadavg" as read now (its first three fields), or "unknown".
std::string load_average();

class LivenessDeadline {
 public:
  explicit LivenessDeadline(int timeout_ms);
  // Milliseconds left (0 when expired); re-reads the run delay only once the unextended time is up.
  int left_ms();
  bool expired() { return left_ms() == 0; }
  // The caller saw progress: the wait's full length is given again from now (up to kMaxProgressFactor times
  // its length in all).
  void progressed();
  // The wait was carried out by another process (the target's, asked over the channel), which extended it by
  // the run delay its own threads saw: the time the wait took past its length is the extension it had, and
  // this side's run delay is judged against that (a wait never read here would otherwise count the target's
  // starvation, already made good there, as none made good).
  void waited_elsewhere();
  // How much the wait has been extended so far.
  std::chrono::nanoseconds extension() const { return extension_; }
  // Ends the wait with nothing: on a host that starved the case's threads, records the evidence so that the
  // failure it leads to is inconclusive (verdict.cpp); otherwise the failure stands. The evidence, or "".
  std::string timed_out();
  // Ends the wait with what it waited for: a failure after it is judged as it is.
  static void ended();
  // Evidence that the host starved a wait of another process of the case (the target's reply said so).
  static void starved_elsewhere(const std::string& evidence);

 private:
  using Clock = std::chrono::steady_clock;
  int timeout_ms_;
  std::chrono::nanoseconds extension_cap() const;
  Clock::time_point started_, window_start_;
  std::chrono::nanoseconds extension_{0};  // the run delay seen so far, capped
  bool progress_seen_ = false;
  SchedSnapshot at_start_;
  Starvation seen_;
};

}  // namespace uet::cases
