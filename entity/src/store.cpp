#include "store.hpp"

#include <sqlite3.h>

#include <stdexcept>

#include "private_file.hpp"
#include "sqlite_util.hpp"

namespace uet::entity {
namespace {

// A damaged file, named with quick_check's words: the message stands as it is.
struct Damaged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr const char* kNotUsed = "it is not used: restore a copy, or move it away to start with an empty store";

}  // namespace

Store::Store(const std::string& path) : path_(path) {
  // The file holds the secure-domain keys and the token key: only the entity's user may read it. SQLite makes
  // its -wal, -shm and -journal with the main file's mode, so a main file made 0600 first keeps them 0600.
  if (path != ":memory:") prepare_private_file(path, "the entity's store", {"-wal", "-shm", "-journal"});
  if (sqlite3_open_v2(path.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                      nullptr) != SQLITE_OK) {
    std::string what = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("cannot open the entity's store " + path + ": " + what);
  }
  sqlite3_busy_timeout(db_, 2000);
  try {
    // Write-ahead log with a full sync at every commit: what was acknowledged survives kill -9 and power loss.
    // The entity is the file's one user (one process, one thread: SQLITE_OPEN_NOMUTEX): an exclusive lock
    // held from the first write spares a file lock per transaction and keeps the WAL index off shared memory.
    exec("PRAGMA locking_mode=EXCLUSIVE");
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=FULL");
    check_integrity();
    exec("CREATE TABLE IF NOT EXISTS job_map (pid INTEGER NOT NULL, service TEXT NOT NULL, job_id INTEGER NOT NULL,"
         " PRIMARY KEY (pid, service, job_id)) WITHOUT ROWID");
    exec("CREATE TABLE IF NOT EXISTS bindings (pid INTEGER NOT NULL, service TEXT NOT NULL, sdi INTEGER NOT NULL,"
         " job_id INTEGER NOT NULL, PRIMARY KEY (pid, service, sdi, job_id)) WITHOUT ROWID");
    // Which workload-manager job a map belongs to (JOB_MAP's wlm_job), for JOB_END.
    exec("CREATE TABLE IF NOT EXISTS job_map_owner (pid INTEGER NOT NULL, service TEXT NOT NULL, job_id INTEGER NOT NULL,"
         " wlm_job INTEGER NOT NULL, PRIMARY KEY (pid, service, job_id)) WITHOUT ROWID");
    // The JobID an address allocation response names instead of job initialisation's (JOB_MAP's alloc_job_id).
    exec("CREATE TABLE IF NOT EXISTS alloc_job (pid INTEGER NOT NULL, service TEXT NOT NULL, job_id INTEGER NOT NULL,"
         " PRIMARY KEY (pid, service)) WITHOUT ROWID");
    exec("CREATE TABLE IF NOT EXISTS pid_on_fep (pid INTEGER PRIMARY KEY, pid_on_fep INTEGER NOT NULL UNIQUE)");
    exec("CREATE TABLE IF NOT EXISTS keys (sdi INTEGER PRIMARY KEY, key BLOB NOT NULL, epoch INTEGER NOT NULL,"
         " job_id INTEGER)");
    // Which process each pid's rows belong to (claim()). A store made before it existed has none: its maps
    // grant nothing until made again.
    exec("CREATE TABLE IF NOT EXISTS processes (pid INTEGER PRIMARY KEY, start INTEGER NOT NULL)");
  } catch (const std::exception& e) {
    // A file too damaged for quick_check to run fails at the first read: said the same way.
    const int code = sqlite3_errcode(db_);
    std::string what = dynamic_cast<const Damaged*>(&e) ? std::string(e.what())
                       : code == SQLITE_CORRUPT || code == SQLITE_NOTADB
                           ? "the entity's store " + path + " is damaged (" + e.what() + "); " + kNotUsed
                           : "the entity's store " + path + ": " + e.what();
    StatementCache::drop(db_);
    sqlite3_close(db_);
    throw std::runtime_error(what);
  }
}

// A page damaged on disk shows only when a request reads it: the entity would acknowledge maps into a file
// that may lose them. quick_check reads every page once (O(N), not integrity_check's index cross-check).
void Store::check_integrity() {
  Stmt s(db_, "PRAGMA quick_check(5)");
  std::string said;
  try {
    while (s.step()) said += (said.empty() ? "" : "; ") + s.col_text(0);
  } catch (const std::runtime_error&) {
    // A page too broken for the check to go on: SQLite's words for it.
    said += (said.empty() ? "" : "; ") + std::string(sqlite3_errmsg(db_));
  }
  if (said != "ok")
    throw Damaged("the entity's store " + path_ + " is damaged (PRAGMA quick_check: " + said + "); " + kNotUsed);
}

bool Store::claim(Process p) {
  Stmt have(db_, "SELECT start FROM processes WHERE pid = ?");
  have.bind(1, p.pid);
  const bool other = have.step() && static_cast<uint64_t>(have.col_int(0)) != p.start;
  if (other) {
    for (const std::string& table : pid_tables_) {
      const std::string sql = "DELETE FROM " + table + " WHERE pid = ?";
      Stmt d(db_, sql.c_str());
      d.bind(1, p.pid);
      d.step();
    }
  }
  Stmt put(db_, "INSERT OR REPLACE INTO processes (pid, start) VALUES (?, ?)");
  put.bind(1, p.pid).bind(2, static_cast<int64_t>(p.start));
  put.step();
  return other;
}

Store::~Store() {
  StatementCache::drop(db_);
  sqlite3_close(db_);
}

void Store::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string what = err ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error(std::string(sql) + ": " + what);
  }
}

