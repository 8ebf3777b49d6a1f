// Where oneDNN's int8 convolutions and matmuls compute exactly on this CPU. With VNNI or AMX
// (int32 dot products of u8 by s8) every case does. Without (AVX-512 or AVX2 alone) they go
// through vpmaddubsw, whose int16 sums of two products saturate unless the weights fit in 7
// bits (|w| <= 63: what ONNX Runtime's reduce_range makes), and an s8 source has its weights
// halved (rounded) first; those cases are left to the float kernels. DNNL_MAX_CPU_ISA is heeded.
#pragma once

#include "ir/tensor.h"

namespace kiln {
struct Value;
}

namespace kiln::engine {

class GraphFacts;

// oneDNN has int32 dot products of 8-bit values here (AVX-512 VNNI, AMX).
bool int8_dot_product();
// oneDNN's int8 primitives compute source type `src` (kInt8 or kUInt8) with the constant int8
// weights w exactly (their bytes are read only on a CPU without a dot product).
bool int8_exact(DataType src, const Value* w, const GraphFacts& f);

}  // namespace kiln::engine
