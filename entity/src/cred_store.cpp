#include "cred_store.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>

#include "sqlite_util.hpp"
#include "uet/entity/process_info.hpp"
#include "uet/control/control_gen.hpp"

namespace uet::entity {
namespace {

namespace cc = control::cred;

constexpr const char* kSchema[] = {
    "CREATE TABLE IF NOT EXISTS creds (cred INTEGER PRIMARY KEY AUTOINCREMENT, job_id INTEGER NOT NULL UNIQUE,"
    " uid INTEGER NOT NULL, gid INTEGER NOT NULL, job INTEGER NOT NULL, flags INTEGER NOT NULL,"
    " released INTEGER NOT NULL DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS cred_grants (cred INTEGER NOT NULL, kind TEXT NOT NULL, id INTEGER NOT NULL,"
    " PRIMARY KEY (cred, kind, id)) WITHOUT ROWID",
    // One reference per process; job 0 when the process runs in no job.
    "CREATE TABLE IF NOT EXISTS cred_refs (cred INTEGER NOT NULL, pid INTEGER NOT NULL, job INTEGER NOT NULL,"
    " uid INTEGER NOT NULL, start INTEGER NOT NULL, service TEXT, PRIMARY KEY (cred, pid)) WITHOUT ROWID",
    // id -1: the scope's default limit.
    "CREATE TABLE IF NOT EXISTS cred_limits (scope INTEGER NOT NULL, id INTEGER NOT NULL, value INTEGER NOT NULL,"
    " PRIMARY KEY (scope, id)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS wlm_jobs (job INTEGER PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS wlm_job_pids (pid INTEGER PRIMARY KEY, job INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
};

const char* kind_name(CredStore::Kind k) {
  return k == CredStore::Kind::uid ? "uid" : k == CredStore::Kind::gid ? "gid" : "job";
}

std::string subject(const CredStore::Caller& c) {
  std::string s = "pid " + std::to_string(c.pid) + " (uid " + std::to_string(c.uid);
  if (c.job) s += ", job " + std::to_string(c.job);
  return s + ")";
}

// The one number a COUNT query answers; `arg`, when given, is its one parameter.
int64_t count(sqlite3* db, const char* sql, std::optional<int64_t> arg = std::nullopt) {
  Stmt s(db, sql);
  if (arg) s.bind(1, *arg);
  s.step();
  return s.col_int(0);
}

}  // namespace

CredStore::CredStore(Store& store) : store_(store), db_(store.db()) {
  store_.also_keyed_by_pid("wlm_job_pids");
  for (const char* sql : kSchema) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string what = err ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error(std::string("the credential tables: ") + what);
    }
  }
  Stmt get(db_, "SELECT value FROM meta WHERE name = 'token_key'");
  if (get.step()) {
    token_key_ = get.col_blob(0);
  } else {
    token_key_.resize(cc::kTokenKeyBytes);
    if (getrandom(token_key_.data(), token_key_.size(), 0) != static_cast<ssize_t>(token_key_.size()))
      throw std::runtime_error("no random bytes for the token key");
    Stmt put(db_, "INSERT INTO meta (name, value) VALUES ('token_key', ?)");
    put.bind_blob(1, token_key_);
    put.step();
  }
  Stmt held(db_, "SELECT r.cred, r.pid, c.job_id, r.start FROM cred_refs r JOIN creds c USING (cred)");
  while (held.step())
    held_[{static_cast<uint32_t>(held.col_int(0)), static_cast<uint32_t>(held.col_int(1))}] =
        Held{static_cast<uint32_t>(held.col_int(2)), static_cast<uint64_t>(held.col_int(3))};
}

std::optional<CredStore::Cred> CredStore::find(uint32_t cred) {
  Stmt s(db_,
         "SELECT c.job_id, c.uid, c.gid, c.job, c.flags, c.released,"
         " (SELECT COUNT(*) FROM cred_refs r WHERE r.cred = c.cred),"
         " (SELECT group_concat(kind || ':' || id, ', ') FROM cred_grants g WHERE g.cred = c.cred)"
         " FROM creds c WHERE c.cred = ?");
  s.bind(1, cred);
  if (!s.step()) return std::nullopt;
  return Cred{cred,
              static_cast<uint32_t>(s.col_int(0)),
              static_cast<uint32_t>(s.col_int(1)),
              static_cast<uint32_t>(s.col_int(2)),
              static_cast<uint32_t>(s.col_int(3)),
              static_cast<uint32_t>(s.col_int(4)),
              s.col_int(5) != 0,
              static_cast<uint32_t>(s.col_int(6)),
              s.col_text(7)};
}

