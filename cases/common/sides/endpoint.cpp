#include "endpoint.hpp"
#include "liveness.hpp"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <thread>

#include "conformance.hpp"

namespace uet::cases {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

// Little-endian: spec/wire.yaml choice direct-auth-key-byte-order (the spec does not give the order).
void job_key(uint32_t job, uint8_t* key) {
  key[0] = job & 0xFF;
  key[1] = (job >> 8) & 0xFF;
  key[2] = (job >> 16) & 0xFF;
}

std::string fi_err(long rc) { return std::to_string(rc) + " (" + fi_strerror(static_cast<int>(rc < 0 ? -rc : rc)) + ")"; }

std::string fi_refused(const std::string& call, long rc) {
  evidence_refusal(Side::initiator, call, rc);
  return call + ": " + fi_err(rc);
}

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

void DomainObjects::own_call_returned(ssize_t rc) {
  if (rc == -FI_EOPNOTSUPP || rc == -FI_ENOSYS) observing(Side::initiator, "api: the initiator's own call returned " + fi_err(rc));
}

DomainObjects::~DomainObjects() { close_domain_objects(); }

void DomainObjects::close_domain_objects() {
  close_mrs();
  if (cq) fi_close(&cq->fid);
  if (av) fi_close(&av->fid);
  if (domain) fi_close(&domain->fid);
  if (fabric) fi_close(&fabric->fid);
  if (info) fi_freeinfo(info);
  cq = nullptr, av = nullptr, domain = nullptr, fabric = nullptr, info = nullptr;
}

void DomainObjects::close_mrs() {
  for (fid_mr* mr : mrs) fi_close(&mr->fid);
  mrs.clear();
}

int DomainObjects::open_domain(const fi_info* hints, fi_cq_format format) {
  int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info);
  if (rc) return failed = "fi_getinfo", info = nullptr, rc;
  if ((rc = fi_fabric(info->fabric_attr, &fabric, nullptr))) return failed = "fi_fabric", rc;
  if ((rc = fi_domain(fabric, info, &domain, nullptr))) return failed = "fi_domain", rc;
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  if ((rc = fi_av_open(domain, &av_attr, &av, nullptr))) return failed = "fi_av_open", rc;
  if ((rc = reader_.open(domain, format, &cq))) return failed = "fi_cq_open", rc;
  return 0;
}

Endpoint::~Endpoint() { close(); }

void Endpoint::close() {
  // The endpoints first, then what they are bound to (MRs, then the base's CQ, AV, domain and fabric).
  for (fid_ep* other : others_) fi_close(&other->fid);
  others_.clear();
  if (ep) fi_close(&ep->fid);
  ep = nullptr;
  close_domain_objects();
}

bool Endpoint::close_within(int timeout_ms) {
  // The objects move to a closer of their own, so that a close left running never races this one's.
  auto closer = std::make_shared<Endpoint>();
  std::swap(closer->others_, others_);
  std::swap(closer->ep, ep);
  std::swap(closer->mrs, mrs);
  std::swap(closer->cq, cq);
  std::swap(closer->av, av);
  std::swap(closer->domain, domain);
  std::swap(closer->fabric, fabric);
  std::swap(closer->info, info);
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> closed = done->get_future();
  std::thread([closer, done]() mutable {
    closer->close();
    done->set_value();
  }).detach();
  return closed.wait_for(std::chrono::milliseconds(timeout_ms)) == std::future_status::ready;
}

int Endpoint::open(const EndpointSpec& spec) {
  InfoPtr hints = hints_for(spec.type);
  hints->caps = spec.caps;
  hints->domain_attr->mr_mode = FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  hints->tx_attr->msg_order = spec.msg_order;
  hints->domain_attr->tclass = spec.tclass;
  if (spec.method == JobMethod::direct) {
    hints->domain_attr->auth_key_size = 3;
    hints->domain_attr->auth_key = static_cast<uint8_t*>(std::malloc(3));  // fi_freeinfo frees it
    job_key(spec.job, hints->domain_attr->auth_key);
  } else if (spec.method == JobMethod::av) {
    hints->domain_attr->auth_key_size = FI_AV_AUTH_KEY;
  }
  int rc = open_domain(hints.get(), FI_CQ_FORMAT_TAGGED);
  if (rc) return rc;
  if ((rc = fi_endpoint(domain, info, &ep, nullptr))) return failed = "fi_endpoint", rc;
  return bind_and_enable(ep);
}

int Endpoint::open_another(uint32_t job, fid_ep** out) {
  *out = nullptr;
  InfoPtr another(fi_dupinfo(info), fi_freeinfo);
  if (!another) return failed = "fi_dupinfo", -FI_ENOMEM;
  // The first endpoint's source address may name its resource index: the provider picks another.
  std::free(another->src_addr);
  another->src_addr = nullptr;
  another->src_addrlen = 0;
  another->ep_attr->auth_key_size = 3;
  another->ep_attr->auth_key = static_cast<uint8_t*>(std::malloc(3));  // fi_freeinfo frees it
  job_key(job, another->ep_attr->auth_key);
  fid_ep* e = nullptr;
  if (int rc = fi_endpoint(domain, another.get(), &e, nullptr)) return failed = "fi_endpoint", rc;
  others_.push_back(e);
  if (int rc = bind_and_enable(e)) return rc;
  *out = e;
  return 0;
}

int Endpoint::bind_and_enable(fid_ep* e) {
  int rc;
  if ((rc = fi_ep_bind(e, &av->fid, 0))) return failed = "fi_ep_bind(av)", rc;
  if ((rc = fi_ep_bind(e, &cq->fid, FI_TRANSMIT | FI_RECV))) return failed = "fi_ep_bind(cq)", rc;
  if ((rc = fi_enable(e))) return failed = "fi_enable", rc;
  return 0;
}

