// float16 and bfloat16 graphs on the fast engine: its kernels compute in float32 (or in bf16
// from float32 weights, onednn/bf16_support.h), so a node computing in a reduced float type runs
// in float32 instead, as ONNX Runtime's CPU provider does, where it would otherwise run on the
// reference kernel (`kiln quantize --mode fp16`'s ResNet-50: 2.7 s a run against 32 ms).
#pragma once

#include "ir/graph.h"

namespace kiln::engine {

// Rewrites g (the engine's own copy of the main graph) so that each node whose type parameter
// is bound to float16 or bfloat16 on an input and an output, and allows float32, computes in
// float32: those inputs are read through a Cast to float32 (a constant one converted once, into
// a float32 initializer), those outputs are made in float32 and Cast back under their own names
// for whatever else reads them and for the graph's outputs. Between two such nodes the value stays
// float32 (neither rounds it to the reduced type in between: a float32 sum of the same terms,
// at least as close to the exact result). Nodes holding subgraphs, Cast and CastLike, and ops kiln
// has no signature for are left as they are. Returns the nodes rewritten; the caller infers
// shapes again when that is not 0.
int compute_reduced_floats_in_float32(Graph& g);

}  // namespace kiln::engine
