// Shared credentials (after Cray's DRC): who acquired which, who is granted it, who holds references,
// the limits, the jobs the workload manager says run, and the token key. Kept in the entity's SQLite file
// beside the JobID maps; a reference taken with a service name also maps the JobID to that {pid, service}
// (the job_map table), so that the provider's endpoint checks grant it, and is unmapped when it goes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store.hpp"

namespace uet::entity {

// A refusal the caller should see: an errno and words naming the rule.
struct Refused {
  int err;
  std::string what;
};

class CredStore {
 public:
  // Creates its tables in `store`'s file when they are missing, and the token key on first use.
  explicit CredStore(Store& store);

  struct Caller {
    uint32_t pid;
    uint32_t uid;
    std::vector<uint32_t> gids;  // primary first, then supplementary
    uint32_t job;                // workload-manager job, 0 when none
    uint64_t start;              // process start time: a reference is a process's, not a reused pid's
  };
  struct Cred {
    uint32_t cred;
    uint32_t job_id;
    uint32_t uid, gid, job, flags;
    bool released;
    uint32_t refs;
    std::string grants;
  };
  enum class Kind { uid, gid, job };

  // Each returns the refusal when the rule says no; nothing changes then.
  std::optional<Refused> acquire(const Caller& c, uint32_t flags, Cred* out);
  std::optional<Refused> grant(const Caller& c, uint32_t cred, Kind kind, uint32_t id, bool revoke);
  // A reference for the caller's process (a repeat by a process that holds one takes none and needs no
  // grant: a revoke stops new access only); its JobID, mapped to {pid, service} when service is given.
  std::optional<Refused> access(const Caller& c, uint32_t cred, const std::string& service, uint32_t* job_id);
  std::optional<Refused> release(const Caller& c, uint32_t cred, uint32_t flags);
  std::vector<Cred> list(std::optional<uint32_t> uid, std::optional<uint32_t> job);
  // scope: control::cred::Scope; id: that one's own limit, else the scope's default.
  void set_limit(uint8_t scope, std::optional<uint32_t> id, uint32_t value);

  // The workload manager's view of jobs.
  // `pids`: the processes (with their start times) of the job, and their descendants.
  void job_start(uint32_t job, const std::vector<Store::Process>& pids);
  // Drops the job's references (and maps they made), releases its credentials that are not persistent.
  size_t job_end(uint32_t job);
  // Every job the store knows of that is not in `active` has ended; how many ended.
  size_t reconcile(const std::vector<uint32_t>& active);
  // References held outside any job by processes that no longer exist go (the node's process list; a
  // job's references stay until the job ends).
  size_t drop_dead_processes();
  // The job that JOB_START named process `p` in; 0 when none, or when it named an earlier process of the
  // pid (process_info.hpp walks the ancestors).
  uint32_t registered_job(Store::Process p);
  bool job_known(uint32_t job);

  const std::vector<uint8_t>& token_key() const { return token_key_; }

 private:
  std::optional<Refused> over_limit(const Caller& c);
  void drop_references(const char* where, int64_t value);
  void forget_if_gone(uint32_t cred);
  size_t drop_dead_processes_locked(uint32_t cred);
  std::optional<Cred> find(uint32_t cred);
  Store& store_;
  sqlite3* db_;
  std::vector<uint8_t> token_key_;
  // Repeat access served without SQLite: (cred, pid) -> the reference held.
  struct Held {
    uint32_t job_id;
    uint64_t start;
  };
  std::map<std::pair<uint32_t, uint32_t>, Held> held_;
};

}  // namespace uet::entity
