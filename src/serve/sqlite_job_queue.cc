#include "serve/sqlite_job_queue.h"

#include <chrono>
#include <ctime>
#include <mutex>

#include "serve/sqlite_statement.h"
#include "serve/sqlite_store.h"
#include "support/error.h"

namespace kiln::serve {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  model TEXT NOT NULL,
  version INTEGER NOT NULL,
  model_sha256 TEXT NOT NULL,
  request TEXT NOT NULL,
  state TEXT NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  worker TEXT NOT NULL DEFAULT '',
  lease_expires INTEGER NOT NULL DEFAULT 0,
  results TEXT NOT NULL DEFAULT 'null',
  log TEXT NOT NULL DEFAULT '',
  created INTEGER NOT NULL,
  started INTEGER NOT NULL DEFAULT 0,
  finished INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, id);
)sql";

constexpr const char* kColumns =
    "id, model, version, model_sha256, request, state, attempt, worker, lease_expires, results, log, created, "
    "started, finished";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
int64_t now_s() { return static_cast<int64_t>(std::time(nullptr)); }

Job row_job(const SqliteStatement& s) {
  Job j;
  j.id = s.int64(0);
  j.spec = {.model = s.text(1), .version = s.int64(2), .model_sha256 = s.text(3),
            .request = nlohmann::json::parse(s.text(4), nullptr, false)};
  j.state = parse_job_state(s.text(5));
  j.attempt = s.int64(6);
  j.worker = s.text(7);
  j.lease_expires_ms = s.int64(8);
  j.results = nlohmann::json::parse(s.text(9), nullptr, false);
  j.log = s.text(10);
  j.created = s.int64(11);
  j.started = s.int64(12);
  j.finished = s.int64(13);
  return j;
}

class SqliteJobQueue final : public JobQueue {
 public:
  explicit SqliteJobQueue(const std::filesystem::path& file)
      : where_("'" + file.string() + "'"), db_(open_sqlite_file(file.string(), where_)) {
    try {
      sqlite_exec(db_, where_, kSchema, ErrorKind::kBadInput);
    } catch (...) {
      sqlite3_close(db_);
      throw;
    }
  }
  ~SqliteJobQueue() override { sqlite3_close(db_); }

  int64_t enqueue(const JobSpec& spec) override {
    std::lock_guard<std::mutex> lock(mu_);
    SqliteStatement s(db_, where_,
                      "INSERT INTO jobs (model, version, model_sha256, request, state, created, log) "
                      "VALUES (?, ?, ?, ?, 'queued', ?, ?)");
    s.bind(1, spec.model).bind(2, spec.version).bind(3, spec.model_sha256).bind(4, spec.request.dump());
    s.bind(5, now_s()).bind(6, std::string("queued\n")).step();
    return sqlite3_last_insert_rowid(db_);
  }

  std::optional<std::pair<Job, Lease>> claim(const std::string& worker, int lease_s) override {
    reclaim_expired();
    std::lock_guard<std::mutex> lock(mu_);
    return transaction([&]() -> std::optional<std::pair<Job, Lease>> {
      const int64_t now = now_ms();
      SqliteStatement pick(db_, where_,
                           "SELECT id, attempt, worker, state FROM jobs WHERE state = 'queued' OR "
                           "(state = 'running' AND lease_expires < ?) ORDER BY id LIMIT 1");
      pick.bind(1, now);
      if (!pick.step()) return std::nullopt;
      const int64_t id = pick.int64(0), attempt = pick.int64(1) + 1;
      std::string line;
      if (pick.text(3) == "running")
        line = "attempt " + std::to_string(attempt - 1) + " (" + pick.text(2) + ") lost its lease\n";
      line += "attempt " + std::to_string(attempt) + " claimed by " + worker + "\n";
      SqliteStatement up(db_, where_,
                         "UPDATE jobs SET state = 'running', attempt = ?, worker = ?, lease_expires = ?, "
                         "started = CASE started WHEN 0 THEN ? ELSE started END, log = log || ? WHERE id = ?");
      up.bind(1, attempt).bind(2, worker).bind(3, now + int64_t(lease_s) * 1000).bind(4, now_s()).bind(5, line);
      up.bind(6, id).step();
      Job j = read(id).value();
      return std::make_pair(j, Lease{.job = id, .attempt = attempt, .worker = worker});
    });
  }

