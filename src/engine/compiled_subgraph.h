// A subgraph of a node (an If branch, a Loop or Scan body) run by the fast engine. On its first
// run it is copied into a model of its own (ir/graph_copy.h: the outer-scope values it reads
// become inputs after its own; the ones constant in the enclosing plan, initializers) and compiled
// as a CompiledModel: a plan per set of input shapes, made on first use, weights reordered once.
// A branch that never runs costs nothing. Its nested subgraphs are compiled the same way by the
// steps of its plans.
//
// It declines, and its caller runs the interpreter, where the copy or the compilation fails, an
// input is not a tensor, no plan can be made for some input shapes, or the shapes keep changing
// (a Loop growing a tensor would make a plan per iteration); describe() says which.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/engine_options.h"
#include "ir/graph.h"
#include "ir/rt_value.h"
#include "runtime/observer.h"

namespace kiln::engine {

class CompiledModel;

class CompiledSubgraph {
 public:
  // The value an outer-scope value of the body holds in this run.
  using OuterValue = std::function<const RtValue&(const Value*)>;

  // `enclosing`: the model holding the node (its opsets); `constants`: the values of the enclosing
  // graph known before a run (they become the copy's initializers).
  CompiledSubgraph(const Model& enclosing, const Graph& body,
                   std::unordered_map<const Value*, Tensor> constants, const EngineOptions& opts);
  ~CompiledSubgraph();

  // The body's outputs for its own `inputs`, or nullopt when the interpreter should run it.
  // `observer` hears the body's steps as nodes of the original body, one level deeper.
  std::optional<std::vector<RtValue>> run(const std::vector<RtValue>& inputs, const OuterValue& outer,
                                          RunObserver* observer);

  // "not run", "fast engine, N plans (...)" or "interpreter: why".
  std::string describe() const;

 private:
  using Signature = std::vector<std::vector<int64_t>>;
  // Copies and compiles the body, its input types taken from the first run's feeds.
  void compile(const std::vector<RtValue>& inputs, const OuterValue& outer);
  // Whether a plan exists (or was just made) for these feeds' dims.
  bool planned(const Signature& sig);

  const Graph& body_;
  int64_t ir_version_;
  std::map<std::string, int64_t> opsets_;
  std::unordered_map<const Value*, Tensor> constants_;
  EngineOptions opts_;

  std::unique_ptr<CompiledModel> model_;
  std::vector<const Value*> outer_inputs_;                 // fed after the body's own inputs
  std::unordered_map<const Node*, const Node*> origin_;    // copied node -> the body's node
  std::vector<RtValue> feeds_;                             // reused across runs
  std::vector<Signature> plans_;                           // input dims planned for
  std::map<Signature, std::string> unplannable_;           // input dims -> why no plan
  std::string declined_;                                   // why the interpreter runs it always
};

}  // namespace kiln::engine
