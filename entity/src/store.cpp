#include "store.hpp"

#include <sqlite3.h>

#include <stdexcept>

namespace uet::entity {
namespace {

// A prepared statement, finalized on every path out.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("SQLite cannot prepare '") + sql + "': " + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt& bind(int i, int64_t v) { return check(sqlite3_bind_int64(s_, i, v)); }
  Stmt& bind(int i, const std::string& v) { return check(sqlite3_bind_text(s_, i, v.c_str(), -1, SQLITE_TRANSIENT)); }
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string("SQLite: ") + sqlite3_errmsg(db_));
    return false;
  }
  void reset() { sqlite3_reset(s_); }
  int64_t col_int(int i) { return sqlite3_column_int64(s_, i); }
  std::string col_text(int i) { return reinterpret_cast<const char*>(sqlite3_column_text(s_, i)); }

 private:
  Stmt& check(int rc) {
    if (rc != SQLITE_OK) throw std::runtime_error(std::string("SQLite bind: ") + sqlite3_errmsg(db_));
    return *this;
  }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

// BEGIN IMMEDIATE .. COMMIT, rolled back when an exception leaves the scope.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) { run("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    run("COMMIT");
    done_ = true;
  }

 private:
  void run(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string what = err ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error(std::string("SQLite ") + sql + ": " + what);
    }
  }
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace

Store::Store(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string what = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("cannot open the entity's store " + path + ": " + what);
  }
  sqlite3_busy_timeout(db_, 2000);
  try {
    // Write-ahead log with a full sync at every commit: what was acknowledged survives kill -9 and power loss.
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=FULL");
    exec("CREATE TABLE IF NOT EXISTS job_map (pid INTEGER NOT NULL, service TEXT NOT NULL, job_id INTEGER NOT NULL,"
         " PRIMARY KEY (pid, service, job_id)) WITHOUT ROWID");
  } catch (const std::exception& e) {
    sqlite3_close(db_);
    throw std::runtime_error("the entity's store " + path + ": " + e.what());
  }
}

Store::~Store() { sqlite3_close(db_); }

void Store::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string what = err ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error(std::string(sql) + ": " + what);
  }
}

void Store::map(uint32_t pid, const std::string& service, const std::vector<uint32_t>& jobs) {
  Transaction t(db_);
  Stmt s(db_, "INSERT OR IGNORE INTO job_map (pid, service, job_id) VALUES (?, ?, ?)");
  for (uint32_t job : jobs) {
    s.bind(1, pid).bind(2, service).bind(3, job);
    s.step();
    s.reset();
  }
  t.commit();
}

size_t Store::unmap(uint32_t pid, const std::string& service, const std::vector<uint32_t>& jobs) {
  Transaction t(db_);
  size_t gone = 0;
  if (jobs.empty()) {
    Stmt s(db_, "DELETE FROM job_map WHERE pid = ? AND service = ?");
    s.bind(1, pid).bind(2, service);
    s.step();
    gone = static_cast<size_t>(sqlite3_changes(db_));
  } else {
    Stmt s(db_, "DELETE FROM job_map WHERE pid = ? AND service = ? AND job_id = ?");
    for (uint32_t job : jobs) {
      s.bind(1, pid).bind(2, service).bind(3, job);
      s.step();
      gone += static_cast<size_t>(sqlite3_changes(db_));
      s.reset();
    }
  }
  t.commit();
  return gone;
}

std::vector<uint32_t> Store::jobs(uint32_t pid, const std::string& service) {
  Stmt s(db_, "SELECT job_id FROM job_map WHERE pid = ? AND service = ? ORDER BY job_id");
  s.bind(1, pid).bind(2, service);
  std::vector<uint32_t> out;
  while (s.step()) out.push_back(static_cast<uint32_t>(s.col_int(0)));
  return out;
}

std::vector<Store::MapRow> Store::list(std::optional<uint32_t> pid, const std::optional<std::string>& service) {
  Stmt s(db_, "SELECT pid, service, job_id FROM job_map WHERE (?1 IS NULL OR pid = ?1) AND (?2 IS NULL OR service = ?2)"
              " ORDER BY pid, service, job_id");
  if (pid) s.bind(1, *pid);
  if (service) s.bind(2, *service);
  std::vector<MapRow> out;
  while (s.step())
    out.push_back({static_cast<uint32_t>(s.col_int(0)), s.col_text(1), static_cast<uint32_t>(s.col_int(2))});
  return out;
}

}  // namespace uet::entity
