// Differential tests of the elementwise kernels against the reference kernels (src/ops), on
// every ISA: odd sizes, zero-size tensors, special values, every broadcasting pattern.
#include "engine/cpu/elementwise.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/cpu/reference_op.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

Tensor scalar_tensor(float v) {
  Tensor t(DataType::kFloat, {});
  t.data<float>()[0] = v;
  return t;
}

// Random values with the special ones spread through (where there is room for them).
Tensor test_input(int64_t n, std::mt19937& rng) {
  Tensor t = random_tensor({n}, rng, -6.0f, 6.0f);
  const std::vector<float> sp = special_floats();
  if (n >= 17)
    for (size_t k = 0; k < sp.size(); ++k) t.data<float>()[(k * 7919) % n] = sp[k];
  return t;
}

struct UnaryCase {
  UnaryOp op;
  UnaryParams params;
  int64_t max_ulp;
  float abs_tol;  // for results near zero that come out of a cancellation (1 + erf(x) ...)
};

// The reference node computing the same thing as c.
Tensor reference_unary(const UnaryCase& c, const Tensor& x) {
  switch (c.op) {
    case UnaryOp::kLeakyRelu: return ReferenceOp("LeakyRelu").attr("alpha", c.params.alpha).run1({x});
    case UnaryOp::kHardSigmoid:
      return ReferenceOp("HardSigmoid")
          .attr("alpha", c.params.alpha)
          .attr("beta", c.params.beta)
          .run1({x});
    case UnaryOp::kClip:
      return ReferenceOp("Clip").run1({x, scalar_tensor(c.params.alpha), scalar_tensor(c.params.beta)});
    case UnaryOp::kSwish: return ReferenceOp("Swish", 24).attr("alpha", c.params.alpha).run1({x});
    case UnaryOp::kGeluErf: return ReferenceOp("Gelu").run1({x});
    case UnaryOp::kGeluTanh:
      return ReferenceOp("Gelu").attr("approximate", std::string("tanh")).run1({x});
    default: return ReferenceOp(unary_name(c.op)).run1({x});
  }
}

class CpuElementwise : public IsaTest {};

TEST_P(CpuElementwise, UnaryOpsMatchTheReference) {
  // Bounds: 0 where both sides do the same float arithmetic; otherwise the sum of both sides'
  // errors (the reference uses the C library's float functions). HardSigmoid's alpha x + beta is
  // one FMA here, a multiply and an add in the reference: they differ by an ulp of beta.
  const UnaryCase cases[] = {
      {UnaryOp::kRelu, {}, 0, 0},
      {UnaryOp::kLeakyRelu, {0.1f, 0}, 0, 0},
      {UnaryOp::kSigmoid, {}, 4, 0},
      {UnaryOp::kTanh, {}, 2, 0},
      {UnaryOp::kErf, {}, 3, 0},
      {UnaryOp::kGeluErf, {}, 4, 4e-7f},
      {UnaryOp::kGeluTanh, {}, 4, 4e-7f},
      {UnaryOp::kHardSigmoid, {0.3f, 0.4f}, 1, 6e-8f},
      {UnaryOp::kHardSwish, {}, 0, 0},
      {UnaryOp::kClip, {-1.5f, 2.5f}, 0, 0},
      {UnaryOp::kSwish, {1.0f, 0}, 4, 0},
      {UnaryOp::kSwish, {0.7f, 0}, 4, 0},
      {UnaryOp::kExp, {}, 2, 0},
      {UnaryOp::kSqrt, {}, 0, 0},
      {UnaryOp::kNeg, {}, 0, 0},
      {UnaryOp::kAbs, {}, 0, 0},
      {UnaryOp::kReciprocal, {}, 0, 0},
  };
  std::mt19937 rng(1);
  for (int64_t n : {0, 1, 15, 17, 1023, 140001}) {  // the last: two threads, when there are
    const Tensor x = test_input(n, rng);
    for (const UnaryCase& c : cases) {
      SCOPED_TRACE(std::string(unary_name(c.op)) + " n=" + std::to_string(n));
      const Tensor want = reference_unary(c, x);
      Tensor got(DataType::kFloat, x.dims());
      unary(c.op, x.data<float>(), got.data<float>(), n, c.params);
      EXPECT_TRUE(tensors_near(got, want, c.max_ulp, c.abs_tol));
      // In place gives the same.
      Tensor inplace = x.clone();
      unary(c.op, inplace.data<float>(), inplace.data<float>(), n, c.params);
      EXPECT_TRUE(tensors_near(inplace, got, 0));
    }
  }
}

