// Unit tests of the nn family: kernels against naive loops, symbolic shape inference, bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/scalar_types.h"
#include "ops/op.h"
#include "ops/op_test_util.h"
#include "support/error.h"

namespace kiln {
namespace {

using op_test::OpNode;
using op_test::make;

Dim sym(const std::string& s) { return Dim::symbol(s); }
TypeInfo ft(Shape s) { return TypeInfo::tensor(DataType::kFloat, std::move(s)); }

Tensor random_f32(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t(DataType::kFloat, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}


// Naive 2-D convolution: every output element computed on its own.
std::vector<float> naive_conv2d(const Tensor& x, const Tensor& w, int64_t G, int64_t sh, int64_t sw,
                                int64_t dh, int64_t dw, int64_t pt, int64_t pl, int64_t OH,
                                int64_t OW) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t M = w.dim(0), KH = w.dim(2), KW = w.dim(3), Cg = C / G, Mg = M / G;
  std::vector<float> y(N * M * OH * OW, 0.0f);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = 0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const int64_t ic = (m / Mg) * Cg + c;
                s += double(x.data<float>()[((n * C + ic) * H + ih) * W + iw]) *
                     w.data<float>()[((m * Cg + c) * KH + kh) * KW + kw];
              }
          y[((n * M + m) * OH + oh) * OW + ow] = static_cast<float>(s);
        }
  return y;
}

TEST(NnConv, MatchesNaiveWithGroupsStridesDilationsPads) {
  OpNode c("Conv", 2);
  c.attr_i("group", 2).attr_is("strides", {2, 1}).attr_is("dilations", {1, 2});
  c.attr_is("pads", {1, 0, 2, 3});
  Tensor x = random_f32({2, 4, 9, 8}, 1), w = random_f32({6, 2, 3, 2}, 2);
  Tensor y = c.run({x, w});
  // H: (9 + 3 - 3) / 2 + 1 = 5; W: (8 + 3 - 3) / 1 + 1 = 9
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{2, 6, 5, 9}));
  auto ref = naive_conv2d(x, w, 2, 2, 1, 1, 2, 1, 0, 5, 9);
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_NEAR(y.data<float>()[i], ref[i], 1e-5) << i;
}

TEST(NnConv, SameUpperAndBias) {
  OpNode c("Conv", 3);
  c.attr_s("auto_pad", "SAME_UPPER").attr_is("strides", {2, 2});
  Tensor x = random_f32({1, 3, 7, 6}, 3), w = random_f32({4, 3, 4, 4}, 4);
  Tensor b = make(DataType::kFloat, {4}, {1, 2, 3, 4});
  Tensor y = c.run({x, w, b});
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 4, 4, 3}));
  // total pads: H (4-1)*2+4-7 = 3 -> 1 top, 2 bottom; W (3-1)*2+4-6 = 2 -> 1 left
  auto ref = naive_conv2d(x, w, 1, 2, 2, 1, 1, 1, 1, 4, 3);
  for (int64_t i = 0; i < y.numel(); ++i)
    EXPECT_NEAR(y.data<float>()[i], ref[i] + (i / 12) + 1, 1e-5) << i;
}

TEST(NnConv, OneDAndFloat16) {
  OpNode c("Conv", 2);
  Tensor x(DataType::kFloat16, {1, 1, 5});
  for (int i = 0; i < 5; ++i) x.data<Half>()[i] = Half(float(i + 1));
  Tensor w(DataType::kFloat16, {1, 1, 2});
  w.data<Half>()[0] = Half(1.0f);
  w.data<Half>()[1] = Half(-1.0f);
  Tensor y = c.run({x, w});
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 4}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(float(y.data<Half>()[i]), -1.0f);
}

TEST(NnConv, ChannelMismatchIsAnError) {
  OpNode c("Conv", 2);
  try {
    c.run({random_f32({1, 3, 5, 5}, 1), random_f32({2, 2, 3, 3}, 2)});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
  }
  OpNode small("Conv", 2);
  EXPECT_THROW(small.run({random_f32({1, 1, 2, 2}, 1), random_f32({1, 1, 3, 3}, 2)}), Error);
}

