// Exact 8-bit matrix products on a CPU without an int8 dot product (AVX2, no VNNI): the operands
// widened to int16 and multiplied in pairs by vpmaddwd, each pair's two products summed in int32
// (255 * 128 * 2 fits, where vpmaddubsw's int16 sums, what oneDNN's AVX2 int8 kernels use,
// saturate), the sums added in int32. The result is MatMulInteger's integer, bit for bit, and
// vpmaddwd does 16 multiply-adds a register where an f32 FMA does 8.
//
// B (constant int8 weights) is packed once into panels of 16 columns: for each pair of rows k, k + 1
// the panel's 16 columns as int16 pairs (b[k][c], b[k + 1][c]), two registers; K is padded to even
// with zeros. A (u8 or s8 activations) is widened to int16 rows each run, into the caller's buffer.
// Blocks of up to 6 rows by one panel accumulate in 12 registers over the whole K; the columns are
// split over the threads, each walking its panels in groups small enough to stay in its L2 while
// the row blocks pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/cpu/elementwise.h"

namespace kiln::cpu {

class Int16Weights {
 public:
  static constexpr int64_t kPanel = 16;  // columns per panel

  // w: int8 [K, N] row-major, or [N, K] when `transposed` (Gemm's transB).
  Int16Weights(const int8_t* w, int64_t k, int64_t n, bool transposed);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t pairs() const { return (k_ + 1) / 2; }
  int64_t panels() const { return (n_ + kPanel - 1) / kPanel; }
  const int16_t* panel(int64_t p) const { return data_.data() + p * pairs() * 2 * kPanel; }
  // Per column, the sum of its weights (what a zero point of A times the column takes away).
  const std::vector<int32_t>& column_sums() const { return colsum_; }
  size_t bytes() const { return data_.size() * sizeof(int16_t) + colsum_.size() * sizeof(int32_t); }
  // The int8 weights made again, exactly, in the layout they were given in (`plain`: K * N bytes).
  void unpack(void* plain) const;

 private:
  size_t at(int64_t k, int64_t c) const {  // where weight (k, c) is in data_
    return static_cast<size_t>((c / kPanel) * pairs() * 2 * kPanel + (k / 2) * 2 * kPanel + (c % kPanel) * 2 + k % 2);
  }
  int64_t k_, n_;
  bool transposed_;
  std::vector<int16_t> data_;
  std::vector<int32_t> colsum_;
};

// What becomes of the integer product acc[m][n] = sum_k a[m][k] b[k][n]:
// y[m * ldy + n] = ops(float(acc - zero_point * colsum[n]) * scale[n or 0] (+ bias[n])), the row
// operations applied to each row's columns of a panel group while they are in cache.
struct Int16Epilogue {
  int32_t zero_point = 0;         // A's
  const float* scale = nullptr;   // 1 value, or N when per_column
  bool per_column = false;
  const float* bias = nullptr;    // N values, or null
  std::span<const RowOp> ops;     // activations after the bias
  float* y = nullptr;
  int64_t ldy = 0;
};

// Whether int16_gemm runs here (x86 with AVX2, and kiln's kernels not capped below it).
bool int16_gemm_supported();

// The buffer int16_gemm widens A into: int16 elements for m rows of B's K.
inline int64_t int16_gemm_a_elements(int64_t m, const Int16Weights& b) { return m * b.pairs() * 2; }

// y = epilogue(A B) for A [M, K] (8-bit, signed when a_signed; rows K apart), on up to `threads`
// OpenMP threads (1 inside a parallel region). a16 holds int16_gemm_a_elements(m, b) elements.
void int16_gemm(const void* a, bool a_signed, int64_t m, const Int16Weights& b, int16_t* a16,
                const Int16Epilogue& e, int threads);

}  // namespace kiln::cpu
