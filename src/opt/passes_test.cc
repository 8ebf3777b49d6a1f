// Each pass on a small graph: the expected graph comes out, every pass leaves a valid model, and
// the optimized model (saved and loaded again) computes what the original did.
#include <gtest/gtest.h>

#include <algorithm>

#include "opt/bisect.h"
#include "opt/opt_test_util.h"
#include "support/error.h"

namespace kiln::opt {
namespace {

using namespace test_util;  // NOLINT: the shared test helpers

TEST(OptFold, ShapeOfStaticTensorAndConstantArithmetic) {
  auto o = optimize_text(model(17, "(float[2,6] x) => (float[3,4] y)", R"(
      s = Shape(x)
      a = Constant <value = int64[2] {3, 2}> ()
      b = Constant <value = int64[2] {0, 2}> ()
      t = Add(a, b)
      y = Reshape(x, t)
  )"), {"fold-constants", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Reshape", 1}}));
  EXPECT_GT(o.result.rewrites.size(), 0u);
}

TEST(OptFold, RandomOpsAreNotFolded) {
  auto o = optimize_text(model(17, "(float[2] x) => (float[2] y)", R"(
      r = RandomUniform <shape = [2]> ()
      z = Mul(r, x)
      y = Sub(z, z)
  )"), {"fold-constants"});
  EXPECT_EQ(o.ops.at("RandomUniform"), 1);
}

TEST(OptSimplifyShapes, ComputedReshapeTargetBecomesConstant) {
  auto o = optimize_text(model(17, "(float[N,24] x) => (float[N,4,6] y)", R"(
      s = Shape(x)
      i = Constant <value = int64[1] {0}> ()
      n = Gather(s, i)
      tail = Constant <value = int64[2] {4, 6}> ()
      t = Concat <axis = 0> (n, tail)
      y = Reshape(x, t)
  )"), {"simplify-shapes", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Reshape", 1}}));
  const Node& r = *o.model.graph->nodes()[0];
  EXPECT_EQ(r.inputs[1]->data.to_int64s(), (std::vector<int64_t>{0, 4, 6}));
}

TEST(OptCleanup, DeadNodesUnusedInitializersAndDuplicates) {
  auto o = optimize_text(model(17, "(float[4] x, float[4] unused) => (float[4] y)", R"(
      dead = Exp(x)
      a = Relu(x)
      b = Relu(x)
      c1 = Constant <value = float[4] {1, 2, 3, 4}> ()
      c2 = Constant <value = float[4] {1, 2, 3, 4}> ()
      p = Mul(a, c1)
      q = Mul(b, c2)
      y = Add(p, q)
  )"), {"fold-constants", "dedupe-initializers", "cse", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Add", 1}, {"Mul", 1}, {"Relu", 1}}));
  EXPECT_EQ(o.model.graph->initializers.size(), 1u);
  EXPECT_EQ(o.model.graph->inputs.size(), 2u);  // inputs are the model's interface
  EXPECT_TRUE(near_missed(o.result, "dce", "interface"));
}

TEST(OptNoops, IdentityDropoutUnitsAndIdempotentOps) {
  auto o = optimize_text(model(17, "(float[2,3] x) => (float[2,3] y)", R"(
      a = Identity(x)
      b = Dropout(a)
      one = Constant <value = float[1] {1}> ()
      zero = Constant <value = float {0}> ()
      c = Mul(b, one)
      d = Add(c, zero)
      e = Transpose <perm = [0, 1]> (d)
      f = Relu(e)
      y = Relu(f)
  )"), {"eliminate-noops", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Relu", 1}}));
  EXPECT_EQ(o.model.graph->outputs[0]->name, "y");  // the output keeps its name
}

