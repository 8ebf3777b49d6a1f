// Whether the engine computes in bf16 (EngineOptions::bf16) on this CPU: oneDNN has native bf16
// kernels (AVX-512 BF16 dot products, AMX) at the effective ISA (DNNL_MAX_CPU_ISA heeded). Where
// it has not, bf16 would be emulated and slower than float32, so float32 runs and stderr says so
// once.
#pragma once

#include "engine/engine_options.h"

namespace kiln::engine {

bool native_bf16();
bool use_bf16(const EngineOptions& opts);

}  // namespace kiln::engine
