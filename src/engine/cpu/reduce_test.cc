// ReduceSum / ReduceMean / ReduceMax against the reference kernel (double accumulation).
#include "engine/cpu/reduce.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/cpu/reference_op.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

struct ReduceCase {
  std::vector<int64_t> dims;
  std::vector<int64_t> axes;
};

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "ReduceSum";
    case ReduceOp::kMean: return "ReduceMean";
    case ReduceOp::kMax: return "ReduceMax";
  }
  return "?";
}

class CpuReduce : public IsaTest {};

TEST_P(CpuReduce, MatchesTheReferenceOverTrailingLeadingAndMiddleAxes) {
  const ReduceCase cases[] = {
      {{3, 17}, {1}},          {{17, 3}, {0}},           {{2, 5, 7}, {1}},
      {{2, 3, 4, 5}, {1, 2}},  {{3, 1023}, {0, 1}},      {{1, 200000}, {1}},
      {{3, 0}, {1}},           {{0, 3}, {1}},            {{1, 7, 1, 9}, {0, 1}},
      {{49, 1280}, {0}},       {{2, 64, 3000}, {1}},     {{1, 1}, {1}},
      {{4, 100000}, {1}},
  };
  std::mt19937 rng(1);
  for (const ReduceCase& c : cases) {
    const Tensor x = random_tensor(c.dims, rng);
    const std::optional<ReduceShape> s = reduce_shape(c.dims, c.axes);
    ASSERT_TRUE(s.has_value()) << dims_to_string(c.dims);
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax}) {
      SCOPED_TRACE(std::string(op_name(op)) + " " + dims_to_string(c.dims) + " axes " +
                   dims_to_string(c.axes));
      const Tensor want =
          ReferenceOp(op_name(op), 18).attr("keepdims", int64_t{0}).run1({x, Tensor::from_int64s(c.axes)});
      Tensor y(DataType::kFloat, want.dims());
      reduce(op, x.data<float>(), y.data<float>(), s->outer, s->len, s->inner);
      // Sums are kept in float: an error that grows with the count (absolute for sums near 0).
      const float abs_tol = op == ReduceOp::kMax ? 0.0f : 2e-7f * static_cast<float>(s->len) * 4;
      EXPECT_TRUE(floats_near(y.data<float>(), want.data<float>(), want.numel(), 4, abs_tol));
    }
  }
}

TEST_P(CpuReduce, MaxPropagatesNaN) {
  const float nan = std::nanf("");
  const std::vector<float> x = {1, nan, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
  float y[2];
  reduce(ReduceOp::kMax, x.data(), y, 2, 9, 1);  // rows
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 18.0f);
  reduce(ReduceOp::kMax, x.data(), y, 1, 9, 2);  // columns
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[0], 17.0f);
}

TEST(CpuReduceShape, ContiguousRunsOnly) {
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  auto shape = [&](std::vector<int64_t> axes) { return reduce_shape(dims, axes); };
  const auto trailing = shape({2, 3});
  ASSERT_TRUE(trailing);
  EXPECT_EQ(trailing->outer, 6);
  EXPECT_EQ(trailing->len, 20);
  EXPECT_EQ(trailing->inner, 1);
  const auto middle = shape({2, 1});  // any order
  ASSERT_TRUE(middle);
  EXPECT_EQ(middle->outer, 2);
  EXPECT_EQ(middle->len, 12);
  EXPECT_EQ(middle->inner, 5);
  EXPECT_FALSE(shape({0, 2}));
  EXPECT_FALSE(shape({4}));
  // Axes of size 1 do not break a run.
  const std::vector<int64_t> with_ones = {2, 1, 3, 1, 5};
  EXPECT_TRUE(reduce_shape(with_ones, std::vector<int64_t>{0, 2}));
}

KILN_INSTANTIATE_FOR_ISAS(CpuReduce);

}  // namespace
}  // namespace kiln::cpu
