// LayerNormalization and RMSNormalization against the reference kernels (double precision).
#include "engine/cpu/normalization.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/cpu/reference_op.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

struct NormCase {
  std::vector<int64_t> dims;
  int64_t axis;
};

const NormCase kCases[] = {
    {{4, 768}, -1}, {{3, 17}, -1}, {{1, 1}, -1},     {{0, 8}, -1},
    {{2, 3, 16}, 1}, {{5, 1023}, 1}, {{2, 15, 3}, -1}, {{256, 384}, -1},
};

// The mean is carried in two floats, the variance summed in float over up to 1023 values (a
// relative error up to ~1e-6, so 16 ulps); the output's float arithmetic on terms up to
// |scale * 2| + |bias| ~ 12 makes errors near 1e-6 absolute where a bias cancels the rest.
constexpr int64_t kUlps = 16;
constexpr float kAbs = 1e-6f;

void shape_of(const NormCase& c, int64_t* rows, int64_t* cols, std::vector<int64_t>* param_dims) {
  const int rank = static_cast<int>(c.dims.size());
  const int axis = static_cast<int>(c.axis < 0 ? c.axis + rank : c.axis);
  *rows = 1;
  *cols = 1;
  param_dims->clear();
  for (int d = 0; d < rank; ++d) {
    if (d < axis) {
      *rows *= c.dims[d];
    } else {
      *cols *= c.dims[d];
      param_dims->push_back(c.dims[d]);
    }
  }
}

class CpuNorm : public IsaTest {};

TEST_P(CpuNorm, LayerNormMatchesTheReference) {
  std::mt19937 rng(1);
  for (const NormCase& c : kCases) {
    for (bool with_bias : {true, false}) {
      SCOPED_TRACE(dims_to_string(c.dims) + " axis " + std::to_string(c.axis) +
                   (with_bias ? " bias" : ""));
      int64_t rows, cols;
      std::vector<int64_t> pd;
      shape_of(c, &rows, &cols, &pd);
      // An offset mean, so a one-pass variance would lose digits.
      const Tensor x = random_tensor(c.dims, rng, 3.0f, 7.0f);
      const Tensor scale = random_tensor(pd, rng), bias = random_tensor(pd, rng);
      ReferenceOp ref("LayerNormalization", 17);
      ref.attr("axis", c.axis).attr("epsilon", 1e-5f);
      const std::vector<Tensor> want =
          ref.run({x, scale, with_bias ? bias : Tensor()}, 3);
      Tensor y(DataType::kFloat, x.dims());
      std::vector<float> mean(rows), inv_std(rows);
      layer_norm(x.data<float>(), scale.data<float>(), with_bias ? bias.data<float>() : nullptr,
                 y.data<float>(), rows, cols, 1e-5f, mean.data(), inv_std.data());
      EXPECT_TRUE(tensors_near(y, want[0], kUlps, kAbs));
      EXPECT_TRUE(floats_near(mean.data(), want[1].data<float>(), rows, 2));
      EXPECT_TRUE(floats_near(inv_std.data(), want[2].data<float>(), rows, kUlps));
    }
  }
}

TEST_P(CpuNorm, RmsNormMatchesTheReference) {
  std::mt19937 rng(2);
  for (const NormCase& c : kCases) {
    SCOPED_TRACE(dims_to_string(c.dims) + " axis " + std::to_string(c.axis));
    int64_t rows, cols;
    std::vector<int64_t> pd;
    shape_of(c, &rows, &cols, &pd);
    const Tensor x = random_tensor(c.dims, rng), scale = random_tensor(pd, rng);
    const Tensor want = ReferenceOp("RMSNormalization", 23)
                            .attr("axis", c.axis)
                            .attr("epsilon", 1e-6f)
                            .run1({x, scale});
    Tensor y(DataType::kFloat, x.dims());
    rms_norm(x.data<float>(), scale.data<float>(), y.data<float>(), rows, cols, 1e-6f);
    EXPECT_TRUE(tensors_near(y, want, kUlps, kAbs));
  }
}

TEST_P(CpuNorm, InPlace) {
  std::mt19937 rng(3);
  const Tensor x = random_tensor({7, 100}, rng), scale = random_tensor({100}, rng),
               bias = random_tensor({100}, rng);
  Tensor y(DataType::kFloat, x.dims()), z = x.clone();
  layer_norm(x.data<float>(), scale.data<float>(), bias.data<float>(), y.data<float>(), 7, 100, 1e-5f);
  layer_norm(z.data<float>(), scale.data<float>(), bias.data<float>(), z.data<float>(), 7, 100, 1e-5f);
  EXPECT_TRUE(tensors_near(z, y, 0));
}

KILN_INSTANTIATE_FOR_ISAS(CpuNorm);

}  // namespace
}  // namespace kiln::cpu
