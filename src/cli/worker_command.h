// kiln worker: runs kiln serve's compile jobs only (src/serve/job_worker.h, docs/service.md).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kiln::cli {

Action add_worker(CLI::App& app);

}  // namespace kiln::cli
