// Comparing values: ONNX's elementwise rule, and the atol that scales with a whole network's
// outputs.
#include "runtime/compare.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

RtValue floats(std::vector<float> v) {
  Tensor t(DataType::kFloat, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
  return RtValue::of(std::move(t));
}

TEST(Compare, ElementsWithinAtolPlusRtolOfTheExpectedOnes) {
  const Tolerance tol{.rtol = 1e-3, .atol = 1e-4};
  EXPECT_TRUE(compare_values(floats({1.0005f, 0.00005f}), floats({1.0f, 0.0f}), tol).equal);
  const Comparison c = compare_values(floats({1.0f, 0.0003f}), floats({1.0f, 0.0f}), tol);
  EXPECT_FALSE(c.equal);
  EXPECT_NE(c.reason.find("element 1"), std::string::npos) << c.reason;
}

// Logits that reach 8.8 (Inception v3's): 3e-4 on an element near 0 is float32 rounding of the
// sums, within atol scaled by 8.8; 2e-3 is not. Outputs below 1 keep the plain atol.
TEST(Compare, AtolScalesWithTheOutputsLargestMagnitudeWhenAsked) {
  const Tolerance fixed{.rtol = 1e-3, .atol = 1e-4};
  Tolerance scaled = fixed;
  scaled.atol_scales = true;
  const RtValue want = floats({8.8f, -3.0f, 0.0408981f});
  const RtValue near = floats({8.8f, -3.0f, 0.0405981f}), far = floats({8.8f, -3.0f, 0.0388981f});
  EXPECT_FALSE(compare_values(near, want, fixed).equal);
  EXPECT_TRUE(compare_values(near, want, scaled).equal);
  EXPECT_FALSE(compare_values(far, want, scaled).equal);
  EXPECT_FALSE(compare_values(floats({0.5f, 0.0003f}), floats({0.5f, 0.0f}), scaled).equal);
}

}  // namespace
}  // namespace kiln
