// The kiln subcommands. Each registers its options on the CLI11 app and returns its exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace kiln::tools {

using Action = std::function<int()>;

Action add_bench(CLI::App& app);
Action add_inspect(CLI::App& app);
Action add_optimize(CLI::App& app);
Action add_profile(CLI::App& app);
Action add_run(CLI::App& app);
Action add_test(CLI::App& app);

}  // namespace kiln::tools
