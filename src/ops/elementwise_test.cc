// Unit tests of the elementwise family: kernels run on small tensors, and shape inference.
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

using Dims = std::vector<int64_t>;
using Vals = std::vector<double>;
Tensor f32(Dims d, Vals v) { return make(DataType::kFloat, std::move(d), std::move(v)); }
Tensor i32(Dims d, Vals v) { return make(DataType::kInt32, std::move(d), std::move(v)); }
Tensor i64(Dims d, Vals v) { return make(DataType::kInt64, std::move(d), std::move(v)); }


TEST(Elementwise, AddBroadcasts) {
  OpNode node("Add", 2);
  Tensor y = node.run({f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(y), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  Tensor z = node.run({f32({2, 1}, {1, 2}), f32({1, 3}, {10, 20, 30})});
  EXPECT_EQ(values(z), (std::vector<double>{11, 21, 31, 12, 22, 32}));
}

TEST(Elementwise, AddWrapsIntegers) {
  OpNode node("Add", 2);
  Tensor a = make(DataType::kInt8, {2}, {127, -128});
  Tensor b = make(DataType::kInt8, {2}, {1, -1});
  EXPECT_EQ(values(node.run({a, b})), (std::vector<double>{-128, 127}));
}

TEST(Elementwise, AddRejectsMismatchedShapes) {
  OpNode node("Add", 2);
  EXPECT_THROW(node.run({f32({2}, {1, 2}), f32({3}, {1, 2, 3})}), Error);
}

TEST(Elementwise, LegacyBroadcastAxis) {
  OpNode node("Add", 2, 1, 6);
  node.attr_i("broadcast", 1).attr_i("axis", 0);
  Tensor y = node.run({f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {10, 20})});
  EXPECT_EQ(values(y), (std::vector<double>{11, 12, 13, 24, 25, 26}));
}

TEST(Elementwise, IntegerDivisionTruncatesAndFailsOnZero) {
  OpNode node("Div", 2);
  EXPECT_EQ(values(node.run({i32({4}, {-3, 3, -3, 3}), i32({4}, {2, 2, -2, -2})})),
            (std::vector<double>{-1, 1, 1, -1}));
  EXPECT_THROW(node.run({i32({2}, {1, 2}), i32({2}, {1, 0})}), Error);
  Tensor m = make(DataType::kInt32, {1}, {double(std::numeric_limits<int32_t>::min())});
  EXPECT_EQ(node.run({m, i32({1}, {-1})}).data<int32_t>()[0], std::numeric_limits<int32_t>::min());
}

TEST(Elementwise, ModFollowsSignRules) {
  OpNode py("Mod", 2);
  Tensor a = i32({6}, {-4, 7, 5, 4, -7, 8});
  Tensor b = i32({6}, {2, -3, 8, -2, 3, 5});
  EXPECT_EQ(values(py.run({a, b})), (std::vector<double>{0, -2, 5, 0, 2, 3}));
  OpNode c("Mod", 2);
  c.attr_i("fmod", 1);
  EXPECT_EQ(values(c.run({a, b})), (std::vector<double>{0, 1, 5, 0, -1, 3}));
  EXPECT_THROW(py.run({i32({1}, {3}), i32({1}, {0})}), Error);
}

TEST(Elementwise, PowMixedTypes) {
  OpNode node("Pow", 2);
  EXPECT_EQ(values(node.run({i64({3}, {1, 2, 3}), f32({3}, {4, 5, 6})})),
            (std::vector<double>{1, 32, 729}));
  EXPECT_EQ(values(node.run({f32({2}, {2, 9}), i64({2}, {3, -1})}))[0], 8);
  EXPECT_EQ(values(node.run({i32({3}, {2, -2, 5}), i32({3}, {10, 3, 0})})),
            (std::vector<double>{1024, -8, 1}));
}

TEST(Elementwise, UnaryMathAndActivations) {
  OpNode relu("Relu", 1);
  EXPECT_EQ(values(relu.run({f32({3}, {-1, 0, 2})})), (std::vector<double>{0, 0, 2}));
  OpNode round("Round", 1);
  EXPECT_EQ(values(round.run({f32({4}, {0.5, 1.5, 2.5, -0.5})})), (Vals{0, 2, 2, -0.0}));
  OpNode leaky("LeakyRelu", 1);
  leaky.attr_f("alpha", 0.5f);
  EXPECT_EQ(values(leaky.run({f32({2}, {-2, 2})})), (std::vector<double>{-1, 2}));
  OpNode gelu("Gelu", 1);
  gelu.attr_s("approximate", "tanh");
  EXPECT_NEAR(values(gelu.run({f32({1}, {1.0})}))[0], 0.841192, 1e-5);
  OpNode sig("Sigmoid", 1);
  auto s = values(sig.run({f32({3}, {-100, 0, 100})}));
  EXPECT_NEAR(s[0], 0, 1e-30);
  EXPECT_EQ(s[1], 0.5);
  EXPECT_EQ(s[2], 1);
  OpNode abs("Abs", 1);
  EXPECT_EQ(values(abs.run({i32({2}, {-5, 5})})), (std::vector<double>{5, 5}));
  OpNode sign("Sign", 1);
  EXPECT_EQ(values(sign.run({f32({3}, {-3, 0, 7})})), (std::vector<double>{-1, 0, 1}));
}

TEST(Elementwise, HalfComputesInFloat) {
  OpNode node("Sqrt", 1);
  Tensor x = make(DataType::kFloat16, {2}, {4, 2});
  Tensor y = node.run({x});
  EXPECT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_EQ(values(y)[0], 2);
  EXPECT_NEAR(values(y)[1], std::sqrt(2.0), 1e-3);
}

TEST(Elementwise, CompareAndLogic) {
  OpNode less("Less", 2);
  Tensor y = less.run({f32({3}, {1, 2, 3}), f32({}, {2})});
  EXPECT_EQ(y.dtype(), DataType::kBool);
  EXPECT_EQ(values(y), (std::vector<double>{1, 0, 0}));
  OpNode eq("Equal", 2);
  Tensor s1(DataType::kString, {2}), s2(DataType::kString, {});
  s1.strings()[0] = "a";
  s1.strings()[1] = "b";
  s2.strings()[0] = "b";
  EXPECT_EQ(values(eq.run({s1, s2})), (std::vector<double>{0, 1}));
}

TEST(Elementwise, WhereBroadcastsAllThree) {
  OpNode node("Where", 3);
  Tensor c = make(DataType::kBool, {2, 1}, {1, 0});
  Tensor y = node.run({c, f32({3}, {1, 2, 3}), f32({}, {-1})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(y), (std::vector<double>{1, 2, 3, -1, -1, -1}));
}

TEST(Elementwise, VariadicOps) {
  OpNode max("Max", 3);
  EXPECT_EQ(values(max.run({f32({3}, {1, 5, 3}), f32({}, {2}), f32({1, 3}, {0, 0, 4})})),
            (std::vector<double>{2, 5, 4}));
  OpNode mean("Mean", 2);
  EXPECT_EQ(values(mean.run({f32({2}, {1, 2}), f32({2}, {3, 6})})), (std::vector<double>{2, 4}));
  OpNode sum("Sum", 1);
  EXPECT_EQ(values(sum.run({f32({2}, {1, 2})})), (std::vector<double>{1, 2}));
}

TEST(Elementwise, ClipOptionalBounds) {
  OpNode node("Clip", 3);
  Tensor x = make(DataType::kInt8, {3}, {-100, 0, 100});
  EXPECT_EQ(values(node.run({x, Tensor(), make(DataType::kInt8, {}, {50})})),
            (std::vector<double>{-100, 0, 50}));
  EXPECT_EQ(values(node.run({f32({3}, {-2, 0, 2}), f32({}, {1}), f32({}, {0})})),
            (std::vector<double>{0, 0, 0}));  // min > max: everything is max
}

TEST(Elementwise, ClipAcceptsBoundsOfAnotherType) {
  OpNode node("Clip", 3);
  Tensor x = make(DataType::kFloat16, {3}, {-2, 0.5, 2});
  EXPECT_EQ(values(node.run({x, f32({}, {-1}), f32({}, {1})})), (std::vector<double>{-1, 0.5, 1}));
}

TEST(Elementwise, LegacyPReluSlopeAlongChannels) {
  OpNode node("PRelu", 2, 1, 6);
  Tensor x = f32({1, 2, 2}, {-1, -1, -1, 1});
  EXPECT_EQ(values(node.run({x, f32({2}, {0.5, 2})})), (std::vector<double>{-0.5, -0.5, -2, 1}));
}

TEST(Elementwise, CastNumbers) {
  OpNode node("Cast", 1);
  node.attr_i("to", static_cast<int>(DataType::kInt4));
  Tensor y = node.run({f32({4}, {-9, 7, 8, 2.7})});
  EXPECT_EQ(values(y), (std::vector<double>{7, 7, -8, 2}));
  OpNode toi("Cast", 1);
  toi.attr_i("to", static_cast<int>(DataType::kInt32));
  EXPECT_EQ(values(toi.run({f32({3}, {-2.7, 2.7, NAN})}))[0], -2);
  OpNode e8("Cast", 1);
  e8.attr_i("to", static_cast<int>(DataType::kFloat8E8M0));
  Tensor e = e8.run({f32({4}, {0.124, 1.1, 2, 0})});
  EXPECT_EQ(e.data<uint8_t>()[0], 124);
  EXPECT_EQ(e.data<uint8_t>()[1], 128);
  EXPECT_EQ(e.data<uint8_t>()[2], 128);
  EXPECT_EQ(e.data<uint8_t>()[3], 0);
}

TEST(Elementwise, CastStrings) {
  OpNode tos("Cast", 1);
  tos.attr_i("to", static_cast<int>(DataType::kString));
  Tensor s = tos.run({f32({6}, {1, 0.1, 1e-5, 1e20, -INFINITY, 123456})});
  EXPECT_EQ(s.strings()[0], "1.0");
  EXPECT_EQ(s.strings()[1], "0.1");
  EXPECT_EQ(s.strings()[2], "1e-05");
  EXPECT_EQ(s.strings()[3], "1e+20");
  EXPECT_EQ(s.strings()[4], "-inf");
  EXPECT_EQ(s.strings()[5], "123456.0");
  OpNode fromi("Cast", 1);
  fromi.attr_i("to", static_cast<int>(DataType::kString));
  EXPECT_EQ(fromi.run({i64({1}, {-42})}).strings()[0], "-42");

  OpNode tof("Cast", 1);
  tof.attr_i("to", static_cast<int>(DataType::kFloat));
  Tensor in(DataType::kString, {4});
  in.strings()[0] = "3.5";
  in.strings()[1] = "+INF";
  in.strings()[2] = "NaN";
  in.strings()[3] = "1e-5";
  auto v = values(tof.run({in}));
  EXPECT_EQ(v[0], 3.5);
  EXPECT_TRUE(std::isinf(v[1]) && v[1] > 0);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_NEAR(v[3], 1e-5, 1e-12);
  OpNode toint("Cast", 1);
  toint.attr_i("to", static_cast<int>(DataType::kInt64));
  Tensor big(DataType::kString, {2});
  big.strings()[0] = "9007199254740993";
  big.strings()[1] = "100.5";
  Tensor r = toint.run({big});
  EXPECT_EQ(r.data<int64_t>()[0], 9007199254740993);
  EXPECT_EQ(r.data<int64_t>()[1], 100);
  Tensor bad(DataType::kString, {1});
  bad.strings()[0] = "hello";
  EXPECT_THROW(toint.run({bad}), Error);
}

TEST(Elementwise, BitCast) {
  OpNode node("BitCast", 1);
  node.attr_i("to", static_cast<int>(DataType::kInt32));
  Tensor y = node.run({f32({1}, {1.0})});
  EXPECT_EQ(y.data<int32_t>()[0], 0x3f800000);
  OpNode bad("BitCast", 1);
  bad.attr_i("to", static_cast<int>(DataType::kInt64));
  EXPECT_THROW(bad.run({f32({1}, {1.0})}), Error);
}

// Shape inference: Shape -> Gather -> Mul -> Concat chains keep their symbols.
struct Inferred {
  std::vector<std::optional<TypeInfo>> types;
  std::vector<std::optional<std::vector<Dim>>> values;
};

Inferred infer(OpNode& node, std::vector<InferContext::Input> inputs) {
  InferContext ctx(*node.n, std::move(inputs), nullptr);
  node.schema->infer(ctx);
  return {ctx.outputs(), ctx.output_values()};
}

TEST(ElementwiseInfer, BroadcastWithSymbols) {
  OpNode node("Add", 2);
  TypeInfo a = TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("batch"), 1, 4});
  TypeInfo b = TypeInfo::tensor(DataType::kFloat, Shape{Dim::symbol("seq"), 1});
  auto r = infer(node, {{&a}, {&b}});
  ASSERT_TRUE(r.types[0] && r.types[0]->shape);
  EXPECT_EQ(shape_to_string(*r.types[0]->shape), "[batch,seq,4]");
}

