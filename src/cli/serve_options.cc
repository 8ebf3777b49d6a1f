#include "cli/serve_options.h"

#include "support/error.h"

namespace kiln::cli {

void add_serve_common_options(CLI::App& app, ServeCommonArgs& a) {
  app.add_option("--data", a.data,
                 "The data folder: the models' and artifacts' bytes (blobs/), the compile cache (cache/) and, "
                 "without --db, registry.sqlite3 (default ./kiln-data, made when missing)");
  app.add_option("--db", a.db,
                 "postgresql://USER@HOST:PORT/DB (or ?host=SOCKET_DIR): the registry and the job queue in "
                 "PostgreSQL, shared by several kiln serve / kiln worker processes");
  app.add_option("--workers", a.workers, "Compile workers in this process (default 1)")->check(CLI::Range(0, 64));
  app.add_option("--lease", a.lease_s,
                 "Seconds a claimed job stays a worker's without a heartbeat; a dead worker's job is taken over "
                 "after it (default 30)")
      ->check(CLI::Range(1, 3600));
  app.add_option("--job-timeout", a.job_timeout_s,
                 "The time limit of one target's compile in seconds (default 900): past it the compile is stopped "
                 "and the target fails")
      ->check(CLI::Range(1, 86400));
}

serve::WorkerOptions worker_options(const ServeCommonArgs& a) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  KILN_CHECK(!ec, ErrorKind::kRuntime, "cannot find the kiln executable (/proc/self/exe): {}", ec.message());
  return {.kiln_exe = exe, .lease_s = a.lease_s, .job_timeout_s = a.job_timeout_s};
}

}  // namespace kiln::cli
