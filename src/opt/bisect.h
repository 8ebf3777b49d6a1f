// Which rewrite broke the outputs: the pipeline is replayed with a budget of K rewrites and
// checked against the original, K found by binary search. Passes are deterministic, so the first
// K rewrites of a budgeted run are the first K of the full run.
#pragma once

#include <functional>
#include <optional>

#include "opt/pipeline.h"
#include "opt/verify.h"

namespace kiln::opt {

struct BisectResult {
  int64_t total = 0;   // rewrites in the full run
  int runs = 0;        // pipelines replayed
  std::optional<int64_t> first_bad;  // 1-based index into the full run's rewrites
  std::optional<Rewrite> rewrite;    // that rewrite
  std::string failure;               // how the outputs differed with it
};

// `load` returns a fresh, checked copy of the original model.
BisectResult bisect(const std::function<Model()>& load, const std::vector<std::string>& passes,
                    const PipelineOptions& opts, const Reference& ref, const VerifyOptions& vopts);

}  // namespace kiln::opt
