#include "serve/sqlite_store.h"

#include <ctime>
#include <mutex>

#include "serve/sqlite_statement.h"
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
CREATE TABLE IF NOT EXISTS aliases (
  name TEXT NOT NULL,
  alias TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (name, alias)
);
CREATE TABLE IF NOT EXISTS alias_policies (
  name TEXT NOT NULL,
  alias TEXT NOT NULL,
  policy TEXT NOT NULL,
  PRIMARY KEY (name, alias)
);
)sql";

using Statement = SqliteStatement;

ModelVersion row_version(const Statement& s) {
  return {.name = s.text(0), .version = s.int64(1), .sha256 = s.text(2), .bytes = s.int64(3), .created = s.int64(4)};
}

class SqliteStore final : public RegistryStore {
 public:
  explicit SqliteStore(const std::filesystem::path& file)
      : where_("'" + file.string() + "'"), db_(open_sqlite_file(file.string(), where_)) {
    try {
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

  void set_alias(const std::string& name, const std::string& alias, int64_t version) override {
    check_model_name(name);
    check_alias_name(alias);
    Statement s(db_, where_, "INSERT OR REPLACE INTO aliases (name, alias, version) VALUES (?, ?, ?)");
    s.bind(1, name).bind(2, alias).bind(3, version).step();
  }

  std::map<std::string, int64_t> aliases(const std::string& name) override {
    Statement s(db_, where_, "SELECT alias, version FROM aliases WHERE name = ? ORDER BY alias");
    s.bind(1, name);
    std::map<std::string, int64_t> out;
    while (s.step()) out[s.text(0)] = s.int64(1);
    return out;
  }

  void set_alias_policy(const std::string& name, const std::string& alias, const std::string& policy) override {
    check_model_name(name);
    check_alias_name(alias);
    if (policy.empty()) {
      Statement s(db_, where_, "DELETE FROM alias_policies WHERE name = ? AND alias = ?");
      s.bind(1, name).bind(2, alias).step();
      return;
    }
    Statement s(db_, where_, "INSERT OR REPLACE INTO alias_policies (name, alias, policy) VALUES (?, ?, ?)");
    s.bind(1, name).bind(2, alias).bind(3, policy).step();
  }

  std::map<std::string, std::string> alias_policies(const std::string& name) override {
    Statement s(db_, where_, "SELECT alias, policy FROM alias_policies WHERE name = ? ORDER BY alias");
    s.bind(1, name);
    std::map<std::string, std::string> out;
    while (s.step()) out[s.text(0)] = s.text(1);
    return out;
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
  void exec(const char* sql, ErrorKind kind) { sqlite_exec(db_, where_, sql, kind); }

  std::string where_;
  sqlite3* db_ = nullptr;
  std::mutex mu_;  // add_version's read-then-insert is one transaction at a time per connection
};

}  // namespace

sqlite3* open_sqlite_file(const std::string& file, const std::string& where) {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(file.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    const std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    fail(ErrorKind::kBadInput, "registry {}: cannot open: {}", where, msg);
  }
  sqlite3_busy_timeout(db, 5000);
  try {
    sqlite_exec(db, where, "PRAGMA journal_mode=WAL", ErrorKind::kBadInput);
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
  return db;
}

std::unique_ptr<RegistryStore> open_sqlite_store(const std::filesystem::path& file) {
  return std::make_unique<SqliteStore>(file);
}

std::filesystem::path make_data_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir, ec))
    fail(ErrorKind::kBadInput, "--data '{}': not a folder{}", dir.string(), ec ? " (" + ec.message() + ")" : "");
  return dir;
}

std::unique_ptr<RegistryStore> open_data_registry(const std::filesystem::path& dir) {
  return open_sqlite_store(make_data_dir(dir) / "registry.sqlite3");
}

}  // namespace kiln::serve
