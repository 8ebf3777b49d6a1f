// kiln ci PIPELINE.json: a model's gate in CI (src/serve/ci_pipeline.h, docs/service.md).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kiln::cli {

Action add_ci(CLI::App& app);

}  // namespace kiln::cli
