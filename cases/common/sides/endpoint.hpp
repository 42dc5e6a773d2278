// One endpoint of a two-process case, on either side: fabric, domain, AV, CQ and endpoint opened for
// the provider under test with the capabilities and JobID method a case asks for, closed in reverse
// order (RAII). Completions are read with a deadline and kept by context, so a case waits for the one
// it wants whatever order they come in.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "conformance.hpp"

namespace uet::cases {

// How the endpoint gets its JobID (spec 2.2.4.1): indirect (auth_key_size 0, the provider's), direct
// (auth_key_size 3, `job`), or the AV method (auth_key_size FI_AV_AUTH_KEY, keys inserted later).
enum class JobMethod { indirect, direct, av };
// As manifests name it (job_id_methods).
inline const char* job_method_name(JobMethod m) {
  return m == JobMethod::direct ? "direct" : m == JobMethod::av ? "av" : "indirect";
}

struct EndpointSpec {
  fi_ep_type type = FI_EP_RDM;
  uint64_t caps = FI_MSG;
  JobMethod method = JobMethod::indirect;
  uint32_t job = 0;  // direct method
  uint64_t msg_order = 0;  // tx_attr->msg_order asked for (delivery mode selection, spec 2.2.6)
  uint32_t tclass = 0;     // domain_attr->tclass (FI_TC_UNSPEC: the default data traffic class)
};

// The outcome of one operation: its completion, its error entry, or neither before the deadline.
struct Outcome {
  enum { completed, failed, timed_out } state = timed_out;
  fi_cq_tagged_entry entry{};
  fi_cq_err_entry error{};
  // timed_out on a host that starved the case's threads: the evidence (liveness.hpp); else empty.
  std::string host_busy;
};

// Reads one CQ and keeps what it read by op_context, so a case waits for the completion it wants
// whatever order they come in. Entries of any format land in the prefix of a tagged entry (the formats
// share their leading fields).
class CqReader {
 public:
  // fi_cq_open with a wait object (fi_cq_sread) when the provider offers one, else without.
  int open(fid_domain* domain, fi_cq_format format, fid_cq** cq);
  // Reads what the CQ holds now (or waits up to `wait_ms` for something).
  void drain(int wait_ms);
  // A completion already read for `context` (after reading once more), without waiting.
  Outcome poll(void* context);
  // Waits until the operation with `context` completes or fails, progressing the provider.
  Outcome wait(void* context, int timeout_ms);
  // Reads for `ms`; how many completions and errors no poll/wait took.
  size_t unclaimed(int ms);

  // Runs a transmit call, retrying it while it returns -FI_EAGAIN (the provider wants progress first,
  // e.g. while it connects) until `timeout_ms` pass; its last return value.
  template <typename Call>
  ssize_t post(Call&& call, int timeout_ms) {
    for (int waited = 0;; waited += 1) {
      const ssize_t rc = call();
      if (rc != -FI_EAGAIN || waited >= timeout_ms) return rc;
      drain(1);
    }
  }

 private:
  fid_cq* cq_ = nullptr;
  size_t entry_size_ = sizeof(fi_cq_tagged_entry);
  bool waitable_ = false;
  std::map<void*, Outcome> done_;
};

// What every endpoint of a case stands on: fi_info, fabric, domain, an FI_AV_TABLE AV and a CQ read by a
// CqReader, closed in reverse order after what a derived class opened on them.
class DomainObjects {
 public:
  DomainObjects() = default;
  DomainObjects(const DomainObjects&) = delete;
  DomainObjects& operator=(const DomainObjects&) = delete;
  ~DomainObjects();
  // Closes the MRs, CQ, AV, domain and fabric (what a derived class opened on them first); idempotent.
  void close_domain_objects();

  // Runs a transmit call, retrying it while it returns -FI_EAGAIN (the provider wants progress first,
  // e.g. while it connects) until `timeout_ms` pass; its last return value.
  template <typename Call>
  ssize_t post(Call&& call, int timeout_ms = 10000) {
    const ssize_t rc = reader_.post(call, timeout_ms);
    own_call_returned(rc);
    return rc;
  }
  // Waits until the operation with `context` completes or fails, progressing the provider.
  // What the case asserts next is this side's completion (in the initiator: the initiator's API).
  Outcome wait(void* context, int timeout_ms = 10000) {
    observing(Side::initiator, "api: the initiator's completion");
    return reader_.wait(context, timeout_ms);
  }
  // A completion already written for `context` (after progressing once), without waiting.
  Outcome poll(void* context) { return reader_.poll(context); }
  // Progresses the provider, keeping what the CQ holds for a later wait() or poll().
  void progress() { reader_.drain(0); }
  // Reads the CQ for `ms`; how many completions and errors it holds that no wait() or poll() took.
  size_t unclaimed(int ms) { return reader_.unclaimed(ms); }