TEST(OptNoops, TrainingModeDropoutOfRatioZeroOnly) {
  auto o = optimize_text(model(17, "(float[2,3] x) => (float[2,3] y)", R"(
      zero = Constant <value = float {0}> ()
      on = Constant <value = bool {1}> ()
      a = Dropout(x, zero, on)
      y = Relu(a)
  )"), {"eliminate-noops", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Relu", 1}}));
  // One that drops half stays (no verification here: its output is random).
  Model m = load_text(model(17, "(float[2,3] x) => (float[2,3] y)", R"(
      half = Constant <value = float {0.5}> ()
      on = Constant <value = bool {1}> ()
      y = Dropout(x, half, on)
  )"));
  optimize(m, {"eliminate-noops"}, {});
  EXPECT_EQ(model_stats(m).ops.at("Dropout"), 1);
}

TEST(OptNoops, OutputFedByAnInputIsKept) {
  auto o = optimize_text(model(17, "(float[2] x) => (float[2] y)", "y = Identity(x)"),
                         {"eliminate-noops"});
  EXPECT_EQ(o.ops.at("Identity"), 1);
  EXPECT_TRUE(near_missed(o.result, "eliminate-noops", "graph output"));
}

TEST(OptChains, TransposesReshapesUnsqueezesConcats) {
  auto o = optimize_text(model(17, "(float[2,3,4] x, float[2,3,4] z) => (float[4,2,3] t2, float[6,4] r2, float[1,2,1,3,4] u2, float[8,3,4] c2)", R"(
      t1 = Transpose <perm = [1, 2, 0]> (x)
      t2 = Transpose <perm = [1, 2, 0]> (t1)
      s1 = Constant <value = int64[2] {3, 8}> ()
      r1 = Reshape(x, s1)
      s2 = Constant <value = int64[2] {6, 4}> ()
      r2 = Reshape(r1, s2)
      a0 = Constant <value = int64[1] {0}> ()
      u1 = Unsqueeze(x, a0)
      a2 = Constant <value = int64[1] {2}> ()
      u2 = Unsqueeze(u1, a2)
      c1 = Concat <axis = 0> (x, z)
      c2 = Concat <axis = 0> (c1, x, z)
  )"), {"merge-chains", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{
                       {"Transpose", 1}, {"Reshape", 1}, {"Unsqueeze", 1}, {"Concat", 1}}));
}

TEST(OptChains, SlicesOnDisjointAndSharedAxesMerge) {
  auto o = optimize_text(model(17, "(float[6,8,5] x) => (float[2,2,5] y)", R"(
      s1 = Constant <value = int64[2] {1, -7}> ()
      e1 = Constant <value = int64[2] {5, 100}> ()
      a1 = Constant <value = int64[2] {0, 1}> ()
      m = Slice(x, s1, e1, a1)
      s2 = Constant <value = int64[2] {-3, 2}> ()
      e2 = Constant <value = int64[2] {-1, 4}> ()
      a2 = Constant <value = int64[2] {0, -2}> ()
      y = Slice(m, s2, e2, a2)
  )"), {"merge-chains", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Slice", 1}}));
}

