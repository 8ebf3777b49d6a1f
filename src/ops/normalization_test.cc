// Unit tests of the normalization family: kernels on small tensors, and shape inference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/scalar_types.h"
#include "ops/op.h"
#include "ops/op_test_util.h"
#include "support/error.h"

namespace kiln {
namespace {

using op_test::OpNode;
using op_test::make;
using op_test::values;
using op_test::expect_near;

Tensor f32(std::vector<int64_t> d, std::vector<double> v) { return make(DataType::kFloat, d, v); }
Tensor i64(std::vector<int64_t> d, std::vector<double> v) { return make(DataType::kInt64, d, v); }



// ---------------------------------------------------------------------------------------------

TEST(NormReduce, SumKeepdimsAndNot) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  OpNode a("ReduceSum", 2);
  Tensor y = a.run({x, i64({1}, {1})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 1}));
  expect_near(values(y), {6, 15});
  OpNode b("ReduceSum", 2);
  b.attr_i("keepdims", 0);
  y = b.run({x, i64({1}, {-2})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{3}));
  expect_near(values(y), {5, 7, 9});
}

TEST(NormReduce, EmptyAxesReduceAllOrNoop) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  OpNode a("ReduceSum", 1);
  Tensor y = a.run({x});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 1}));
  expect_near(values(y), {10});
  OpNode b("ReduceSum", 2);
  b.attr_i("noop_with_empty_axes", 1);
  y = b.run({x, i64({0}, {})});
  EXPECT_EQ(y.dims(), x.dims());
  expect_near(values(y), {1, 2, 3, 4});
}

