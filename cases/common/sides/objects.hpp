// The libfabric objects a case opens, closed in reverse order whatever the case does (RAII).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <string>

namespace uet::cases {

class Objects {
 public:
  Objects() = default;
  Objects(const Objects&) = delete;
  Objects& operator=(const Objects&) = delete;
  ~Objects();

  // Each returns 0 or the negative fi_* error, and names the call that failed in `failed`.
  int open_domain(fi_info* info);
  int open_endpoint(fi_info* info, fi_av_type av_type = FI_AV_TABLE);  // with AV, CQ and EQ bound, enabled

  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_eq* eq = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  std::string failed;
};

}  // namespace uet::cases
