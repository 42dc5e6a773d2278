// Memory registration (§2.2.5.3.4): 64-bit keys in the Table 2-13 format for user-assigned keys (softuet
// does not require FI_MR_PROV_KEY, digest D.1), MRs bound to endpoints (FI_MR_ENDPOINT) and enabled before
// peers reach them, an optional JobID (spec 2.2.4.3.3), and a completion counter that an IDEMPOTENT_SAFE
// MR refuses (spec 2.2.5.3.4.1-p).
#include <cstring>

#include "softuet.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;

namespace {

constexpr uint64_t kIdempotentSafe = uint64_t{1} << wire::k_mr_key_idempotent_safe_bit;
constexpr uint64_t kOptimized = uint64_t{1} << wire::k_mr_key_optimized_bit;

int mr_close(fid* f) {
  Mr* mr = obj<Mr>(f);
  Domain* d = mr->domain;
  {
    std::lock_guard lock(d->mu);
    d->mrs.erase(mr->key);
  }
  delete mr;
  return 0;
}

int mr_bind(fid* f, fid* bfid, uint64_t flags) {
  Mr* mr = obj<Mr>(f);
  if (!bfid) return -FI_EINVAL;
  std::lock_guard lock(mr->domain->mu);
  if (bfid->fclass == FI_CLASS_EP) {
    if (flags) return -FI_EBADFLAGS;
    return mr_bind_ep(mr, obj<Ep>(bfid));
  }
  if (bfid->fclass != FI_CLASS_CNTR) return -FI_EINVAL;
  if (flags & ~uint64_t{FI_REMOTE_WRITE}) return -FI_EBADFLAGS;
  // An IDEMPOTENT_SAFE MR may be the target of idempotent operations, which a completion counter could
  // count twice: binding one MUST fail (spec 2.2.5.3.4.1-p).
  if ((mr->key & kIdempotentSafe) && !fault(mr->domain, Fault::cntr_on_idempotent_mr)) return -FI_EINVAL;
  if (mr->cntr) return -FI_EINVAL;
  mr->cntr = obj<Cntr>(bfid);
  return 0;
}

int mr_control(fid* f, int command, void*) {
  Mr* mr = obj<Mr>(f);
  if (command != FI_ENABLE) return -FI_ENOSYS;
  std::lock_guard lock(mr->domain->mu);
  mr->enabled = true;
  return 0;
}

fi_ops g_mr_fi_ops = {sizeof(fi_ops), mr_close, mr_bind, mr_control, enosys, enosys, enosys};

// A user-assigned key must have the Table 2-13 format: reserved and vendor bits 0 (vendor bits are for
// provider keys), and an OPTIMIZED key's RKEY within the optimized range 0..4095.
bool key_valid(uint64_t key) {
  if (key & (wire::k_mr_key_reserved_mask | wire::k_mr_key_vendor_mask)) return false;
  if ((key & kOptimized) && (key & wire::k_mr_key_rkey_mask & ~wire::k_mr_key_optimized_rkey_mask)) return false;
  return true;
}

int make_mr(Domain* d, const void* buf, size_t len, uint64_t access, uint64_t requested_key,
            std::optional<uint32_t> job_id, void* context, fid_mr** out) {
  if (!key_valid(requested_key)) return -FI_EKEYREJECTED;
  std::lock_guard lock(d->mu);
  uint64_t key = requested_key;
  if (fault(d, Fault::key_bits_dropped)) key &= ~(kIdempotentSafe | kOptimized);
  if (d->mrs.count(key)) return -FI_ENOKEY;  // a key names one buffer of the domain
  auto* mr = new (std::nothrow) Mr;
  if (!mr) return -FI_ENOMEM;
  mr->domain = d;
  mr->buf = buf;
  mr->len = len;
  // No access flags means every access (fi_mr(3)).
  mr->access = access ? access : (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
  mr->key = key;
  mr->job_id = job_id;
  mr->fid.fid.fclass = FI_CLASS_MR;
  mr->fid.fid.context = context;
  mr->fid.fid.ops = &g_mr_fi_ops;
  mr->fid.mem_desc = mr;
  mr->fid.key = key;
  d->mrs[key] = mr;
  *out = &mr->fid;
  return 0;
}

}  // namespace

int mr_bind_ep(Mr* mr, Ep* ep) {
  if (ep->domain != mr->domain) return -FI_EINVAL;
  mr->ep = ep;
  return 0;
}

namespace {

// The checks every registration call makes (mr_iov_limit is 1).
int check_reg(const fid* f, const iovec* iov, size_t count, uint64_t flags, fid_mr* const* mr) {
  if (count != 1 || !iov) return count == 0 ? -FI_EINVAL : -FI_ENOSYS;
  if (!f || f->fclass != FI_CLASS_DOMAIN || !mr || (iov[0].iov_len && !iov[0].iov_base)) return -FI_EINVAL;
  if (flags) return -FI_EBADFLAGS;
  return 0;
}

}  // namespace

int mr_reg(fid* f, const void* buf, size_t len, uint64_t access, uint64_t offset, uint64_t requested_key,
           uint64_t flags, fid_mr** mr, void* context) {
  const iovec iov{const_cast<void*>(buf), len};
  return mr_regv(f, &iov, 1, access, offset, requested_key, flags, mr, context);
}

int mr_regv(fid* f, const iovec* iov, size_t count, uint64_t access, uint64_t, uint64_t requested_key,
            uint64_t flags, fid_mr** mr, void* context) {
  if (int ret = check_reg(f, iov, count, flags, mr)) return ret;
  return make_mr(obj<Domain>(f), iov[0].iov_base, iov[0].iov_len, access, requested_key, std::nullopt, context, mr);
}

int mr_regattr(fid* f, const fi_mr_attr* attr, uint64_t flags, fid_mr** mr) {
  if (!attr) return -FI_EINVAL;
  if (int ret = check_reg(f, attr->mr_iov, attr->iov_count, flags, mr)) return ret;
  std::optional<uint32_t> job_id;
  if (int ret = mr_job_id(obj<Domain>(f), attr, &job_id)) return ret;
  return make_mr(obj<Domain>(f), attr->mr_iov[0].iov_base, attr->mr_iov[0].iov_len, attr->access,
                 attr->requested_key, job_id, attr->context, mr);
}

Mr* mr_for_access(Ep* ep, uint64_t key, uint64_t offset, size_t len, uint64_t access, uint32_t job_id, uint64_t* rc) {
  Domain* d = ep->domain;
  auto it = d->mrs.find(key);
  Mr* mr = it == d->mrs.end() ? nullptr : it->second;
  // FI_MR_ENDPOINT: an MR is reachable only through the endpoint it is bound to, once enabled.
  if (!mr || !mr->enabled || mr->ep != ep) {
    *rc = wire::ses_return_code::RC_BAD_MKEY;
    return nullptr;
  }
  if (mr->job_id && *mr->job_id != job_id && !fault(d, Fault::no_authorization)) {
    *rc = wire::ses_return_code::RC_PERM_VIOLATION;
    return nullptr;
  }
  if ((mr->access & access) != access) {
    *rc = wire::ses_return_code::RC_OP_VIOLATION;
    return nullptr;
  }
  // Out of bounds: RC_BAD_ADDR. With the fault knob the access is clipped to the MR instead (callers
  // always clip), so the bounds check of the suite has something to catch.
  if ((offset > mr->len || len > mr->len - offset) && !fault(d, Fault::mr_bounds_unchecked)) {
    *rc = wire::ses_return_code::RC_BAD_ADDR;
    return nullptr;
  }
  *rc = wire::ses_return_code::RC_OK;
  return mr;
}

}  // namespace softuet
