// SQLite's C interface made safe to use from the entity's stores: statements finalized and transactions
// rolled back on every path out, errors as exceptions naming SQLite's words.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace uet::entity {

// A prepared statement, finalized on every path out.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("SQLite cannot prepare '") + sql + "': " + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s_); }
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


}  // namespace uet::entity
