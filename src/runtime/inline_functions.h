// Replaces calls of model-local functions (FunctionProto) by their bodies, so the runtime and the
// passes see only ops.
#pragma once

#include "ir/graph.h"

namespace kiln {

void inline_functions(Model& m);

}  // namespace kiln
