// How fast oneDNN's matrix product runs on this machine in each precision kiln computes in: the
// achieved throughput (not the instruction peak) that the profiler's precision forecast scales
// node times by. The engine owns oneDNN, so the probe lives here; src/profile caches its figures.
#pragma once

#include <cstdint>

namespace kiln::engine {

enum class GemmPrecision {
  kF32,   // f32 x f32 -> f32
  kInt8,  // u8 x s8 -> s32, the form quantized kernels run (without an int8 dot product: kiln's
          // exact int16 kernel, cpu/int16_gemm.h, what the dynamic int8 matmuls run on there)
  kBf16,  // bf16 x bf16 -> f32
};

// Multiply-adds x 2 per second, best of a few rounds, of the matmul kiln runs in that precision
// (oneDNN's; kiln's int16 one for int8 without VNNI or AMX) of (m x k) by (k x n) on `threads`
// threads; 0 when there is no kernel for that precision on this CPU.
double measure_gemm_ops(GemmPrecision p, int64_t m, int64_t k, int64_t n, int threads);

}  // namespace kiln::engine
