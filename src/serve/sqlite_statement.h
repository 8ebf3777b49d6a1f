// A prepared SQLite statement (finalized when it goes) and a one-shot exec: what the SQLite
// registry store and the SQLite job queue share.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "support/error.h"

namespace kiln::serve {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const std::string& where, const char* sql) : db_(db), where_(where) {
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) fail_here("prepare");
  }
  ~SqliteStatement() { sqlite3_finalize(st_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& bind(int i, const std::string& s) {
    if (sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT) != SQLITE_OK) fail_here("bind");
    return *this;
  }
  SqliteStatement& bind(int i, int64_t v) {
    if (sqlite3_bind_int64(st_, i, v) != SQLITE_OK) fail_here("bind");
    return *this;
  }
  // The next row (true) or the end (false).
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail_here("step");
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(st_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(st_, col))) : "";
  }
  int64_t int64(int col) const { return sqlite3_column_int64(st_, col); }
  bool is_null(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }

 private:
  [[noreturn]] void fail_here(const char* what) const {
    fail(ErrorKind::kRuntime, "registry {}: {} failed: {}", where_, what, sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  std::string where_;
  sqlite3_stmt* st_ = nullptr;
};

// Runs `sql` (one or more statements without parameters); fails with `kind` naming `where`.
inline void sqlite_exec(sqlite3* db, const std::string& where, const char* sql, ErrorKind kind) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    fail(kind, "registry {}: {}", where, msg);
  }
}

// Opens `file` (made when missing) with a 5 s busy timeout and the WAL journal; fails (kBadInput)
// naming it when SQLite cannot open it.
sqlite3* open_sqlite_file(const std::string& file, const std::string& where);

}  // namespace kiln::serve
