// Two endpoints of one domain in one process, sharing an AV (each holds the other's address) and a CQ:
// what single-process cases need to move data without a peer process. Opened for the provider under
// test and the endpoint type of the case; closed in reverse order (RAII). Completions are read with a
// deadline and kept by context, so a case waits for the one it wants and never hangs.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "endpoint.hpp"

namespace uet::cases {

// A flag bit no libfabric 2.x call defines: bad flags must be refused (-FI_EBADFLAGS), not ignored.
inline constexpr uint64_t kNoSuchFlag = uint64_t{1} << 15;

struct LoopbackSpec {
  fi_ep_type type = FI_EP_RDM;
  uint64_t caps = FI_MSG;
  uint64_t mr_mode = FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  size_t auth_key_size = 0;           // 0 (indirect), 3 (direct, with `job`) or FI_AV_AUTH_KEY
  uint32_t job = 0;
  uint32_t tclass = 0;
  fi_cq_format cq_format = FI_CQ_FORMAT_TAGGED;
};

class Loopback {
 public:
  Loopback() = default;
  Loopback(const Loopback&) = delete;
  Loopback& operator=(const Loopback&) = delete;
  ~Loopback();

  // fi_getinfo, fabric, domain, AV, CQ and the two endpoints (bound to AV and CQ, not enabled, so a case
  // can bind counters first). 0 or the negative fi_* error, `failed` naming the call; -FI_ENODATA: no
  // fi_getinfo match.
  int open(const LoopbackSpec& spec);
  // Enables both endpoints and inserts each one's name into the AV (addr[0], addr[1]).
  int enable();
  std::vector<uint8_t> name(int i) const;

  // Registers `len` bytes at `buf` for remote access, bound to endpoint `i` where FI_MR_ENDPOINT asks.
  int register_mr(int i, void* buf, size_t len, uint64_t requested_key, fid_mr** mr);
  uint64_t remote_addr(const void* base, uint64_t off) const;

  // Retries a transmit call while it returns -FI_EAGAIN (progressing the CQ), up to `timeout_ms`.
  template <typename Call>
  ssize_t post(Call&& call, int timeout_ms = 5000) {
    for (int waited = 0;; ++waited) {
      const ssize_t rc = call();
      if (rc != -FI_EAGAIN || waited >= timeout_ms) return rc;
      drain(1);
    }
  }
  // Waits until the operation with `context` completes or fails. The entry is read in the CQ's format
  // into the prefix of a tagged entry (the formats share their leading fields); `raw` keeps its bytes.
  Outcome wait(void* context, int timeout_ms = 5000);
  // Reads the CQ for `ms`; how many completions and errors it holds that no wait() took.
  size_t unclaimed(int ms);

  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep[2] = {};
  fi_addr_t addr[2] = {FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL};
  std::vector<fid_mr*> mrs;
  std::vector<fid_cntr*> cntrs;  // closed after the endpoints
  std::string failed;

 private:
  void drain(int wait_ms);
  size_t entry_size_ = sizeof(fi_cq_tagged_entry);
  bool cq_waitable_ = false;
  std::map<void*, Outcome> done_;
};

// The size of one CQ entry of `format`.
size_t cq_entry_size(fi_cq_format format);

}  // namespace uet::cases
