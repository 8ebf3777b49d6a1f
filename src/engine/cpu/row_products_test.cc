// The products of rows by a small matrix against plain loops, on every ISA:
// - rows_times_matrix (cpu::patch_deconv; cpu.matmul with a [K, N] weight): row counts around the
//   4-row blocks, column counts around the registers and the 4-register panels, and one row wide
//   enough for the 8-, 12- and 16-register panels;
// - rows_times_rows (cpu.matmul with a Linear layer's [N, K] weight, the recurrent steps'
//   product): row counts around the 4- and 2-row blocks, weight rows around the 8- and 4-row
//   panels, depths around a register (the masked tail), with and without a bias.
#include "engine/cpu/kernels.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

// The kernel's y against double sums of x [rows, depth] times the weight w (w_at(w, k, c): the
// weight of input k for output c), bias or 0; a gap after each row of y stays untouched.
template <class Kernel, class WeightAt>
void expect_product(Kernel kernel, WeightAt w_at, int64_t rows, int64_t depth, int64_t cols,
                    bool with_bias, std::mt19937& rng) {
  SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(depth) + "x" + std::to_string(cols) +
               (with_bias ? " bias" : ""));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(rows * depth), w(depth * cols), bias(cols);
  for (auto* v : {&x, &w, &bias})
    for (float& f : *v) f = u(rng);
  const int64_t ldy = cols + 3;
  std::vector<float> y(rows * ldy, 42.0f), want(rows * ldy, 42.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double s = with_bias ? bias[c] : 0.0;
      for (int64_t k = 0; k < depth; ++k) s += double(x[r * depth + k]) * w_at(w, k, c);
      want[r * ldy + c] = static_cast<float>(s);
    }
  kernel(x.data(), rows, depth, w.data(), cols, with_bias ? bias.data() : nullptr, y.data(), ldy);
  EXPECT_TRUE(floats_near(y.data(), want.data(), rows * ldy, 64, 1e-5f));
}

class RowsTimesMatrix : public IsaTest {};

TEST_P(RowsTimesMatrix, MatchesPlainLoops) {
  std::mt19937 rng(7);
  for (int64_t rows : {1, 3, 4, 9})
    for (int64_t depth : {1, 5, 24})
      for (int64_t cols : {1, 2, 7, 8, 16, 33, 64, 70, 128, 192, 256, 300, 520})
        expect_product(kernels().rows_times_matrix,
                       [cols](const std::vector<float>& w, int64_t k, int64_t c) { return w[k * cols + c]; },
                       rows, depth, cols, /*with_bias=*/true, rng);
}

class RowsTimesRows : public IsaTest {};

TEST_P(RowsTimesRows, MatchesPlainLoops) {
  std::mt19937 rng(11);
  for (int64_t rows : {1, 2, 3, 4, 5, 9})
    for (int64_t depth : {1, 7, 8, 15, 16, 17, 40, 257})
      for (int64_t cols : {1, 3, 4, 7, 8, 9, 16, 33})
        for (bool with_bias : {true, false})
          expect_product(kernels().rows_times_rows,
                         [depth](const std::vector<float>& w, int64_t k, int64_t c) { return w[c * depth + k]; },
                         rows, depth, cols, with_bias, rng);
}

KILN_INSTANTIATE_FOR_ISAS(RowsTimesMatrix);
KILN_INSTANTIATE_FOR_ISAS(RowsTimesRows);

}  // namespace
}  // namespace kiln::cpu