TEST(NormReduce, EmptySetGivesIdentity) {
  Tensor x(DataType::kFloat, {2, 0, 4});
  auto run = [&](const char* op) {
    OpNode a(op, 2);
    return values(a.run({x, i64({1}, {1})}));
  };
  EXPECT_EQ(run("ReduceSum"), std::vector<double>(8, 0.0));
  EXPECT_EQ(run("ReduceProd"), std::vector<double>(8, 1.0));
  EXPECT_EQ(run("ReduceMax")[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(run("ReduceMin")[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(run("ReduceLogSumExp")[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(run("ReduceLogSum")[0], -std::numeric_limits<double>::infinity());
}

TEST(NormReduce, IntegersStayExact) {
  const double big = 4611686018427387904.0;  // 2^62
  Tensor x(DataType::kInt64, {3});
  x.data<int64_t>()[0] = 4611686018427387904LL;
  x.data<int64_t>()[1] = 1;
  x.data<int64_t>()[2] = -3;
  OpNode a("ReduceSum", 1);
  a.attr_i("keepdims", 0);
  Tensor y = a.run({x});
  EXPECT_EQ(y.data<int64_t>()[0], 4611686018427387902LL);
  (void)big;
  OpNode m("ReduceMean", 1);
  m.attr_i("keepdims", 0);
  Tensor z = m.run({i64({4}, {1, 2, 3, 5})});
  EXPECT_EQ(z.data<int64_t>()[0], 2);
}

TEST(NormReduce, LogSumExpIsStable) {
  OpNode a("ReduceLogSumExp", 1);
  Tensor y = a.run({f32({2}, {1000, 1000})});
  expect_near(values(y), {1000 + std::log(2.0)}, 1e-3);
}

TEST(NormReduce, BoolMaxMin) {
  Tensor x(DataType::kBool, {2, 2});
  x.data<bool>()[0] = true;
  x.data<bool>()[1] = false;
  x.data<bool>()[2] = false;
  x.data<bool>()[3] = false;
  OpNode a("ReduceMax", 2);
  Tensor y = a.run({x, i64({1}, {1})});
  EXPECT_TRUE(y.data<bool>()[0]);
  EXPECT_FALSE(y.data<bool>()[1]);
}

TEST(NormReduce, AxisOutOfRangeFails) {
  OpNode a("ReduceSum", 2);
  EXPECT_THROW(a.run({f32({2}, {1, 2}), i64({1}, {3})}), Error);
}

TEST(NormArg, KeepdimsIsAFlag) {
  // ONNX's inference keeps the axis only for keepdims = 1, kiln's kernels for any but 0: other
  // values are refused, in inference and in the kernel, naming the node.
  for (const char* op : {"ArgMax", "ReduceMax"}) {
    OpNode a(op, 1);
    a.attr_i("keepdims", 7);
    const TypeInfo x = TypeInfo::tensor(DataType::kFloat, Shape{2, 3});
    try {
      a.infer({x});
      ADD_FAILURE() << op << ": keepdims 7 inferred";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("node producing 'y0' (" + std::string(op) +
                                           "): keepdims is 7, expected 0 or 1"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(a.run({f32({2, 3}, {1, 2, 3, 4, 5, 6})}), Error);
  }
}

TEST(NormArg, SelectLastIndex) {
  Tensor x = f32({2, 3}, {1, 5, 5, 7, 2, 7});
  OpNode a("ArgMax", 1);
  a.attr_i("axis", 1);
  expect_near(values(a.run({x})), {1, 0});
  OpNode b("ArgMax", 1);
  b.attr_i("axis", 1).attr_i("select_last_index", 1).attr_i("keepdims", 0);
  Tensor y = b.run({x});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2}));
  expect_near(values(y), {2, 2});
  OpNode c("ArgMin", 1);
  c.attr_i("axis", 0);
  expect_near(values(c.run({x})), {0, 1, 0});
}

TEST(NormSoftmax, LegacyCoercesTo2D) {
  Tensor x = f32({2, 2}, {0, 0, 0, 0});
  OpNode a("Softmax", 1, 1, 11);
  a.attr_i("axis", 0);
  expect_near(values(a.run({x})), {0.25, 0.25, 0.25, 0.25});
  OpNode b("Softmax", 1, 1, 13);
  b.attr_i("axis", 0);
  expect_near(values(b.run({x})), {0.5, 0.5, 0.5, 0.5});
  OpNode c("LogSoftmax", 1);
  expect_near(values(c.run({f32({2}, {1000, 1000})})), {-std::log(2.0), -std::log(2.0)});
  OpNode h("Hardmax", 1);
  expect_near(values(h.run({f32({2, 3}, {1, 3, 3, 0, -1, -2})})), {0, 1, 0, 1, 0, 0});
}

TEST(NormNorms, LayerNormOutputsStats) {
  OpNode a("LayerNormalization", 3, 3, 17);
  auto outs = a.run_all({f32({2, 2}, {1, 3, 2, 2}), f32({2}, {1, 1}), f32({2}, {0, 1})});
  expect_near(values(outs[0]), {-1, 2, 0, 1}, 1e-4);
  expect_near(values(outs[1]), {2, 2});
  EXPECT_EQ(outs[1].dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_NEAR(outs[2].get_f64(0), 1 / std::sqrt(1 + 1e-5), 1e-5);
}

TEST(NormNorms, BatchNormInference) {
  OpNode a("BatchNormalization", 5, 1, 15);
  Tensor y = a.run({f32({1, 2, 1, 1}, {3, 4}), f32({2}, {2, 1}), f32({2}, {1, 0}), f32({2}, {1, 4}),
                    f32({2}, {4, 1})});
  expect_near(values(y), {2 * 2 / std::sqrt(4 + 1e-5) + 1, 0}, 1e-4);
}

TEST(NormNorms, GroupNormPerGroupBeforeOpset21) {
  Tensor x = f32({1, 2, 2}, {0, 2, 4, 6});
  OpNode a("GroupNormalization", 3, 1, 18);
  a.attr_i("num_groups", 1).attr_f("epsilon", 0);
  Tensor y = a.run({x, f32({1}, {2}), f32({1}, {1})});
  const double sd = std::sqrt(5.0);
  expect_near(values(y), {1 - 6 / sd, 1 - 2 / sd, 1 + 2 / sd, 1 + 6 / sd}, 1e-4);
}

TEST(NormResize, NearestUpsample) {
  OpNode a("Resize", 3, 1, 19);
  Tensor y = a.run({f32({1, 1, 1, 2}, {1, 2}), Tensor(), f32({4}, {1, 1, 2, 2})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 2, 4}));
  expect_near(values(y), {1, 1, 2, 2, 1, 1, 2, 2});
}

TEST(NormResize, LinearAlignCornersDownsample) {
  // ONNX's case: the resized length before rounding (2.4) is what align_corners divides by.
  OpNode a("Resize", 3, 1, 19);
  a.attr_s("mode", "linear").attr_s("coordinate_transformation_mode", "align_corners");
  Tensor y =
      a.run({f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), Tensor(), f32({4}, {1, 1, 0.6, 0.6})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 1, 2}));
  expect_near(values(y), {1, 3.142857}, 1e-5);
}

TEST(NormResize, SizesWithAxesAndExtrapolation) {
  OpNode a("Resize", 4, 1, 19);
  a.attr_s("mode", "linear")
      .attr_s("coordinate_transformation_mode", "tf_crop_and_resize")
      .attr_is("axes", {1})
      .attr_f("extrapolation_value", 10);
  Tensor y = a.run({f32({1, 2}, {1, 2}), f32({2}, {0, 2}), Tensor(), i64({1}, {3})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 3}));
  expect_near(values(y), {1, 2, 10});
}

TEST(NormResize, InferSymbolicSizes) {
  OpNode a("Resize", 4, 1, 19);
  TypeInfo x =
      TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), Dim(3), Dim(8), Dim(8)});
  TypeInfo sz = TypeInfo::tensor(DataType::kInt64, Shape{Dim(4)});
  std::vector<Dim> sizes = {Dim::symbol("batch"), Dim(3), Dim::symbol("h"), Dim(16)};
  InferContext ctx(*a.n,
                   {{&x, nullptr, nullptr},
                    {nullptr, nullptr, nullptr},
                    {nullptr, nullptr, nullptr},
                    {&sz, nullptr, &sizes}},
                   nullptr);
  a.schema->infer(ctx);
  ASSERT_TRUE(ctx.outputs()[0].has_value());
  EXPECT_EQ(shape_to_string(*ctx.outputs()[0]->shape), "[batch,3,h,16]");
}

