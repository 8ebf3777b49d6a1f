// The kiln subcommands. Each registers its options on the CLI11 app and returns its exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_options.h"
#include "profile/profile_target.h"
#include "profile/report.h"

namespace kiln::cli {

using Action = std::function<int()>;

// --allow-newer-opset, on the commands that load a model: an opset import newer than kiln knows is
// then a warning on stderr instead of a refusal.
inline void add_allow_newer_opset(CLI::App& app, bool& flag) {
  app.add_flag("--allow-newer-opset", flag,
               "Load a model importing an opset newer than kiln knows (its ops run as kiln's newest "
               "define them), with a warning");
}

// --precision fp32|bf16, on the commands that run the fast engine: bf16 computes convs and matmuls
// with constant weights in bf16 where the CPU has AVX-512 BF16 (EngineOptions::bf16).
inline void add_precision(CLI::App& app, std::string& precision) {
  app.add_option("--precision", precision,
                 "fp32 (default) or bf16: convs and matmuls in bf16 where the CPU has AVX-512 BF16 "
                 "(else fp32, said on stderr)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
}

// --tune on|off|again, on the commands that run the fast engine: implementation choice by
// measurement (EngineOptions::tune, engine/tuning.h); without it KILN_TUNE decides, else on.
inline void add_tune(CLI::App& app, std::string& tune) {
  app.add_option("--tune", tune,
                 "on (default: time the candidates of a choice the machine's cache does not know, "
                 "and cache the decision), off (the order of preference) or again (time every "
                 "choice anew)")
      ->check(CLI::IsMember({"on", "off", "again"}));
}
inline engine::TuneMode tune_mode(const std::string& word) {
  if (word == "on") return engine::TuneMode::kOn;
  if (word == "off") return engine::TuneMode::kOff;
  if (word == "again") return engine::TuneMode::kAgain;
  return engine::TuneMode::kDefault;
}

// What `kiln profile` measures, for the commands that need a profile (quantize --predict).
struct ProfileRequest {
  std::string model, inputs, engine = "fast", backends;
  bool strict = false;
  int threads = 0, level = 0, runs = 10, warmup = 1;
  uint64_t seed = 0;
  std::vector<std::string> dims;
  bool no_cache = false, allow_newer_opset = false;
};
// The report and the target it was measured on: the report's nodes point into the target's
// model, so the two live together.
struct MeasuredProfile {
  std::unique_ptr<ProfileTarget> target;
  ProfileReport report;
};
MeasuredProfile measure_profile(const ProfileRequest& request);

// --backends LIST and --strict, on the commands that run the fast engine (src/backend): the
// placement the engine runs with (null when LIST is empty).
struct BackendFlags {
  std::string backends;
  bool strict = false;
};
void add_backend_flags(CLI::App& app, BackendFlags& flags);

Action add_analyze(CLI::App& app);
Action add_bench(CLI::App& app);
Action add_compile(CLI::App& app);
Action add_inspect(CLI::App& app);
Action add_optimize(CLI::App& app);
Action add_profile(CLI::App& app);
Action add_quantize(CLI::App& app);
Action add_run(CLI::App& app);
Action add_test(CLI::App& app);

}  // namespace kiln::cli