TEST(OptChains, SlicesWithStepsOnOneAxisAreANearMiss) {
  auto o = optimize_text(model(17, "(float[8] x) => (float[2] y)", R"(
      s = Constant <value = int64[1] {0}> ()
      e = Constant <value = int64[1] {8}> ()
      a = Constant <value = int64[1] {0}> ()
      t = Constant <value = int64[1] {2}> ()
      m = Slice(x, s, e, a, t)
      s2 = Constant <value = int64[1] {1}> ()
      e2 = Constant <value = int64[1] {3}> ()
      y = Slice(m, s2, e2, a)
  )"), {"merge-chains", "dce"});
  EXPECT_EQ(o.ops.at("Slice"), 2);
  EXPECT_TRUE(near_missed(o.result, "merge-chains", "step"));
}

TEST(OptChains, CastThroughAWiderTypeMergesAndThroughANarrowerOneStays) {
  auto o = optimize_text(model(17, "(float[4] x, int8[4] i) => (float[4] y, float[4] z, double[4] w)", R"(
      e = Neg(x)
      d = Cast <to = 11> (e)
      y = Cast <to = 1> (d)
      n = Cast <to = 6> (x)
      z = Cast <to = 1> (n)
      h = Cast <to = 10> (i)
      w = Cast <to = 11> (h)
  )"), {"merge-chains", "eliminate-noops", "dce"});
  // float->double->float is the Neg itself, float->int32->float truncates and stays,
  // int8->float16->double is int8->double.
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Neg", 1}, {"Cast", 3}}));
  EXPECT_TRUE(near_missed(o.result, "merge-chains", "int32 does not hold every float value"));
}

TEST(OptLinearAffine, PerColumnMulAndAddFoldIntoGemmAndMulIntoMatMul) {
  auto o = optimize_text(
      model(17, "(float[3,4] x, float[2,3,4] z) => (float[3,5] y, float[2,3,5] u)",
            fmt::format(R"(
      w = Constant <value = {}> ()
      c = Constant <value = {}> ()
      g = Gemm <transB = 1, beta = 0.5> (x, w, c)
      k = Constant <value = {}> ()
      gm = Mul(g, k)
      t = Constant <value = {}> ()
      y = Add(t, gm)
      v = Constant <value = {}> ()
      mm = MatMul(z, v)
      u = Mul(mm, k)
  )",
                        literal({5, 4}, 15), literal({5}, 16), literal({1, 5}, 17),
                        literal({5}, 18), literal({4, 5}, 19))),
      {"fuse-linear-affine", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Gemm", 1}, {"MatMul", 1}}));
}

TEST(OptLinearAffine, AddAfterGemmWithoutCBecomesC) {
  auto o = optimize_text(
      model(17, "(float[3,4] x) => (float[3,5] y)",
            fmt::format(R"(
      w = Constant <value = {}> ()
      g = Gemm(x, w)
      t = Constant <value = {}> ()
      y = Add(g, t)
  )",
                        literal({4, 5}, 20), literal({5}, 21))),
      {"fuse-linear-affine", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Gemm", 1}}));
  for (const auto& n : o.model.graph->nodes())
    if (n->op_type == "Gemm") {
      EXPECT_EQ(n->num_inputs(), 3);  // a C now
    }
}

TEST(OptPad, MinusInfinityPadAndZeroPadOfReluFoldIntoMaxPool) {
  const std::string body = R"(
      p = Constant <value = int64[8] {0, 0, 1, 1, 0, 0, 1, 0}> ()
      zero = Constant <value = float {0}> ()
      minus = Constant <value = float {-1}> ()
      ninf = Div(minus, zero)
      xp = Pad(x, p, ninf)
      a = MaxPool <kernel_shape = [3, 3]> (xp)
      r = Relu(x)
      rp = Pad(r, p, zero)
      b = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (rp)
      xz = Pad(x, p, zero)
      c = MaxPool <kernel_shape = [2, 2]> (xz)
  )";
  auto o = optimize_text(
      model(17, "(float[1,2,5,5] x) => (float[1,2,5,4] a, float[1,2,3,3] b, float[1,2,6,5] c)", body),
      {"fuse-pad", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"MaxPool", 3}, {"Pad", 1}, {"Relu", 1}}));
  EXPECT_TRUE(near_missed(o.result, "fuse-pad", "may be negative"));
}

TEST(OptConvBn, BatchNormFoldsIntoConvWithoutBias) {
  auto o = optimize_text(
      model(17, "(float[1,3,6,6] x) => (float[1,4,6,6] y)",
            fmt::format(R"(
      w = Constant <value = {}> ()
      c = Conv <pads = [1, 1, 1, 1]> (x, w)
      s = Constant <value = {}> ()
      b = Constant <value = {}> ()
      m = Constant <value = {}> ()
      v = Constant <value = {}> ()
      y = BatchNormalization <epsilon = 0.001> (c, s, b, m, v)
  )",
                        literal({4, 3, 3, 3}, 1), literal({4}, 2), literal({4}, 3),
                        literal({4}, 4), literal({4}, 5, 0.5, 2))),
      {"fuse-conv-bn", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Conv", 1}}));
  EXPECT_EQ(o.model.graph->nodes()[0]->num_inputs(), 3);  // a bias now
}

TEST(OptConvBn, SharedConvOutputIsANearMiss) {
  auto o = optimize_text(
      model(17, "(float[1,2,4,4] x) => (float[1,2,4,4] y, float[1,2,4,4] c)",
            fmt::format(R"(
      w = Constant <value = {}> ()
      c = Conv(x, w)
      s = Constant <value = {}> ()
      y = BatchNormalization(c, s, s, s, s)
  )",
                        literal({2, 2, 1, 1}, 1), literal({2}, 2, 0.5, 1))),
      {"fuse-conv-bn"});
  EXPECT_EQ(o.ops.at("BatchNormalization"), 1);
  EXPECT_TRUE(near_missed(o.result, "fuse-conv-bn", "graph output"));
}

TEST(OptLinearAffine, PerChannelMulAndAddFoldIntoConv) {
  auto o = optimize_text(
      model(17, "(float[1,3,5,5] x) => (float[1,2,5,5] y)",
            fmt::format(R"(
      w = Constant <value = {}> ()
      b = Constant <value = {}> ()
      c = Conv <pads = [1, 1, 1, 1]> (x, w, b)
      k = Constant <value = float[2,1,1] {{2.0, -0.5}}> ()
      m = Mul(k, c)
      t = Constant <value = float[1,2,1,1] {{0.25, 1.5}}> ()
      y = Add(m, t)
  )",
                        literal({2, 3, 3, 3}, 7), literal({2}, 8))),
      {"fuse-linear-affine", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Conv", 1}}));
}

TEST(OptPad, ZeroPadFoldsIntoConv) {
  auto o = optimize_text(
      model(17, "(float[1,2,5,5] x) => (float[1,2,7,6] y)",
            fmt::format(R"(
      p = Constant <value = int64[8] {{0, 0, 2, 1, 0, 0, 2, 1}}> ()
      xp = Pad(x, p)
      w = Constant <value = {}> ()
      y = Conv <pads = [0, 0, 0, 1]> (xp, w)
  )",
                        literal({2, 2, 3, 3}, 9))),
      {"fuse-pad", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Conv", 1}}));
}

// Inception v3 (torchvision): Pad then AveragePool 3x3 with count_include_pad=0 (ONNX's default)
// and no pads of its own. Folded, the pool counts the pads (they were the Pad's zeros); with pads
// of its own that it does not count it stays a near miss.
TEST(OptPad, ZeroPadFoldsIntoAnAveragePoolWithoutPadsOfItsOwn) {
  const std::string body = R"(
      p = Constant <value = int64[8] {0, 0, 1, 1, 0, 0, 1, 1}> ()
      xp = Pad(x, p)
      a = AveragePool <kernel_shape = [3, 3], count_include_pad = 0> (xp)
      xq = Pad(x, p)
      b = AveragePool <kernel_shape = [3, 3], pads = [1, 0, 1, 0], count_include_pad = 1> (xq)
      xr = Pad(x, p)
      c = AveragePool <kernel_shape = [3, 3], pads = [1, 0, 1, 0], count_include_pad = 0> (xr)
  )";
  auto o = optimize_text(
      model(17, "(float[1,2,5,6] x) => (float[1,2,5,6] a, float[1,2,7,6] b, float[1,2,7,6] c)", body),
      {"fuse-pad", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"AveragePool", 3}, {"Pad", 1}}));
  EXPECT_TRUE(near_missed(o.result, "fuse-pad", "does not count"));
}

