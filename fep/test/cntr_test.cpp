// Completion counters (fi_cntr): the API on its own, then counting real traffic between the endpoints.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fixture.hpp"

namespace softuet_test {
namespace {

using Clock = std::chrono::steady_clock;

long elapsed_ms(Clock::time_point since) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count());
}

// ---- the API, no traffic ----

TEST_F(SoftuetApi, GetinfoAdvertisesCounters) { EXPECT_GT(info_->domain_attr->cntr_cnt, 0u); }

TEST_F(SoftuetApi, CntrReadAddSetAndErrors) {
  fid_cntr* c = OpenCntr(FI_CNTR_EVENTS_COMP);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(fi_cntr_read(c), 0u);
  EXPECT_EQ(fi_cntr_readerr(c), 0u);
  EXPECT_EQ(fi_cntr_add(c, 5), 0);
  EXPECT_EQ(fi_cntr_add(c, 2), 0);
  EXPECT_EQ(fi_cntr_read(c), 7u);
  EXPECT_EQ(fi_cntr_set(c, 3), 0);
  EXPECT_EQ(fi_cntr_read(c), 3u);
  EXPECT_EQ(fi_cntr_adderr(c, 2), 0);
  EXPECT_EQ(fi_cntr_adderr(c, 1), 0);
  EXPECT_EQ(fi_cntr_readerr(c), 3u);
  EXPECT_EQ(fi_cntr_read(c), 3u) << "the error value is separate from the value";
  EXPECT_EQ(fi_cntr_seterr(c, 0), 0);
  EXPECT_EQ(fi_cntr_readerr(c), 0u);
  EXPECT_EQ(fi_cntr_read(c), 3u);
}

TEST_F(SoftuetApi, CntrWaitReturnsWhenThresholdIsMet) {
  fid_cntr* c = OpenCntr(FI_CNTR_EVENTS_BYTES);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(fi_cntr_set(c, 10), 0);
  EXPECT_EQ(fi_cntr_wait(c, 10, 5000), 0);
  EXPECT_EQ(fi_cntr_wait(c, 4, 0), 0);
  EXPECT_EQ(fi_cntr_wait(c, 0, -1), 0);
}

TEST_F(SoftuetApi, CntrWaitTimesOut) {
  fid_cntr* c = OpenCntr(FI_CNTR_EVENTS_COMP);
  ASSERT_NE(c, nullptr);
  constexpr int kTimeoutMs = 300;
  constexpr long kSlackMs = 10;  // clock granularity only: returning early is the bug looked for
  const auto start = Clock::now();
  EXPECT_EQ(fi_cntr_wait(c, 1, kTimeoutMs), -FI_ETIMEDOUT);
  const long took = elapsed_ms(start);
  EXPECT_GE(took, kTimeoutMs - kSlackMs);
  EXPECT_LT(took, kTimeoutMs + 2000) << "fi_cntr_wait overslept its timeout";
  EXPECT_EQ(fi_cntr_wait(c, 1, 0), -FI_ETIMEDOUT);
  EXPECT_EQ(fi_cntr_readerr(c), 0u) << "a timeout leaves the error value alone (fi_cntr(3))";
}

TEST_F(SoftuetApi, CntrOpenRejectsBadAttributes) {
  fid_cntr* c = nullptr;
  fi_cntr_attr attr{};
  const int no_such_events = FI_CNTR_EVENTS_BYTES + 1;  // stored as a C caller would: not a C++ enum value
  static_assert(sizeof attr.events == sizeof no_such_events);
  std::memcpy(&attr.events, &no_such_events, sizeof no_such_events);
  EXPECT_EQ(fi_cntr_open(domain_, &attr, &c, nullptr), -FI_EINVAL) << "no such events value";
  for (fi_wait_obj w : {FI_WAIT_FD, FI_WAIT_SET, FI_WAIT_MUTEX_COND, FI_WAIT_YIELD}) {
    attr = {};
    attr.wait_obj = w;
    EXPECT_EQ(fi_cntr_open(domain_, &attr, &c, nullptr), -FI_ENOSYS) << "wait_obj " << w;
  }
  attr = {};
  attr.flags = 1;
  EXPECT_EQ(fi_cntr_open(domain_, &attr, &c, nullptr), -FI_EBADFLAGS) << "flags are reserved";
  EXPECT_EQ(c, nullptr);
  // All-zero attributes (COMP, FI_WAIT_NONE) are the default and valid.
  attr = {};
  ASSERT_EQ(fi_cntr_open(domain_, &attr, &c, nullptr), 0);
  EXPECT_EQ(fi_close(&c->fid), 0);
}

