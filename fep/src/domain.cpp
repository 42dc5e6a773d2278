// The domain: one FEP (one UDP socket on IP:port) shared by its endpoints (DESIGN.md).
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "softuet.hpp"

namespace softuet {

namespace {

int domain_close(fid* f) {
  Domain* d = obj<Domain>(f);
  {
    std::lock_guard lock(d->mu);
    if (!d->eps.empty()) return -FI_EBUSY;
  }
  transport_close(d);
  delete d;
  return 0;
}

int domain_bind(fid* f, fid* bfid, uint64_t) {
  Domain* d = obj<Domain>(f);
  if (!bfid || bfid->fclass != FI_CLASS_EQ) return -FI_EINVAL;
  std::lock_guard lock(d->mu);
  d->eq = obj<Eq>(bfid);
  return 0;
}

int domain_endpoint2(fid_domain* dom, fi_info* info, fid_ep** ep, uint64_t flags, void* context) {
  if (flags) return -FI_EBADFLAGS;
  return ep_open(dom, info, ep, context);
}

fi_ops g_domain_fi_ops = {sizeof(fi_ops), domain_close, domain_bind, enosys, enosys, enosys, enosys};
// Slots: av_open, cq_open, endpoint, scalable_ep, cntr_open, poll_open, stx_ctx, srx_ctx, query_atomic,
// query_collective, endpoint2.
fi_ops_domain g_domain_ops = {sizeof(fi_ops_domain), av_open, cq_open, ep_open, enosys, cntr_open, enosys,
                              enosys, enosys, query_atomic, enosys, domain_endpoint2};
fi_ops_mr g_mr_ops = {sizeof(fi_ops_mr), mr_reg, mr_regv, mr_regattr};

}  // namespace

int domain_open(fid_fabric* fabric, fi_info* info, fid_domain** out, void* context) {
  if (!fabric || !info || !out || !info->domain_attr) return -FI_EINVAL;
  std::string error;
  std::optional<Config> cfg = load_config(&error);
  if (!cfg) {
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "invalid configuration: %s\n", error.c_str());
    return -FI_EINVAL;
  }
  std::optional<LocalIp> ip = local_ip(*cfg, &error);
  if (!ip) {
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "%s\n", error.c_str());
    return -FI_EINVAL;
  }
  if (info->domain_attr->name && ip->text != info->domain_attr->name) return -FI_ENODATA;
  // A JobID method left out (SOFTUET_JOB_ID_METHODS): no domain of it, as fi_getinfo offers none.
  const size_t key_size = info->domain_attr->auth_key_size;
  if (key_size && !(cfg->job_id_methods & (key_size == FI_AV_AUTH_KEY ? kJobIdAv : kJobIdDirect))) {
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "auth_key_size %zu: that JobID method is not offered (SOFTUET_JOB_ID_METHODS)\n", key_size);
    return -FI_EOPNOTSUPP;
  }
  const PathMtu mtu = fep_path_mtu(cfg->mtu, ip->ip);
  if (!mtu.payload) {
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "the MTU of %s (%u) leaves no room for a UET packet's payload\n", ip->text.c_str(),
            mtu.link_mtu);
    return -FI_EINVAL;
  }
  FI_INFO(&g_prov, FI_LOG_DOMAIN, "path MTU %u (%s): %zu payload bytes per packet\n", mtu.link_mtu,
          mtu.configured ? "SOFTUET_MTU" : mtu.link_mtu ? "interface" : "unknown", mtu.payload);
  auto* d = new (std::nothrow) Domain;
  if (!d) return -FI_ENOMEM;
  d->fabric = obj<Fabric>(fabric);
  d->cfg = *cfg;
  // SOFTUET_FAULTS_ONCE=PATH: the knobs act only in the first process that opens a domain while PATH does not
  // exist (it creates it), so a rerun does not repeat the failure: how the suite's tests make a flaky check.
  // At fi_domain, not fi_getinfo: a probe of the provider (fi_info) opens no domain and must not take the turn.
  if (const char* once = std::getenv("SOFTUET_FAULTS_ONCE"); once && *once) {
    static const bool first = [once] {
      const int fd = ::open(once, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd >= 0) ::close(fd);
      return fd >= 0;
    }();
    if (!first) d->cfg.faults = 0;
  }
  d->ip = *ip;
  d->mtu = mtu;
  d->pid_on_fep = process_pid_on_fep();
  d->initiator = cfg->initiator_id.value_or(default_initiator(*ip));
  d->av_auth_keys = info->domain_attr->auth_key_size == FI_AV_AUTH_KEY;
  d->dscp = fault(d, Fault::wrong_dscp) ? 0 : data_dscp(*cfg, info->domain_attr->tclass);
  d->fid.fid.fclass = FI_CLASS_DOMAIN;
  d->fid.fid.context = context;
  d->fid.fid.ops = &g_domain_fi_ops;
  d->fid.ops = &g_domain_ops;
  d->fid.mr = &g_mr_ops;
  if (int ret = transport_open(d)) {
    delete d;
    return ret;
  }
  *out = &d->fid;
  return 0;
}

}  // namespace softuet
