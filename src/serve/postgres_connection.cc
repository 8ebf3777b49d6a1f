#include "serve/postgres_connection.h"

#include <regex>

#include "serve/postgres_store.h"

#include "support/error.h"

namespace kiln::serve {

namespace {

std::string one_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

// The URL as it may be shown: without its password.
std::string redacted(const std::string& url) {
  return std::regex_replace(url, std::regex(R"(://([^:/@]*):[^@/]*@)"), "://$1:***@");
}

}  // namespace

int64_t PgResult::affected() const {
  const char* n = PQcmdTuples(r_.get());
  return n && *n ? std::stoll(n) : 0;
}

bool is_postgres_url(const std::string& db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
}

PgConnection::PgConnection(const std::string& url) : where_(redacted(url)) {
  conn_ = PQconnectdb(url.c_str());
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string msg = one_line(conn_ ? PQerrorMessage(conn_) : "out of memory");
    PQfinish(conn_);
    conn_ = nullptr;
    fail(ErrorKind::kBadInput, "--db '{}': cannot connect: {}", where_, msg);
  }
  // Notices (CREATE ... IF NOT EXISTS "already exists, skipping") stay off stderr.
  PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
}

PgConnection::~PgConnection() { PQfinish(conn_); }

PgResult PgConnection::exec(const std::string& sql, const std::vector<std::string>& params) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (PQstatus(conn_) != CONNECTION_OK) PQreset(conn_);
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  // Without parameters, PQexec: it takes several statements (the schema) in one string.
  PGresult* r = params.empty() ? PQexec(conn_, sql.c_str())
                               : PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                              values.data(), nullptr, nullptr, 0);
  const ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    const std::string msg = one_line(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
    PQclear(r);
    fail(ErrorKind::kRuntime, "PostgreSQL {}: {}", where_, msg);
  }
  return PgResult(r);
}

}  // namespace kiln::serve
