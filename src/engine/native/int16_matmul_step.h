// The dynamic int8 matmuls (MatMulInteger -> Cast -> Mul [-> bias]; DequantizeLinear of
// DynamicQuantizeLinear's A times int8 weights) on a CPU without an int8 dot product, where
// oneDNN's int8 kernels would saturate: "cpu.int16_matmul", cpu/int16_gemm.h's exact integer
// product (the graph's own result, bit for bit, for MatMulInteger's form) at twice an f32 FMA's
// multiply-adds per instruction. onednn/quant_matmul.cc recognises the forms and calls this.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/cpu/elementwise.h"
#include "ir/tensor.h"

namespace kiln {
struct Node;
struct Value;
}  // namespace kiln

namespace kiln::engine {

class Lowering;

struct Int16MatmulSpec {
  const Node* node = nullptr;
  const Value* a = nullptr;        // the 8-bit A, [..., K]
  bool a_signed = false;
  const Tensor* w = nullptr;       // int8 [K, N], or [N, K] when transposed
  bool w_transposed = false;
  int64_t m = 0, k = 0, n = 0;
  std::vector<float> w_scale;      // the scale's constant part: 1 or N values (empty: 1)
  const Value* scale = nullptr;    // its run-time part: 1 or scale_cols values
  int64_t scale_cols = 1;
  const Value* zero_point = nullptr;  // A's (run-time), or null
  std::vector<float> bias;         // N values in real units, or empty
  std::vector<cpu::RowOp> ops;     // the activations after it
  const Value* out = nullptr;      // the float result [..., N]
};

// Adds the step; false (nothing added) where int16_gemm does not run on this CPU.
bool add_int16_matmul(const Int16MatmulSpec& s, Lowering& lw);

}  // namespace kiln::engine
