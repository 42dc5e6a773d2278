// One softuet domain with two RDM endpoints, A and B, sharing its UDP socket (they differ by resource
// index, so a frame sent to the domain's own address reaches the other endpoint), one CQ and one AV that
// holds both. Run under ctest, which sets FI_PROVIDER_PATH, FI_PROVIDER and the SOFTUET_* variables.
#pragma once

#include <gtest/gtest.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "uet/codec/decoded.hpp"

namespace softuet_test {

inline constexpr int kA = 0;
inline constexpr int kB = 1;

// A variable of the environment set (or unset, for nullptr) for the life of the object, then restored.
// softuet reads its configuration at every fi_getinfo and fi_domain; as a fixture's member it is in place
// before SetUp opens the domain.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_.c_str(), old_->c_str(), 1);
    else unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// "-11 (Resource temporarily unavailable)": what a failed fi_* call returned, for assertion messages.
std::string fi_err(long ret);
// fi_getinfo for softuet endpoints of `type` with `caps` (and `service`): the list (the caller frees it), or
// nullptr with the code in *rc.
fi_info* softuet_info(fi_ep_type type, uint64_t caps, const char* service, int* rc);
// The payload bytes one softuet packet carries on this FEP's path: a datagram is one packet, so it is a DGRAM
// endpoint's max_msg_size (0 when fi_getinfo gives no DGRAM info).
size_t softuet_payload_mtu();

class SoftuetApi : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // A test class changes the fi_getinfo hints here (e.g. the JobID method).
  virtual void AdjustHints(fi_info*) {}

  // Enables both endpoints; a test binds its counters before.
  void Enable();
  // Opens a counter that TearDown closes after the endpoints (a bound counter cannot be closed first).
  fid_cntr* OpenCntr(fi_cntr_events events, fi_wait_obj wait_obj = FI_WAIT_UNSPEC);
  // Reads the CQ with fi_cq_sread until every context in `want` has its entry in `*got`; a fatal failure
  // when `timeout_ms` pass first or an error entry arrives (call it in ASSERT_NO_FATAL_FAILURE).
  void WaitCompletions(const std::vector<void*>& want, std::map<void*, fi_cq_data_entry>* got,
                       int timeout_ms = 10000);
  // Sends the string `text` from A to B, the receive posted first, and checks it landed (endpoints enabled).
  void SendAToB(const std::string& text);
  // Waits for the one completion of `ctx` (10 s at most) and returns its error entry: err 0 when it
  // succeeded, -1 when none came.
  fi_cq_err_entry Outcome(void* ctx);

  // A peer FEP played by a UDP socket of the test, on the domain's IP: B's address with that socket's port
  // and the given FEP capabilities, inserted into the AV. It answers nothing.
  fi_addr_t FakePeer(uint8_t fep_caps);
  // The next frame the fake peer receives (empty after 5 s without one).
  std::vector<uint8_t> Receive();
  static unsigned PdsType(const std::vector<uint8_t>& f) { return f.empty() ? 0 : f[0] >> 3; }
  // Enables the pair, sends one message from A to a fake peer and decodes the request that reaches it (call
  // it in ASSERT_NO_FATAL_FAILURE).
  void SendOneRequest(uet::codec::Decoded* d);
  int fake_sock_ = -1;

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_[2] = {};
  fi_addr_t addr_[2] = {FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL};
  std::vector<fid_cntr*> cntrs_;
};

}  // namespace softuet_test
