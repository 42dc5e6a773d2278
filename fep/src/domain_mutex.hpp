// The domain's one lock (DESIGN.md, "Progress and threading"). Every fi_* call takes it once; nothing
// under it takes it again, so it need not be recursive: a recursive mutex cost about 17 more instructions
// per lock and unlock, 2 % of a datagram round trip's user-space instructions. Debug builds (the ASan
// tests) check the rule instead: a path that locks twice aborts with a message rather than hanging.
#pragma once

#include <mutex>

#ifndef NDEBUG
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#endif

namespace softuet {

#ifdef NDEBUG
using DomainMutex = std::mutex;
#else
class DomainMutex {
 public:
  DomainMutex() {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&m_, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  ~DomainMutex() { pthread_mutex_destroy(&m_); }
  DomainMutex(const DomainMutex&) = delete;
  DomainMutex& operator=(const DomainMutex&) = delete;

  void lock() { check(pthread_mutex_lock(&m_), "lock"); }
  void unlock() { check(pthread_mutex_unlock(&m_), "unlock"); }

 private:
  static void check(int err, const char* what) {
    if (!err) return;
    std::fprintf(stderr,
                 "softuet: domain %s: %s (a path took the domain lock twice, or released one it did not hold)\n",
                 what, std::strerror(err));
    std::abort();
  }
  pthread_mutex_t m_;
};
#endif

}  // namespace softuet