void Store::map(Process p, const std::string& service, const std::vector<uint32_t>& jobs,
                const std::vector<Binding>& bindings, std::optional<uint32_t> wlm_job,
                std::optional<uint32_t> alloc_job) {
  const uint32_t pid = p.pid;
  Transaction t(db_);
  claim(p);
  if (alloc_job) {
    Stmt a(db_, "INSERT OR REPLACE INTO alloc_job (pid, service, job_id) VALUES (?, ?, ?)");
    a.bind(1, pid).bind(2, service).bind(3, *alloc_job);
    a.step();
  }
  Stmt s(db_, "INSERT OR IGNORE INTO job_map (pid, service, job_id) VALUES (?, ?, ?)");
  for (uint32_t job : jobs) {
    s.bind(1, pid).bind(2, service).bind(3, job);
    s.step();
    s.reset();
  }
  if (wlm_job) {
    Stmt o(db_, "INSERT OR REPLACE INTO job_map_owner (pid, service, job_id, wlm_job) VALUES (?, ?, ?, ?)");
    for (uint32_t job : jobs) {
      o.bind(1, pid).bind(2, service).bind(3, job).bind(4, *wlm_job);
      o.step();
      o.reset();
    }
  }
  Stmt b(db_, "INSERT OR IGNORE INTO bindings (pid, service, sdi, job_id) VALUES (?, ?, ?, ?)");
  for (const Binding& x : bindings) {
    b.bind(1, pid).bind(2, service).bind(3, x.sdi).bind(4, x.job_id);
    b.step();
    b.reset();
  }
  t.commit();
}

std::vector<Store::Binding> Store::bindings(uint32_t pid, const std::string& service) {
  Stmt s(db_, "SELECT sdi, job_id FROM bindings WHERE pid = ? AND service = ? ORDER BY sdi, job_id");
  s.bind(1, pid).bind(2, service);
  std::vector<Binding> out;
  while (s.step()) out.push_back({static_cast<uint32_t>(s.col_int(0)), static_cast<uint32_t>(s.col_int(1))});
  return out;
}

std::vector<uint32_t> Store::jobs_of(Process p) {
  if (!p.start) return {};
  Stmt s(db_, "SELECT DISTINCT m.job_id FROM job_map m JOIN processes p ON p.pid = m.pid WHERE m.pid = ? AND p.start = ?"
              " ORDER BY m.job_id");
  s.bind(1, p.pid).bind(2, static_cast<int64_t>(p.start));
  std::vector<uint32_t> out;
  while (s.step()) out.push_back(static_cast<uint32_t>(s.col_int(0)));
  return out;
}

uint16_t Store::pid_on_fep(uint32_t pid, uint16_t first, uint16_t last) {
  {
    Stmt have(db_, "SELECT pid_on_fep FROM pid_on_fep WHERE pid = ?");
    have.bind(1, pid);
    if (have.step()) return static_cast<uint16_t>(have.col_int(0));  // the one it has: no write
  }
  Transaction t(db_);
  // The lowest value in [first, last] no process holds.
  uint32_t value = first;
  {
    Stmt used(db_, "SELECT pid_on_fep FROM pid_on_fep WHERE pid_on_fep BETWEEN ? AND ? ORDER BY pid_on_fep");
    used.bind(1, first).bind(2, last);
    while (used.step() && used.col_int(0) == value) ++value;
  }
  if (value > last) return 0;
  Stmt put(db_, "INSERT INTO pid_on_fep (pid, pid_on_fep) VALUES (?, ?)");
  put.bind(1, pid).bind(2, value);
  put.step();
  t.commit();
  return static_cast<uint16_t>(value);
}

