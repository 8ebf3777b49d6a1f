// The node-by-node checks ONNX's checker makes against the signature of each op version, on the
// nodes as the file gave them (before normalize_opsets rewrites older forms): input and output
// counts, empty names only where the formal is optional, and the attributes (no unknown name, the
// declared kind, none required missing), all from kiln's generated signature tables
// (spec/op_types.h): no libonnx registry is built to load a model.
#pragma once

#include "ir/graph.h"

namespace kiln {

// Fails (kBadModel) with a one-line message naming the node. Nodes whose op version kiln has no
// signature for (unknown ops, local functions, deprecated versions) are left to check_model.
void check_signatures(const Model& m);

}  // namespace kiln
