// The entity's state that must outlive a restart, in SQLite: every change is committed (synchronous,
// write-ahead log) before the request that made it is acknowledged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace uet::entity {

class Store {
 public:
  // Opens (creating if needed) the database at `path`, it and its -wal, -shm and -journal 0600 and of this
  // process's user, in a folder no other user may write (prepare_private_file); throws std::runtime_error naming
  // the file and what is wrong (SQLite's words) when it cannot, or when PRAGMA quick_check finds it damaged
  // (then nothing is written).
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // A process over time: its pid and its start time (/proc/PID/stat), 0 when no process had the pid. The
  // rows keyed by a pid are those of the one process `processes` names for it; a process of another start
  // time with the pid is another process, and is granted none of them.
  struct Process {
    uint32_t pid;
    uint64_t start;
  };
  // Makes `p` the process the rows of its pid belong to, inside the caller's transaction: when they
  // belonged to another (an earlier process of the pid, now gone), they go first. True when rows went.
  bool claim(Process p);
  // Another table whose rows are keyed by a pid (column `pid`), created by another part of the entity in
  // this file: claim() empties it of an earlier process's rows too.
  void also_keyed_by_pid(std::string table) { pid_tables_.push_back(std::move(table)); }

  // A security binding: secure domain `sdi` for the traffic of JobID `job_id` (spec 2.2.9).
  struct Binding {
    uint32_t sdi;
    uint32_t job_id;
  };
  // {pid, service} -> these JobIDs (and security bindings), added to those it has (one transaction);
  // `wlm_job`: the workload-manager job they belong to, whose end withdraws them (end_job_maps);
  // `alloc_job`: the JobID address allocation names instead of these (a configuration system's).
  void map(Process p, const std::string& service, const std::vector<uint32_t>& jobs,
           const std::vector<Binding>& bindings = {}, std::optional<uint32_t> wlm_job = std::nullopt,
           std::optional<uint32_t> alloc_job = std::nullopt);
  // The JobID address allocation names for {pid, service} when the endpoint asks for none; nullopt: the
  // one of job initialisation.
  std::optional<uint32_t> alloc_job(uint32_t pid, const std::string& service);
  // Withdraws the maps of workload-manager job `wlm_job`, inside the caller's transaction; how many went.
  size_t end_job_maps(uint32_t wlm_job);
  std::vector<Binding> bindings(uint32_t pid, const std::string& service);
  // Every JobID mapped to process `p`, whatever the service.
  std::vector<uint32_t> jobs_of(Process p);
  // The PIDonFEP of process `pid`: the one it has, else the lowest free one in [first, last] (0: none free).
  uint16_t pid_on_fep(uint32_t pid, uint16_t first, uint16_t last);

  struct Key {
    uint32_t sdi;
    std::vector<uint8_t> key;
    uint16_t epoch;
    std::optional<uint32_t> job_id;  // the job the secure domain is bound to
  };
  void set_key(const Key& key);
  std::optional<Key> key(uint32_t sdi);
  // Removes these JobIDs of the map (all of them when `jobs` is empty); how many went.
  size_t unmap(uint32_t pid, const std::string& service, const std::vector<uint32_t>& jobs);
  // The JobIDs mapped to process `p` for `service` (none for a process that is not the one mapped).
  std::vector<uint32_t> jobs(Process p, const std::string& service);

  struct MapRow {
    uint32_t pid;
    std::string service;
    uint32_t job_id;
  };
  std::vector<MapRow> list(std::optional<uint32_t> pid, const std::optional<std::string>& service);

  // The connection, for the credential store that keeps its tables in the same file (cred_store.hpp).
  sqlite3* db() { return db_; }

 private:
  void exec(const char* sql);
  void forget_alloc_jobs();
  void check_integrity();
  sqlite3* db_ = nullptr;
  std::string path_;
  std::vector<std::string> pid_tables_{"job_map", "bindings", "job_map_owner", "alloc_job", "pid_on_fep"};
};

}  // namespace uet::entity