void Store::set_key(const Key& key) {
  Transaction t(db_);
  Stmt s(db_, "INSERT OR REPLACE INTO keys (sdi, key, epoch, job_id) VALUES (?, ?, ?, ?)");
  s.bind(1, key.sdi).bind_blob(2, key.key).bind(3, key.epoch);
  if (key.job_id) s.bind(4, *key.job_id);
  s.step();
  t.commit();
}

std::optional<Store::Key> Store::key(uint32_t sdi) {
  Stmt s(db_, "SELECT key, epoch, job_id FROM keys WHERE sdi = ?");
  s.bind(1, sdi);
  if (!s.step()) return std::nullopt;
  Key k{sdi, s.col_blob(0), static_cast<uint16_t>(s.col_int(1)), std::nullopt};
  if (!s.col_null(2)) k.job_id = static_cast<uint32_t>(s.col_int(2));
  return k;
}

size_t Store::unmap(uint32_t pid, const std::string& service, const std::vector<uint32_t>& jobs) {
  Transaction t(db_);
  size_t gone = 0;
  if (jobs.empty()) {
    Stmt s(db_, "DELETE FROM job_map WHERE pid = ? AND service = ?");
    s.bind(1, pid).bind(2, service);
    s.step();
    gone = static_cast<size_t>(sqlite3_changes(db_));
    Stmt b(db_, "DELETE FROM bindings WHERE pid = ? AND service = ?");
    b.bind(1, pid).bind(2, service);
    b.step();
  } else {
    Stmt s(db_, "DELETE FROM job_map WHERE pid = ? AND service = ? AND job_id = ?");
    for (uint32_t job : jobs) {
      s.bind(1, pid).bind(2, service).bind(3, job);
      s.step();
      gone += static_cast<size_t>(sqlite3_changes(db_));
      s.reset();
    }
  }
  // A process with no JobID left gives its PIDonFEP back.
  Stmt release(db_, "DELETE FROM pid_on_fep WHERE pid = ?1 AND NOT EXISTS (SELECT 1 FROM job_map WHERE pid = ?1)");
  release.bind(1, pid);
  release.step();
  Stmt owners(db_, "DELETE FROM job_map_owner WHERE pid = ?1 AND NOT EXISTS (SELECT 1 FROM job_map m WHERE m.pid = ?1"
                   " AND m.service = job_map_owner.service AND m.job_id = job_map_owner.job_id)");
  owners.bind(1, pid);
  owners.step();
  forget_alloc_jobs();
  t.commit();
  return gone;
}

size_t Store::end_job_maps(uint32_t wlm_job) {
  Stmt del(db_, "DELETE FROM job_map WHERE (pid, service, job_id) IN"
                " (SELECT pid, service, job_id FROM job_map_owner WHERE wlm_job = ?)");
  del.bind(1, wlm_job);
  del.step();
  const auto gone = static_cast<size_t>(sqlite3_changes(db_));
  Stmt owners(db_, "DELETE FROM job_map_owner WHERE wlm_job = ?");
  owners.bind(1, wlm_job);
  owners.step();
  Stmt release(db_, "DELETE FROM pid_on_fep WHERE pid NOT IN (SELECT pid FROM job_map)");
  release.step();
  forget_alloc_jobs();
  return gone;
}

// An allocation JobID lives as long as its {pid, service} has a JobID of job initialisation.
void Store::forget_alloc_jobs() {
  Stmt s(db_, "DELETE FROM alloc_job WHERE NOT EXISTS (SELECT 1 FROM job_map m WHERE m.pid = alloc_job.pid"
              " AND m.service = alloc_job.service)");
  s.step();
}

std::optional<uint32_t> Store::alloc_job(uint32_t pid, const std::string& service) {
  Stmt s(db_, "SELECT job_id FROM alloc_job WHERE pid = ? AND service = ?");
  s.bind(1, pid).bind(2, service);
  if (!s.step()) return std::nullopt;
  return static_cast<uint32_t>(s.col_int(0));
}

std::vector<uint32_t> Store::jobs(Process p, const std::string& service) {
  if (!p.start) return {};
  Stmt s(db_, "SELECT m.job_id FROM job_map m JOIN processes p ON p.pid = m.pid WHERE m.pid = ? AND p.start = ?"
              " AND m.service = ? ORDER BY m.job_id");
  s.bind(1, p.pid).bind(2, static_cast<int64_t>(p.start)).bind(3, service);
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
