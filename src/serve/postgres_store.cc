#include "serve/postgres_store.h"

#include "serve/postgres_connection.h"
#include "support/error.h"

namespace kiln::serve {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS models (
  name TEXT NOT NULL,
  version BIGINT NOT NULL,
  sha256 TEXT NOT NULL,
  bytes BIGINT NOT NULL,
  created BIGINT NOT NULL,
  PRIMARY KEY (name, version),
  UNIQUE (name, sha256)
);
CREATE TABLE IF NOT EXISTS tokens (
  sha256 TEXT PRIMARY KEY,
  scope TEXT NOT NULL,
  created BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS aliases (
  name TEXT NOT NULL,
  alias TEXT NOT NULL,
  version BIGINT NOT NULL,
  PRIMARY KEY (name, alias)
);
CREATE TABLE IF NOT EXISTS alias_policies (
  name TEXT NOT NULL,
  alias TEXT NOT NULL,
  policy TEXT NOT NULL,
  PRIMARY KEY (name, alias)
);
CREATE TABLE IF NOT EXISTS jobs (
  id BIGSERIAL PRIMARY KEY,
  model TEXT NOT NULL,
  version BIGINT NOT NULL,
  model_sha256 TEXT NOT NULL,
  request TEXT NOT NULL,
  state TEXT NOT NULL,
  attempt BIGINT NOT NULL DEFAULT 0,
  worker TEXT NOT NULL DEFAULT '',
  lease_expires BIGINT NOT NULL DEFAULT 0,
  results TEXT NOT NULL DEFAULT 'null',
  log TEXT NOT NULL DEFAULT '',
  created BIGINT NOT NULL,
  started BIGINT NOT NULL DEFAULT 0,
  finished BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, id);
)sql";

// The database's clock, in ms and s since the epoch.
constexpr const char* kNowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
constexpr const char* kNowS = "extract(epoch from clock_timestamp())::bigint";

std::string str(int64_t v) { return std::to_string(v); }

void make_schema(PgConnection& c) {
  pg_transaction(c, [&] {
    c.exec("SELECT pg_advisory_xact_lock(7131180001)");  // kiln's schema lock: one creator at a time
    c.exec(kSchema);
    return 0;
  });
}

ModelVersion row_version(const PgResult& r, int i) {
  return {.name = r.text(i, 0), .version = r.int64(i, 1), .sha256 = r.text(i, 2), .bytes = r.int64(i, 3),
          .created = r.int64(i, 4)};
}

class PostgresStore final : public RegistryStore {
 public:
  explicit PostgresStore(const std::string& url) : c_(url) { make_schema(c_); }

  ModelVersion add_version(const std::string& name, const std::string& sha256, int64_t bytes, bool* created) override {
    check_model_name(name);
    check_sha256(sha256);
    return pg_transaction(c_, [&] {
      c_.exec("SELECT pg_advisory_xact_lock(hashtext($1))", {name});  // one numbering per name at a time
      PgResult same = c_.exec("SELECT name, version, sha256, bytes, created FROM models WHERE name = $1 AND sha256 = $2",
                              {name, sha256});
      if (same.rows() > 0) {
        if (created) *created = false;
        return row_version(same, 0);
      }
      PgResult added = c_.exec(
          std::string("INSERT INTO models (name, version, sha256, bytes, created) SELECT $1::text, "
                      "COALESCE(MAX(version), 0) + 1, $2::text, $3::bigint, ") + kNowS +
              " FROM models WHERE name = $1 RETURNING name, version, sha256, bytes, created",
          {name, sha256, str(bytes)});
      if (created) *created = true;
      return row_version(added, 0);
    });
  }

  std::vector<std::string> model_names() override {
    PgResult r = c_.exec("SELECT name FROM models GROUP BY name ORDER BY name COLLATE \"C\"");
    std::vector<std::string> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(r.text(i, 0));
    return out;
  }

  std::vector<ModelVersion> versions(const std::string& name) override {
    PgResult r = c_.exec("SELECT name, version, sha256, bytes, created FROM models WHERE name = $1 ORDER BY version", {name});
    std::vector<ModelVersion> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(row_version(r, i));
    return out;
  }

