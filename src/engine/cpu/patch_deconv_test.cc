// The rows-times-matrix kernel of cpu::patch_deconv against plain loops, on every ISA: row counts
// around the 4-row blocks, column counts around the registers and the 4-register panels, and
// one row (the recurrent steps' product) wide enough for the 8-, 12- and 16-register panels.
#include "engine/cpu/kernels.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

class RowsTimesMatrix : public IsaTest {};

TEST_P(RowsTimesMatrix, MatchesPlainLoops) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t rows : {1, 3, 4, 9})
    for (int64_t depth : {1, 5, 24})
      for (int64_t cols : {1, 2, 7, 8, 16, 33, 64, 70, 128, 192, 256, 300, 520}) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(depth) + "x" + std::to_string(cols));
        std::vector<float> x(rows * depth), w(depth * cols), bias(cols);
        for (auto* v : {&x, &w, &bias})
          for (float& f : *v) f = u(rng);
        const int64_t ldy = cols + 3;  // a gap after each row stays untouched
        std::vector<float> y(rows * ldy, 42.0f), want(rows * ldy, 42.0f);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            double s = bias[c];
            for (int64_t k = 0; k < depth; ++k) s += double(x[r * depth + k]) * w[k * cols + c];
            want[r * ldy + c] = static_cast<float>(s);
          }
        kernels().rows_times_matrix(x.data(), rows, depth, w.data(), cols, bias.data(), y.data(), ldy);
        EXPECT_TRUE(floats_near(y.data(), want.data(), rows * ldy, 64, 1e-5f));
      }
}

KILN_INSTANTIATE_FOR_ISAS(RowsTimesMatrix);

}  // namespace
}  // namespace kiln::cpu
