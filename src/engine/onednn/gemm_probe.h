// How fast oneDNN's matrix product runs on this machine in each precision kiln computes in: the
// achieved throughput (not the instruction peak) that the profiler's precision forecast scales
// node times by. The engine owns oneDNN, so the probe lives here; src/profile caches its figures.
#pragma once

#include <cstdint>

namespace kiln::engine {

enum class GemmPrecision {
  kF32,   // f32 x f32 -> f32
  kInt8,  // u8 x s8 -> s32, the form quantized kernels run
  kBf16,  // bf16 x bf16 -> f32
};

// Multiply-adds x 2 per second, best of a few rounds, of oneDNN's matmul of (m x k) by (k x n)
// on `threads` threads; 0 when oneDNN has no kernel for that precision on this CPU.
double measure_gemm_ops(GemmPrecision p, int64_t m, int64_t k, int64_t n, int threads);

}  // namespace kiln::engine
