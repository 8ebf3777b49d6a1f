// The registry and the job queue in PostgreSQL (`kiln serve --db postgresql://...`, `kiln worker
// --db ...`): several servers and workers, on several machines, share them. Jobs are claimed with
// UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1), so concurrent claimers never
// wait on each other nor take the same job; leases are on the database's clock, so the machines'
// clocks need not agree.
#pragma once

#include <memory>
#include <string>

#include "serve/job_queue.h"
#include "serve/registry_store.h"

namespace kiln::serve {

// Whether `db` names a PostgreSQL database (postgresql:// or postgres://).
bool is_postgres_url(const std::string& db);

// Each opens its own connection and makes the tables when missing (one process at a time, under
// an advisory lock). Fails (kBadInput) when the database cannot be reached.
std::unique_ptr<RegistryStore> open_postgres_store(const std::string& url);
std::unique_ptr<JobQueue> open_postgres_job_queue(const std::string& url);

}  // namespace kiln::serve
