// The options `kiln serve` and `kiln worker` share: where the state is (--db, --data) and how jobs
// are worked (--workers, --lease, --job-timeout).
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "serve/job_worker.h"

namespace kiln::cli {

struct ServeCommonArgs {
  std::string data = "kiln-data";
  std::string db;
  int workers = 1;
  int lease_s = 30;
  int job_timeout_s = 900;
};

void add_serve_common_options(CLI::App& app, ServeCommonArgs& a);
// The worker options of `a`, the compiles run by this executable (/proc/self/exe).
serve::WorkerOptions worker_options(const ServeCommonArgs& a);

}  // namespace kiln::cli
