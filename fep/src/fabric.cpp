// The fabric object: close, domain, eq_open. softuet has one fabric, named "softuet".
#include "softuet.hpp"

namespace softuet {

namespace {

int fabric_close(fid* f) {
  delete obj<Fabric>(f);
  return 0;
}

fi_ops g_fabric_fi_ops = {sizeof(fi_ops), fabric_close, enosys, enosys, enosys, enosys, enosys};

int fabric_domain2(fid_fabric* fabric, fi_info* info, fid_domain** dom, uint64_t flags, void* context) {
  if (flags) return -FI_EBADFLAGS;
  return domain_open(fabric, info, dom, context);
}

fi_ops_fabric g_fabric_ops = {sizeof(fi_ops_fabric), domain_open, enosys, eq_open, enosys, enosys, fabric_domain2};

}  // namespace

int fabric_open(fi_fabric_attr* attr, fid_fabric** fabric, void* context) {
  if (!attr || !fabric) return -FI_EINVAL;
  if (attr->name && std::string(attr->name) != "softuet") return -FI_ENODATA;
  auto* f = new (std::nothrow) Fabric;
  if (!f) return -FI_ENOMEM;
  f->name = "softuet";
  f->fid.fid.fclass = FI_CLASS_FABRIC;
  f->fid.fid.context = context;
  f->fid.fid.ops = &g_fabric_fi_ops;
  f->fid.ops = &g_fabric_ops;
  *fabric = &f->fid;
  return 0;
}

}  // namespace softuet
