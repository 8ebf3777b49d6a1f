// Helpers for the CPU kernels' tests: run a test once per ISA the machine supports, compare floats
// in ulps. Used only by *_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/cpu/cpu_features.h"
#include "ir/tensor.h"

namespace kiln::cpu {

// A test fixture parameterized by ISA: the kernels run on that ISA for the test's duration.
class IsaTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { previous_ = set_active_isa(GetParam()); }
  void TearDown() override { set_active_isa(previous_); }

 private:
  Isa previous_ = Isa::kScalar;
};

inline std::string isa_param_name(const ::testing::TestParamInfo<Isa>& info) {
  return isa_name(info.param);
}

#define KILN_INSTANTIATE_FOR_ISAS(Suite) \
  INSTANTIATE_TEST_SUITE_P(Isa, Suite, ::testing::ValuesIn(supported_isas()), isa_param_name)

// Distance in representable floats; 0 between NaNs and between +0 and -0.
inline int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  if (a == b) return 0;
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : static_cast<int64_t>(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

// got and want agree when each element is within max_ulp or within abs_tol (for values near
// zero, where a result's error is absolute).
inline ::testing::AssertionResult floats_near(const float* got, const float* want, int64_t n,
                                              int64_t max_ulp, float abs_tol = 0) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = ulp_distance(got[i], want[i]);
    if (d <= max_ulp) continue;
    if (std::isfinite(got[i]) && std::isfinite(want[i]) && std::fabs(got[i] - want[i]) <= abs_tol)
      continue;
    return ::testing::AssertionFailure()
           << "element " << i << ": got " << got[i] << ", want " << want[i] << " (" << d
           << " ulp apart, max " << max_ulp << ", abs tol " << abs_tol << ")";
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult tensors_near(const Tensor& got, const Tensor& want,
                                               int64_t max_ulp, float abs_tol = 0) {
  if (got.dims() != want.dims())
    return ::testing::AssertionFailure()
           << "dims " << dims_to_string(got.dims()) << ", want " << dims_to_string(want.dims());
  return floats_near(got.data<float>(), want.data<float>(), got.numel(), max_ulp, abs_tol);
}

// Random dims for a broadcast: `out` with each axis kept or set to 1 at random, and leading axes
// dropped at random (numpy aligns the rest to the right).
inline std::vector<int64_t> random_broadcast_operand(const std::vector<int64_t>& out,
                                                     std::mt19937& rng) {
  std::vector<int64_t> d(out.begin() + rng() % (out.size() + 1), out.end());
  for (int64_t& x : d)
    if (rng() % 3 == 0) x = 1;
  return d;
}

// Random dims of rank [0, max_rank] with extents in [1, max_extent] (0 now and then).
inline std::vector<int64_t> random_dims(std::mt19937& rng, int max_rank, int64_t max_extent) {
  std::vector<int64_t> d(rng() % (max_rank + 1));
  for (int64_t& x : d) x = rng() % 40 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % max_extent);
  return d;
}

// Values every float kernel should meet: signed zeros, infinities, NaN, subnormals, extremes.
inline std::vector<float> special_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  return {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 1e-40f, -1e-40f,
          std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
          -std::numeric_limits<float>::max(), 1.0f, -1.0f, 0.5f, 100.0f, -100.0f, 1e-8f};
}

}  // namespace kiln::cpu
