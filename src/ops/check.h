// Schema checks of a loaded model: every op exists in its opset, counts and attributes are right.
#pragma once

#include "ir/graph.h"

namespace kiln {

// Fails (kBadModel / kUnsupported) with a one-line message naming the node, its op and the problem.
void check_model(const Model& m);

}  // namespace kiln
