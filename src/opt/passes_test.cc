// Each pass on a small graph: the expected graph comes out, every pass leaves a valid model, and
// the optimized model (saved and loaded again) computes what the original did.
#include <gtest/gtest.h>

#include <random>

#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/text_format.h"
#include "ops/check.h"
#include "ops/infer.h"
#include "opt/bisect.h"
#include "opt/pipeline.h"
#include "opt/record.h"
#include "opt/verify.h"
#include "support/error.h"

namespace kiln::opt {
namespace {

struct Optimized {
  Model model;
  OptimizeResult result;
  std::map<std::string, int64_t> ops;
};

Model load_text(const std::string& text) {
  Model m = parse_model_text(text);
  check_model(m);
  infer_shapes(m);
  return m;
}

// Optimizes, checking the model after every pass, then proves the outputs unchanged.
Optimized optimize_text(const std::string& text, const std::vector<std::string>& passes,
                        PassOptions po = {}) {
  Model m = load_text(text);
  PipelineOptions opts;
  opts.pass = po;
  opts.check_each_pass = true;
  OptimizeResult r = optimize(m, passes, opts);
  Session original(load_text(text));
  Session optimized(load_model_from_bytes(serialize_model(m), "."));
  VerifyOptions v;
  v.samples = 2;
  v.inputs.default_dim = 3;
  const Reference ref = make_reference(original, v);
  const VerifyReport report = check_against(optimized, ref, v);
  for (const auto& o : report.outputs) EXPECT_TRUE(o.ok) << o.name << ": " << o.reason;
  auto ops = model_stats(m).ops;
  ops.erase("Constant");  // data, not compute: the tests count the ops that do work
  return {std::move(m), std::move(r), std::move(ops)};
}

// "float[2,3] {0.1, -0.4, ...}": a tensor literal of seeded values in [lo, hi).
std::string literal(const std::vector<int64_t>& dims, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  int64_t n = 1;
  std::string s = "float[";
  for (size_t i = 0; i < dims.size(); ++i) {
    s += (i ? "," : "") + std::to_string(dims[i]);
    n *= dims[i];
  }
  s += "] {";
  for (int64_t i = 0; i < n; ++i) s += fmt::format("{}{:.4f}", i ? "," : "", u(rng));
  return s + "}";
}

std::string model(int opset, const std::string& signature, const std::string& body) {
  return fmt::format("<ir_version: 8, opset_import: [\"\" : {}]>\nagraph {} {{\n{}\n}}", opset,
                     signature, body);
}

bool near_missed(const OptimizeResult& r, const std::string& pass, const std::string& text) {
  for (const auto& n : r.near_misses)
    if (n.pass == pass && n.reason.find(text) != std::string::npos) return true;
  return false;
}

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
      model(17, "(float[1,2,5,5] x) => (float[1,2,7,5] y)",
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
  auto o = optimize_text(model(11, "(float[2,3] x) => (float[2,3] y)", "y = Softmax(x)"),
                         {"raise-opset"}, PassOptions{.target_opset = 20});
  EXPECT_EQ(o.model.opsets.at(""), 11);
  EXPECT_TRUE(near_missed(o.result, "raise-opset", "changes meaning"));
}

TEST(OptPipeline, LevelsAndUnknownPasses) {
  EXPECT_TRUE(level_pipeline(0).empty());
  EXPECT_EQ(parse_pipeline("dce,cse"), (std::vector<std::string>{"dce", "cse"}));
  EXPECT_THROW(parse_pipeline("dce,no-such-pass"), Error);
  EXPECT_THROW(level_pipeline(4), Error);
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

TEST(OptBisect, FindsTheInjectedWrongRewrite) {
  register_pass("test-break-third-neg", [] { return std::make_unique<BreakThirdNeg>(); });
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

}  // namespace
}  // namespace kiln::opt
