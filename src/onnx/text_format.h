// ONNX's textual syntax (onnx/defs/parser.h: `<ir_version: 8, opset_import: ["" : 17]>
// agraph (float[N] x) => (float[N] y) { y = Relu(x) }`) loaded into the IR, with the same checks
// as a binary file. Tests write their graphs this way.
#pragma once

#include <string_view>

#include "ir/graph.h"

namespace kiln {

// Fails (kBadModel) with the parser's message on a syntax error.
Model parse_model_text(std::string_view text);

}  // namespace kiln
