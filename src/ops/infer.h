// Shape and type inference over a whole model, with symbolic dims and small constants propagated.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace kiln {

struct InferOptions {
  // Nodes whose inputs are all constant are run to know their outputs, up to this many elements.
  int64_t fold_limit = 1 << 16;
  // Why a node whose inputs are all constant is not to be evaluated (empty: evaluate it); null:
  // every such node is. The optimizer leaves the decoding of quantized weights so (opt/passes.h).
  std::function<std::string(const Node&)> keep_unevaluated;
};

// What inference learned beyond types (the optimizer's raw material).
struct InferFacts {
  // Values computed at inference: outputs of nodes whose inputs were all constant, and integer
  // values whose every element became a known dim.
  std::unordered_map<const Value*, Tensor> constants;
  // Small integer values known element by element as dims, maybe symbolic (Shape -> Gather ...).
  std::unordered_map<const Value*, std::vector<Dim>> dims_values;
  // Nodes whose inputs were all constant but that were not evaluated, and why.
  std::vector<std::pair<const Node*, std::string>> not_folded;
  // What inference found wrong where the model may still run (an If branch that fails with the
  // shapes given but is not known to be taken), one line per finding.
  std::vector<std::pair<const Node*, std::string>> warnings;
};

// Sets Value::type for every value of the model's graph and subgraphs. Fails (kBadModel) naming
// the node when an op's inference finds its inputs invalid. `facts`, when given, receives what
// was computed along the way.
void infer_shapes(Model& m, const InferOptions& opts = {}, InferFacts* facts = nullptr);

}  // namespace kiln
