// The pass manager: pipelines by name or level, run to a fixed point, timed, with a rewrite record.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "opt/pass.h"

namespace kiln::opt {

struct PipelineOptions {
  PassOptions pass;
  int max_rounds = 8;          // the pipeline repeats until a round changes nothing, or this cap
  bool check_each_pass = false;  // check the model (schemas, types) after every pass
  int64_t rewrite_budget = -1;   // stop after this many rewrites (-1: no limit); bisection uses it
};

struct PassStats {
  std::string name;
  int runs = 0;
  int64_t rewrites = 0;
  double ms = 0;
};

struct OptimizeResult {
  std::vector<PassStats> passes;  // in pipeline order
  std::vector<Rewrite> rewrites;  // in the order applied
  std::vector<NearMiss> near_misses;  // from the last round, where the graph no longer changed
  int rounds = 0;
  double ms = 0;
};

using PassFactory = std::function<std::unique_ptr<Pass>()>;
// Adds a pass to the registry under `name` (tests inject passes this way).
void register_pass(const std::string& name, PassFactory make);

struct PassInfo {
  std::string name;
  std::string summary;
};
std::vector<PassInfo> list_passes();

// The passes of -O<level> (0..3).
std::vector<std::string> level_pipeline(int level);
// "fold-constants,dce" -> names; fails (kBadInput) naming an unknown pass.
std::vector<std::string> parse_pipeline(std::string_view spec);

// Runs the passes on a checked model. The model stays valid ONNX in its opsets (or the target
// opset when raise-opset is in the pipeline).
OptimizeResult optimize(Model& m, const std::vector<std::string>& passes,
                        const PipelineOptions& opts = {});

}  // namespace kiln::opt
