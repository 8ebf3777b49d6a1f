// The rows-times-rows kernel (cpu.matmul's product with a Linear layer's [N, K] weight, and the
// recurrent steps': recurrent_gemm.h) against plain loops, on every ISA: row counts around the
// 4- and 2-row blocks, weight rows around the 8- and 4-row panels, depths around a register
// (the masked tail), with and without a bias.
#include "engine/cpu/kernels.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

class RowsTimesRows : public IsaTest {};

TEST_P(RowsTimesRows, MatchesPlainLoops) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t rows : {1, 2, 3, 4, 5, 9})
    for (int64_t depth : {1, 7, 8, 15, 16, 17, 40, 257})
      for (int64_t cols : {1, 3, 4, 7, 8, 9, 16, 33})
        for (bool with_bias : {true, false}) {
          SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(depth) + "x" + std::to_string(cols) +
                       (with_bias ? " bias" : ""));
          std::vector<float> x(rows * depth), w(cols * depth), bias(cols);
          for (auto* v : {&x, &w, &bias})
            for (float& f : *v) f = u(rng);
          const int64_t ldy = cols + 2;  // a gap after each row stays untouched
          std::vector<float> y(rows * ldy, 42.0f), want(rows * ldy, 42.0f);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
              double s = with_bias ? bias[c] : 0.0;
              for (int64_t k = 0; k < depth; ++k) s += double(x[r * depth + k]) * w[c * depth + k];
              want[r * ldy + c] = static_cast<float>(s);
            }
          kernels().rows_times_rows(x.data(), rows, depth, w.data(), cols, with_bias ? bias.data() : nullptr,
                                    y.data(), ldy);
          EXPECT_TRUE(floats_near(y.data(), want.data(), rows * ldy, 64, 1e-5f));
        }
}

KILN_INSTANTIATE_FOR_ISAS(RowsTimesRows);

}  // namespace
}  // namespace kiln::cpu
