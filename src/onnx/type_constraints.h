// ONNX type constraints (Relu's T in {float16, float, double, bfloat16}, Gather's Tind in {int32,
// int64} ...) checked against libonnx's own op schemas, for the types shape inference found.
#pragma once

#include "ir/graph.h"

namespace kiln {

// Fails (kBadModel) on the first input or output whose known type its op's schema does not allow,
// or whose type differs from the one another input or output bound to the same type parameter:
//   node 'r' (Relu): input 0 'x' has type int32, allowed: float16, float, double, bfloat16
// Judges the nodes of every graph, subgraph and function body, each in the form its file gave
// (normalize.cc's moved attributes and Resize-10 layout mapped back). Not judged: values of unknown
// type, calls of model-local functions, and nodes whose opset is newer than libonnx knows
// (libonnx 1.12: ai.onnx 17, ai.onnx.ml 3, ai.onnx.preview.training 1).
void check_type_constraints(const Model& m);

// Loads libonnx's schema registry now (about 50 ms, once per process), so that processes forked
// afterwards (kiln test's per-case children) share it instead of each loading it again.
void load_onnx_schemas();

}  // namespace kiln
