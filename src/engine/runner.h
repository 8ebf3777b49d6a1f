// One way to run a model whichever executor runs it: the fast engine (CompiledModel) or the
// reference Session. The command line and the profiler pick one with `--engine fast|reference`.
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
};

std::unique_ptr<ModelRunner> open_model(const std::filesystem::path& path, EngineKind kind,
                                        const EngineOptions& opts = {});
std::unique_ptr<ModelRunner> make_runner(Model model, EngineKind kind, const EngineOptions& opts = {});

}  // namespace kiln::engine
