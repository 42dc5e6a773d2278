// SQLite's C interface made safe to use from the entity's stores: statements finalized and transactions
// rolled back on every path out, errors as exceptions naming SQLite's words.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace uet::entity {

// Prepared statements kept per connection and SQL text: the entity asks the same few questions many times
// a second, and preparing one costs more than running it. A statement in use is not handed out twice.
class StatementCache {
 public:
  static sqlite3_stmt* take(sqlite3* db, const std::string& sql) {
    auto& free = cache()[{db, sql}];
    if (free.empty()) return nullptr;
    sqlite3_stmt* s = free.back();
    free.pop_back();
    return s;
  }
  static void give_back(sqlite3* db, const std::string& sql, sqlite3_stmt* s) {
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    cache()[{db, sql}].push_back(s);
  }
  // Before the connection closes.
  static void drop(sqlite3* db) {
    for (auto it = cache().begin(); it != cache().end();) {
      if (it->first.first != db) {
        ++it;
        continue;
      }
      for (sqlite3_stmt* s : it->second) sqlite3_finalize(s);
      it = cache().erase(it);
    }
  }

 private:
  static std::map<std::pair<sqlite3*, std::string>, std::vector<sqlite3_stmt*>>& cache() {
    static std::map<std::pair<sqlite3*, std::string>, std::vector<sqlite3_stmt*>> c;
    return c;
  }
};

// A prepared statement (from the cache when one is free), reset and given back on every path out.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db), sql_(sql) {
    s_ = StatementCache::take(db, sql_);
    if (!s_ && sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s_, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("SQLite cannot prepare '") + sql + "': " + sqlite3_errmsg(db));
  }
  ~Stmt() { StatementCache::give_back(db_, sql_, s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& bind(int i, int64_t v) { return check(sqlite3_bind_int64(s_, i, v)); }
  Stmt& bind(int i, const std::string& v) {
    return check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Stmt& bind_blob(int i, const std::vector<uint8_t>& v) {
    return check(sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string("SQLite: ") + sqlite3_errmsg(db_));
    return false;
  }
  void reset() { sqlite3_reset(s_); }
  int64_t col_int(int i) { return sqlite3_column_int64(s_, i); }
  std::string col_text(int i) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, i));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, i))) : std::string();
  }
  std::vector<uint8_t> col_blob(int i) {
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s_, i));
    return p ? std::vector<uint8_t>(p, p + sqlite3_column_bytes(s_, i)) : std::vector<uint8_t>();
  }
  bool col_null(int i) { return sqlite3_column_type(s_, i) == SQLITE_NULL; }

 private:
  Stmt& check(int rc) {
    if (rc != SQLITE_OK) throw std::runtime_error(std::string("SQLite bind: ") + sqlite3_errmsg(db_));
    return *this;
  }
  sqlite3* db_;
  std::string sql_;
  sqlite3_stmt* s_ = nullptr;
};

// BEGIN IMMEDIATE .. COMMIT, rolled back when an exception leaves the scope. A transaction that only
// changes references (state that dies with the node's processes) commits without waiting for the disk:
// it survives the entity's kill -9, not a power loss, after which no process holds anything anyway.
class Transaction {
 public:
  enum class Sync { full, normal };
  explicit Transaction(sqlite3* db, Sync sync = Sync::full) : db_(db), sync_(sync) {
    if (sync_ == Sync::normal) run("PRAGMA synchronous=NORMAL");
    run("BEGIN IMMEDIATE");
  }
  ~Transaction() {
    if (done_) return;
    try {
      run("ROLLBACK");
      if (sync_ == Sync::normal) run("PRAGMA synchronous=FULL");
    } catch (const std::exception&) {
      // Nothing more to undo: SQLite rolls back a transaction left open when the connection closes.
    }
  }
  void commit() {
    run("COMMIT");
    done_ = true;
    if (sync_ == Sync::normal) run("PRAGMA synchronous=FULL");
  }

 private:
  // Through the statement cache: the few words of a transaction are parsed once per connection.
  void run(const char* sql) {
    sqlite3_stmt* st = StatementCache::take(db_, sql);
    if (!st && sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("SQLite ") + sql + ": " + sqlite3_errmsg(db_));
    const int rc = sqlite3_step(st);
    StatementCache::give_back(db_, sql, st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) throw std::runtime_error(std::string("SQLite ") + sql + ": " + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  Sync sync_;
  bool done_ = false;
};


}  // namespace uet::entity