// Every limit that applies to the caller, each checked on its own: the first one reached is named.
std::optional<Refused> CredStore::over_limit(const Caller& c) {
  struct Scope {
    cc::Scope scope;
    const char* column;  // creds' column the scope counts by (none: every credential)
    std::optional<uint32_t> id;
  };
  std::vector<Scope> scopes = {{cc::Scope::global, nullptr, std::nullopt},
                               {cc::Scope::user, "uid", c.uid},
                               {cc::Scope::group, "gid", c.gids.empty() ? 0 : c.gids.front()}};
  if (c.job) scopes.push_back({cc::Scope::job, "job", c.job});
  for (const Scope& s : scopes) {
    const auto scope_name = cc::kScopeNames[static_cast<int>(s.scope)];
    for (int64_t which : {int64_t{-1}, s.id ? int64_t{*s.id} : int64_t{-2}}) {
      if (which == -2) continue;
      Stmt lim(db_, "SELECT value FROM cred_limits WHERE scope = ? AND id = ?");
      lim.bind(1, static_cast<int>(s.scope)).bind(2, which);
      if (!lim.step()) continue;
      const int64_t limit = lim.col_int(0);
      const std::string sql = std::string("SELECT COUNT(*) FROM creds") +
                              (s.column ? std::string(" WHERE ") + s.column + " = ?" : "");
      const int64_t held = count(db_, sql.c_str(), s.column ? std::optional<int64_t>(*s.id) : std::nullopt);
      if (held >= limit) {
        std::string name = std::string(scope_name) + " limit";
        if (s.column) name += which == -1 ? " (every " + std::string(s.column) + "'s)"
                                          : " of " + std::string(s.column) + " " + std::to_string(which);
        return Refused{EDQUOT, "the " + name + " is " + std::to_string(limit) + " credential(s), and " +
                                   std::to_string(held) + " are held" +
                                   (s.column ? " by " + std::string(s.column) + " " + std::to_string(*s.id) : "")};
      }
    }
  }
  return std::nullopt;
}

std::optional<Refused> CredStore::acquire(const Caller& c, uint32_t flags, Cred* out) {
  Transaction t(db_);
  if (auto no = over_limit(c)) return no;
  // The JobID after the highest in use; once the range's end is reached, the lowest free one.
  uint32_t job_id = cc::kJobIdFirst;
  {
    Stmt top(db_, "SELECT MAX(job_id) FROM creds");
    if (top.step() && !top.col_null(0)) job_id = static_cast<uint32_t>(top.col_int(0)) + 1;
  }
  if (job_id < cc::kJobIdFirst) job_id = cc::kJobIdFirst;
  if (job_id > cc::kJobIdLast) {
    job_id = cc::kJobIdFirst;
    Stmt used(db_, "SELECT job_id FROM creds WHERE job_id >= ? ORDER BY job_id");
    used.bind(1, cc::kJobIdFirst);
    while (used.step() && used.col_int(0) == job_id) ++job_id;
  }
  if (job_id > cc::kJobIdLast) return Refused{ENOSPC, "every JobID of the credentials' range is taken"};
  Stmt put(db_, "INSERT INTO creds (job_id, uid, gid, job, flags) VALUES (?, ?, ?, ?, ?)");
  put.bind(1, job_id).bind(2, c.uid).bind(3, c.gids.empty() ? 0 : c.gids.front()).bind(4, c.job).bind(5, flags);
  put.step();
  const auto cred = static_cast<uint32_t>(sqlite3_last_insert_rowid(db_));
  Stmt g(db_, "INSERT INTO cred_grants (cred, kind, id) VALUES (?, 'uid', ?)");
  g.bind(1, cred).bind(2, c.uid);
  g.step();
  t.commit();
  *out = *find(cred);
  return std::nullopt;
}

std::optional<Refused> CredStore::grant(const Caller& c, uint32_t cred, Kind kind, uint32_t id, bool revoke) {
  Transaction t(db_);
  const auto have = find(cred);
  if (!have || have->released) return Refused{ENOENT, "no credential " + std::to_string(cred)};
  if (c.uid != 0 && c.uid != have->uid)
    return Refused{EPERM, "credential " + std::to_string(cred) + " was acquired by uid " +
                              std::to_string(have->uid) + "; " + subject(c) + " may not change its access list"};
  Stmt s(db_, revoke ? "DELETE FROM cred_grants WHERE cred = ? AND kind = ? AND id = ?"
                     : "INSERT OR IGNORE INTO cred_grants (cred, kind, id) VALUES (?, ?, ?)");
  s.bind(1, cred).bind(2, std::string(kind_name(kind))).bind(3, id);
  s.step();
  if (revoke && sqlite3_changes(db_) == 0)
    return Refused{ENOENT, std::string(kind_name(kind)) + " " + std::to_string(id) +
                               " is not on the access list of credential " + std::to_string(cred)};
  t.commit();
  return std::nullopt;
}