TEST(OptGemm, MatMulAddAndTransposeBecomeOneGemm) {
  auto o = optimize_text(
      model(17, "(float[3,4] x) => (float[3,5] y)",
            fmt::format(R"(
      w = Constant <value = {}> ()
      wt = Transpose <perm = [1, 0]> (w)
      m = MatMul(x, wt)
      b = Constant <value = {}> ()
      y = Add(m, b)
  )",
                        literal({5, 4}, 10), literal({5}, 11))),
      {"fuse-gemm", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Gemm", 1}}));
}

TEST(OptGemm, ThreeDimensionalMatMulIsANearMiss) {
  auto o = optimize_text(model(17, "(float[2,3,4] x, float[4,5] w, float[5] b) => (float[2,3,5] y)",
                               "m = MatMul(x, w)\n y = Add(m, b)"),
                         {"fuse-gemm"});
  EXPECT_EQ(o.ops.at("MatMul"), 1);
  EXPECT_TRUE(near_missed(o.result, "fuse-gemm", "2-D"));
}

const char* kGeluErf = R"(
      s = Constant <value = float {1.4142135}> ()
      d = Div(x, s)
      e = Erf(d)
      one = Constant <value = float {1.0}> ()
      a = Add(e, one)
      m = Mul(x, a)
      h = Constant <value = float {0.5}> ()
      y = Mul(m, h)
)";

