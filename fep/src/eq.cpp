// The event queue, minimal: RDM and DGRAM endpoints raise no connection events, so an EQ only carries what
// fi_eq_write puts in and asynchronous errors (none yet). Must exist: every endpoint MUST support one (F.1).
#include <chrono>
#include <cstring>

#include "softuet.hpp"

namespace softuet {

namespace {

int eq_close(fid* f) {
  delete obj<Eq>(f);
  return 0;
}

ssize_t eq_read_locked(Eq* eq, uint32_t* event, void* buf, size_t len, uint64_t flags) {
  if (!eq->errors.empty()) return -FI_EAVAIL;
  if (eq->events.empty()) return -FI_EAGAIN;
  Eq::Event& e = eq->events.front();
  if (len < e.data.size()) return -FI_ETOOSMALL;
  if (event) *event = e.event;
  if (buf) std::memcpy(buf, e.data.data(), e.data.size());
  const ssize_t n = static_cast<ssize_t>(e.data.size());
  if (!(flags & FI_PEEK)) eq->events.pop_front();
  return n;
}

ssize_t eq_read(fid_eq* f, uint32_t* event, void* buf, size_t len, uint64_t flags) {
  Eq* eq = obj<Eq>(f);
  std::lock_guard lock(eq->mu);
  return eq_read_locked(eq, event, buf, len, flags);
}

ssize_t eq_readerr(fid_eq* f, fi_eq_err_entry* buf, uint64_t flags) {
  Eq* eq = obj<Eq>(f);
  if (!buf) return -FI_EINVAL;
  std::lock_guard lock(eq->mu);
  if (eq->errors.empty()) return -FI_EAGAIN;
  *buf = eq->errors.front();
  if (!(flags & FI_PEEK)) eq->errors.pop_front();
  return sizeof(*buf);
}

ssize_t eq_write(fid_eq* f, uint32_t event, const void* buf, size_t len, uint64_t flags) {
  Eq* eq = obj<Eq>(f);
  if (len && !buf) return -FI_EINVAL;
  {
    std::lock_guard lock(eq->mu);
    // Error entries are written by the provider only; fi_eq_write(3) takes no flags softuet supports.
    if (flags) return -FI_EBADFLAGS;
    const auto* p = static_cast<const uint8_t*>(buf);
    eq->events.push_back({event, std::vector<uint8_t>(p, p + len)});
  }
  eq->cv.notify_all();
  return static_cast<ssize_t>(len);
}

ssize_t eq_sread(fid_eq* f, uint32_t* event, void* buf, size_t len, int timeout, uint64_t flags) {
  Eq* eq = obj<Eq>(f);
  std::unique_lock lock(eq->mu);
  auto ready = [&] { return !eq->events.empty() || !eq->errors.empty(); };
  if (timeout < 0) {
    eq->cv.wait(lock, ready);
  } else if (!eq->cv.wait_for(lock, std::chrono::milliseconds(timeout), ready)) {
    return -FI_EAGAIN;
  }
  return eq_read_locked(eq, event, buf, len, flags);
}

const char* eq_strerror(fid_eq*, int prov_errno, const void*, char* buf, size_t len) {
  const char* s = fi_strerror(prov_errno);
  if (buf && len) {
    snprintf(buf, len, "%s", s);
    return buf;
  }
  return s;
}

fi_ops g_eq_fi_ops = {sizeof(fi_ops), eq_close, enosys, enosys, enosys, enosys, enosys};
fi_ops_eq g_eq_ops = {sizeof(fi_ops_eq), eq_read, eq_readerr, eq_write, eq_sread, eq_strerror};

}  // namespace

int eq_open(fid_fabric* fabric, fi_eq_attr* attr, fid_eq** out, void* context) {
  if (!attr || !out) return -FI_EINVAL;
  if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) return -FI_ENOSYS;
  auto* eq = new (std::nothrow) Eq;
  if (!eq) return -FI_ENOMEM;
  eq->fabric = obj<Fabric>(fabric);
  eq->fid.fid.fclass = FI_CLASS_EQ;
  eq->fid.fid.context = context;
  eq->fid.fid.ops = &g_eq_fi_ops;
  eq->fid.ops = &g_eq_ops;
  *out = &eq->fid;
  return 0;
}

}  // namespace softuet
