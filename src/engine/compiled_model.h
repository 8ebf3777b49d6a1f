// The fast engine's executor. A model is checked, inlined and inferred as the reference Session
// does (runtime/session.h), then lowered, per set of input shapes, into a plan of oneDNN and CPU
// kernels (reference kernels for the rest) that runs with its buffers reused by lifetime. The
// engine runs models as they are given: .onnx files and the optimizer's -O levels are a layer
// above (frontend/compile.h), so the runtime that loads artifacts links neither.
//
// Plans are made at creation when every input dim is known, else on the first run with each new
// set of input shapes (a symbolic dim is never guessed); the least recently used plan goes first
// when more than EngineOptions::max_plans would be kept (engine/plan_cache.h). One run at a time
// per CompiledModel.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine_options.h"
#include "engine/plan_cache.h"
#include "engine/run_memory.h"
#include "engine/thread_backoff.h"
#include "engine/tuning.h"
#include "ir/graph.h"
#include "ir/rt_value.h"
#include "runtime/observer.h"

namespace kiln::engine {

class Plan;
class PlainWeights;
class WeightCache;

// What a plan is made of, for tests, `kiln bench` and the profiler.
struct PlanSummary {
  int steps = 0;
  std::map<std::string, int> kernels;  // implementation name -> steps
  size_t arena_bytes = 0;              // activations
  size_t run_bytes = 0;                // activations and the steps' scratchpad (RunMemory)
  size_t weight_bytes = 0;             // constants reordered for oneDNN (all plans)
  size_t released_bytes = 0;           // plain initializers let go of once packed
  bool parallel = false;               // a step may run on more than one thread (Plan::parallel)
  std::string listing;                 // one line per step (Plan::describe)
};

class CompiledModel {
 public:
  // Checks, inlines and infers the model (prepare_model), then as Checked below. Fails (kInternal)
  // when opts.optimize_level is above 0: frontend::compile_model runs the optimizer first.
  explicit CompiledModel(Model model, const EngineOptions& opts = {});
  // A model prepare_model has already made ready (the optimizer's output, inferred again): the
  // engine's rewrites are made (rewrite_for_engine, below), and the plan is made now when every
  // input dim is known. opts' optimize_level is ignored.
  struct Checked {};
  CompiledModel(Model model, const EngineOptions& opts, Checked);
  // A model that is already what the constructor above makes of one (checked, inlined, optimized,
  // inferred, rewrite_for_engine's rewrites made: a compiled artifact's graph): none of that is redone,
  // and no plan is made yet. `weights` may come pre-filled (WeightCache::preload). opts'
  // optimize_level is ignored.
  struct Prepared {};
  CompiledModel(Model model, const EngineOptions& opts, Prepared,
                std::unique_ptr<WeightCache> weights = nullptr);
  ~CompiledModel();

  // Makes the plan for these input dims now (at load, for the shapes an artifact declares).
  void prepare(const std::vector<std::vector<int64_t>>& input_dims);
  // The constants reordered for oneDNN so far (what an artifact stores pre-packed).
  const WeightCache& weight_cache() const { return *weights_; }
  // The implementation choices the plans made so far were made with (measured, cached or given;
  // what an artifact stores beside its packed weights, which were made for them).
  const ChoiceStore& choices() const { return choices_; }

  // The model; after a plan is made, an initializer that only oneDNN's packed copy needed has
  // its dtype and dims but no bytes (EngineOptions::keep_plain_weights keeps them).
  const Model& model() const { return model_; }
  // The inputs a caller feeds (graph inputs without an initializer) and the outputs, in order.
  const std::vector<const Value*>& inputs() const { return inputs_; }
  const std::vector<const Value*>& outputs() const { return outputs_; }

  // Feeds in inputs() order; results in outputs() order. `observer` hears one event per step.
  // Tensors the observer sees in a blocked layout keep their logical dims but not row-major bytes.
  std::vector<RtValue> run(const std::vector<RtValue>& feeds, RunObserver* observer = nullptr);

  // The plan for these input dims (made now if needed), summarized, and step by step.
  PlanSummary summary(const std::vector<std::vector<int64_t>>& input_dims);
  std::string describe(const std::vector<std::vector<int64_t>>& input_dims);
  int plans() const { return static_cast<int>(plans_.size()); }
  // What the plan cache did so far: plans made, lookups that reused one, evictions.
  PlanCacheStats plan_stats() const;
  // The dims of each output when run on inputs of these dims (the plan, made now if needed),
  // before any run; nullopt for an output whose dims only the data decides (NonZero ...).
  std::vector<std::optional<std::vector<int64_t>>> output_dims(
      const std::vector<std::vector<int64_t>>& input_dims);

 private:
  using Signature = std::vector<std::vector<int64_t>>;
  Plan& plan_for(const Signature& sig);
  void collect_inputs_outputs();
  void rewrite_and_plan();

  Model model_;
  EngineOptions opts_;
  std::vector<const Value*> inputs_;
  std::vector<const Value*> outputs_;
  std::unique_ptr<WeightCache> weights_;
  std::unique_ptr<PlainWeights> plain_;  // null: every initializer keeps its bytes
  LruCache<Signature, Plan> plans_;
  RunMemory memory_;  // the buffer every plan runs in, one run at a time
  ThreadBackoff backoff_;
  PlanCacheStats stats_;
  ChoiceStore choices_;
  std::mutex mu_;
};

// The engine's own rewrites of a prepared model (checked, inlined, optimized, inferred), before
// its first plan: nodes computing in float16 or bfloat16 compute in float32 (reduced_float.h),
// and each int8 reader of a shared DequantizeLinear gets its own (qdq_pattern.h); shapes are
// inferred again when anything changed. A compiled artifact's graph is the model after them.
void rewrite_for_engine(Model& m);

}  // namespace kiln::engine