  // The remote address of offset `off` in an MR at `base` (FI_MR_VIRT_ADDR: virtual address, else offset).
  uint64_t remote_addr(const void* base, uint64_t off) const;
  bool mr_virt_addr() const;
  bool mr_prov_key() const;

  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  std::vector<fid_mr*> mrs;  // closed before the CQ (close_mrs)
  std::string failed;

 protected:
  // fi_getinfo for `hints`, then fabric, domain, AV and CQ. 0 or the negative fi_* error; `failed` names
  // the call. -FI_ENODATA: fi_getinfo had no match.
  int open_domain(const fi_info* hints, fi_cq_format format);
  // Registers `len` bytes at `buf` for remote access, bound to `ep` and enabled where FI_MR_ENDPOINT asks;
  // kept in `mrs`. `key`: nullptr = fi_mr_reg (any JobID); else fi_mr_regattr with that auth_key/size.
  int register_mr_on(fid_ep* ep, void* buf, size_t len, uint64_t requested_key, fid_mr** mr, const void* key,
                     size_t key_size);
  void close_mrs();

 private:
  // An operation this side's provider says it does not do (-FI_EOPNOTSUPP, -FI_ENOSYS) is this side's own,
  // whatever the case looked at before the call: what is asserted next is blamed on the initiator.
  static void own_call_returned(ssize_t rc);
  CqReader reader_;
};

class Endpoint : public DomainObjects {
 public:
  ~Endpoint();
  // Closes every object, endpoints first; idempotent.
  void close();
  // close() on a thread of its own: false when the provider's fi_close calls had not returned within
  // `timeout_ms` (they are left running, on objects this one no longer holds).
  bool close_within(int timeout_ms);

  // 0 or the negative fi_* error; `failed` names the call. -FI_ENODATA: fi_getinfo had no match.
  int open(const EndpointSpec& spec);
  std::vector<uint8_t> name() const { return name_of(ep); }
  // Opens another endpoint of the same type on this domain, AV and CQ, with JobID `job` (direct method, by
  // fi_ep_attr's auth_key): a FEP with endpoints of several JobIDs. Closed before `ep`. 0 or the fi_* error.
  int open_another(uint32_t job, fid_ep** out);
  static std::vector<uint8_t> name_of(fid_ep* ep);
  // fi_av_insert of a peer's name; FI_ADDR_NOTAVAIL when refused. `auth_key` (an fi_av_insert_auth_key
  // handle) inserts it with FI_AUTH_KEY: sends to it carry that JobID.
  fi_addr_t insert(const std::vector<uint8_t>& name, fi_addr_t auth_key = FI_ADDR_NOTAVAIL);
  // fi_av_insert_auth_key of a JobID (3 bytes, choice direct-auth-key-byte-order); FI_ADDR_NOTAVAIL when refused.
  fi_addr_t insert_auth_key(uint32_t job);
  // Registers `len` bytes at `buf` for remote access (FI_MR_ENDPOINT: bound and enabled). `job_key`:
  // nullptr = fi_mr_reg (any JobID); else fi_mr_regattr with that auth_key/size. 0 or the fi_* error.
  int register_mr(void* buf, size_t len, uint64_t requested_key, fid_mr** mr, const void* job_key = nullptr,
                  size_t job_key_size = 0) {
    return register_mr_on(ep, buf, len, requested_key, mr, job_key, job_key_size);
  }

  fid_ep* ep = nullptr;

 private:
  // Binds `e` to the AV and CQ and enables it.
  int bind_and_enable(fid_ep* e);
  std::vector<fid_ep*> others_;  // open_another's
};

// The 3-byte auth key of JobID `job` (direct and AV methods).
void job_key(uint32_t job, uint8_t* key);

// "-13 (Permission denied)": an fi_* return code for assertion messages.
std::string fi_err(long rc);
// "fi_domain: -13 (Permission denied)" for the message of the assertion that `call` of this process was
// refused; that refusal is the cause of the failure (evidence_refusal).
std::string fi_refused(const std::string& call, long rc);
std::vector<uint8_t> from_hex(const std::string& hex);

}  // namespace uet::cases
