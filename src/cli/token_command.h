// kiln token create: an access token for kiln serve (src/serve/tokens.h).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kiln::cli {

Action add_token(CLI::App& app);

}  // namespace kiln::cli
