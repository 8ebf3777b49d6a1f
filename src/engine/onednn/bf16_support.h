// Whether the engine computes a conv or matmul in bf16 on this CPU: when asked for the whole
// model (EngineOptions::bf16), or when its weight is stored bf16 in the file (a bfloat16
// initializer read through a Cast to float32, what `kiln quantize --mode bf16` writes), and
// oneDNN has native bf16 kernels (AVX-512 BF16 dot products, AMX) at the effective ISA
// (DNNL_MAX_CPU_ISA heeded). Where it has not, bf16 would be emulated and slower than float32,
// so float32 runs and stderr says so once.
#pragma once

#include "engine/engine_options.h"

namespace kiln {
class Tensor;
class Value;
}

namespace kiln::engine {

class GraphFacts;

bool native_bf16();
// w: the weight of the conv or matmul (null: none constant).
bool use_bf16(const EngineOptions& opts, const Value* w, const GraphFacts& f);
// Whether w is a bfloat16 constant read through a Cast to float32.
bool stored_bf16(const Value* w, const GraphFacts& f);
// That bfloat16 constant (null when w is not one): what a bf16 primitive packs its weights from,
// so that the Cast's float32 result is never made (GraphFacts computes it only when asked).
const Tensor* stored_bf16_tensor(const Value* w, const GraphFacts& f);

}  // namespace kiln::engine
