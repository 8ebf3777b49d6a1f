#include "profile/precision_forecast.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "support/error.h"

namespace kiln {
namespace {

// One run of three nodes: a compute-bound MatMul (1 ms), a Relu (0.4 ms), a Softmax (0.2 ms).
ProfileData three_nodes() {
  ProfileData d;
  d.engine = "fast";
  auto node = [&](const char* name, const char* op, double flops, double bytes) {
    ProfiledNode n;
    n.name = name;
    n.op_type = op;
    n.kernel = "test";
    n.cost = {.macs = flops / 2, .flops = flops, .bytes = bytes};
    OperandShape in;
    in.present = true;
    in.bytes = bytes / 2;
    n.inputs = {in};
    n.outputs = {in};
    d.nodes.push_back(n);
  };
  node("fc", "MatMul", 2e8, 1e5);  // 2000 FLOP/B: compute-bound anywhere
  node("relu", "Relu", 1e5, 8e6);
  node("softmax", "Softmax", 5e5, 8e6);
  const int64_t ms = 1'000'000;
  d.runs = {{0, 2 * ms}};
  const int64_t starts[] = {0, ms, ms * 14 / 10}, ends[] = {ms, ms * 14 / 10, ms * 16 / 10};
  for (int i = 0; i < 3; ++i) d.executions.push_back({.run = 0, .node = i, .span = {starts[i], ends[i]}});
  return d;
}

MachinePeak peak(bool bf16) {
  MachinePeak p{.cpu = "test", .threads = 1, .isa = "avx512", .gflops = 200, .copy_gbps = 20,
                .triad_gbps = 20};
  p.int8_isa = "avx512_vnni";
  p.int8_gops = 800;
  p.bf16_native = bf16;
  p.bf16_isa = bf16 ? "avx512_bf16" : "";
  p.bf16_gflops = bf16 ? 400 : 0;
  p.gemm_f32_gops = 100;
  p.gemm_int8_gops = 300;  // oneDNN's int8 matmul 3x its fp32 one
  p.gemm_bf16_gops = bf16 ? 150 : 0;
  return p;
}

const NodeForecast& find(const PrecisionForecast& f, const std::string& name) {
  for (const NodeForecast& n : f.nodes)
    if (n.node == name) return n;
  ADD_FAILURE() << name;
  return f.nodes.front();
}

TEST(PrecisionForecast, StaticInt8ScalesComputeByTheMatmulGainAndMovesQuarterBytes) {
  const ProfileData d = three_nodes();
  const MachinePeak p = peak(false);
  const ProfileSummary s = summarize(d, p.roofline());
  const PrecisionForecast f = forecast_precision(d, s, p, ReducedPrecision::kInt8Static);
  EXPECT_TRUE(f.native);
  EXPECT_EQ(f.units, "avx512_vnni");
  const NodeForecast& fc = find(f, "fc");
  EXPECT_TRUE(fc.reduced);
  EXPECT_EQ(fc.basis, "compute-bound");
  EXPECT_NEAR(fc.predicted_ms, 0.004 + (1.0 - 0.004) / 3, 1e-9);  // the 3x of the matmul probe
  const NodeForecast& relu = find(f, "relu");
  EXPECT_EQ(relu.basis, "moves int8");
  EXPECT_NEAR(relu.predicted_ms, 0.004 + (0.4 - 0.004) / 4, 1e-9);
  const NodeForecast& softmax = find(f, "softmax");
  EXPECT_FALSE(softmax.reduced);
  EXPECT_DOUBLE_EQ(softmax.predicted_ms, softmax.fp32_ms);
  // The run's time outside the nodes (0.4 ms) stays.
  EXPECT_NEAR(f.fp32_ms - f.predicted_ms, (1.0 - fc.predicted_ms) + (0.4 - relu.predicted_ms), 1e-9);
  EXPECT_GT(f.speedup(), 1.0);
}

// Before VNNI (AVX2, AVX-512BW) oneDNN's int8 sums pairs of products in int16 and saturates, so
// kiln computes static int8 models in float there: the forecast says no gain, and why. Dynamic
// int8's matmuls run on kiln's int16 kernel, at the probe's int8 matmul figure (which is that
// kernel's there): a gain, in those units; none where the probe found no int8 matmul.
TEST(PrecisionForecast, Int8WithoutADotProduct) {
  const ProfileData d = three_nodes();
  MachinePeak p = peak(false);
  p.int8_isa = "avx2";
  p.gemm_int8_gops = 160;  // kiln's int16 kernel 1.6x oneDNN's f32 matmul
  const ProfileSummary s = summarize(d, p.roofline());
  const PrecisionForecast st = forecast_precision(d, s, p, ReducedPrecision::kInt8Static);
  EXPECT_FALSE(st.native);
  EXPECT_DOUBLE_EQ(find(st, "fc").predicted_ms, find(st, "fc").fp32_ms);
  EXPECT_DOUBLE_EQ(find(st, "relu").predicted_ms, find(st, "relu").fp32_ms);
  EXPECT_NEAR(st.speedup(), 1.0, 1e-9);
  EXPECT_NE(st.note.find("saturates"), std::string::npos) << st.note;
  EXPECT_NE(st.note.find("int8-dynamic"), std::string::npos) << st.note;
  const PrecisionForecast dy = forecast_precision(d, s, p, ReducedPrecision::kInt8Dynamic);
  EXPECT_TRUE(dy.native);
  EXPECT_EQ(dy.units, "int16 (avx2)");
  EXPECT_LT(find(dy, "fc").predicted_ms, find(dy, "fc").fp32_ms);
  EXPECT_DOUBLE_EQ(find(dy, "relu").predicted_ms, find(dy, "relu").fp32_ms);
  EXPECT_GT(dy.speedup(), 1.0);
  EXPECT_NE(dy.note.find("kiln's int16"), std::string::npos) << dy.note;
  p.gemm_int8_gops = 0;  // no int16 kernel (no AVX2)
  const PrecisionForecast none = forecast_precision(d, s, p, ReducedPrecision::kInt8Dynamic);
  EXPECT_FALSE(none.native);
  EXPECT_NEAR(none.speedup(), 1.0, 1e-9);
}

// With a GemmGain, a product node is scaled by the gain measured at its own shape (m x k by k x n)
// instead of the probe's 256 x 1024 x 1024 one.
TEST(PrecisionForecast, AGemmGainScalesEachProductAtItsOwnShape) {
  ProfileData d = three_nodes();
  auto shape = [](std::vector<int64_t> dims) {
    OperandShape o;
    o.present = true;
    o.dims = std::move(dims);
    o.bytes = 4.0 * static_cast<double>(o.dims[0] * o.dims[1]);
    return o;
  };
  d.nodes[0].inputs = {shape({8, 64}), shape({64, 32})};
  d.nodes[0].outputs = {shape({8, 32})};
  d.nodes[0].cost.bytes = 1e5;  // as before: compute-bound
  const MachinePeak p = peak(false);
  const ProfileSummary s = summarize(d, p.roofline());
  std::vector<std::tuple<int64_t, int64_t, int64_t>> asked;
  const GemmGain gain = [&](int64_t m, int64_t k, int64_t n) {
    asked.emplace_back(m, k, n);
    return 2.0;
  };
  const PrecisionForecast f = forecast_precision(d, s, p, ReducedPrecision::kInt8Static, gain);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], std::make_tuple(int64_t{8}, int64_t{64}, int64_t{32}));
  EXPECT_NEAR(find(f, "fc").predicted_ms, 0.004 + (1.0 - 0.004) / 2, 1e-9);  // 2x, not the probe's 3x
  EXPECT_EQ(f.shapes_measured, 1);
  // A gain it cannot tell (0) leaves the probe's figure.
  const PrecisionForecast g = forecast_precision(d, s, p, ReducedPrecision::kInt8Static,
                                                 [](int64_t, int64_t, int64_t) { return 0.0; });
  EXPECT_NEAR(find(g, "fc").predicted_ms, 0.004 + (1.0 - 0.004) / 3, 1e-9);
  EXPECT_EQ(g.shapes_measured, 0);
}