  std::optional<ModelVersion> version(const std::string& name, int64_t version) override {
    PgResult r = c_.exec("SELECT name, version, sha256, bytes, created FROM models WHERE name = $1 AND version = $2",
                         {name, str(version)});
    if (r.rows() == 0) return std::nullopt;
    return row_version(r, 0);
  }

  void set_alias(const std::string& name, const std::string& alias, int64_t version) override {
    check_model_name(name);
    check_alias_name(alias);
    c_.exec("INSERT INTO aliases (name, alias, version) VALUES ($1, $2, $3) "
            "ON CONFLICT (name, alias) DO UPDATE SET version = EXCLUDED.version",
            {name, alias, str(version)});
  }

  std::map<std::string, int64_t> aliases(const std::string& name) override {
    PgResult r = c_.exec("SELECT alias, version FROM aliases WHERE name = $1", {name});
    std::map<std::string, int64_t> out;
    for (int i = 0; i < r.rows(); ++i) out[r.text(i, 0)] = r.int64(i, 1);
    return out;
  }

  void set_alias_policy(const std::string& name, const std::string& alias, const std::string& policy) override {
    check_model_name(name);
    check_alias_name(alias);
    if (policy.empty()) {
      c_.exec("DELETE FROM alias_policies WHERE name = $1 AND alias = $2", {name, alias});
      return;
    }
    c_.exec("INSERT INTO alias_policies (name, alias, policy) VALUES ($1, $2, $3) "
            "ON CONFLICT (name, alias) DO UPDATE SET policy = EXCLUDED.policy",
            {name, alias, policy});
  }

  std::map<std::string, std::string> alias_policies(const std::string& name) override {
    PgResult r = c_.exec("SELECT alias, policy FROM alias_policies WHERE name = $1", {name});
    std::map<std::string, std::string> out;
    for (int i = 0; i < r.rows(); ++i) out[r.text(i, 0)] = r.text(i, 1);
    return out;
  }

  void add_token(const std::string& token_sha256, TokenScope scope) override {
    check_sha256(token_sha256);
    c_.exec(std::string("INSERT INTO tokens (sha256, scope, created) VALUES ($1, $2, ") + kNowS +
                ") ON CONFLICT (sha256) DO UPDATE SET scope = EXCLUDED.scope",
            {token_sha256, scope_name(scope)});
  }

  std::optional<TokenScope> token_scope(const std::string& token_sha256) override {
    PgResult r = c_.exec("SELECT scope FROM tokens WHERE sha256 = $1", {token_sha256});
    if (r.rows() == 0) return std::nullopt;
    return parse_scope(r.text(0, 0));
  }

 private:
  PgConnection c_;
};

constexpr const char* kJobColumns =
    "id, model, version, model_sha256, request, state, attempt, worker, lease_expires, results, log, created, "
    "started, finished";

Job row_job(const PgResult& r, int i) {
  Job j;
  j.id = r.int64(i, 0);
  j.spec = {.model = r.text(i, 1), .version = r.int64(i, 2), .model_sha256 = r.text(i, 3),
            .request = nlohmann::json::parse(r.text(i, 4), nullptr, false)};
  j.state = parse_job_state(r.text(i, 5));
  j.attempt = r.int64(i, 6);
  j.worker = r.text(i, 7);
  j.lease_expires_ms = r.int64(i, 8);
  j.results = nlohmann::json::parse(r.text(i, 9), nullptr, false);
  j.log = r.text(i, 10);
  j.created = r.int64(i, 11);
  j.started = r.int64(i, 12);
  j.finished = r.int64(i, 13);
  return j;
}

class PostgresJobQueue final : public JobQueue {
 public:
  explicit PostgresJobQueue(const std::string& url) : c_(url) { make_schema(c_); }

  int64_t enqueue(const JobSpec& spec) override {
    PgResult r = c_.exec(std::string("INSERT INTO jobs (model, version, model_sha256, request, state, created, log) "
                                     "VALUES ($1, $2, $3, $4, 'queued', ") + kNowS + ", 'queued\n') RETURNING id",
                         {spec.model, str(spec.version), spec.model_sha256, spec.request.dump()});
    return r.int64(0, 0);
  }

