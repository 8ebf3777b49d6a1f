// Helpers for the tests of the quantized kernels: parameters, random 8-bit tensors, and a run of
// both engines where quantized outputs may differ by one step. For *_test.cc files only.
#pragma once

#include <cstdlib>

#include "engine/engine_test_util.h"

namespace kiln::engine::testing {

inline Tensor scalar_f(float v) {
  Tensor t(DataType::kFloat, {});
  t.data<float>()[0] = v;
  return t;
}

inline Tensor zero_point(DataType t, int v) {
  Tensor z(t, {});
  if (t == DataType::kInt8)
    z.data<int8_t>()[0] = static_cast<int8_t>(v);
  else
    z.data<uint8_t>()[0] = static_cast<uint8_t>(v);
  return z;
}

inline Tensor random_int8(std::vector<int64_t> dims, uint32_t seed, int max = 127) {
  Tensor t(DataType::kInt8, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(-max, max);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(u(rng));
  return t;
}

inline Tensor random_uint8(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t(DataType::kUInt8, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(0, 255);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(u(rng));
  return t;
}

// Runs make on both engines; quantized outputs may differ by one step on at most 2% of the
// elements, float ones by float rounding. Returns the fast engine's summary.
inline PlanSummary expect_close_to_reference(const MakeModel& make, const std::vector<Tensor>& feeds,
                                      int max_step = 1, double float_tol = 1e-4) {
  std::vector<RtValue> values;
  std::vector<std::vector<int64_t>> dims;
  for (const Tensor& t : feeds) {
    values.push_back(RtValue::of(t));
    dims.push_back(t.dims());
  }
  Session reference(make());
  const auto expected = reference.run(values);
  CompiledModel fast(make());
  for (int pass = 0; pass < 2; ++pass) {
    const auto actual = fast.run(values);
    EXPECT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size() && i < expected.size(); ++i) {
      const Tensor& a = actual[i].tensor;
      const Tensor& e = expected[i].tensor;
      EXPECT_EQ(a.dtype(), e.dtype());
      EXPECT_EQ(a.dims(), e.dims());
      if (a.dtype() != e.dtype() || a.dims() != e.dims()) continue;
      if (a.dtype() == DataType::kFloat) {
        const Comparison cmp = compare_values(actual[i], expected[i], Tolerance{float_tol, float_tol});
        EXPECT_TRUE(cmp.equal) << "output " << i << ": " << cmp.reason;
        continue;
      }
      int64_t off = 0, worst = 0;
      for (int64_t k = 0; k < a.numel(); ++k) {
        const int64_t d = std::llabs(a.get_i64(k) - e.get_i64(k));
        off += d != 0;
        worst = std::max(worst, d);
      }
      EXPECT_LE(worst, max_step) << "output " << i;
      EXPECT_LE(off, max_step == 0 ? 0 : std::max<int64_t>(1, a.numel() / 50)) << "output " << i;
    }
  }
  return fast.summary(dims);
}

}  // namespace kiln::engine::testing