TEST(OptGelu, ErfFormBecomesGeluAtOpset20) {
  auto o = optimize_text(model(20, "(float[2,8] x) => (float[2,8] y)", kGeluErf), {"fuse-gelu", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Gelu", 1}}));
}

TEST(OptGelu, ErfFormAtOpset17NamesTheOpsetItNeeds) {
  auto o = optimize_text(model(17, "(float[2,8] x) => (float[2,8] y)", kGeluErf), {"fuse-gelu"});
  EXPECT_EQ(o.ops.at("Erf"), 1);
  EXPECT_TRUE(near_missed(o.result, "fuse-gelu", "opset 20"));
  auto raised = optimize_text(model(17, "(float[2,8] x) => (float[2,8] y)", kGeluErf),
                              {"raise-opset", "fuse-gelu", "dce"}, PassOptions{.target_opset = 20});
  EXPECT_EQ(raised.ops, (std::map<std::string, int64_t>{{"Gelu", 1}}));
  EXPECT_EQ(raised.model.opsets.at(""), 20);
}

TEST(OptGelu, TanhFormBecomesGelu) {
  auto o = optimize_text(model(20, "(float[2,8] x) => (float[2,8] y)", R"(
      three = Constant <value = float {3.0}> ()
      p = Pow(x, three)
      k = Constant <value = float {0.044715}> ()
      c = Mul(k, p)
      s = Add(x, c)
      r = Constant <value = float {0.7978845608}> ()
      t = Mul(s, r)
      th = Tanh(t)
      one = Constant <value = float {1.0}> ()
      a = Add(th, one)
      h = Constant <value = float {0.5}> ()
      xh = Mul(x, h)
      y = Mul(xh, a)
  )"), {"fuse-gelu", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"Gelu", 1}}));
}

TEST(OptLayerNorm, DecompositionBecomesLayerNormalization) {
  auto o = optimize_text(
      model(17, "(float[N,5,8] x) => (float[N,5,8] y)",
            fmt::format(R"(
      mu = ReduceMean <axes = [-1]> (x)
      d = Sub(x, mu)
      two = Constant <value = float {{2.0}}> ()
      sq = Pow(d, two)
      var = ReduceMean <axes = [-1]> (sq)
      eps = Constant <value = float {{0.00001}}> ()
      ve = Add(var, eps)
      sd = Sqrt(ve)
      n = Div(d, sd)
      g = Constant <value = {}> ()
      ng = Mul(n, g)
      b = Constant <value = {}> ()
      y = Add(ng, b)
  )",
                        literal({8}, 12), literal({8}, 13))),
      {"fuse-layernorm", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"LayerNormalization", 1}}));
}

