// The FEP thread of each RDM domain, and its end: when the domain closes, and at the latest when the
// process exits. An application may exit with its domain open (nothing in libfabric forbids it). Its FEP
// thread must not run on while exit destroys the provider's statics and libfabric's destructor dlcloses
// the provider: a thread that woke then ran in unmapped code (a probe that left its domain open died of
// SIGSEGV after its last line, once in a CI run).
#include <pthread.h>
#include <sys/poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "softuet.hpp"

namespace softuet {

namespace {

// The domains whose FEP thread runs. Its lock is taken before any domain's mutex, never under one:
// whoever holds it may join a thread that waits for a domain's mutex.
struct Running {
  std::mutex mu;
  std::vector<Domain*> domains;
  bool exit_hook = false;  // fep_threads_stop_all is registered with atexit
  bool exiting = false;    // fep_threads_stop_all ran: no thread starts again
};

// Lives to the end of the process (never destroyed): the exit hook uses it.
Running& running() {
  static auto* r = new Running;
  return *r;
}

// Caller holds running().mu.
void stop(Domain* d) {
  d->stopping.store(true);
  if (d->fep_thread.joinable()) d->fep_thread.join();
}

void serve(Domain* d) {
  uint64_t seen = d->app_progress_calls.load(std::memory_order_relaxed);
  while (!d->stopping.load()) {
    const uint64_t calls = d->app_progress_calls.load(std::memory_order_relaxed);
    if (calls != seen) {
      // The application ran progress since the last look: let it, and look again later.
      seen = calls;
      std::this_thread::sleep_for(kFepThreadStandBack);
      if (d->outbox_waiting.load(std::memory_order_relaxed)) {
        // Frames a CQ read left, and the application has not called since: they go now.
        std::lock_guard lock(d->mu);
        flush_outbox(d);
      }
      continue;
    }
    int wait_ms;
    {
      std::lock_guard lock(d->mu);
      wait_ms = transport_wait_ms(d, 20);  // 20 ms bounds how long stopping the thread waits for it
    }
    pollfd pfd{d->sock, POLLIN, 0};
    if (poll(&pfd, 1, wait_ms) < 0 && errno != EINTR) break;
    if (d->stopping.load()) break;
    std::lock_guard lock(d->mu);
    transport_drain(d);
    flush_outbox(d);
  }
}

}  // namespace

void fep_thread_start(Domain* d) {
  // The FEP thread stands in for the NIC: it runs the same progress as the application's calls, when a
  // frame arrives or a retransmission is due, so ACKs and retransmissions never wait for the application
  // (fi_pingpong, say, blocks on its TCP control socket while its peer waits for an ACK). While the
  // application itself polls, the thread only checks back every kFepThreadStandBack. Only RDM endpoints
  // need it: a datagram domain has no ACK to send and nothing to retransmit.
  Running& r = running();
  std::lock_guard lock(r.mu);
  if (d->fep_thread.joinable() || r.exiting) return;
  if (!r.exit_hook) r.exit_hook = std::atexit(fep_threads_stop_all) == 0;
  d->fep_thread = std::thread(serve, d);
  pthread_setname_np(d->fep_thread.native_handle(), kFepThreadName);
  r.domains.push_back(d);
}

void fep_thread_stop(Domain* d) {
  Running& r = running();
  std::lock_guard lock(r.mu);
  r.domains.erase(std::remove(r.domains.begin(), r.domains.end(), d), r.domains.end());
  stop(d);
}

// At exit (atexit from this library runs before exit destroys the statics that were made before it was
// registered, and at dlclose), and in the provider's cleanup.
void fep_threads_stop_all() {
  Running& r = running();
  std::lock_guard lock(r.mu);
  r.exiting = true;
  for (Domain* d : r.domains) stop(d);
  r.domains.clear();
}

}  // namespace softuet