TEST_F(SoftuetApi, CntrCloseWhileBoundIsBusy) {
  fid_cntr* c = OpenCntr(FI_CNTR_EVENTS_COMP);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(fi_ep_bind(ep_[kA], &c->fid, FI_SEND | FI_RECV), 0);
  EXPECT_EQ(fi_close(&c->fid), -FI_EBUSY);
  ASSERT_EQ(fi_close(&ep_[kA]->fid), 0);
  ep_[kA] = nullptr;
  EXPECT_EQ(fi_close(&c->fid), 0) << "closing the endpoint releases its bindings";
  cntrs_.clear();
}

TEST_F(SoftuetApi, CntrBindTwiceForOneEventIsRefused) {
  fid_cntr* c1 = OpenCntr(FI_CNTR_EVENTS_COMP);
  fid_cntr* c2 = OpenCntr(FI_CNTR_EVENTS_BYTES);
  ASSERT_TRUE(c1 && c2);
  ASSERT_EQ(fi_ep_bind(ep_[kA], &c1->fid, FI_SEND), 0);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c2->fid, FI_SEND), -FI_EINVAL);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c1->fid, FI_TRANSMIT), -FI_EINVAL) << "FI_TRANSMIT is FI_SEND";
  // A refused bind takes no event at all: the free event of each pair stays free, whichever order an
  // implementation walks the flags in.
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c2->fid, FI_SEND | FI_RECV), -FI_EINVAL);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c2->fid, FI_RECV), 0);
  ASSERT_EQ(fi_ep_bind(ep_[kA], &c1->fid, FI_REMOTE_WRITE), 0);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c2->fid, FI_READ | FI_REMOTE_WRITE), -FI_EINVAL);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c2->fid, FI_READ), 0);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c2->fid, FI_WRITE | FI_REMOTE_READ), 0);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c1->fid, FI_WRITE), -FI_EINVAL);
  // One counter may count for several endpoints.
  EXPECT_EQ(fi_ep_bind(ep_[kB], &c1->fid, FI_SEND), 0);
}

TEST_F(SoftuetApi, CntrBindRejectsBadFlags) {
  fid_cntr* c = OpenCntr(FI_CNTR_EVENTS_COMP);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c->fid, 0), -FI_EBADFLAGS) << "no event named";
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c->fid, FI_SEND | FI_SELECTIVE_COMPLETION), -FI_EBADFLAGS);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c->fid, FI_MSG), -FI_EBADFLAGS);
  // Nothing was bound by the refused calls, so the counter closes.
  EXPECT_EQ(fi_close(&c->fid), 0);
  cntrs_.clear();
}

TEST_F(SoftuetApi, CntrBindAfterEnableIsRefused) {
  fid_cntr* c = OpenCntr(FI_CNTR_EVENTS_COMP);
  ASSERT_NE(c, nullptr);
  ASSERT_NO_FATAL_FAILURE(Enable());
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c->fid, FI_SEND), -FI_EOPBADSTATE);
}

// A second domain needs its own UDP port: this binary's port + 1, set only while it opens.
TEST_F(SoftuetApi, CntrOfAnotherDomainIsRefused) {
  const char* port = std::getenv("SOFTUET_UDP_PORT");
  ASSERT_NE(port, nullptr) << "run through ctest, which sets SOFTUET_UDP_PORT";
  const std::string saved = port;
  setenv("SOFTUET_UDP_PORT", std::to_string(std::stoi(saved) + 1).c_str(), 1);
  fid_domain* other = nullptr;
  const int r = fi_domain(fabric_, info_, &other, nullptr);
  setenv("SOFTUET_UDP_PORT", saved.c_str(), 1);
  ASSERT_EQ(r, 0) << "second fi_domain: " << fi_err(r);
  fi_cntr_attr attr{};
  fid_cntr* c = nullptr;
  ASSERT_EQ(fi_cntr_open(other, &attr, &c, nullptr), 0);
  EXPECT_EQ(fi_ep_bind(ep_[kA], &c->fid, FI_SEND), -FI_EINVAL);
  EXPECT_EQ(fi_close(&c->fid), 0);
  EXPECT_EQ(fi_close(&other->fid), 0);
}

