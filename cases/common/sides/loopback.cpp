#include "loopback.hpp"

#include <rdma/fi_cm.h>
#include <gtest/gtest.h>
#include <rdma/fi_errno.h>

#include <cstdlib>
#include <cstring>

namespace uet::cases {

Loopback::~Loopback() {
  for (fid_ep* e : ep)
    if (e) fi_close(&e->fid);
  close_mrs();
  for (fid_cntr* c : cntrs) fi_close(&c->fid);
}

int Loopback::open(const LoopbackSpec& spec) {
  InfoPtr hints = hints_for(spec.type);
  hints->caps = spec.caps;
  hints->domain_attr->mr_mode = spec.mr_mode;
  hints->domain_attr->tclass = spec.tclass;
  hints->domain_attr->auth_key_size = spec.auth_key_size;
  if (spec.auth_key_size == 3) {
    hints->domain_attr->auth_key = static_cast<uint8_t*>(std::malloc(3));  // fi_freeinfo frees it
    job_key(spec.job, hints->domain_attr->auth_key);
  }
  int rc = open_domain(hints.get(), spec.cq_format);
  if (rc) return rc;
  for (fid_ep*& e : ep) {
    if ((rc = fi_endpoint(domain, info, &e, nullptr))) return failed = "fi_endpoint", rc;
    if ((rc = fi_ep_bind(e, &av->fid, 0))) return failed = "fi_ep_bind(av)", rc;
    if ((rc = fi_ep_bind(e, &cq->fid, FI_TRANSMIT | FI_RECV))) return failed = "fi_ep_bind(cq)", rc;
  }
  return 0;
}

int Loopback::enable() {
  for (int i = 0; i < 2; ++i) {
    if (int rc = fi_enable(ep[i])) return failed = "fi_enable", rc;
  }
  for (int i = 0; i < 2; ++i) {
    const std::vector<uint8_t> n = name(i);
    if (n.empty()) return failed = "fi_getname", -FI_EINVAL;
    if (fi_av_insert(av, n.data(), 1, &addr[i], 0, nullptr) != 1) return failed = "fi_av_insert", -FI_EINVAL;
  }
  return 0;
}

std::vector<uint8_t> Loopback::name(int i) const {
  std::vector<uint8_t> out(512);
  size_t len = out.size();
  if (!ep[i] || fi_getname(&ep[i]->fid, out.data(), &len) != 0) return {};
  out.resize(len);
  return out;
}

void open_pair(Loopback& l, const LoopbackSpec& spec, bool enable) {
  if (manifest().uet) {
    UET_REQUIRE_AUTH_KEY_METHOD(spec.auth_key_size);
  }
  const int rc = l.open(spec);
  if (rc == -FI_ENODATA && !manifest().uet) {
    UET_NOT_APPLICABLE(reason::kNonUetProviderLacks, manifest().provider << " offers no " << fi_tostr(&spec.type, FI_TYPE_EP_TYPE)
                 << " endpoint with caps " << fi_tostr(&spec.caps, FI_TYPE_CAPS) << " and mr_mode 0x" << std::hex << spec.mr_mode);
  }
  ASSERT_EQ(rc, 0) << fi_refused(l.failed, rc);
  if (enable) {
    ASSERT_EQ(l.enable(), 0) << l.failed;
  }
}

}  // namespace uet::cases
