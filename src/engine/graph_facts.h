// What the lowering knows about the main graph for one set of input shapes: the concrete dims of
// every value (inference rerun with the fed shapes), the constants (initializers and what can be
// computed before a run, Shape -> Gather -> Concat chains included), and who reads what.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "ir/walk.h"

namespace kiln::engine {

class GraphFacts {
 public:
  // `model` is inferred again with its main graph's inputs set to `input_dims` (in the order of
  // the non-constant graph inputs); its value types are left as this inference set them, except
  // the inputs' own, which are restored.
  // `restore` (may be empty) gives a weight the engine let go of (engine/plain_weights.h) its
  // plain bytes back when constant() is asked for them.
  GraphFacts(Model& model, const std::vector<std::vector<int64_t>>& input_dims,
             std::function<void(const Value*)> restore = {});

  const Model& model() const { return model_; }
  const Graph& graph() const { return graph_; }
  // Concrete dims, or null when inference could not tell (data-dependent shapes).
  const std::vector<int64_t>* dims(const Value* v) const;
  DataType dtype(const Value* v) const { return v->type.elem; }
  // The value of v when it is known before a run: an initializer (its plain bytes brought back
  // when the engine had let go of them), or computed from constants.
  // A large computed value (more than kEagerFoldElements, e.g. a weight's DequantizeLinear) is
  // computed the first time it is asked for, so one that no step reads (an int8 kernel takes the
  // quantized weight itself) never exists in float. Fails as its node's kernel does, if it does.
  const Tensor* constant(const Value* v) const;
  static constexpr int64_t kEagerFoldElements = 1 << 16;
  // Whether constant(v) would give a value, without computing a deferred one.
  bool has_constant(const Value* v) const {
    return v->is_constant() || constants_.contains(v) || deferred_.contains(v);
  }
  // The value of a constant with one element, as float (any numeric type).
  std::optional<float> scalar(const Value* v) const;
  // Nodes of the main graph whose outputs are all constant: they never run.
  bool folded(const Node* n) const { return folded_.contains(n); }

  // Main-graph nodes reading v: as an input, or from inside one of their subgraphs.
  const std::vector<const Node*>& consumers(const Value* v) const;
  // Values a node reads: its inputs and the main-graph values its subgraphs use.
  const std::vector<const Value*>& reads(const Node* n) const;
  bool is_graph_output(const Value* v) const { return outputs_.contains(v); }
  int position(const Node* n) const { return position_.at(n); }
  // v has exactly these uses, none from a subgraph, and is not a graph output.
  bool only_used_by(const Value* v, std::initializer_list<const Node*> nodes) const;

 private:
  void collect_reads();
  void record_dims(const Model& model);
  void fold_constants(const std::unordered_map<const Value*, Tensor>& inferred);
  // Runs n's kernel on its constant inputs into constants_; why it could not (empty: it did).
  std::string evaluate(const Node& n) const;

  const Model& model_;
  const Graph& graph_;
  std::function<void(const Value*)> restore_;
  std::unordered_map<const Value*, std::vector<int64_t>> dims_;
  mutable std::unordered_map<const Value*, Tensor> constants_;
  mutable std::unordered_map<const Value*, const Node*> deferred_;  // large folded values not computed yet
  std::unordered_set<const Node*> folded_;
  std::unordered_map<const Value*, std::vector<const Node*>> consumers_;
  std::unordered_map<const Node*, std::vector<const Value*>> reads_;
  std::unordered_map<const Node*, int> position_;
  std::unordered_set<const Value*> outputs_;
};

}  // namespace kiln::engine
