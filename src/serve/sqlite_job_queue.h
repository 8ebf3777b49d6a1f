// The job queue in the registry's SQLite file (DATA/registry.sqlite3): the embedded default, for
// the workers of one `kiln serve` (and `kiln worker --data DIR` processes on the same machine).
// A claim is one BEGIN IMMEDIATE transaction, so two claimers never take the same job.
#pragma once

#include <filesystem>
#include <memory>

#include "serve/job_queue.h"

namespace kiln::serve {

std::unique_ptr<JobQueue> open_sqlite_job_queue(const std::filesystem::path& file);

}  // namespace kiln::serve
