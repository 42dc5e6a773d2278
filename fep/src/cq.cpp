// Completion queues: the four formats, read/readfrom/readerr, and sread that blocks in poll() on the
// domain's socket (DESIGN.md "Progress"). Every read first runs the domain's progress (manual progress).
#include <cstring>

#include "softuet.hpp"
#include "wait.hpp"

namespace softuet {

namespace {

size_t entry_size(fi_cq_format f) {
  switch (f) {
    case FI_CQ_FORMAT_MSG: return sizeof(fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA: return sizeof(fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED: return sizeof(fi_cq_tagged_entry);
    default: return sizeof(fi_cq_entry);
  }
}

void write_entry(fi_cq_format f, const Completion& c, void* out) {
  switch (f) {
    case FI_CQ_FORMAT_MSG: {
      fi_cq_msg_entry e{c.context, c.flags, c.len};
      std::memcpy(out, &e, sizeof e);
      break;
    }
    case FI_CQ_FORMAT_DATA: {
      fi_cq_data_entry e{c.context, c.flags, c.len, c.buf, c.data};
      std::memcpy(out, &e, sizeof e);
      break;
    }
    case FI_CQ_FORMAT_TAGGED: {
      fi_cq_tagged_entry e{c.context, c.flags, c.len, c.buf, c.data, c.tag};
      std::memcpy(out, &e, sizeof e);
      break;
    }
    default: {
      fi_cq_entry e{c.context};
      std::memcpy(out, &e, sizeof e);
    }
  }
}

ssize_t read_locked(Cq* cq, void* buf, size_t count, fi_addr_t* src) {
  if (!cq->errors.empty()) return -FI_EAVAIL;
  if (cq->entries.empty()) return -FI_EAGAIN;
  const size_t size = entry_size(cq->format);
  size_t n = 0;
  for (; n < count && !cq->entries.empty(); ++n) {
    const Completion& c = cq->entries.front();
    write_entry(cq->format, c, static_cast<uint8_t*>(buf) + n * size);
    if (src) src[n] = c.src;
    cq->entries.pop_front();
  }
  return static_cast<ssize_t>(n);
}

ssize_t cq_readfrom(fid_cq* f, void* buf, size_t count, fi_addr_t* src) {
  Cq* cq = obj<Cq>(f);
  if (count && !buf) return -FI_EINVAL;
  std::lock_guard lock(cq->domain->mu);
  progress_deferring_output(cq->domain);
  const ssize_t n = read_locked(cq, buf, count, src);
  // Completions go to the application first; its next call sends the ACKs. Nothing to hand over: now.
  if (n <= 0) flush_outbox(cq->domain);
  return n;
}

ssize_t cq_read(fid_cq* f, void* buf, size_t count) { return cq_readfrom(f, buf, count, nullptr); }

ssize_t cq_readerr(fid_cq* f, fi_cq_err_entry* buf, uint64_t flags) {
  Cq* cq = obj<Cq>(f);
  if (!buf) return -FI_EINVAL;
  std::lock_guard lock(cq->domain->mu);
  progress(cq->domain);
  if (cq->errors.empty()) return -FI_EAGAIN;
  // fi_cq_readerr(3): err_data belongs to the provider unless the caller gives err_data_size (1.5+).
  fi_cq_err_entry e = cq->errors.front();
  e.err_data = nullptr;
  e.err_data_size = 0;
  *buf = e;
  if (!(flags & FI_PEEK)) cq->errors.pop_front();
  return 1;
}

ssize_t cq_sreadfrom(fid_cq* f, void* buf, size_t count, fi_addr_t* src, const void* cond, int timeout) {
  Cq* cq = obj<Cq>(f);
  if (cond) return -FI_EINVAL;  // no wait conditions (FI_CQ_COND_NONE only)
  BlockingWait wait(cq->domain, timeout);
  for (;;) {
    ssize_t ret = cq_readfrom(f, buf, count, src);
    if (ret != -FI_EAGAIN) return ret;
    if (!wait.sleep()) return -FI_EAGAIN;
  }
}

ssize_t cq_sread(fid_cq* f, void* buf, size_t count, const void* cond, int timeout) {
  return cq_sreadfrom(f, buf, count, nullptr, cond, timeout);
}

const char* cq_strerror(fid_cq*, int prov_errno, const void*, char* buf, size_t len) {
  // prov_errno carries a SES return code (digest F.5) once responses exist; until then it is an FI_E*.
  const char* s = fi_strerror(prov_errno);
  if (buf && len) {
    snprintf(buf, len, "%s", s);
    return buf;
  }
  return s;
}

int cq_close(fid* f) {
  delete obj<Cq>(f);
  return 0;
}

fi_ops g_cq_fi_ops = {sizeof(fi_ops), cq_close, enosys, enosys, enosys, enosys, enosys};
fi_ops_cq g_cq_ops = {sizeof(fi_ops_cq), cq_read, cq_readfrom, cq_readerr, cq_sread, cq_sreadfrom, enosys,
                      cq_strerror};

}  // namespace

int cq_open(fid_domain* domain, fi_cq_attr* attr, fid_cq** out, void* context) {
  if (!domain || !attr || !out) return -FI_EINVAL;
  switch (attr->format) {
    case FI_CQ_FORMAT_UNSPEC:
    case FI_CQ_FORMAT_CONTEXT:
    case FI_CQ_FORMAT_MSG:
    case FI_CQ_FORMAT_DATA:
    case FI_CQ_FORMAT_TAGGED:
      break;
    default:
      return -FI_ENOSYS;
  }
  if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) return -FI_ENOSYS;
  if (attr->flags & ~uint64_t{0}) {
    // No flags (FI_AFFINITY, FI_PEER) are supported.
    return -FI_EBADFLAGS;
  }
  auto* cq = new (std::nothrow) Cq;
  if (!cq) return -FI_ENOMEM;
  cq->domain = obj<Domain>(domain);
  cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
  cq->fid.fid.fclass = FI_CLASS_CQ;
  cq->fid.fid.context = context;
  cq->fid.fid.ops = &g_cq_fi_ops;
  cq->fid.ops = &g_cq_ops;
  *out = &cq->fid;
  return 0;
}

void cq_push(Cq* cq, const Completion& c) { cq->entries.push_back(c); }
void cq_push_error(Cq* cq, const fi_cq_err_entry& e) { cq->errors.push_back(e); }

}  // namespace softuet