TEST(OptRmsNorm, DecompositionBecomesRMSNormalizationAtOpset23) {
  auto o = optimize_text(
      model(23, "(float[2,8] x) => (float[2,8] y)",
            fmt::format(R"(
      two = Constant <value = float {{2.0}}> ()
      sq = Pow(x, two)
      ax = Constant <value = int64[1] {{1}}> ()
      ms = ReduceMean(sq, ax)
      eps = Constant <value = float {{0.000001}}> ()
      me = Add(ms, eps)
      rt = Sqrt(me)
      r = Reciprocal(rt)
      n = Mul(x, r)
      g = Constant <value = {}> ()
      y = Mul(n, g)
  )",
                        literal({8}, 14))),
      {"fuse-rmsnorm", "dce"});
  EXPECT_EQ(o.ops, (std::map<std::string, int64_t>{{"RMSNormalization", 1}}));
}

TEST(OptOpset, RaisingAcrossAMeaningChangeIsRefused) {
  // Softmax-11 on rank 3 with the default axis 1 normalizes dims 1 and 2 together; 13's normalizes
  // the last dim only.
  auto o = optimize_text(model(11, "(float[2,3,4] x) => (float[2,3,4] y)", "y = Softmax(x)"),
                         {"raise-opset"}, PassOptions{.target_opset = 20});
  EXPECT_EQ(o.model.opsets.at(""), 11);
  EXPECT_TRUE(near_missed(o.result, "raise-opset", "changes meaning"));
}

TEST(OptOpset, SoftmaxOverTheLastDimMeansTheSameAcross13) {
  for (const char* body : {"y = Softmax <axis = 2> (x)", "y = LogSoftmax <axis = -1> (x)"}) {
    auto o = optimize_text(model(9, "(float[2,3,4] x) => (float[2,3,4] y)", body), {"raise-opset"},
                           PassOptions{.target_opset = 13});
    EXPECT_EQ(o.model.opsets.at(""), 13) << body;  // optimize_text proved the outputs the same
  }
  auto two_d = optimize_text(model(11, "(float[2,3] x) => (float[2,3] y)", "y = Softmax(x)"),
                             {"raise-opset"}, PassOptions{.target_opset = 13});
  EXPECT_EQ(two_d.model.opsets.at(""), 13);  // axis 1 of a 2-D input is its last
}

TEST(OptPipeline, LevelsAndUnknownPasses) {
  EXPECT_TRUE(level_pipeline(0).empty());
  EXPECT_EQ(parse_pipeline("dce,cse"), (std::vector<std::string>{"dce", "cse"}));
  EXPECT_THROW(parse_pipeline("dce,no-such-pass"), Error);
  EXPECT_THROW(level_pipeline(4), Error);
  auto has = [](const std::vector<std::string>& p, const char* name) {
    return std::find(p.begin(), p.end(), name) != p.end();
  };
  EXPECT_FALSE(has(level_pipeline(2), "fuse-attention"));  // the engine lowers -O2 output
  EXPECT_TRUE(has(level_pipeline(3), "fuse-attention"));
  EXPECT_EQ(level_pipeline(3).back(), "dce");
}

// A deliberately wrong rewrite: the third Neg it meets becomes Abs.
class BreakThirdNeg final : public GraphPass {
 public:
  std::string_view name() const override { return "test-break-third-neg"; }
  std::string_view summary() const override { return "test only: a wrong rewrite"; }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    int seen = 0;
    for (const auto& n : g.nodes()) {
      if (n->op_type != "Neg") continue;
      if (++seen < 3 || !ctx.allow()) continue;
      n->op_type = "Abs";
      ctx.applied("Neg replaced (wrongly)", {node_label(*n)}, {node_label(*n)});
      return;
    }
  }
};

void register_wrong_pass() {
  static const bool once = [] {
    register_pass("test-break-third-neg", [] { return std::make_unique<BreakThirdNeg>(); });
    return true;
  }();
  (void)once;
}