// Static int8: a residual Add fused into a conv's step in fp32 costs a step of its own (three
// int8 tensors at the bandwidth, plus the step overhead); one that ran as its own step does not.
TEST(PrecisionForecast, StaticInt8AddsTheResidualAddsFusedInFp32) {
  Graph g;
  Value *x = g.add_value("x"), *y = g.add_value("y"), *r = g.add_value("r"), *z = g.add_value("z");
  Value* w = g.add_value("w");
  w->data = Tensor(DataType::kFloat, {4, 4, 1, 1});
  Node* conv = g.add_node("Conv");
  g.set_input(conv, 0, x);
  g.set_input(conv, 1, w);
  g.set_output(conv, 0, y);
  Node* add = g.add_node("Add");
  add->name = "residual";
  g.set_input(add, 0, y);
  g.set_input(add, 1, r);
  g.set_output(add, 0, z);
  ProfileData d = three_nodes();
  d.nodes[0].op_type = "Conv";
  d.nodes[0].node = conv;
  d.nodes[0].outputs[0].bytes = 4e6;  // a million floats
  const MachinePeak p = peak(false);  // 20 GB/s
  const ProfileSummary s = summarize(d, p.roofline());
  const PrecisionForecast f = forecast_precision(d, s, p, ReducedPrecision::kInt8Static);
  const NodeForecast& a = find(f, "residual");
  EXPECT_EQ(a.fp32_ms, 0);
  EXPECT_NEAR(a.predicted_ms, 0.004 + 3e6 / 20e9 * 1e3, 1e-9);
  EXPECT_EQ(a.basis, "an int8 step of its own");
  // Dynamic int8 leaves convs in float: no such step.
  const PrecisionForecast dyn = forecast_precision(d, s, p, ReducedPrecision::kInt8Dynamic);
  for (const NodeForecast& n : dyn.nodes) EXPECT_NE(n.node, "residual");
}

