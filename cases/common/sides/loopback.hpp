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
#include <string>
#include <vector>

#include "conformance.hpp"
#include "job_id_methods.hpp"
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

class Loopback : public DomainObjects {
 public:
  ~Loopback();

  // The domain's objects and the two endpoints (bound to AV and CQ, not enabled, so a case can bind
  // counters first). 0 or the negative fi_* error, `failed` naming the call; -FI_ENODATA: no fi_getinfo
  // match.
  int open(const LoopbackSpec& spec);
  // Enables both endpoints and inserts each one's name into the AV (addr[0], addr[1]).
  int enable();
  std::vector<uint8_t> name(int i) const;
  // Registers `len` bytes at `buf` for remote access (fi_mr_reg), bound to endpoint `i` where
  // FI_MR_ENDPOINT asks.
  int register_mr(int i, void* buf, size_t len, uint64_t requested_key, fid_mr** mr) {
    return register_mr_on(ep[i], buf, len, requested_key, mr, nullptr, 0);
  }

  fid_ep* ep[2] = {};
  fi_addr_t addr[2] = {FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL};
  std::vector<fid_cntr*> cntrs;  // closed after the endpoints and MRs
};

// Opens `l` (and enables it when `enable`) for a case: a provider that does not claim UET and has no such
// endpoint makes the case "not applicable", any other failure fails it. Call it through UET_LOOPBACK.
void open_pair(Loopback& l, const LoopbackSpec& spec, bool enable = true);

}  // namespace uet::cases

#define UET_LOOPBACK(...)                 \
  ASSERT_NO_FATAL_FAILURE(__VA_ARGS__); \
  if (IsSkipped()) return
