// NonZero and GatherND against the reference kernels: every element type NonZero takes (float -0
// and NaN included), ranks 1 to 4, zero sizes; GatherND with negative indices, full and partial
// index tuples, empty index lists, and out-of-range indices (left to the reference).
#include "engine/cpu/indexing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "engine/cpu/reference_op.h"

namespace kiln::cpu {
namespace {

void expect_same(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.dims(), want.dims());
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), got.nbytes()), 0);
}

// A tensor of dtype whose elements are mostly zero: 0, 1, -3 ... as that type.
Tensor sparse(DataType dtype, std::vector<int64_t> dims, std::mt19937& rng) {
  Tensor t(dtype, std::move(dims));
  std::uniform_int_distribution<int> v(-3, 3);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int x = v(rng);
    t.set_f64(i, dtype == DataType::kBool ? (x > 1) : (x > 0 ? x : 0));
  }
  return t;
}

TEST(CpuIndexing, NonZeroMatchesTheReference) {
  std::mt19937 rng(2);
  const ReferenceOp ref("NonZero", 13);
  for (DataType t : {DataType::kBool, DataType::kUInt8, DataType::kInt8, DataType::kInt32,
                     DataType::kInt64, DataType::kFloat})
    for (std::vector<int64_t> dims : {std::vector<int64_t>{3234}, {7, 5}, {2, 3, 1, 4}, {0}, {3, 0, 2}}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + dims_to_string(dims));
      const Tensor x = sparse(t, dims, rng);
      const auto got = non_zero(x);
      ASSERT_TRUE(got.has_value());
      expect_same(*got, ref.run1({x}));
    }
  Tensor f(DataType::kFloat, {4});
  const float v[4] = {-0.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f, 2.0f};
  std::copy(v, v + 4, f.data<float>());
  expect_same(*non_zero(f), ref.run1({f}));
  EXPECT_FALSE(non_zero(Tensor(DataType::kFloat, {})).has_value());  // scalars: the reference's
  EXPECT_FALSE(non_zero(Tensor(DataType::kDouble, {3})).has_value());
}

TEST(CpuIndexing, GatherNdMatchesTheReference) {
  std::mt19937 rng(3);
  const ReferenceOp ref("GatherND", 13);
  struct Case {
    std::vector<int64_t> data, indices;
  };
  const Case cases[] = {
      {{3234, 4}, {3234, 1}},  // SSDlite's boxes by NonZero's positions
      {{3234}, {3234, 1}},
      {{5, 6, 7}, {4, 2}},
      {{5, 6, 7}, {2, 3, 3}},
      {{5, 6}, {0, 1}},
      {{5, 0, 3}, {4, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(dims_to_string(c.data) + " " + dims_to_string(c.indices));
    const Tensor data = random_tensor(c.data, rng);
    Tensor idx(DataType::kInt64, c.indices);
    const int64_t k = c.indices.back();
    for (int64_t i = 0; i < idx.numel(); ++i) {
      const int64_t d = c.data[i % k];
      idx.data<int64_t>()[i] = std::uniform_int_distribution<int64_t>(-d, d - 1)(rng);
    }
    const auto got = gather_nd(data, idx);
    ASSERT_TRUE(got.has_value());
    expect_same(*got, ref.run1({data, idx}));
  }
  Tensor bad(DataType::kInt64, {1, 1});
  bad.data<int64_t>()[0] = 5;
  EXPECT_FALSE(gather_nd(random_tensor({5, 2}, rng), bad).has_value());
}

}  // namespace
}  // namespace kiln::cpu