TEST(NnConv, SymbolicShapeInference) {
  OpNode c("Conv", 2);
  c.attr_is("strides", {2, 2}).attr_is("pads", {3, 3, 3, 3});
  auto out = c.infer({ft({sym("batch"), 3, sym("H"), 224}), ft({64, 3, 7, 7})});
  ASSERT_TRUE(out[0] && out[0]->shape);
  const Shape& s = *out[0]->shape;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].to_string(), "batch");
  EXPECT_EQ(s[1].value(), 64);
  EXPECT_TRUE(s[2].is_symbolic());
  EXPECT_EQ(s[3].value(), 112);
  // stride 1, SAME: the spatial symbols pass through
  OpNode same("Conv", 2);
  same.attr_s("auto_pad", "SAME_LOWER");
  auto o2 = same.infer({ft({sym("N"), 8, sym("H"), sym("W")}), ft({16, 8, 3, 3})});
  EXPECT_EQ(shape_to_string(*o2[0]->shape), "[N,16,H,W]");
  // unknown rank stays unknown, never fails
  auto o3 = same.infer({TypeInfo::tensor(DataType::kFloat), TypeInfo::tensor(DataType::kFloat)});
  ASSERT_TRUE(o3[0]);
  EXPECT_FALSE(o3[0]->shape);
}

TEST(NnConvTranspose, MatchesScatterDefinition) {
  OpNode c("ConvTranspose", 2);
  c.attr_is("strides", {2, 3}).attr_is("pads", {1, 0, 0, 1}).attr_is("output_padding", {1, 0});
  c.attr_i("group", 2);
  Tensor x = random_f32({1, 4, 3, 2}, 5), w = random_f32({4, 1, 3, 2}, 6);
  Tensor y = c.run({x, w});
  // H: 2*(3-1) + 1 + 3 - 1 = 7; W: 3*(2-1) + 0 + 2 - 1 = 4
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 2, 7, 4}));
  std::vector<double> ref(y.numel(), 0.0);
  for (int64_t ic = 0; ic < 4; ++ic)
    for (int64_t ih = 0; ih < 3; ++ih)
      for (int64_t iw = 0; iw < 2; ++iw)
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 2; ++kw) {
            const int64_t oc = ic / 2, oh = ih * 2 - 1 + kh, ow = iw * 3 + kw;
            if (oh < 0 || oh >= 7 || ow < 0 || ow >= 4) continue;
            ref[(oc * 7 + oh) * 4 + ow] += double(x.data<float>()[(ic * 3 + ih) * 2 + iw]) *
                                           w.data<float>()[(ic * 3 + kh) * 2 + kw];
          }
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_NEAR(y.data<float>()[i], ref[i], 1e-5) << i;
  auto out = c.infer({ft({sym("b"), 4, sym("h"), 2}), ft({4, 1, 3, 2})});
  const Shape& s = *out[0]->shape;
  EXPECT_EQ(s[0].to_string(), "b");
  EXPECT_EQ(s[1].value(), 2);
  EXPECT_TRUE(s[2].is_symbolic());
  EXPECT_EQ(s[3].value(), 4);
}

TEST(NnPool, MaxPoolCeilModeAndIndices) {
  OpNode p("MaxPool", 1, 2, 22);
  p.attr_is("kernel_shape", {2, 2}).attr_is("strides", {2, 2}).attr_i("ceil_mode", 1);
  std::vector<double> v(25);
  for (int i = 0; i < 25; ++i) v[i] = (i * 7) % 11;
  auto outs = p.run_all({make(DataType::kFloat, {1, 1, 5, 5}, v)});
  const Tensor& y = outs[0];
  const Tensor& idx = outs[1];
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 3, 3}));
  for (int oh = 0; oh < 3; ++oh)
    for (int ow = 0; ow < 3; ++ow) {
      double best = -1;
      int64_t bi = -1;
      for (int h = oh * 2; h < std::min(5, oh * 2 + 2); ++h)
        for (int w = ow * 2; w < std::min(5, ow * 2 + 2); ++w)
          if (v[h * 5 + w] > best) {
            best = v[h * 5 + w];
            bi = h * 5 + w;
          }
      EXPECT_EQ(y.data<float>()[oh * 3 + ow], best);
      EXPECT_EQ(idx.data<int64_t>()[oh * 3 + ow], bi);
    }
}