  std::optional<std::pair<Job, Lease>> claim(const std::string& worker, int lease_s) override {
    reclaim_expired();
    // One statement: the row is locked by the subquery (rows other claimers hold are skipped),
    // then taken under a new attempt. READ COMMITTED re-checks the row's state when it changed
    // since the statement began.
    const std::string sql = std::string("UPDATE jobs SET state = 'running', attempt = attempt + 1, worker = $1, ") +
                            "lease_expires = " + kNowMs + " + $2::bigint * 1000, " +
                            "started = CASE started WHEN 0 THEN " + kNowS + " ELSE started END, " +
                            "log = log || CASE state WHEN 'running' THEN 'attempt ' || attempt || ' (' || worker || "
                            "') lost its lease' || chr(10) ELSE '' END || 'attempt ' || (attempt + 1) || "
                            "' claimed by ' || $1 || chr(10) " +
                            "WHERE id = (SELECT id FROM jobs WHERE state = 'queued' OR (state = 'running' AND "
                            "lease_expires < " + kNowMs + ") ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) " +
                            "RETURNING " + kJobColumns;
    PgResult r = c_.exec(sql, {worker, str(lease_s)});
    if (r.rows() == 0) return std::nullopt;
    Job j = row_job(r, 0);
    return std::make_pair(j, Lease{.job = j.id, .attempt = j.attempt, .worker = worker});
  }

  bool heartbeat(const Lease& lease, int lease_s) override {
    PgResult r = c_.exec(std::string("UPDATE jobs SET lease_expires = ") + kNowMs +
                             " + $1::bigint * 1000 WHERE id = $2 AND attempt = $3 AND state = 'running'",
                         {str(lease_s), str(lease.job), str(lease.attempt)});
    return r.affected() == 1;
  }

  bool finish(const Lease& lease, JobState state, const nlohmann::json& results, const std::string& log) override {
    PgResult r = c_.exec(std::string("UPDATE jobs SET state = $1, results = $2, log = log || $3, finished = ") + kNowS +
                             ", lease_expires = 0 WHERE id = $4 AND attempt = $5 AND state = 'running'",
                         {job_state_name(state), results.dump(), log, str(lease.job), str(lease.attempt)});
    return r.affected() == 1;
  }

  int reclaim_expired() override {
    const std::string why = "the workers of " + std::to_string(kMaxAttempts) +
                            " attempts stopped without finishing (killed, crashed or stalled past the lease)";
    PgResult r = c_.exec(std::string("UPDATE jobs SET state = 'failed', finished = ") + kNowS +
                             ", lease_expires = 0, results = $1, log = log || $2 WHERE state = 'running' AND "
                             "lease_expires < " + kNowMs + " AND attempt >= $3",
                         {nlohmann::json{{"error", why}}.dump(), why + "\n", str(kMaxAttempts)});
    return static_cast<int>(r.affected());
  }

  std::vector<Job> recent_jobs(int limit) override {
    PgResult r = c_.exec(std::string("SELECT ") + kJobColumns + " FROM jobs ORDER BY id DESC LIMIT $1", {str(limit)});
    std::vector<Job> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(row_job(r, i));
    return out;
  }

  std::optional<Job> job(int64_t id) override {
    PgResult r = c_.exec(std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = $1", {str(id)});
    if (r.rows() == 0) return std::nullopt;
    return row_job(r, 0);
  }

  std::map<std::string, int64_t> count_by_state() override {
    PgResult r = c_.exec("SELECT state, COUNT(*) FROM jobs GROUP BY state");
    std::map<std::string, int64_t> counts;
    for (int i = 0; i < r.rows(); ++i) counts[r.text(i, 0)] = r.int64(i, 1);
    return counts;
  }

 private:
  PgConnection c_;
};

}  // namespace

std::unique_ptr<RegistryStore> open_postgres_store(const std::string& url) { return std::make_unique<PostgresStore>(url); }
std::unique_ptr<JobQueue> open_postgres_job_queue(const std::string& url) {
  return std::make_unique<PostgresJobQueue>(url);
}

}  // namespace kiln::serve