TEST(OptBisect, FindsTheInjectedWrongRewrite) {
  register_wrong_pass();
  const std::string text = model(17, "(float[4] x) => (float[4] y)", R"(
      i = Identity(x)
      a = Neg(i)
      j = Identity(a)
      b = Neg(j)
      k = Identity(b)
      c = Neg(k)
      y = Neg(c)
  )");
  const std::vector<std::string> passes = {"eliminate-noops", "test-break-third-neg", "dce"};
  Session original(load_text(text));
  VerifyOptions v;
  const Reference ref = make_reference(original, v);
  const BisectResult r = bisect([&] { return load_text(text); }, passes, {}, ref, v);
  ASSERT_TRUE(r.first_bad.has_value());
  EXPECT_EQ(r.rewrite->pass, "test-break-third-neg");
  EXPECT_EQ(r.rewrite->what, "Neg replaced (wrongly)");
  EXPECT_EQ(*r.first_bad, 4);  // after the three Identity removals
  EXPECT_NE(r.failure.find("output 'y'"), std::string::npos);
}

// `kiln optimize --inputs DIR`: the caller's input sets are checked first, and alone when no
// random sets are asked for (models such as a VAD only run on sane values).
TEST(OptVerify, GivenInputSetsAreChecked) {
  register_wrong_pass();
  const std::string text = model(17, "(float[4] x) => (float[4] y)", R"(
      a = Neg(x)
      b = Neg(a)
      c = Neg(b)
      y = Neg(c)
  )");
  Session original(load_text(text));
  Model m = load_text(text);
  PipelineOptions opts;
  optimize(m, {"test-break-third-neg"}, opts);
  Session optimized(load_model_from_bytes(serialize_model(m), "."));
  Tensor x(DataType::kFloat, {4});
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = static_cast<float>(i) - 1.5f;
  VerifyOptions v;
  v.given = {{RtValue::of(x)}};
  v.samples = 0;
  const Reference ref = make_reference(original, v);
  ASSERT_EQ(ref.feeds.size(), 1u);
  EXPECT_EQ(ref.feeds[0][0].tensor.data<float>()[0], -1.5f);
  EXPECT_FALSE(check_against(optimized, ref, v).ok);  // Abs in place of the third Neg
}

// What `kiln optimize --verify 3 --bisect` does (optimize_command.cc), through the same library
// calls: the wrong pass sits in the middle of -O2 among real rewrites that run for several rounds;
// verification on 3 input sets fails and bisection names the wrong rewrite, not its neighbours.
TEST(OptBisect, FindsTheWrongRewriteInsideTheO2PipelineAsTheCliDoes) {
  register_wrong_pass();
  const std::string text = model(17, "(float[2,4] x) => (float[2,4] y)", R"(
      i = Identity(x)
      a = Neg(i)
      one = Constant <value = float {1}> ()
      m = Mul(a, one)
      b = Neg(m)
      t1 = Transpose <perm = [1, 0]> (b)
      t2 = Transpose <perm = [1, 0]> (t1)
      c = Neg(t2)
      r = Relu(c)
      rr = Relu(r)
      y = Neg(rr)
  )");
  std::vector<std::string> passes = level_pipeline(2);
  passes.insert(passes.begin() + 4, "test-break-third-neg");
  Model m = load_text(text);
  PipelineOptions opts;
  const OptimizeResult full = optimize(m, passes, opts);
  VerifyOptions v;
  v.samples = 3;
  Session original(load_text(text));
  Session optimized(load_model_from_bytes(serialize_model(m), "."));
  const Reference ref = make_reference(original, v);
  ASSERT_FALSE(check_against(optimized, ref, v).ok);
  const BisectResult r = bisect([&] { return load_text(text); }, passes, opts, ref, v);
  ASSERT_TRUE(r.first_bad.has_value());
  EXPECT_EQ(r.total, static_cast<int64_t>(full.rewrites.size()));
  EXPECT_EQ(r.rewrite->pass, "test-break-third-neg");
  EXPECT_EQ(full.rewrites[*r.first_bad - 1].pass, "test-break-third-neg");
  EXPECT_GT(r.total, *r.first_bad);  // real rewrites came after it too
  // Without the wrong pass the same pipeline verifies.
  auto good = optimize_text(text, level_pipeline(2));
  EXPECT_EQ(good.ops, (std::map<std::string, int64_t>{{"Neg", 4}, {"Relu", 1}}));
}

}  // namespace
}  // namespace kiln::opt
