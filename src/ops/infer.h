// Shape and type inference over a whole model, with symbolic dims and small constants propagated.
#pragma once

#include "ir/graph.h"

namespace kiln {

struct InferOptions {
  // Nodes whose inputs are all constant are run to know their outputs, up to this many elements.
  int64_t fold_limit = 1 << 16;
};

// Sets Value::type for every value of the model's graph and subgraphs. Fails (kBadModel) naming
// the node when an op's inference finds its inputs invalid.
void infer_shapes(Model& m, const InferOptions& opts = {});

}  // namespace kiln