TEST(ElementwiseInfer, MulPropagatesDims) {
  OpNode node("Mul", 2);
  TypeInfo t = TypeInfo::tensor(DataType::kInt64, Shape{2});
  std::vector<Dim> dims{Dim::symbol("batch"), 3};
  Tensor two = Tensor::from_int64s(std::vector<int64_t>{2});
  TypeInfo ts = TypeInfo::tensor(DataType::kInt64, Shape{1});
  auto r = infer(node, {{&t, nullptr, &dims}, {&ts, &two, nullptr}});
  ASSERT_TRUE(r.values[0]);
  EXPECT_EQ((*r.values[0])[0].to_string(), "2*batch");
  EXPECT_EQ((*r.values[0])[1].value(), 6);
}

TEST(ElementwiseInfer, EqualWhereAgainstMinusOne) {
  // Where(Equal(shape, -1), 1, shape): a symbolic dim is never -1.
  OpNode eq("Equal", 2);
  TypeInfo t = TypeInfo::tensor(DataType::kInt64, Shape{2});
  std::vector<Dim> dims{Dim::symbol("n"), 5};
  Tensor minus1 = Tensor::from_int64s(std::vector<int64_t>{-1, -1});
  auto r = infer(eq, {{&t, nullptr, &dims}, {&t, &minus1, nullptr}});
  ASSERT_TRUE(r.values[0]);
  EXPECT_EQ((*r.values[0])[0].value(), 0);
  EXPECT_EQ((*r.values[0])[1].value(), 0);

  OpNode where("Where", 3);
  TypeInfo tb = TypeInfo::tensor(DataType::kBool, Shape{2});
  Tensor ones = Tensor::from_int64s(std::vector<int64_t>{1, 1});
  auto w = infer(where,
                 {{&tb, nullptr, &*r.values[0]}, {&t, &ones, nullptr}, {&t, nullptr, &dims}});
  ASSERT_TRUE(w.values[0]);
  EXPECT_EQ((*w.values[0])[0].to_string(), "n");
  EXPECT_EQ((*w.values[0])[1].value(), 5);
}

TEST(ElementwiseInfer, CastKeepsDims) {
  OpNode node("Cast", 1);
  node.attr_i("to", static_cast<int>(DataType::kInt32));
  TypeInfo t = TypeInfo::tensor(DataType::kInt64, Shape{1});
  std::vector<Dim> dims{Dim::symbol("seq")};
  auto r = infer(node, {{&t, nullptr, &dims}});
  EXPECT_EQ(r.types[0]->elem, DataType::kInt32);
  ASSERT_TRUE(r.values[0]);
  EXPECT_EQ((*r.values[0])[0].to_string(), "seq");
}

TEST(ElementwiseInfer, DivOfSymbol) {
  OpNode node("Div", 2);
  TypeInfo t = TypeInfo::tensor(DataType::kInt64, Shape{});
  std::vector<Dim> dims{Dim::symbol("seq") * Dim(4)};
  Tensor two = Tensor::from_int64s(std::vector<int64_t>{2});
  auto r = infer(node, {{&t, nullptr, &dims}, {&t, &two, nullptr}});
  ASSERT_TRUE(r.values[0]);
  EXPECT_FALSE((*r.values[0])[0].is_unknown());
}

}  // namespace
}  // namespace kiln
