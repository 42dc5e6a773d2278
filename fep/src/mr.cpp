// Memory registration, basic: milestone 1 sends and receives from any memory, so an MR only records the
// buffer, its access and its key. Keys (Table 2-13 format) and remote access come with RMA (milestone 3);
// the endpoint binding of FI_MR_ENDPOINT is recorded already.
#include "softuet.hpp"

namespace softuet {

namespace {

int mr_close(fid* f) {
  delete obj<Mr>(f);
  return 0;
}

int mr_bind(fid* f, fid* bfid, uint64_t) {
  if (!bfid || bfid->fclass != FI_CLASS_EP) return -FI_EINVAL;
  return mr_bind_ep(obj<Mr>(f), obj<Ep>(bfid));
}

int mr_control(fid* f, int command, void*) {
  Mr* mr = obj<Mr>(f);
  if (command != FI_ENABLE) return -FI_ENOSYS;
  // Enabling without a bound endpoint is allowed: without RMA no peer can reach the MR anyway.
  mr->enabled = true;
  return 0;
}

fi_ops g_mr_fi_ops = {sizeof(fi_ops), mr_close, mr_bind, mr_control, enosys, enosys, enosys};

int make_mr(Domain* d, const void* buf, size_t len, uint64_t access, uint64_t requested_key, void* context,
            fid_mr** out) {
  auto* mr = new (std::nothrow) Mr;
  if (!mr) return -FI_ENOMEM;
  mr->domain = d;
  mr->buf = buf;
  mr->len = len;
  mr->access = access;
  mr->fid.fid.fclass = FI_CLASS_MR;
  mr->fid.fid.context = context;
  mr->fid.fid.ops = &g_mr_fi_ops;
  mr->fid.mem_desc = mr;
  {
    std::lock_guard lock(d->mu);
    // FI_MR_PROV_KEY is not required (digest D.1); the requested key is kept, else one is made up.
    mr->fid.key = requested_key ? requested_key : d->next_mr_key++;
  }
  *out = &mr->fid;
  return 0;
}

}  // namespace

int mr_bind_ep(Mr* mr, Ep* ep) {
  mr->ep = ep;
  return 0;
}

int mr_reg(fid* f, const void* buf, size_t len, uint64_t access, uint64_t, uint64_t requested_key, uint64_t flags,
           fid_mr** mr, void* context) {
  if (!f || f->fclass != FI_CLASS_DOMAIN || !mr || (len && !buf)) return -FI_EINVAL;
  if (flags) return -FI_EBADFLAGS;
  return make_mr(obj<Domain>(f), buf, len, access, requested_key, context, mr);
}

int mr_regv(fid* f, const iovec* iov, size_t count, uint64_t access, uint64_t offset, uint64_t requested_key,
            uint64_t flags, fid_mr** mr, void* context) {
  if (count != 1 || !iov) return count == 0 ? -FI_EINVAL : -FI_ENOSYS;  // mr_iov_limit is 1
  return mr_reg(f, iov[0].iov_base, iov[0].iov_len, access, offset, requested_key, flags, mr, context);
}

int mr_regattr(fid* f, const fi_mr_attr* attr, uint64_t flags, fid_mr** mr) {
  if (!attr) return -FI_EINVAL;
  return mr_regv(f, attr->mr_iov, attr->iov_count, attr->access, attr->offset, attr->requested_key, flags, mr,
                 attr->context);
}

}  // namespace softuet