TEST_P(CpuElementwise, DefaultParamsAreOnnxDefaults) {
  std::mt19937 rng(2);
  const Tensor x = test_input(1023, rng);
  for (UnaryOp op : {UnaryOp::kLeakyRelu, UnaryOp::kHardSigmoid, UnaryOp::kSwish, UnaryOp::kClip}) {
    SCOPED_TRACE(unary_name(op));
    Tensor got(DataType::kFloat, x.dims());
    unary(op, x.data<float>(), got.data<float>(), x.numel());
    const Tensor want = op == UnaryOp::kSwish ? ReferenceOp("Swish", 24).run1({x})
                        : op == UnaryOp::kClip ? ReferenceOp("Clip").run1({x})
                                               : ReferenceOp(unary_name(op)).run1({x});
    const bool exact = op == UnaryOp::kClip || op == UnaryOp::kLeakyRelu;
    EXPECT_TRUE(tensors_near(got, want, exact ? 0 : 4, exact ? 0.0f : 6e-8f));
  }
}

struct BroadcastCase {
  std::vector<int64_t> a, b;
};

Tensor reference_binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  return ReferenceOp(binary_name(op)).run1({a, b});
}

TEST_P(CpuElementwise, BinaryOpsMatchTheReferenceOnEveryBroadcast) {
  const BroadcastCase cases[] = {
      {{17}, {17}},                          // same shape
      {{3, 1023}, {3, 1023}},
      {{5, 7}, {}},                          // scalar, both sides
      {{}, {5, 7}},
      {{1}, {4, 3}},
      {{4, 17}, {17}},                       // row broadcast
      {{4, 17}, {4, 1}},                     // column broadcast
      {{2, 3, 5, 7}, {1, 3, 1, 1}},          // NCHW channel bias
      {{2, 3, 5, 7}, {3, 1, 1}},
      {{2, 5, 7, 3}, {3}},                   // NHWC channel bias (short rows, tiled)
      {{1, 56, 56, 64}, {64}},
      {{2, 4, 5, 7, 16}, {4, 1, 1, 16}},     // blocks of 16 channels (nChw16c)
      {{16}, {3, 35, 16}},                   // the short operand first
      {{5, 1}, {1, 6}},                      // outer product
      {{2, 1, 4, 1, 3}, {1, 3, 1, 5, 3}},    // general
      {{1, 15}, {15, 1}},
      {{0, 5}, {5}},                         // zero-size
      {{3, 0}, {1}},
      {{1, 1}, {1}},                         // one element
      {{256, 1024}, {1024}},                 // threaded
      {{64, 2048}, {64, 1}},
  };
  std::mt19937 rng(3);
  for (const BroadcastCase& c : cases) {
    Tensor a = random_tensor(c.a, rng), b = random_tensor(c.b, rng);
    // Special values where there is room (NaN, infinities, signed zeros).
    const std::vector<float> sp = special_floats();
    if (a.numel() >= 17)
      for (size_t k = 0; k < sp.size(); ++k) a.data<float>()[(k * 31) % a.numel()] = sp[k];
    if (b.numel() >= 17)
      for (size_t k = 0; k < sp.size(); ++k) b.data<float>()[(k * 13 + 5) % b.numel()] = sp[k];
    for (int o = 0; o < static_cast<int>(BinaryOp::kCount); ++o) {
      const BinaryOp op = static_cast<BinaryOp>(o);
      SCOPED_TRACE(std::string(binary_name(op)) + " " + dims_to_string(c.a) + " " +
                   dims_to_string(c.b));
      const Tensor want = reference_binary(op, a, b);
      Tensor got(DataType::kFloat, want.dims());
      binary_broadcast(op, a.data<float>(), c.a, b.data<float>(), c.b, got.data<float>());
      EXPECT_TRUE(tensors_near(got, want, 0));
    }
  }
}

TEST_P(CpuElementwise, RandomBroadcastShapes) {
  std::mt19937 rng(11);
  for (int t = 0; t < 300; ++t) {
    const std::vector<int64_t> out = random_dims(rng, 5, 9);
    std::vector<int64_t> ad = random_broadcast_operand(out, rng);
    std::vector<int64_t> bd = random_broadcast_operand(out, rng);
    if (rng() % 2) ad = out;  // often one side is the whole output
    const Tensor a = random_tensor(ad, rng), b = random_tensor(bd, rng);
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kDiv, BinaryOp::kMax}) {
      SCOPED_TRACE(std::string(binary_name(op)) + " " + dims_to_string(ad) + " " + dims_to_string(bd));
      const Tensor want = reference_binary(op, a, b);
      Tensor got(DataType::kFloat, want.dims());
      binary_broadcast(op, a.data<float>(), ad, b.data<float>(), bd, got.data<float>());
      ASSERT_TRUE(tensors_near(got, want, 0));
    }
  }
}