std::optional<Refused> CredStore::access(const Caller& c, uint32_t cred, const std::string& service,
                                         uint32_t* job_id) {
  // A connection its process left behind speaks for no one: no reference, and no map over the pid's next
  // process (claim() below would drop that one's maps).
  if (!c.start)
    return Refused{ESRCH, "the process that connected as " + subject(c) + " is gone: its connection speaks for "
                          "no process"};
  const auto it = held_.find({cred, c.pid});
  const bool holds = it != held_.end() && it->second.start == c.start;
  if (holds && service.empty()) {
    *job_id = it->second.job_id;  // node-local cache: the process holds a reference already
    return std::nullopt;
  }
  Transaction t(db_, Transaction::Sync::normal);
  // A reference left by an earlier process of the same pid is that process's, and it is gone.
  if (it != held_.end() && !holds) drop_references("pid", c.pid);
  struct {
    uint32_t job_id, flags;
  } have{};
  {
    Stmt q(db_, "SELECT job_id, flags FROM creds WHERE cred = ? AND released = 0");
    q.bind(1, cred);
    if (!q.step()) return Refused{ENOENT, "no credential " + std::to_string(cred)};
    have = {static_cast<uint32_t>(q.col_int(0)), static_cast<uint32_t>(q.col_int(1))};
  }
  if (!holds) {
    // The access list is short: read it whole and match it here.
    bool granted = false;
    {
      Stmt list(db_, "SELECT kind, id FROM cred_grants WHERE cred = ?");
      list.bind(1, cred);
      while (!granted && list.step()) {
        const std::string kind = list.col_text(0);
        const auto id = static_cast<uint32_t>(list.col_int(1));
        granted = (kind == "uid" && id == c.uid) || (kind == "job" && c.job && id == c.job) ||
                  (kind == "gid" && std::find(c.gids.begin(), c.gids.end(), id) != c.gids.end());
      }
    }
    if (!granted)
      return Refused{EACCES, "credential " + std::to_string(cred) + " is not granted to " + subject(c) +
                                 " (its access list: " + find(cred)->grants + ")"};
    if (!(have.flags & cc::kFlag_node_insecure)) {
      drop_dead_processes_locked(cred);
      Stmt other(db_, "SELECT job FROM cred_refs WHERE cred = ? AND job != ? LIMIT 1");
      other.bind(1, cred).bind(2, c.job);
      if (other.step())
        return Refused{EBUSY, "credential " + std::to_string(cred) + " is in use on this node by " +
                                  (other.col_int(0) ? "job " + std::to_string(other.col_int(0)) : "a process in no job") +
                                  "; only a credential acquired node-insecure is shared by several jobs on a node"};
    }
    Stmt ref(db_, "INSERT INTO cred_refs (cred, pid, job, uid, start, service) VALUES (?, ?, ?, ?, ?, ?)");
    ref.bind(1, cred).bind(2, c.pid).bind(3, c.job).bind(4, c.uid).bind(5, static_cast<int64_t>(c.start)).bind(6, service);
    ref.step();
  }
  if (!service.empty()) {
    store_.claim({c.pid, c.start});
    Stmt map(db_, "INSERT OR IGNORE INTO job_map (pid, service, job_id) VALUES (?, ?, ?)");
    map.bind(1, c.pid).bind(2, service).bind(3, have.job_id);
    map.step();
    Stmt svc(db_, "UPDATE cred_refs SET service = ? WHERE cred = ? AND pid = ?");
    svc.bind(1, service).bind(2, cred).bind(3, c.pid);
    svc.step();
  }
  t.commit();
  held_[{cred, c.pid}] = Held{have.job_id, c.start};
  *job_id = have.job_id;
  return std::nullopt;
}

