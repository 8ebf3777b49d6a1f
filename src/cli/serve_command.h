// kiln serve: the model service (src/serve/server.h, docs/service.md).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kiln::cli {

Action add_serve(CLI::App& app);

}  // namespace kiln::cli
