// One way to run a model whichever executor runs it: the fast engine (CompiledModel) or the
// reference Session. The command line and the profiler pick one with `--engine fast|reference`.
// Opening an .onnx file and the optimizer's -O levels are frontend/runners.h's (above the engine).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/compiled_model.h"
#include "engine/engine_options.h"
#include "ir/graph.h"
#include "ir/rt_value.h"
#include "runtime/observer.h"

namespace kiln::engine {

enum class EngineKind { kFast, kReference };

// "fast" or "reference"; fails (kBadInput) on anything else.
EngineKind parse_engine_kind(const std::string& name);

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  virtual const Model& model() const = 0;
  virtual const std::vector<const Value*>& inputs() const = 0;
  virtual const std::vector<const Value*>& outputs() const = 0;
  virtual std::vector<RtValue> run(const std::vector<RtValue>& feeds,
                                   RunObserver* observer = nullptr) = 0;
  // What runs for inputs of these dims (the fast engine's plan); nullopt for the reference.
  virtual std::optional<PlanSummary> summary(const std::vector<RtValue>& feeds) { return std::nullopt; }
  // What the fast engine's plan cache did so far; nullopt for the reference.
  virtual std::optional<PlanCacheStats> plan_stats() const { return std::nullopt; }
};

// The model as it is (checked, inlined and inferred by the executor); opts.optimize_level must be 0
// (frontend::make_runner optimizes first). The reference runner sets opts.threads' OpenMP threads.
std::unique_ptr<ModelRunner> make_runner(Model model, EngineKind kind, const EngineOptions& opts = {});
// A runner over a model the fast engine has compiled already (frontend::compile_model's).
std::unique_ptr<ModelRunner> fast_runner(std::unique_ptr<CompiledModel> model);

}  // namespace kiln::engine