TEST(NnPool, AveragePoolExcludesPadsByDefault) {
  OpNode p("AveragePool", 1);
  p.attr_is("kernel_shape", {3}).attr_is("pads", {1, 1});
  Tensor y = p.run({make(DataType::kFloat, {1, 1, 3}, {3, 6, 9})});
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 3}));
  EXPECT_FLOAT_EQ(y.data<float>()[0], 4.5f);
  EXPECT_FLOAT_EQ(y.data<float>()[1], 6.0f);
  EXPECT_FLOAT_EQ(y.data<float>()[2], 7.5f);
  OpNode q("AveragePool", 1);
  q.attr_is("kernel_shape", {3}).attr_is("pads", {1, 1}).attr_i("count_include_pad", 1);
  Tensor z = q.run({make(DataType::kFloat, {1, 1, 3}, {3, 6, 9})});
  EXPECT_FLOAT_EQ(z.data<float>()[0], 3.0f);
}

TEST(NnPool, SymbolicBatchPassesThrough) {
  OpNode p("MaxPool", 1);
  p.attr_is("kernel_shape", {3, 3}).attr_is("strides", {2, 2}).attr_is("pads", {1, 1, 1, 1});
  auto out = p.infer({ft({sym("N"), 64, 112, sym("W")})});
  const Shape& s = *out[0]->shape;
  EXPECT_EQ(s[0].to_string(), "N");
  EXPECT_EQ(s[2].value(), 56);
  EXPECT_TRUE(s[3].is_symbolic());
  OpNode g("GlobalAveragePool", 1);
  auto o2 = g.infer({ft({sym("N"), 2048, 7, 7})});
  EXPECT_EQ(shape_to_string(*o2[0]->shape), "[N,2048,1,1]");
}

TEST(NnMatMul, BroadcastAndOneD) {
  OpNode m("MatMul", 2);
  Tensor a = random_f32({3, 1, 2, 4}, 7), b = random_f32({5, 4, 3}, 8);
  Tensor y = m.run({a, b});
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{3, 5, 2, 3}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) {
          double s = 0;
          for (int k = 0; k < 4; ++k)
            s += double(a.data<float>()[(i * 2 + r) * 4 + k]) * b.data<float>()[(j * 4 + k) * 3 + c];
          EXPECT_NEAR(y.data<float>()[((i * 5 + j) * 2 + r) * 3 + c], s, 1e-5);
        }
  OpNode v("MatMul", 2);
  Tensor d = v.run({make(DataType::kInt32, {3}, {1, 2, 3}), make(DataType::kInt32, {3}, {4, 5, 6})});
  EXPECT_EQ(d.rank(), 0);
  EXPECT_EQ(d.data<int32_t>()[0], 32);
  auto out = m.infer({ft({sym("batch"), sym("seq"), 768}), ft({768, 3072})});
  EXPECT_EQ(shape_to_string(*out[0]->shape), "[batch,seq,3072]");
  EXPECT_THROW(m.infer({ft({2, 3}), ft({4, 5})}), Error);
}

TEST(NnGemm, TransposesAlphaBetaAndBias) {
  OpNode g("Gemm", 3);
  g.attr_i("transA", 1).attr_i("transB", 1);
  Attribute al;
  al.name = "alpha";
  al.kind = AttrKind::kFloat;
  al.f = 2.0f;
  g.n->attrs.push_back(al);
  Tensor a = make(DataType::kFloat, {2, 1}, {1, 2});      // A' = [[1, 2]]
  Tensor b = make(DataType::kFloat, {2, 2}, {1, 2, 3, 4});  // B' = [[1, 3], [2, 4]]
  Tensor c = make(DataType::kFloat, {2}, {10, 20});
  Tensor y = g.run({a, b, c});
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_FLOAT_EQ(y.data<float>()[0], 2 * 5 + 10);
  EXPECT_FLOAT_EQ(y.data<float>()[1], 2 * 11 + 20);
}

