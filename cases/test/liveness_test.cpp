// The liveness rule's measurements (cases/common/claims/liveness.hpp): whose thread waited longest for a CPU, that a
// wait on a host that runs its threads is never evidence of a busy host, and that one whose threads queue
// behind others on their CPU is.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <thread>
#include <vector>

#include "liveness.hpp"

namespace uet::cases {
void record_starved_wait(const std::string&) {}
void clear_starved_wait() {}
namespace {

TEST(Liveness, TheWorstThreadIsTheOneWhoseRunDelayGrewMost) {
  SchedSnapshot before, after;
  before.run_delay_ns = {{{0, 10}, 1000}, {{0, 11}, 5000}};
  after.run_delay_ns = {{{0, 10}, 9000}, {{0, 11}, 6000}, {{0, 12}, 7000}};
  const Starvation s = starvation_between(before, after);
  EXPECT_EQ(s.worst, std::chrono::nanoseconds(8000));
  EXPECT_EQ(s.whose, "this process's thread 10");
}

TEST(Liveness, AThreadBornDuringTheWaitCountsAllItsDelay) {
  SchedSnapshot before, after;
  after.run_delay_ns = {{{0, 12}, 7000}};
  EXPECT_EQ(starvation_between(before, after).worst, std::chrono::nanoseconds(7000));
}

TEST(Liveness, AnObservationWindowIsNeverEvidence) {
  LivenessDeadline window(kLivenessFloorMs - 1);
  while (!window.expired()) std::this_thread::yield();
  EXPECT_EQ(window.timed_out(), "");
}

TEST(Liveness, AWaitTheTargetCarriedOutIsExtendedByTheTimeItTookPastItsLength) {
  // The target's wait extended itself by its own threads' run delay; this side only sees how long it took.
  const auto started = std::chrono::steady_clock::now();
  LivenessDeadline remote(kLivenessFloorMs);
  std::this_thread::sleep_for(std::chrono::milliseconds(kLivenessFloorMs + 600));
  remote.waited_elsewhere();
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_GE(remote.extension(), std::chrono::milliseconds(600));
  EXPECT_LE(remote.extension(), took - std::chrono::milliseconds(kLivenessFloorMs));
  // Never more than a wait of this side could have been extended by.
  LivenessDeadline long_remote(kLivenessFloorMs);
  std::this_thread::sleep_for(std::chrono::milliseconds(kMaxExtensionFactor * kLivenessFloorMs + kLivenessFloorMs + 100));
  long_remote.waited_elsewhere();
  EXPECT_EQ(long_remote.extension(), std::chrono::milliseconds(kMaxExtensionFactor * kLivenessFloorMs));
  // One that came back within its length had no extension.
  LivenessDeadline quick(kLivenessFloorMs);
  quick.waited_elsewhere();
  EXPECT_EQ(quick.extension(), std::chrono::nanoseconds(0));
}

TEST(Liveness, AWaitWhoseThreadsRanIsTheProvidersAndOneWhoseThreadsQueuedIsTheHosts) {
  // This thread and three spinners share one CPU: each waits for it about three quarters of the time.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
  {
    LivenessDeadline idle(kLivenessFloorMs);
    while (int left = idle.left_ms()) std::this_thread::sleep_for(std::chrono::milliseconds(left));
    EXPECT_EQ(idle.timed_out(), "") << "a thread that slept through its wait was never kept from running";
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (int i = 0; i < 3; ++i) {
    spinners.emplace_back([&] {
      pthread_setaffinity_np(pthread_self(), sizeof one, &one);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  LivenessDeadline busy(kLivenessFloorMs);
  const auto started = std::chrono::steady_clock::now();
  while (!busy.expired()) std::this_thread::yield();
  const auto waited = std::chrono::steady_clock::now() - started;
  const std::string evidence = busy.timed_out();
  // The same starvation, but the wait saw progress: the provider was at work, so its failure stands.
  LivenessDeadline answered(kLivenessFloorMs);
  answered.progressed();
  while (!answered.expired()) std::this_thread::yield();
  const std::string after_progress = answered.timed_out();
  stop = true;
  for (auto& t : spinners) t.join();
  EXPECT_NE(evidence.find("runnable but not running"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("load average"), std::string::npos) << evidence;
  EXPECT_GT(waited, std::chrono::milliseconds(kLivenessFloorMs)) << "the run delay it saw extended the wait";
  EXPECT_EQ(after_progress, "") << "a wait that saw the provider at work is never the host's";
}

}  // namespace
}  // namespace uet::cases
