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
  // Opens (creating if needed) the database at `path`; throws std::runtime_error naming the file and
  // SQLite's words when it cannot.
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // {pid, service} -> these JobIDs, added to those it has (one transaction).
  void map(uint32_t pid, const std::string& service, const std::vector<uint32_t>& jobs);
  // Removes these JobIDs of the map (all of them when `jobs` is empty); how many went.
  size_t unmap(uint32_t pid, const std::string& service, const std::vector<uint32_t>& jobs);
  std::vector<uint32_t> jobs(uint32_t pid, const std::string& service);

  struct MapRow {
    uint32_t pid;
    std::string service;
    uint32_t job_id;
  };
  std::vector<MapRow> list(std::optional<uint32_t> pid, const std::optional<std::string>& service);

 private:
  void exec(const char* sql);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace uet::entity
