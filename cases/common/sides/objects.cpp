#include "objects.hpp"

namespace uet::cases {

namespace {
void close(fid_t fid) {
  if (fid) fi_close(fid);
}
}  // namespace

Objects::~Objects() {
  close(ep ? &ep->fid : nullptr);
  close(cq ? &cq->fid : nullptr);
  close(av ? &av->fid : nullptr);
  close(eq ? &eq->fid : nullptr);
  close(domain ? &domain->fid : nullptr);
  close(fabric ? &fabric->fid : nullptr);
}

int Objects::open_domain(fi_info* info) {
  if (int rc = fi_fabric(info->fabric_attr, &fabric, nullptr)) return failed = "fi_fabric", rc;
  if (int rc = fi_domain(fabric, info, &domain, nullptr)) return failed = "fi_domain", rc;
  return 0;
}

int Objects::open_endpoint(fi_info* info, fi_av_type av_type) {
  if (int rc = open_domain(info)) return rc;
  fi_eq_attr eq_attr{};
  if (int rc = fi_eq_open(fabric, &eq_attr, &eq, nullptr)) return failed = "fi_eq_open", rc;
  fi_av_attr av_attr{};
  av_attr.type = av_type;
  if (int rc = fi_av_open(domain, &av_attr, &av, nullptr)) return failed = "fi_av_open", rc;
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_CONTEXT;
  if (int rc = fi_cq_open(domain, &cq_attr, &cq, nullptr)) return failed = "fi_cq_open", rc;
  if (int rc = fi_endpoint(domain, info, &ep, nullptr)) return failed = "fi_endpoint", rc;
  if (int rc = fi_ep_bind(ep, &av->fid, 0)) return failed = "fi_ep_bind(av)", rc;
  if (int rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) return failed = "fi_ep_bind(cq)", rc;
  if (info->ep_attr->type != FI_EP_DGRAM) {
    if (int rc = fi_ep_bind(ep, &eq->fid, 0)) return failed = "fi_ep_bind(eq)", rc;
  }
  if (int rc = fi_enable(ep)) return failed = "fi_enable", rc;
  return 0;
}

}  // namespace uet::cases
