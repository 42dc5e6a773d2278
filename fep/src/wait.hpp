// The sleeping half of a blocking call (fi_cq_sread, fi_cntr_wait): DESIGN.md "Progress". The caller runs
// progress and checks its condition itself, then sleeps here until something may have changed.
#pragma once

#include <poll.h>

#include <chrono>

#include "softuet.hpp"

namespace softuet {

class BlockingWait {
 public:
  // `timeout_ms` < 0: no deadline.
  BlockingWait(Domain* d, int timeout_ms)
      : d_(d), infinite_(timeout_ms < 0),
        deadline_(std::chrono::steady_clock::now() + std::chrono::milliseconds(infinite_ ? 0 : timeout_ms)) {}

  // Sleep in poll() on the domain's socket. Returns false, without sleeping, once the deadline has passed.
  bool sleep() {
    int wait_ms = -1;
    if (!infinite_) {
      // Rounded up: a caller must never see its timeout expire early.
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(left.count());
    }
    // Wake at least every 100 ms: the FEP thread drains the socket too, so an operation it completes
    // meanwhile may never make the socket readable for us; and in time for the next retransmission.
    if (wait_ms < 0 || wait_ms > 100) wait_ms = 100;
    {
      std::lock_guard lock(d_->mu);
      flush_outbox(d_);
      wait_ms = transport_wait_ms(d_, wait_ms);
    }
    pollfd p{d_->sock, POLLIN, 0};
    poll(&p, 1, wait_ms);
    return true;
  }

 private:
  Domain* d_;
  bool infinite_;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace softuet
