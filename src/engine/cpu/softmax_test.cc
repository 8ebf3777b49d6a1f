// Softmax and LogSoftmax against the reference kernel (which computes in double), on every ISA.
#include "engine/cpu/softmax.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/cpu/reference_op.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

struct SoftmaxCase {
  std::vector<int64_t> dims;
  int64_t axis;
};

class CpuSoftmax : public IsaTest {};

TEST_P(CpuSoftmax, MatchesTheReferenceOnAnyAxis) {
  const SoftmaxCase cases[] = {
      {{1, 1}, -1},     {{3, 17}, -1},     {{2, 1023}, -1},  {{5, 15}, 1},
      {{0, 5}, -1},     {{5, 0}, -1},      {{2, 17, 15}, 1}, {{3, 4, 33}, 1},
      {{2, 3, 1}, 1},   {{7, 300}, 0},     {{64, 4096}, -1}, {{4, 64, 300}, 1},
  };
  std::mt19937 rng(1);
  for (const SoftmaxCase& c : cases) {
    Tensor x = random_tensor(c.dims, rng, -20.0f, 20.0f);
    const int rank = static_cast<int>(c.dims.size());
    const int axis = static_cast<int>(c.axis < 0 ? c.axis + rank : c.axis);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= c.dims[d];
    for (int d = axis + 1; d < rank; ++d) inner *= c.dims[d];
    for (bool log : {false, true}) {
      SCOPED_TRACE(dims_to_string(c.dims) + " axis " + std::to_string(c.axis) +
                   (log ? " LogSoftmax" : " Softmax"));
      const Tensor want = ReferenceOp(log ? "LogSoftmax" : "Softmax").attr("axis", c.axis).run1({x});
      Tensor y(DataType::kFloat, x.dims());
      (log ? log_softmax : softmax)(x.data<float>(), y.data<float>(), outer, c.dims[axis], inner);
      // Softmax: exp and the scaling (the sum is compensated, its lanes totalled in double);
      // LogSoftmax: one ulp of the largest magnitude (up to 40 here), absolute near 0. Every
      // table, NEON's 4 lanes included (whose row of [5,15] was 4 ulp off while the lanes were
      // added in float).
      EXPECT_TRUE(tensors_near(y, want, 2, log ? 4e-6f : 1e-9f));
    }
  }
}

// A row with NaN is NaN; -inf entries give 0 (log: -inf); a row of -inf is NaN; large values
// do not overflow.
TEST_P(CpuSoftmax, SpecialRows) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  Tensor x(DataType::kFloat, {4, 5});
  const float rows[4][5] = {{1, 2, nan, 3, 4},
                            {-inf, 0, 1, -inf, 2},
                            {-inf, -inf, -inf, -inf, -inf},
                            {1000, 999, -1000, 88, 89}};
  std::copy(&rows[0][0], &rows[0][0] + 20, x.data<float>());
  for (bool log : {false, true}) {
    SCOPED_TRACE(log ? "LogSoftmax" : "Softmax");
    const Tensor want = ReferenceOp(log ? "LogSoftmax" : "Softmax").run1({x});
    Tensor y(DataType::kFloat, x.dims());
    (log ? log_softmax : softmax)(x.data<float>(), y.data<float>(), 4, 5, 1);
    EXPECT_TRUE(tensors_near(y, want, 2));
    Tensor inplace = x.clone();
    (log ? log_softmax : softmax)(inplace.data<float>(), inplace.data<float>(), 4, 5, 1);
    EXPECT_TRUE(tensors_near(inplace, y, 0));
  }
}

// A masked attention row (float's lowest added to some scores, as BERT's exports do): those
// entries are exactly 0, and so are those whose e^(x - max) is below FLT_MIN (no denormals, which
// cost a microcode assist each: a masked [1,12,128,128] softmax ran 4x slower); the rest match
// the reference.
TEST_P(CpuSoftmax, MaskedAndTinyEntriesAreZero) {
  const float lowest = std::numeric_limits<float>::lowest();
  Tensor x(DataType::kFloat, {2, 40});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (int64_t i = 0; i < 80; ++i) x.data<float>()[i] = u(rng) + (i % 40 >= 25 ? lowest : 0.0f);
  x.data<float>()[3] = 5.0f;           // the first row's max
  x.data<float>()[4] = 5.0f - 86.0f;   // e^-86: normal, kept
  x.data<float>()[5] = 5.0f - 88.0f;   // e^-88: a denormal, 0
  x.data<float>()[6] = 5.0f - 100.0f;  // e^-100: a denormal, 0
  const Tensor want = ReferenceOp("Softmax").run1({x});
  Tensor y(DataType::kFloat, x.dims());
  softmax(x.data<float>(), y.data<float>(), 2, 40, 1);
  // x - max rounds in float here (the reference subtracts in double): up to 5 ulp at max 5.
  EXPECT_TRUE(tensors_near(y, want, 8, 1e-9f));
  for (int64_t i = 0; i < 80; ++i)
    if (i % 40 >= 25 || i == 5 || i == 6) {
      EXPECT_EQ(y.data<float>()[i], 0.0f) << i;
    }
  EXPECT_GT(y.data<float>()[4], 0.0f);
}

KILN_INSTANTIATE_FOR_ISAS(CpuSoftmax);

}  // namespace
}  // namespace kiln::cpu
