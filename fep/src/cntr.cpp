// Completion counters (fi_cntr): FI_CNTR_EVENTS_COMP and FI_CNTR_EVENTS_BYTES, both required of a profile
// that needs counters (digest F.1). Reads and waits first run the domain's progress (manual progress); the
// data path counts through cntr_success/cntr_failure.
#include <cstring>

#include "softuet.hpp"
#include "wait.hpp"

namespace softuet {

namespace {

// A C caller can store any int in an enum field; loading one outside the enumerators' range as the C++
// enum is undefined (UBSan stops on it), so attributes are read as the int they are.
template <typename E>
int enum_as_int(const E& e) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

uint64_t cntr_read(fid_cntr* f) {
  Cntr* c = obj<Cntr>(f);
  std::lock_guard lock(c->domain->mu);
  progress(c->domain);
  return c->value.load();
}

uint64_t cntr_readerr(fid_cntr* f) {
  Cntr* c = obj<Cntr>(f);
  std::lock_guard lock(c->domain->mu);
  progress(c->domain);
  return c->err.load();
}

int cntr_add(fid_cntr* f, uint64_t v) {
  obj<Cntr>(f)->value.fetch_add(v);
  return 0;
}

int cntr_set(fid_cntr* f, uint64_t v) {
  obj<Cntr>(f)->value.store(v);
  return 0;
}

int cntr_adderr(fid_cntr* f, uint64_t v) {
  obj<Cntr>(f)->err.fetch_add(v);
  return 0;
}

int cntr_seterr(fid_cntr* f, uint64_t v) {
  obj<Cntr>(f)->err.store(v);
  return 0;
}

// fi_cntr(3) makes waiting on an FI_WAIT_NONE counter invalid for the application, but this wait needs no
// wait object (it polls the domain's socket), so it is served whatever wait_obj the counter has.
int cntr_wait(fid_cntr* f, uint64_t threshold, int timeout) {
  Cntr* c = obj<Cntr>(f);
  // "Any change in a counter's error value will unblock any thread inside fi_cntr_wait" (fi_cntr(3));
  // -FI_EAVAIL, as libfabric's own util counters say it.
  const uint64_t err_before = c->err.load();
  BlockingWait wait(c->domain, timeout);
  for (;;) {
    {
      std::lock_guard lock(c->domain->mu);
      progress(c->domain);
    }
    if (c->value.load() >= threshold) return 0;
    if (c->err.load() != err_before) return -FI_EAVAIL;
    if (!wait.sleep()) return -FI_ETIMEDOUT;
  }
}

int cntr_close(fid* f) {
  Cntr* c = obj<Cntr>(f);
  {
    std::lock_guard lock(c->domain->mu);
    if (c->binds) return -FI_EBUSY;  // fi_cntr(3): an endpoint still counts into it
  }
  delete c;
  return 0;
}

fi_ops g_cntr_fi_ops = {sizeof(fi_ops), cntr_close, enosys, enosys, enosys, enosys, enosys};
fi_ops_cntr g_cntr_ops = {sizeof(fi_ops_cntr), cntr_read, cntr_readerr, cntr_add, cntr_set, cntr_wait,
                          cntr_adderr, cntr_seterr};

}  // namespace

int cntr_open(fid_domain* domain, fi_cntr_attr* attr, fid_cntr** out, void* context) {
  if (!domain || !attr || !out) return -FI_EINVAL;
  // fi_cntr_events has exactly these two values in libfabric 2.x and softuet supports both, so anything
  // else is not an unsupported feature (-FI_ENOSYS) but a value that does not exist: -FI_EINVAL.
  const int events = enum_as_int(attr->events);
  if (events != FI_CNTR_EVENTS_COMP && events != FI_CNTR_EVENTS_BYTES) return -FI_EINVAL;
  // FD, wait sets, mutex/cond, yield: real libfabric features softuet does not offer.
  const int wait_obj = enum_as_int(attr->wait_obj);
  if (wait_obj != FI_WAIT_NONE && wait_obj != FI_WAIT_UNSPEC) return -FI_ENOSYS;
  if (attr->flags) return -FI_EBADFLAGS;  // "reserved for future use, and must be set to 0"
  auto* c = new (std::nothrow) Cntr;
  if (!c) return -FI_ENOMEM;
  c->domain = obj<Domain>(domain);
  c->events = static_cast<fi_cntr_events>(events);
  c->fid.fid.fclass = FI_CLASS_CNTR;
  c->fid.fid.context = context;
  c->fid.fid.ops = &g_cntr_fi_ops;
  c->fid.ops = &g_cntr_ops;
  *out = &c->fid;
  return 0;
}

void cntr_success(Cntr* c, size_t bytes) {
  if (!c) return;
  c->value.fetch_add(c->events == FI_CNTR_EVENTS_BYTES ? bytes : 1);
}

// fi_cntr(3): on error the transfer size is not applied; the error value grows by 1 for either kind.
void cntr_failure(Cntr* c) {
  if (c) c->err.fetch_add(1);
}

}  // namespace softuet