TEST(NormReduce, InferSymbolic) {
  OpNode a("ReduceMean", 2, 1, 18);
  a.attr_i("keepdims", 0);
  TypeInfo x =
      TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), Dim::symbol("seq"), Dim(8)});
  TypeInfo ax = TypeInfo::tensor(DataType::kInt64, Shape{Dim(1)});
  Tensor axes = i64({1}, {-1});
  InferContext ctx(*a.n, {{&x, nullptr, nullptr}, {&ax, &axes, nullptr}}, nullptr);
  a.schema->infer(ctx);
  EXPECT_EQ(shape_to_string(*ctx.outputs()[0]->shape), "[batch,seq]");
}

TEST(NormSampling, NonMaxSuppression) {
  OpNode a("NonMaxSuppression", 5, 1, 11);
  Tensor boxes = f32({1, 3, 4}, {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 2, 1, 3});
  Tensor scores = f32({1, 1, 3}, {0.9, 0.95, 0.5});
  Tensor y = a.run({boxes, scores, i64({1}, {3}), f32({1}, {0.5}), f32({1}, {0.0})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  expect_near(values(y), {0, 0, 1, 0, 0, 2});
}

TEST(NormSequence, LinearAttentionOneToken) {
  // One head, d_k = d_v = 2, linear rule: S = k v^T, out = q^T S / sqrt(2).
  OpNode a("LinearAttention", 3, 2, 27);
  a.attr_i("q_num_heads", 1).attr_i("kv_num_heads", 1).attr_s("update_rule", "linear");
  auto outs = a.run_all({f32({1, 1, 2}, {1, 2}), f32({1, 1, 2}, {3, 4}), f32({1, 1, 2}, {5, 6})});
  const double s = 1 / std::sqrt(2.0);
  expect_near(values(outs[0]), {11 * 5 * s, 11 * 6 * s}, 1e-4);
  expect_near(values(outs[1]), {15, 18, 20, 24});
}

TEST(NormSequence, CausalConvWithState) {
  OpNode a("CausalConvWithState", 4, 2, 27);
  auto outs = a.run_all({f32({1, 1, 2}, {1, 2}), f32({1, 1, 3}, {1, 10, 100}), f32({1}, {0.5}),
                         f32({1, 1, 2}, {3, 4})});
  // sequence 3 4 1 2: outputs 3 + 40 + 100 + 0.5, 4 + 10 + 200 + 0.5; state = last two: 1 2
  expect_near(values(outs[0]), {143.5, 214.5});
  expect_near(values(outs[1]), {1, 2});
}

TEST(NormLoss, SoftmaxCrossEntropyMean) {
  OpNode a("SoftmaxCrossEntropyLoss", 2, 2, 13);
  auto outs = a.run_all({f32({2, 2}, {0, 0, 0, 0}), i64({2}, {0, 1})});
  expect_near(values(outs[0]), {std::log(2.0)});
  EXPECT_EQ(outs[0].rank(), 0);
}

TEST(NormHostile, HugeSizesFailCleanly) {
  OpNode a("Resize", 4, 1, 19);
  EXPECT_THROW(a.run({f32({1, 1}, {1}), Tensor(), Tensor(), i64({2}, {0, 4e18})}), Error);
  OpNode b("Resize", 3, 1, 19);
  EXPECT_THROW(b.run({f32({1, 1}, {1}), Tensor(), f32({2}, {1e30, 1e30})}), Error);
  OpNode c("RoiAlign", 3, 1, 16);
  c.attr_i("output_height", int64_t(1) << 40);
  EXPECT_THROW(c.run({f32({1, 1, 1, 1}, {1}), f32({1, 4}, {0, 0, 1, 1}), i64({1}, {0})}), Error);
  OpNode d("LinearAttention", 3, 1, 27);
  d.attr_i("q_num_heads", 1).attr_i("kv_num_heads", 1).attr_s("update_rule", "linear");
  Tensor q(DataType::kFloat, {1, 1, 1 << 20});
  EXPECT_THROW(d.run({q, q, q}), Error);
}

TEST(NormHostile, NanCoordinatesStayInBounds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  OpNode a("RoiAlign", 3, 1, 16);
  Tensor y =
      a.run({f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 4}, {nan, 0, 1e30, 1}), i64({1}, {0})});
  EXPECT_EQ(y.numel(), 1);
  OpNode b("GridSample", 2, 1, 20);
  b.attr_s("padding_mode", "reflection");
  y = b.run({f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 2, 2}, {nan, 1e30, -1e30, 0.5})});
  EXPECT_EQ(y.numel(), 2);
  OpNode c("Resize", 2, 1, 19);
  c.attr_s("coordinate_transformation_mode", "tf_crop_and_resize").attr_s("mode", "linear");
  OpNode d("Resize", 4, 1, 19);
  d.attr_s("coordinate_transformation_mode", "tf_crop_and_resize").attr_s("mode", "cubic");
  y = d.run({f32({1, 2}, {1, 2}), f32({4}, {0, nan, 1, 1e300}), Tensor(), i64({2}, {1, 3})});
  EXPECT_EQ(y.numel(), 3);
}

TEST(NormHostile, BadTargetsFail) {
  OpNode a("NegativeLogLikelihoodLoss", 2, 1, 13);
  EXPECT_THROW(a.run({f32({1, 2}, {0, 0}), i64({1}, {5})}), Error);
  OpNode b("RoiAlign", 3, 1, 16);
  EXPECT_THROW(b.run({f32({1, 1, 1, 1}, {1}), f32({1, 4}, {0, 0, 1, 1}), i64({1}, {3})}), Error);
}

}  // namespace
}  // namespace kiln
