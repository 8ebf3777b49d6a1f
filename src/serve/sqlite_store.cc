#include "serve/sqlite_store.h"

#include <sqlite3.h>

#include <ctime>
#include <mutex>

#include "support/error.h"

namespace kiln::serve {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS models (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  created INTEGER NOT NULL,
  PRIMARY KEY (name, version),
  UNIQUE (name, sha256)
);
CREATE TABLE IF NOT EXISTS tokens (
  sha256 TEXT PRIMARY KEY,
  scope TEXT NOT NULL,
  created INTEGER NOT NULL
);
)sql";

// One prepared statement, finalized when it goes.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& where, const char* sql) : db_(db), where_(where) {
    if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK) fail_here("prepare");
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& s) {
    if (sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT) != SQLITE_OK) fail_here("bind");
    return *this;
  }
  Statement& bind(int i, int64_t v) {
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

 private:
  [[noreturn]] void fail_here(const char* what) const {
    fail(ErrorKind::kRuntime, "registry {}: {} failed: {}", where_, what, sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  std::string where_;
  sqlite3_stmt* st_ = nullptr;
};

ModelVersion row_version(const Statement& s) {
  return {.name = s.text(0), .version = s.int64(1), .sha256 = s.text(2), .bytes = s.int64(3), .created = s.int64(4)};
}

class SqliteStore final : public RegistryStore {
 public:
  explicit SqliteStore(const std::filesystem::path& file) : where_("'" + file.string() + "'") {
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
    if (sqlite3_open_v2(file.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      fail(ErrorKind::kBadInput, "registry {}: cannot open: {}", where_, msg);
    }
    sqlite3_busy_timeout(db_, 5000);
    try {
      exec("PRAGMA journal_mode=WAL", ErrorKind::kBadInput);
      exec(kSchema, ErrorKind::kBadInput);
    } catch (...) {  // not a registry (another SQLite file, or not SQLite at all)
      sqlite3_close(db_);
      throw;
    }
  }
  ~SqliteStore() override { sqlite3_close(db_); }

  ModelVersion add_version(const std::string& name, const std::string& sha256, int64_t bytes, bool* created) override {
    check_model_name(name);
    check_sha256(sha256);
    std::lock_guard<std::mutex> lock(mu_);
    exec("BEGIN IMMEDIATE", ErrorKind::kRuntime);
    try {
      Statement same(db_, where_, "SELECT name, version, sha256, bytes, created FROM models WHERE name = ? AND sha256 = ?");
      same.bind(1, name).bind(2, sha256);
      ModelVersion v;
      bool fresh = false;
      if (same.step()) {
        v = row_version(same);
      } else {
        Statement last(db_, where_, "SELECT COALESCE(MAX(version), 0) FROM models WHERE name = ?");
        last.bind(1, name).step();
        v = {.name = name, .version = last.int64(0) + 1, .sha256 = sha256, .bytes = bytes,
             .created = static_cast<int64_t>(std::time(nullptr))};
        Statement ins(db_, where_, "INSERT INTO models (name, version, sha256, bytes, created) VALUES (?, ?, ?, ?, ?)");
        ins.bind(1, v.name).bind(2, v.version).bind(3, v.sha256).bind(4, v.bytes).bind(5, v.created).step();
        fresh = true;
      }
      exec("COMMIT", ErrorKind::kRuntime);
      if (created) *created = fresh;
      return v;
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  std::vector<std::string> model_names() override {
    Statement s(db_, where_, "SELECT DISTINCT name FROM models ORDER BY name");
    std::vector<std::string> names;
    while (s.step()) names.push_back(s.text(0));
    return names;
  }

  std::vector<ModelVersion> versions(const std::string& name) override {
    Statement s(db_, where_, "SELECT name, version, sha256, bytes, created FROM models WHERE name = ? ORDER BY version");
    s.bind(1, name);
    std::vector<ModelVersion> out;
    while (s.step()) out.push_back(row_version(s));
    return out;
  }

  std::optional<ModelVersion> version(const std::string& name, int64_t version) override {
    Statement s(db_, where_, "SELECT name, version, sha256, bytes, created FROM models WHERE name = ? AND version = ?");
    s.bind(1, name).bind(2, version);
    if (!s.step()) return std::nullopt;
    return row_version(s);
  }

  void add_token(const std::string& token_sha256, TokenScope scope) override {
    check_sha256(token_sha256);
    Statement s(db_, where_, "INSERT OR REPLACE INTO tokens (sha256, scope, created) VALUES (?, ?, ?)");
    s.bind(1, token_sha256).bind(2, std::string(scope_name(scope))).bind(3, static_cast<int64_t>(std::time(nullptr))).step();
  }

  std::optional<TokenScope> token_scope(const std::string& token_sha256) override {
    Statement s(db_, where_, "SELECT scope FROM tokens WHERE sha256 = ?");
    s.bind(1, token_sha256);
    if (!s.step()) return std::nullopt;
    return parse_scope(s.text(0));
  }

 private:
  void exec(const char* sql, ErrorKind kind) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      fail(kind, "registry {}: {}", where_, msg);
    }
  }

  std::string where_;
  sqlite3* db_ = nullptr;
  std::mutex mu_;  // add_version's read-then-insert is one transaction at a time per connection
};

}  // namespace

std::unique_ptr<RegistryStore> open_sqlite_store(const std::filesystem::path& file) {
  return std::make_unique<SqliteStore>(file);
}

std::unique_ptr<RegistryStore> open_data_registry(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir, ec))
    fail(ErrorKind::kBadInput, "--data '{}': not a folder{}", dir.string(), ec ? " (" + ec.message() + ")" : "");
  return open_sqlite_store(dir / "registry.sqlite3");
}

}  // namespace kiln::serve
