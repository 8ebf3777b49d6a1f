// The kiln subcommands. Each registers its options on the CLI11 app and returns its exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace kiln::cli {

using Action = std::function<int()>;

// --allow-newer-opset, on the commands that load a model: an opset import newer than kiln knows is
// then a warning on stderr instead of a refusal.
inline void add_allow_newer_opset(CLI::App& app, bool& flag) {
  app.add_flag("--allow-newer-opset", flag,
               "Load a model importing an opset newer than kiln knows (its ops run as kiln's newest "
               "define them), with a warning");
}

Action add_bench(CLI::App& app);
Action add_inspect(CLI::App& app);
Action add_optimize(CLI::App& app);
Action add_profile(CLI::App& app);
Action add_quantize(CLI::App& app);
Action add_run(CLI::App& app);
Action add_test(CLI::App& app);

}  // namespace kiln::cli
