// ONNX type constraints (Relu's T in {float16, float, double, bfloat16}, Gather's Tind in {int32,
// int64} ...) checked against the op versions' signatures (op_types.h: libonnx's schemas up to
// ai.onnx 17, kiln's table generated from the ONNX spec after), for the types inference found.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln {

// Fails (kBadModel) on the first input or output whose known type its op's schema does not allow,
// or whose type differs from the one another input or output bound to the same type parameter:
//   node 'r' (Relu): input 0 'x' has type int32, allowed: float16, float, double, bfloat16
// Judges the nodes of every graph, subgraph and function body, each in the form its file gave
// (normalize.cc's moved attributes and Resize-10 layout mapped back). Not judged: values of unknown
// type, calls of model-local functions, and nodes whose op version has no signature kiln knows
// (an op of a version newer than the spec kiln's table was made from, a deprecated version):
// those are returned, one line each ("node 'n' (Foo): no signature known in opset 30"), for
// reports and measurements.
std::vector<std::string> check_type_constraints(const Model& m);

// Indexes the op signatures now (once per process), so
// that processes forked afterwards (kiln test's per-case children) share them.
void load_onnx_schemas();

}  // namespace kiln
