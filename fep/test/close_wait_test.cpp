// SOFTUET_CLOSE=wait_for_peers: fi_close of an RDM endpoint that other FEPs sent requests to returns once
// their FEPs have closed, or after SOFTUET_CLOSE_WAIT_MS; an initiator on its own FEP is not waited for.
// The initiator FEP is a second domain of this process on a port the kernel picks.
#include <chrono>
#include <cstring>

#include "fixture.hpp"
#include "probe_fabric.hpp"

namespace softuet_test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kBound = std::chrono::milliseconds(1500);

class CloseWait : public SoftuetApi {
 protected:
  // Opens `peer`, a FEP of its own with the default close, and has it send endpoint B one message.
  void PeerSendsToB(softuet_probe::ProbeFabric& peer) {
    {
      ScopedEnv port("SOFTUET_UDP_PORT", "auto"), close("SOFTUET_CLOSE", nullptr);
      ASSERT_EQ(peer.open(FI_MSG), 0) << peer.failed;
    }
    ASSERT_EQ(fi_enable(peer.ep), 0);
    std::vector<uint8_t> b(256);
    size_t len = b.size();
    ASSERT_EQ(fi_getname(&ep_[kB]->fid, b.data(), &len), 0);
    fi_addr_t to = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(fi_av_insert(peer.av, b.data(), 1, &to, 0, nullptr), 1);
    ASSERT_NO_FATAL_FAILURE(Enable());
    char got[8] = {};
    int recv_ctx = 0, send_ctx = 0;
    ASSERT_EQ(fi_recv(ep_[kB], got, sizeof got, nullptr, FI_ADDR_UNSPEC, &recv_ctx), 0);
    ASSERT_EQ(fi_send(peer.ep, "bye", 4, nullptr, to, &send_ctx), 0);
    std::map<void*, fi_cq_data_entry> done;
    ASSERT_NO_FATAL_FAILURE(WaitCompletions({&recv_ctx}, &done));
    for (int i = 0; i < 1000; ++i) {
      fi_cq_data_entry e{};
      const ssize_t n = fi_cq_sread(peer.cq, &e, 1, nullptr, 10);
      if (n == -FI_EAGAIN) continue;
      ASSERT_EQ(n, 1) << fi_err(n);
      ASSERT_EQ(e.op_context, &send_ctx);
      return;
    }
    FAIL() << "the peer's send did not complete";
  }
  // fi_close of endpoint B, timed.
  Clock::duration CloseB() {
    const auto t0 = Clock::now();
    EXPECT_EQ(fi_close(&ep_[kB]->fid), 0);
    ep_[kB] = nullptr;
    return Clock::now() - t0;
  }
  ScopedEnv close_{"SOFTUET_CLOSE", "wait_for_peers"};
  ScopedEnv bound_{"SOFTUET_CLOSE_WAIT_MS", "1500"};
};

TEST_F(CloseWait, WaitsForAnInitiatorStillOpenUpToTheBound) {
  softuet_probe::ProbeFabric peer;
  ASSERT_NO_FATAL_FAILURE(PeerSendsToB(peer));
  const auto took = CloseB();
  EXPECT_GE(took, kBound);
  EXPECT_LT(took, kBound + std::chrono::seconds(1));
}

TEST_F(CloseWait, EndsOnceTheInitiatorHasClosed) {
  softuet_probe::ProbeFabric peer;
  ASSERT_NO_FATAL_FAILURE(PeerSendsToB(peer));
  peer.close();  // its domain's socket closes: the next frame to it earns a port unreachable
  EXPECT_LT(CloseB(), kBound - std::chrono::milliseconds(500));
}

TEST_F(CloseWait, AnEndpointOfTheSameFepIsNotWaitedFor) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  ASSERT_NO_FATAL_FAILURE(SendAToB("hi"));
  EXPECT_LT(CloseB(), kBound - std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace softuet_test
