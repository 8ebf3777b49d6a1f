// One libpq connection (Debian's libpq-dev), used one statement at a time under a lock: what the
// PostgreSQL registry store and job queue are built on. Parameters travel as text ($1, $2 ...),
// never spliced into SQL.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::serve {

// A statement's result: rows of text cells (NULL reads as "").
class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r, PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  std::string text(int row, int col) const { return PQgetvalue(r_.get(), row, col); }
  int64_t int64(int row, int col) const { return std::stoll(text(row, col)); }
  int64_t affected() const;  // rows an UPDATE / INSERT touched

 private:
  std::shared_ptr<PGresult> r_;
};

class PgConnection {
 public:
  // Connects to `url` (postgresql://... or a libpq keyword string). Fails (kBadInput) with the
  // server's one-line reason, the password never shown.
  explicit PgConnection(const std::string& url);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement; fails (kRuntime) with PostgreSQL's message. Reconnects once first when
  // the connection was lost (a server restart).
  PgResult exec(const std::string& sql, const std::vector<std::string>& params = {});
  // The lock a caller holds across the statements of one transaction.
  std::recursive_mutex& mutex() { return mu_; }

 private:
  PGconn* conn_ = nullptr;
  std::string where_;
  std::recursive_mutex mu_;
};

// Runs `fn` inside BEGIN ... COMMIT on `c` (ROLLBACK when it throws), holding c's lock.
template <typename Fn>
auto pg_transaction(PgConnection& c, Fn&& fn) -> decltype(fn()) {
  std::lock_guard<std::recursive_mutex> lock(c.mutex());
  c.exec("BEGIN");
  try {
    auto r = fn();
    c.exec("COMMIT");
    return r;
  } catch (...) {
    try {
      c.exec("ROLLBACK");
    } catch (...) {
    }
    throw;
  }
}

}  // namespace kiln::serve