TEST_P(CpuElementwise, PowFastPathsMatchTheCLibrary) {
  std::mt19937 rng(4);
  const Tensor x = test_input(1023, rng);
  for (float e : {2.0f, 1.0f, 3.0f, 0.5f, -1.0f}) {
    SCOPED_TRACE(e);
    const Tensor want = reference_binary(BinaryOp::kPow, x, scalar_tensor(e));
    Tensor got(DataType::kFloat, x.dims());
    binary_scalar(BinaryOp::kPow, x.data<float>(), e, got.data<float>(), x.numel());
    EXPECT_TRUE(tensors_near(got, want, 0));
    scalar_binary(BinaryOp::kPow, e, x.data<float>(), got.data<float>(), x.numel());
    EXPECT_TRUE(tensors_near(got, reference_binary(BinaryOp::kPow, scalar_tensor(e), x), 0));
  }
}

// Max and Min follow the reference to the bit: NaN wins, and signed zeros keep the first operand
// unless the second is strictly larger (smaller).
TEST_P(CpuElementwise, MaxMinKeepNaNAndTheSignOfZero) {
  const float nan = std::nanf("");
  const std::vector<float> a = {-0.0f, 0.0f, nan, 1.0f, nan, -0.0f};
  const std::vector<float> b = {0.0f, -0.0f, 1.0f, nan, nan, -0.0f};
  for (BinaryOp op : {BinaryOp::kMax, BinaryOp::kMin}) {
    Tensor ta(DataType::kFloat, {6}), tb(DataType::kFloat, {6});
    std::copy(a.begin(), a.end(), ta.data<float>());
    std::copy(b.begin(), b.end(), tb.data<float>());
    const Tensor want = reference_binary(op, ta, tb);
    std::vector<float> got(6);
    binary(op, a.data(), b.data(), got.data(), 6);
    for (int i = 0; i < 6; ++i) {
      SCOPED_TRACE(std::string(binary_name(op)) + " element " + std::to_string(i));
      EXPECT_EQ(std::isnan(got[i]), std::isnan(want.data<float>()[i]));
      if (!std::isnan(got[i])) {
        EXPECT_EQ(got[i], want.data<float>()[i]);
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want.data<float>()[i]));
      }
    }
  }
}

TEST_P(CpuElementwise, BroadcastWritesInPlaceIntoTheFullInput) {
  std::mt19937 rng(5);
  const Tensor a = random_tensor({64, 33}, rng), b = random_tensor({33}, rng);
  const Tensor want = reference_binary(BinaryOp::kSub, a, b);
  Tensor y = a.clone();
  const std::vector<int64_t> ad = {64, 33}, bd = {33};
  binary_broadcast(BinaryOp::kSub, y.data<float>(), ad, b.data<float>(), bd, y.data<float>());
  EXPECT_TRUE(tensors_near(y, want, 0));
}

// Runs sharing a scale, of lengths that are and are not whole registers, in place too.
TEST_P(CpuElementwise, ScaleRunsOfOneScaleEach) {
  const float scales[] = {2.f, -0.5f, 0.f, 3.f};
  for (int64_t len : {1, 9, 16, 32, 35}) {
    SCOPED_TRACE("run length " + std::to_string(len));
    const int64_t runs = 300;
    std::vector<int32_t> index(runs);
    std::vector<float> x(runs * len), y(x.size());
    for (int64_t r = 0; r < runs; ++r) index[r] = static_cast<int32_t>((r * 7) % 4);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) - 6.f;
    scale_runs(x.data(), scales, index.data(), y.data(), runs, len);
    for (int64_t r = 0; r < runs; ++r)
      for (int64_t j = 0; j < len; ++j)
        ASSERT_EQ(y[r * len + j], x[r * len + j] * scales[index[r]]) << "run " << r << " at " << j;
    scale_runs(x.data(), scales, index.data(), x.data(), runs, len);
    EXPECT_EQ(x, y);
  }
}

KILN_INSTANTIATE_FOR_ISAS(CpuElementwise);

}  // namespace
}  // namespace kiln::cpu
