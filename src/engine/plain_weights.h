// Who holds a weight once it is packed: the plain initializers the fast engine lets go of while
// it lowers a plan, and brings back before it lowers another (docs/design.md, "Who owns weights
// after packing").
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "engine/group.h"
#include "ir/graph.h"

namespace kiln::engine {

class GraphFacts;
class Plan;
class WeightCache;

class PlainWeights {
 public:
  // The candidates: the main graph's float and int8 initializers of kMinBytes or more (int8:
  // oneDNN's s8 layouts read back exactly unless compensation is appended, which drop_source
  // refuses; where oneDNN has no int8 dot product, onednn/int8_support.h, the dynamic int8
  // matmuls read them widened, to int16 panels or f32, from which the exact values come back).
  PlainWeights(Graph& graph, WeightCache& cache);

  // Told by the lowering after each group (its steps are plan.steps[first_step...]). An input
  // of the group whose every reader is now lowered into steps that read packed copies only
  // (Step::reads_packed_constants), that no slot of the plan holds and that the cache holds
  // packed (and only packed) in a form that gives its bytes back exactly (WeightCache::
  // drop_source) loses its plain bytes: the value keeps its dtype and dims, with no data, until
  // restore().
  void lowered(const Group& g, const GraphFacts& facts, const Plan& plan, size_t first_step);
  // Before a new plan: the weights let go of that its inference may read (an input of a node whose
  // inputs are all constant, which inference evaluates: up to its fold limit of elements) get
  // their plain bytes back (reordered
  // from a packed copy); the others when the plan asks for them (restore, through
  // GraphFacts::constant), or never, when the plan finds their packed copies as they are
  // (Lowering::packed_constant): a model run at many shapes unpacked all its weights for each new
  // plan (BERT-base: 60 ms a plan).
  void begin_plan();
  // v's plain bytes back, when it was let go of.
  void restore(const Value* v);
  size_t released_bytes() const;

  // (4 KiB: a page. DenseNet-121's 120 conv weights are all below 1 MiB, the floor before, and
  // were held twice.)
  static constexpr size_t kMinBytes = size_t{1} << 12;

 private:
  bool releasable(const Value* v, const GraphFacts& facts, const Plan& plan) const;
  void release_if_packed(const Value* v, const GraphFacts& facts, const Plan& plan);

  WeightCache& cache_;
  std::unordered_map<const Value*, Value*> candidates_;
  std::unordered_map<const Node*, bool> lowered_;  // node -> all its group's steps read packed constants
  std::vector<Value*> released_;
};

}  // namespace kiln::engine