// A product of two activations (attention's Q K^T) stays float32 in every mode: kiln quantize
// leaves it out and bf16 packs constant weights only. A weight made from an initializer (a
// Transpose of it, as at -O0) counts as constant.
TEST(PrecisionForecast, ProductsOfTwoActivationsStayFloat32) {
  Graph g;
  Value *x = g.add_value("x"), *k = g.add_value("k"), *w = g.add_value("w"), *wt = g.add_value("wt");
  Value *y = g.add_value("y"), *z = g.add_value("z");
  x->is_graph_input = k->is_graph_input = true;
  w->data = Tensor(DataType::kFloat, {8, 8});
  Node* qk = g.add_node("MatMul");
  g.set_input(qk, 0, x);
  g.set_input(qk, 1, k);
  g.set_output(qk, 0, y);
  Node* t = g.add_node("Transpose");
  g.set_input(t, 0, w);
  g.set_output(t, 0, wt);
  Node* fc = g.add_node("MatMul");
  g.set_input(fc, 0, x);
  g.set_input(fc, 1, wt);
  g.set_output(fc, 0, z);
  const MachinePeak p = peak(true);
  for (ReducedPrecision precision : {ReducedPrecision::kBf16, ReducedPrecision::kInt8Dynamic, ReducedPrecision::kInt8Static}) {
    SCOPED_TRACE(precision_name(precision));
    for (const Node* n : {static_cast<const Node*>(qk), static_cast<const Node*>(fc)}) {
      ProfileData d = three_nodes();
      d.nodes[0].node = n;
      const PrecisionForecast f = forecast_precision(d, summarize(d, p.roofline()), p, precision);
      EXPECT_EQ(find(f, "fc").reduced, n == fc);
      if (n == qk) {
        EXPECT_DOUBLE_EQ(find(f, "fc").predicted_ms, find(f, "fc").fp32_ms);
      }
    }
  }
}

TEST(PrecisionForecast, DynamicInt8ChangesOnlyTheMatrixProducts) {
  const ProfileData d = three_nodes();
  const MachinePeak p = peak(false);
  const PrecisionForecast f =
      forecast_precision(d, summarize(d, p.roofline()), p, ReducedPrecision::kInt8Dynamic);
  EXPECT_TRUE(find(f, "fc").reduced);
  EXPECT_FALSE(find(f, "relu").reduced);
  EXPECT_DOUBLE_EQ(find(f, "relu").predicted_ms, find(f, "relu").fp32_ms);
}

TEST(PrecisionForecast, Bf16WithoutNativeSupportPromisesNothing) {
  const ProfileData d = three_nodes();
  const MachinePeak p = peak(false);
  const PrecisionForecast f = forecast_precision(d, summarize(d, p.roofline()), p, ReducedPrecision::kBf16);
  EXPECT_FALSE(f.native);
  EXPECT_EQ(f.units, "emulated");
  EXPECT_DOUBLE_EQ(f.predicted_ms, f.fp32_ms);
  EXPECT_NE(f.note.find("no native bf16"), std::string::npos);
  EXPECT_NE(forecast_text(f).find("emulated"), std::string::npos);

  const MachinePeak native = peak(true);
  const PrecisionForecast g =
      forecast_precision(d, summarize(d, native.roofline()), native, ReducedPrecision::kBf16);
  EXPECT_TRUE(g.native);
  EXPECT_NEAR(find(g, "fc").predicted_ms, 0.004 + (1.0 - 0.004) / 1.5, 1e-9);
  EXPECT_EQ(forecast_json(g)["nodes"].size(), 3u);
}

TEST(PrecisionForecast, ParsesTheCliSpellings) {
  EXPECT_EQ(parse_reduced_precision("int8"), ReducedPrecision::kInt8Static);
  EXPECT_EQ(parse_reduced_precision("int8-dynamic"), ReducedPrecision::kInt8Dynamic);
  EXPECT_EQ(parse_reduced_precision("bf16"), ReducedPrecision::kBf16);
  EXPECT_THROW(parse_reduced_precision("int4"), Error);
}

}  // namespace
}  // namespace kiln