  bool heartbeat(const Lease& lease, int lease_s) override {
    std::lock_guard<std::mutex> lock(mu_);
    SqliteStatement s(db_, where_,
                      "UPDATE jobs SET lease_expires = ? WHERE id = ? AND attempt = ? AND state = 'running'");
    s.bind(1, now_ms() + int64_t(lease_s) * 1000).bind(2, lease.job).bind(3, lease.attempt).step();
    return sqlite3_changes(db_) == 1;
  }

  bool finish(const Lease& lease, JobState state, const nlohmann::json& results, const std::string& log) override {
    std::lock_guard<std::mutex> lock(mu_);
    SqliteStatement s(db_, where_,
                      "UPDATE jobs SET state = ?, results = ?, log = log || ?, finished = ?, lease_expires = 0 "
                      "WHERE id = ? AND attempt = ? AND state = 'running'");
    s.bind(1, std::string(job_state_name(state))).bind(2, results.dump()).bind(3, log).bind(4, now_s());
    s.bind(5, lease.job).bind(6, lease.attempt).step();
    return sqlite3_changes(db_) == 1;
  }

  int reclaim_expired() override {
    std::lock_guard<std::mutex> lock(mu_);
    SqliteStatement s(db_, where_,
                      "UPDATE jobs SET state = 'failed', finished = ?, lease_expires = 0, results = ?, log = log || ? "
                      "WHERE state = 'running' AND lease_expires < ? AND attempt >= ?");
    const std::string why = "the workers of " + std::to_string(kMaxAttempts) +
                            " attempts stopped without finishing (killed, crashed or stalled past the lease)";
    s.bind(1, now_s()).bind(2, nlohmann::json{{"error", why}}.dump()).bind(3, why + "\n").bind(4, now_ms());
    s.bind(5, int64_t(kMaxAttempts)).step();
    return sqlite3_changes(db_);
  }

  std::vector<Job> recent_jobs(int limit) override {
    std::lock_guard<std::mutex> lock(mu_);
    SqliteStatement s(db_, where_, (std::string("SELECT ") + kColumns + " FROM jobs ORDER BY id DESC LIMIT ?").c_str());
    s.bind(1, int64_t{limit});
    std::vector<Job> out;
    while (s.step()) out.push_back(row_job(s));
    return out;
  }

  std::optional<Job> job(int64_t id) override {
    std::lock_guard<std::mutex> lock(mu_);
    return read(id);
  }

  std::map<std::string, int64_t> count_by_state() override {
    std::lock_guard<std::mutex> lock(mu_);
    SqliteStatement s(db_, where_, "SELECT state, COUNT(*) FROM jobs GROUP BY state");
    std::map<std::string, int64_t> counts;
    while (s.step()) counts[s.text(0)] = s.int64(1);
    return counts;
  }

 private:
  std::optional<Job> read(int64_t id) {
    SqliteStatement s(db_, where_, (std::string("SELECT ") + kColumns + " FROM jobs WHERE id = ?").c_str());
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return row_job(s);
  }

  template <typename Fn>
  auto transaction(Fn&& fn) -> decltype(fn()) {
    sqlite_exec(db_, where_, "BEGIN IMMEDIATE", ErrorKind::kRuntime);
    try {
      auto r = fn();
      sqlite_exec(db_, where_, "COMMIT", ErrorKind::kRuntime);
      return r;
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  std::string where_;
  sqlite3* db_ = nullptr;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<JobQueue> open_sqlite_job_queue(const std::filesystem::path& file) {
  return std::make_unique<SqliteJobQueue>(file);
}

}  // namespace kiln::serve
