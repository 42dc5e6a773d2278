// The target side of a two-process case: a peer process that opens one endpoint (and, when asked, others
// of its domain) and does what the case (the initiator) asks over the channel — insert addresses and auth
// keys, register MRs, post receives — and reports what it observed (completions, buffer contents), in typed
// JSON requests and replies (target.cpp). The
// case asserts; the target only acts and observes, so one target serves every case.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "endpoint.hpp"
#include "peer.hpp"

namespace uet::cases {

// What a posted receive at the target got (or how a send of the target ended).
struct RecvResult {
  enum { completed, failed, none } state = none;
  uint64_t len = 0, flags = 0, data = 0, tag = 0;
  int err = 0, prov_errno = 0;
  std::vector<uint8_t> bytes;  // the received bytes (completed; failed: what a truncated receive placed)
};

struct RemoteMr {
  uint64_t key = 0;
  uint64_t base = 0;  // the remote address of the MR's first byte (0 without FI_MR_VIRT_ADDR)
};

class Target {
 public:
  // Starts the peer and opens its endpoint; false with error(). `env` goes over the peer environment.
  // `before_open`, when given, runs with the target's pid once it runs and before it opens its endpoint
  // (a launcher's part: grant the process its JobID); false from it stops the start.
  bool start(const EndpointSpec& spec, const std::map<std::string, std::string>& env = {},
             const std::vector<std::string>& unset_env = {},
             const std::function<bool(pid_t, std::string*)>& before_open = {});
  const std::string& error() const { return error_; }
  // The negative fi_* errno of the last request the target refused (-FI_EOTHER: it is gone or broke the
  // protocol); 0 after one it did.
  long last_rc() const { return last_rc_; }
  pid_t pid() const { return peer_.pid(); }
  // Runs the target at `where` instead of where the cell plan puts it (a case about two endpoints of one
  // node starts its target beside this process); before start().
  void place_at(const TargetPlace& where) { place_ = where; }
  // The target endpoint's fi_getname.
  const std::vector<uint8_t>& name() const { return name_; }
  // That address as the initiator's provider takes it: the same bytes when both providers lay out fi_getname
  // alike, else encoded in the initiator's layout over `initiator_name` (its own fi_getname); empty with
  // error() when a field cannot be carried over.
  std::vector<uint8_t> name_for_initiator(const std::vector<uint8_t>& initiator_name);

  // Opens another RDM endpoint of the target's domain with JobID `job` (direct method); its fi_getname, or
  // empty with error().
  std::vector<uint8_t> open_another_endpoint(uint32_t job);
  // Each records the failure (error()) and returns a failure value when the target refuses or is gone.
  // insert: an address of the initiator's provider, carried as fields when the target's lays them out otherwise.
  fi_addr_t insert(const std::vector<uint8_t>& name, fi_addr_t auth_key = FI_ADDR_NOTAVAIL);
  fi_addr_t insert_auth_key(uint32_t job);
  // auth: "any" (fi_mr_reg), "direct:<JobID>" (fi_mr_regattr, auth_key_size 3) or "av:<auth key handle>"
  // (fi_mr_regattr, auth_key_size FI_AV_AUTH_KEY, struct fi_mr_auth_key), each optionally prefixed with
  // "optimized+" for an OPTIMIZED key of RKEY `id` and/or "idempotent+" for an IDEMPOTENT_SAFE key.
  // `fill` is every byte's value.
  bool register_mr(int id, size_t len, uint8_t fill, const std::string& auth, RemoteMr* out);
  std::vector<uint8_t> read_mr(int id, size_t off, size_t len);
  bool write_mr(int id, size_t off, const std::vector<uint8_t>& bytes);
  // Posts receive `id` of `len` bytes (fi_trecv when tagged). `src`: a target AV address or
  // FI_ADDR_UNSPEC; `auth_key`: an auth key handle (fi_recvmsg with FI_AUTH_KEY) or FI_ADDR_NOTAVAIL.
  // 0 or the fi_* error of the post.
  int post_recv(int id, size_t len, bool tagged = false, uint64_t tag = 0, uint64_t ignore = 0,
                fi_addr_t src = FI_ADDR_UNSPEC, fi_addr_t auth_key = FI_ADDR_NOTAVAIL);
  // The outcome of receive `id`, waiting up to `timeout_ms` (0: only what is there now). Id -1: the
  // target CQ entry of an operation that used no receive (remote CQ data of an RMA write).
  RecvResult completion(int id, int timeout_ms);
  // Sends `len` bytes of `fill` (fi_tsend with `tag` when tagged) to target AV address `dest` and waits
  // up to `timeout_ms` for its completion: completed, failed (err, prov_errno) or none.
  RecvResult send(fi_addr_t dest, size_t len, uint8_t fill, bool tagged = false, uint64_t tag = 0,
                  int timeout_ms = 15000);
  // Ends the peer; its exit status (0 when its endpoint closed cleanly).
  int finish();

 private:
  // One request of the target protocol (target.cpp) and its reply; false with error_ and last_rc_ set when
  // refused or lost.
  bool call(const nlohmann::json& request, nlohmann::json* reply, int timeout_ms = 15000);
  Peer peer_;
  std::optional<TargetPlace> place_;
  std::vector<uint8_t> name_;
  std::string error_;
  long last_rc_ = 0;
};

}  // namespace uet::cases