TEST(NnEinsum, ImplicitOutputDiagonalAndEllipsis) {
  OpNode e("Einsum", 1);
  e.attr_s("equation", "ii");
  Tensor t = e.run({make(DataType::kFloat, {2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(t.rank(), 0);
  EXPECT_FLOAT_EQ(t.data<float>()[0], 5.0f);
  OpNode f("Einsum", 2);
  f.attr_s("equation", "...ij,...jk");
  Tensor a = random_f32({2, 2, 3}, 9), b = random_f32({3, 4}, 10);
  Tensor y = f.run({a, b});
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{2, 2, 4}));
  OpNode m("MatMul", 2);
  Tensor ref = m.run({a, b});
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_NEAR(y.data<float>()[i], ref.data<float>()[i], 1e-5);
  OpNode g("Einsum", 1);
  g.attr_s("equation", "ba");  // implicit output sorted: "ab" = transpose
  Tensor tr = g.run({make(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(tr.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_FLOAT_EQ(tr.data<float>()[1], 4.0f);
  OpNode bad("Einsum", 2);
  bad.attr_s("equation", "ij,jk->ik");
  EXPECT_THROW(bad.run({random_f32({2, 3}, 1), random_f32({4, 2}, 2)}), Error);
}

TEST(NnQuant, RoundsHalfToEvenAndSaturates) {
  OpNode q("QuantizeLinear", 3);
  Tensor x = make(DataType::kFloat, {6}, {0.5, 1.5, 2.5, -0.5, 1000, -1000});
  Tensor s = make(DataType::kFloat, {}, {1});
  Tensor z = make(DataType::kInt8, {}, {0});
  Tensor y = q.run({x, s, z});
  ASSERT_EQ(y.dtype(), DataType::kInt8);
  const std::vector<int> want{0, 2, 2, 0, 127, -128};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data<int8_t>()[i], want[i]) << i;
  OpNode q4("QuantizeLinear", 3);
  Tensor y4 = q4.run({make(DataType::kFloat, {3}, {-20, 3, 20}), s,
                      make(DataType::kInt4, {}, {0})});
  ASSERT_EQ(y4.dtype(), DataType::kInt4);
  EXPECT_EQ(int64_t(y4.data<Int4>()[0]), -8);
  EXPECT_EQ(int64_t(y4.data<Int4>()[1]), 3);
  EXPECT_EQ(int64_t(y4.data<Int4>()[2]), 7);
  OpNode d("DequantizeLinear", 3);
  d.attr_i("axis", 0);
  Tensor dq = d.run({make(DataType::kUInt8, {2, 2}, {10, 20, 30, 40}),
                     make(DataType::kFloat, {2}, {0.5, 2}), make(DataType::kUInt8, {2}, {10, 0})});
  EXPECT_FLOAT_EQ(dq.data<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(dq.data<float>()[1], 5.0f);
  EXPECT_FLOAT_EQ(dq.data<float>()[3], 80.0f);
  OpNode wrong("DequantizeLinear", 2);
  wrong.attr_i("axis", 0);
  EXPECT_THROW(wrong.run({make(DataType::kUInt8, {2, 2}, {1, 2, 3, 4}),
                          make(DataType::kFloat, {3}, {1, 1, 1})}),
               Error);
}

TEST(NnAttention, SymbolicKvCacheShapes) {
  OpNode a("Attention", 6, 3, 23);
  auto out = a.infer({ft({sym("B"), 8, sym("S"), 64}), ft({sym("B"), 2, sym("S"), 64}),
                      ft({sym("B"), 2, sym("S"), 32}), TypeInfo{},
                      ft({sym("B"), 2, sym("P"), 64}), ft({sym("B"), 2, sym("P"), 32})});
  EXPECT_EQ(shape_to_string(*out[0]->shape), "[B,8,S,32]");
  EXPECT_EQ(shape_to_string(*out[1]->shape), "[B,2,P+S,64]");
  EXPECT_EQ(shape_to_string(*out[2]->shape), "[B,2,P+S,32]");
}

TEST(NnAttention, FullyMaskedRowGivesZeros) {
  OpNode a("Attention", 4, 1, 23);
  Tensor q = random_f32({1, 1, 2, 4}, 11), k = random_f32({1, 1, 3, 4}, 12);
  Tensor v = random_f32({1, 1, 3, 4}, 13);
  Tensor m(DataType::kBool, {2, 3});
  m.data<bool>()[0] = true;  // row 0 sees key 0 only; row 1 sees nothing
  Tensor y = a.run({q, k, v, m});
  for (int d = 0; d < 4; ++d) {
    EXPECT_NEAR(y.data<float>()[d], v.data<float>()[d], 1e-6);
    EXPECT_EQ(y.data<float>()[4 + d], 0.0f);
  }
}

TEST(NnDet, TwoByTwoAndSingular) {
  OpNode d("Det", 1);
  Tensor y = d.run({make(DataType::kFloat, {2, 2, 2}, {1, 2, 3, 4, 2, 4, 1, 2})});
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{2}));
  EXPECT_NEAR(y.data<float>()[0], -2.0f, 1e-6);
  EXPECT_NEAR(y.data<float>()[1], 0.0f, 1e-6);
}


// Random (often invalid) window attributes and shapes: every run either succeeds with the
// output shape inference predicts, or fails with a kiln::Error; never crashes.
TEST(NnFuzz, WindowOpsSucceedOrFailCleanly) {
  std::mt19937 rng(1234);
  auto ri = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* ops[] = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"};
  const char* pads[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  for (int it = 0; it < 400; ++it) {
    const std::string op = ops[ri(0, 4)];
    const bool conv = op == "Conv" || op == "ConvTranspose";
    const int nsp = ri(1, 3);
    OpNode nd(op, conv ? 2 : 1, op == "MaxPool" ? 2 : 1, 22);
    std::vector<int64_t> k(nsp), st(nsp), dl(nsp), pd(2 * nsp), xd{ri(0, 2), ri(1, 4)};
    for (int i = 0; i < nsp; ++i) {
      k[i] = ri(1, 4);
      st[i] = ri(1, 3);
      dl[i] = ri(1, 2);
      pd[i] = ri(0, 3);
      pd[i + nsp] = ri(0, 3);
      xd.push_back(ri(1, 7));
    }
    if (ri(0, 1)) nd.attr_s("auto_pad", pads[ri(0, 3)]);
    nd.attr_is("strides", st).attr_is("dilations", dl);
    if (ri(0, 3)) nd.attr_is("pads", pd);
    if (!conv || ri(0, 1)) nd.attr_is("kernel_shape", k);
    if (!conv && ri(0, 1)) nd.attr_i("ceil_mode", 1);
    if (op == "AveragePool" && ri(0, 1)) nd.attr_i("count_include_pad", 1);
    std::vector<Tensor> in{random_f32(xd, it)};
    std::vector<std::optional<TypeInfo>> types{ft(shape_of(xd))};
    if (conv) {
      const int64_t g = ri(1, 2);
      nd.attr_i("group", g);
      std::vector<int64_t> wd;
      if (op == "Conv") wd = {ri(1, 4) * g, std::max<int64_t>(xd[1] / g, 1)};
      else wd = {xd[1], ri(1, 3)};
      for (int i = 0; i < nsp; ++i) wd.push_back(k[i]);
      in.push_back(random_f32(wd, it + 1000));
      types.push_back(ft(shape_of(wd)));
    }
    std::optional<Shape> inferred;
    bool infer_ok = true;
    try {
      auto o = nd.infer(types);
      if (o[0]) inferred = o[0]->shape;
    } catch (const Error&) {
      infer_ok = false;
    }
    try {
      Tensor y = nd.run(in);
      if (infer_ok && inferred) {
        ASSERT_TRUE(known_dims(*inferred)) << op << " it " << it;
        EXPECT_EQ(*known_dims(*inferred), y.dims()) << op << " it " << it;
      }
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace kiln