std::vector<uint8_t> Endpoint::name_of(fid_ep* ep) {
  std::vector<uint8_t> out(512);
  size_t len = out.size();
  if (!ep || fi_getname(&ep->fid, out.data(), &len) != 0) return {};
  out.resize(len);
  return out;
}

fi_addr_t Endpoint::insert(const std::vector<uint8_t>& name, fi_addr_t auth_key) {
  fi_addr_t addr = auth_key == FI_ADDR_NOTAVAIL ? FI_ADDR_NOTAVAIL : auth_key;
  const uint64_t flags = auth_key == FI_ADDR_NOTAVAIL ? 0 : FI_AUTH_KEY;
  if (fi_av_insert(av, name.data(), 1, &addr, flags, nullptr) != 1) return FI_ADDR_NOTAVAIL;
  return addr;
}

fi_addr_t Endpoint::insert_auth_key(uint32_t job) {
  uint8_t key[3];
  job_key(job, key);
  fi_addr_t handle = FI_ADDR_NOTAVAIL;
  if (fi_av_insert_auth_key(av, key, sizeof key, &handle, 0) != 0) return FI_ADDR_NOTAVAIL;
  return handle;
}

bool DomainObjects::mr_virt_addr() const { return info && (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR); }
bool DomainObjects::mr_prov_key() const { return info && (info->domain_attr->mr_mode & FI_MR_PROV_KEY); }

uint64_t DomainObjects::remote_addr(const void* base, uint64_t off) const {
  return (mr_virt_addr() ? reinterpret_cast<uint64_t>(base) : 0) + off;
}

int DomainObjects::register_mr_on(fid_ep* ep, void* buf, size_t len, uint64_t requested_key, fid_mr** mr,
                                  const void* key, size_t key_size) {
  *mr = nullptr;
  const uint64_t access = FI_SEND | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE;
  int rc;
  if (!key && key_size == 0) {
    rc = fi_mr_reg(domain, buf, len, access, 0, requested_key, 0, mr, nullptr);
  } else {
    iovec iov{buf, len};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = access;
    attr.requested_key = requested_key;
    attr.auth_key_size = key_size;
    attr.auth_key = static_cast<uint8_t*>(const_cast<void*>(key));
    rc = fi_mr_regattr(domain, &attr, 0, mr);
  }
  if (rc) return rc;
  mrs.push_back(*mr);
  if (info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
    if ((rc = fi_mr_bind(*mr, &ep->fid, 0))) return rc;
    if ((rc = fi_mr_enable(*mr))) return rc;
  }
  return 0;
}

int CqReader::open(fid_domain* domain, fi_cq_format format, fid_cq** cq) {
  fi_cq_attr attr{};
  attr.format = format;
  attr.size = 256;
  attr.wait_obj = FI_WAIT_UNSPEC;
  switch (format) {
    case FI_CQ_FORMAT_CONTEXT: entry_size_ = sizeof(fi_cq_entry); break;
    case FI_CQ_FORMAT_MSG: entry_size_ = sizeof(fi_cq_msg_entry); break;
    case FI_CQ_FORMAT_DATA: entry_size_ = sizeof(fi_cq_data_entry); break;
    default: entry_size_ = sizeof(fi_cq_tagged_entry);
  }
  waitable_ = fi_cq_open(domain, &attr, cq, nullptr) == 0;
  if (!waitable_) {
    attr.wait_obj = FI_WAIT_NONE;
    if (int rc = fi_cq_open(domain, &attr, cq, nullptr)) return rc;
  }
  cq_ = *cq;
  return 0;
}

void CqReader::drain(int wait_ms) {
  alignas(fi_cq_tagged_entry) uint8_t buf[8 * sizeof(fi_cq_tagged_entry)];
  ssize_t n = fi_cq_read(cq_, buf, 8);
  if (n == -FI_EAGAIN && wait_ms > 0 && waitable_) n = fi_cq_sread(cq_, buf, 1, nullptr, wait_ms);
  if (n > 0) {
    for (ssize_t i = 0; i < n; ++i) {
      fi_cq_tagged_entry e{};
      std::memcpy(&e, buf + i * entry_size_, entry_size_);
      Outcome& o = done_[e.op_context];
      o.state = Outcome::completed;
      o.entry = e;
    }
  } else if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(cq_, &err, 0) == 1) {
      Outcome& o = done_[err.op_context];
      o.state = Outcome::failed;
      o.error = err;
    }
  }
}

Outcome CqReader::poll(void* context) {
  drain(0);
  auto it = done_.find(context);
  if (it == done_.end()) return {};
  Outcome o = it->second;
  done_.erase(it);
  return o;
}

Outcome CqReader::wait(void* context, int timeout_ms) {
  LivenessDeadline deadline(timeout_ms);
  for (size_t seen = done_.size();;) {
    Outcome o = poll(context);
    if (o.state != Outcome::timed_out) {
      LivenessDeadline::ended();
      return o;
    }
    // Another operation's completion is progress: the provider is alive, this one may be behind it.
    if (done_.size() > seen) deadline.progressed();
    seen = done_.size();
    const int left = deadline.left_ms();
    if (left == 0) {
      o.host_busy = deadline.timed_out();
      return o;
    }
    drain(std::min(left, 20));
  }
}

size_t CqReader::unclaimed(int ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < deadline) drain(10);
  return done_.size();
}

}  // namespace uet::cases