// The references matching `where` (a cred_refs column) go, with the maps they made.
void CredStore::drop_references(const char* where, int64_t value) {
  std::vector<std::pair<uint32_t, uint32_t>> gone;
  {
    const std::string sql = std::string("SELECT r.cred, r.pid, r.service, c.job_id FROM cred_refs r JOIN creds c USING (cred) WHERE r.") + where + " = ?";
    Stmt s(db_, sql.c_str());
    s.bind(1, value);
    Stmt unmap(db_, "DELETE FROM job_map WHERE pid = ? AND service = ? AND job_id = ?");
    while (s.step()) {
      gone.emplace_back(static_cast<uint32_t>(s.col_int(0)), static_cast<uint32_t>(s.col_int(1)));
      if (!s.col_null(2) && !s.col_text(2).empty()) {
        unmap.bind(1, s.col_int(1)).bind(2, s.col_text(2)).bind(3, s.col_int(3));
        unmap.step();
        unmap.reset();
      }
    }
  }
  const std::string del = std::string("DELETE FROM cred_refs WHERE ") + where + " = ?";
  Stmt d(db_, del.c_str());
  d.bind(1, value);
  d.step();
  for (const auto& key : gone) {
    held_.erase(key);
    forget_if_gone(key.first);
  }
}

// A released credential goes with its last reference.
void CredStore::forget_if_gone(uint32_t cred) {
  Stmt s(db_, "DELETE FROM creds WHERE cred = ?1 AND released = 1 AND NOT EXISTS (SELECT 1 FROM cred_refs WHERE cred = ?1)");
  s.bind(1, cred);
  s.step();
  if (sqlite3_changes(db_)) {
    Stmt g(db_, "DELETE FROM cred_grants WHERE cred = ?");
    g.bind(1, cred);
    g.step();
  }
}

std::optional<Refused> CredStore::release(const Caller& c, uint32_t cred, uint32_t flags) {
  Transaction t(db_, (flags & cc::kFlag_full) ? Transaction::Sync::full : Transaction::Sync::normal);
  const auto have = find(cred);
  if (!have) return Refused{ENOENT, "no credential " + std::to_string(cred)};
  if (flags & cc::kFlag_full) {
    if (c.uid != 0 && c.uid != have->uid)
      return Refused{EPERM, "credential " + std::to_string(cred) + " was acquired by uid " + std::to_string(have->uid) +
                                "; " + subject(c) + " may not give it up"};
    Stmt s(db_, "UPDATE creds SET released = 1 WHERE cred = ?");
    s.bind(1, cred);
    s.step();
    forget_if_gone(cred);
    t.commit();
    return std::nullopt;
  }
  // Plain: the caller's own reference; local: every reference of its job (or, in no job, of its uid) here.
  std::vector<uint32_t> pids;
  {
    Stmt s(db_, (flags & cc::kFlag_local)
                    ? (c.job ? "SELECT pid FROM cred_refs WHERE cred = ? AND job = ?" : "SELECT pid FROM cred_refs WHERE cred = ? AND job = 0 AND uid = ?")
                    : "SELECT pid FROM cred_refs WHERE cred = ? AND pid = ?");
    s.bind(1, cred).bind(2, (flags & cc::kFlag_local) ? (c.job ? c.job : c.uid) : c.pid);
    while (s.step()) pids.push_back(static_cast<uint32_t>(s.col_int(0)));
  }
  if (pids.empty())
    return Refused{ENOENT, subject(c) + " holds no reference to credential " + std::to_string(cred)};
  for (uint32_t pid : pids) {
    Stmt s(db_, "SELECT service FROM cred_refs WHERE cred = ? AND pid = ?");
    s.bind(1, cred).bind(2, pid);
    if (s.step() && !s.col_text(0).empty()) {
      Stmt unmap(db_, "DELETE FROM job_map WHERE pid = ? AND service = ? AND job_id = ?");
      unmap.bind(1, pid).bind(2, s.col_text(0)).bind(3, have->job_id);
      unmap.step();
    }
    Stmt d(db_, "DELETE FROM cred_refs WHERE cred = ? AND pid = ?");
    d.bind(1, cred).bind(2, pid);
    d.step();
  }
  forget_if_gone(cred);
  t.commit();
  for (uint32_t pid : pids) held_.erase({cred, pid});
  return std::nullopt;
}

std::vector<CredStore::Cred> CredStore::list(std::optional<uint32_t> uid, std::optional<uint32_t> job) {
  std::vector<uint32_t> ids;
  {
    Stmt s(db_, "SELECT cred FROM creds WHERE (?1 IS NULL OR uid = ?1) AND (?2 IS NULL OR job = ?2) ORDER BY cred");
    if (uid) s.bind(1, *uid);
    if (job) s.bind(2, *job);
    while (s.step()) ids.push_back(static_cast<uint32_t>(s.col_int(0)));
  }
  std::vector<Cred> out;
  for (uint32_t id : ids) out.push_back(*find(id));
  return out;
}