// ---- counting traffic ----
// These depend on the data path calling cntr_success when an operation completes (send side: when the
// send completes; receive side: when a receive completes) and cntr_failure when one fails. Until it does,
// they fail on the counter values.

class CountingTraffic : public SoftuetApi {
 protected:
  // Posts `n` receives on B, sends `n` messages of `size` bytes A -> B, and waits for every completion.
  void Exchange(int n, size_t size) {
    std::vector<std::vector<uint8_t>> rx(n, std::vector<uint8_t>(size)), tx(n, std::vector<uint8_t>(size, 0x5a));
    std::vector<int> rx_ctx(n), tx_ctx(n);
    std::vector<void*> want;
    for (int i = 0; i < n; ++i) {
      const ssize_t r = fi_recv(ep_[kB], rx[i].data(), size, nullptr, FI_ADDR_UNSPEC, &rx_ctx[i]);
      ASSERT_EQ(r, 0) << "fi_recv: " << fi_err(r);
      want.push_back(&rx_ctx[i]);
      want.push_back(&tx_ctx[i]);
    }
    for (int i = 0; i < n; ++i) {
      const ssize_t r = fi_send(ep_[kA], tx[i].data(), size, nullptr, addr_[kB], &tx_ctx[i]);
      ASSERT_EQ(r, 0) << "fi_send: " << fi_err(r);
    }
    std::map<void*, fi_cq_data_entry> got;
    ASSERT_NO_FATAL_FAILURE(WaitCompletions(want, &got));
    for (int i = 0; i < n; ++i) EXPECT_EQ(got[&rx_ctx[i]].len, size);
  }
};

// DATA PATH DEPENDENT (see above).
TEST_F(CountingTraffic, SendCompletionsAndReceivedBytes) {
  fid_cntr* comp = OpenCntr(FI_CNTR_EVENTS_COMP);
  fid_cntr* bytes = OpenCntr(FI_CNTR_EVENTS_BYTES);
  ASSERT_TRUE(comp && bytes);
  ASSERT_EQ(fi_ep_bind(ep_[kA], &comp->fid, FI_SEND), 0);
  ASSERT_EQ(fi_ep_bind(ep_[kB], &bytes->fid, FI_RECV), 0);
  ASSERT_NO_FATAL_FAILURE(Enable());
  ASSERT_NO_FATAL_FAILURE(Exchange(3, 100));
  EXPECT_EQ(fi_cntr_wait(comp, 3, 5000), 0) << "send COMP counter at " << fi_cntr_read(comp);
  EXPECT_EQ(fi_cntr_read(comp), 3u);
  EXPECT_EQ(fi_cntr_read(bytes), 300u) << "receive BYTES counter";
  EXPECT_EQ(fi_cntr_readerr(comp), 0u);
  EXPECT_EQ(fi_cntr_readerr(bytes), 0u);
}

// DATA PATH DEPENDENT (see above). The same counters on the other sides.
TEST_F(CountingTraffic, SentBytesAndReceiveCompletions) {
  fid_cntr* comp = OpenCntr(FI_CNTR_EVENTS_COMP);
  fid_cntr* bytes = OpenCntr(FI_CNTR_EVENTS_BYTES);
  ASSERT_TRUE(comp && bytes);
  ASSERT_EQ(fi_ep_bind(ep_[kA], &bytes->fid, FI_SEND), 0);
  ASSERT_EQ(fi_ep_bind(ep_[kB], &comp->fid, FI_RECV), 0);
  ASSERT_NO_FATAL_FAILURE(Enable());
  ASSERT_NO_FATAL_FAILURE(Exchange(3, 100));
  EXPECT_EQ(fi_cntr_wait(comp, 3, 5000), 0) << "receive COMP counter at " << fi_cntr_read(comp);
  EXPECT_EQ(fi_cntr_read(comp), 3u);
  EXPECT_EQ(fi_cntr_wait(bytes, 300, 5000), 0) << "send BYTES counter at " << fi_cntr_read(bytes);
  EXPECT_EQ(fi_cntr_read(bytes), 300u);
  EXPECT_EQ(fi_cntr_readerr(comp), 0u);
  EXPECT_EQ(fi_cntr_readerr(bytes), 0u);
}

}  // namespace
}  // namespace softuet_test