void CredStore::set_limit(uint8_t scope, std::optional<uint32_t> id, uint32_t value) {
  Transaction t(db_);
  Stmt s(db_, "INSERT OR REPLACE INTO cred_limits (scope, id, value) VALUES (?, ?, ?)");
  s.bind(1, scope).bind(2, id ? int64_t{*id} : int64_t{-1}).bind(3, value);
  s.step();
  t.commit();
}

void CredStore::job_start(uint32_t job, const std::vector<Store::Process>& pids) {
  Transaction t(db_);
  Stmt s(db_, "INSERT OR IGNORE INTO wlm_jobs (job) VALUES (?)");
  s.bind(1, job);
  s.step();
  Stmt p(db_, "INSERT OR REPLACE INTO wlm_job_pids (pid, job) VALUES (?, ?)");
  for (const Store::Process& proc : pids) {
    store_.claim(proc);
    p.bind(1, proc.pid).bind(2, job);
    p.step();
    p.reset();
  }
  t.commit();
}

size_t CredStore::job_end(uint32_t job) {
  Transaction t(db_);
  const auto before = count(db_, "SELECT COUNT(*) FROM cred_refs WHERE job = ?", job);
  drop_references("job", job);
  // Credentials acquired in the job, unless persistent, are given up with it.
  std::vector<uint32_t> creds;
  {
    Stmt s(db_, "SELECT cred FROM creds WHERE job = ? AND (flags & ?) = 0");
    s.bind(1, job).bind(2, cc::kFlag_persistent);
    while (s.step()) creds.push_back(static_cast<uint32_t>(s.col_int(0)));
  }
  for (uint32_t cred : creds) {
    Stmt s(db_, "UPDATE creds SET released = 1 WHERE cred = ?");
    s.bind(1, cred);
    s.step();
    forget_if_gone(cred);
  }
  store_.end_job_maps(job);
  Stmt j(db_, "DELETE FROM wlm_jobs WHERE job = ?");
  j.bind(1, job);
  j.step();
  Stmt p(db_, "DELETE FROM wlm_job_pids WHERE job = ?");
  p.bind(1, job);
  p.step();
  t.commit();
  return static_cast<size_t>(before);
}

size_t CredStore::reconcile(const std::vector<uint32_t>& active) {
  std::vector<uint32_t> known;
  {
    Stmt s(db_, "SELECT job FROM wlm_jobs UNION SELECT job FROM cred_refs WHERE job != 0 UNION SELECT wlm_job FROM job_map_owner"
                " UNION SELECT job FROM creds WHERE job != 0 AND (flags & ?) = 0 AND released = 0");
    s.bind(1, cc::kFlag_persistent);
    while (s.step()) known.push_back(static_cast<uint32_t>(s.col_int(0)));
  }
  size_t ended = 0;
  for (uint32_t job : known)
    if (std::find(active.begin(), active.end(), job) == active.end()) {
      job_end(job);
      ++ended;
    }
  return ended;
}

// References of processes in no job go with their process (a job's stay until the job ends); a pid alive
// again is another process when its start time differs. `cred` 0: every credential's.
size_t CredStore::drop_dead_processes_locked(uint32_t cred) {
  std::vector<uint32_t> dead;
  {
    Stmt s(db_, "SELECT DISTINCT pid, start FROM cred_refs WHERE job = 0 AND (?1 = 0 OR cred = ?1)");
    s.bind(1, cred);
    while (s.step()) {
      const auto pid = static_cast<uint32_t>(s.col_int(0));
      const auto p = process_info(pid);
      if (!p || p->start != static_cast<uint64_t>(s.col_int(1))) dead.push_back(pid);
    }
  }
  for (uint32_t pid : dead) drop_references("pid", pid);
  return dead.size();
}

size_t CredStore::drop_dead_processes() {
  Transaction t(db_);
  const size_t n = drop_dead_processes_locked(0);
  t.commit();
  return n;
}

uint32_t CredStore::registered_job(Store::Process p) {
  if (!p.start) return 0;
  Stmt s(db_, "SELECT w.job FROM wlm_job_pids w JOIN processes p ON p.pid = w.pid WHERE w.pid = ? AND p.start = ?");
  s.bind(1, p.pid).bind(2, static_cast<int64_t>(p.start));
  return s.step() ? static_cast<uint32_t>(s.col_int(0)) : 0;
}

bool CredStore::job_known(uint32_t job) {
  return count(db_, "SELECT COUNT(*) FROM wlm_jobs WHERE job = ?", job) != 0;
}

}  // namespace uet::entity
