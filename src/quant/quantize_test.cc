// The quantizer on small graphs: each mode's rewrite, run on kiln's reference engine against the
// float model (cosine >= 0.99), and its refusals of bad input.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include <fmt/format.h>

#include "engine/runner.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/text_format.h"
#include "ops/check.h"
#include "ops/infer.h"
#include "quant/evaluate.h"
#include "quant/mixed_precision.h"
#include "quant/quantize.h"
#include "runtime/random_inputs.h"
#include "support/error.h"

namespace kiln::quant {
namespace {

std::string literal(const std::vector<int64_t>& dims, uint32_t seed, double scale = 1) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> u(0, scale);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::string s = fmt::format("float[{}] {{", fmt::join(dims, ","));
  for (int64_t i = 0; i < n; ++i) s += fmt::format("{}{:.5f}", i ? "," : "", u(rng));
  return s + "}";
}

Model load_text(const std::string& text) {
  Model m = parse_model_text(text);
  check_model(m);
  infer_shapes(m);
  return m;
}

// An MLP: MatMul + bias Add, Relu, Gemm (transB, bias).
std::string mlp_text() {
  return fmt::format(R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (float[4,16] x) => (float[4,6] y) {{
  w1 = Constant <value = {}> ()
  b1 = Constant <value = {}> ()
  w2 = Constant <value = {}> ()
  b2 = Constant <value = {}> ()
  h = MatMul(x, w1)
  hb = Add(h, b1)
  r = Relu(hb)
  y = Gemm <transB = 1> (r, w2, b2)
}})", literal({16, 12}, 1, 0.3), literal({12}, 2, 0.1), literal({6, 12}, 3, 0.3), literal({6}, 4, 0.1));
}

// A small CNN: Conv+Relu, Conv, residual Add, Relu, GlobalAveragePool, Flatten, Gemm.
std::string cnn_text() {
  return fmt::format(R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (float[1,3,8,8] x) => (float[1,5] y) {{
  w1 = Constant <value = {}> ()
  b1 = Constant <value = {}> ()
  w2 = Constant <value = {}> ()
  b2 = Constant <value = {}> ()
  w3 = Constant <value = {}> ()
  c1 = Conv <pads = [1,1,1,1]> (x, w1, b1)
  r1 = Relu(c1)
  c2 = Conv <pads = [1,1,1,1]> (r1, w2, b2)
  s = Add(c2, r1)
  r2 = Relu(s)
  g = GlobalAveragePool(r2)
  f = Flatten(g)
  y = Gemm <transB = 1> (f, w3)
}})", literal({4, 3, 3, 3}, 5, 0.3), literal({4}, 6, 0.1), literal({4, 4, 3, 3}, 7, 0.3),
                     literal({4}, 8, 0.1), literal({5, 4}, 9, 0.5));
}

std::vector<FeedSet> random_sets(const Model& m, int n, uint64_t seed) {
  std::vector<const Value*> inputs;
  for (const Value* v : m.graph->inputs)
    if (!v->is_constant()) inputs.push_back(v);
  std::vector<FeedSet> sets;
  for (int i = 0; i < n; ++i) sets.push_back(random_inputs(inputs, {.seed = seed + i}));
  return sets;
}

std::map<std::string, int> op_counts(const Model& m) {
  std::map<std::string, int> ops;
  for (const auto& n : m.graph->nodes()) ++ops[n->op_type];
  return ops;
}

// The quantized model (after a round trip through its file form) against the float model on
// the reference engine: the lowest cosine over the outputs.
double worst_cosine(const std::string& float_text, const Model& quantized, int sets = 4) {
  Model reloaded = load_model_from_bytes(serialize_model(quantized), ".");
  auto f = engine::make_runner(load_text(float_text), engine::EngineKind::kReference);
  auto q = engine::make_runner(std::move(reloaded), engine::EngineKind::kReference);
  double worst = 1;
  for (const OutputError& e : compare_models(*f, *q, random_sets(load_text(float_text), sets, 100))) {
    EXPECT_TRUE(e.compared) << e.name << ": " << e.note;
    worst = std::min(worst, e.cosine);
  }
  return worst;
}

QuantizeResult run(Model& m, const QuantizeOptions& o, int calibration_sets = 8) {
  const auto sets = random_sets(m, calibration_sets, 0);
  return quantize(m, o, sets, {}, {.progress = false}, "test.onnx");
}

TEST(QuantDynamic, MatMulAndGemmBecomeMatMulInteger) {
  Model m = load_text(mlp_text());
  const QuantizeResult r = run(m, {.mode = Mode::kDynamic});
  auto ops = op_counts(m);
  EXPECT_EQ(ops["MatMulInteger"], 2);
  EXPECT_EQ(ops["DynamicQuantizeLinear"], 2);
  EXPECT_EQ(ops["MatMul"], 0);
  EXPECT_EQ(ops["Gemm"], 0);
  EXPECT_EQ(ops["ConvInteger"], 0);
  int int8 = 0;
  for (const auto& d : r.decisions) int8 += d.precision == "int8";
  EXPECT_EQ(int8, 2);
  EXPECT_GE(worst_cosine(mlp_text(), m), 0.99);
}

TEST(QuantDynamic, PerChannelWeights) {
  Model m = load_text(mlp_text());
  run(m, {.mode = Mode::kDynamic, .per_channel = PerChannel::kOn});
  int per_column = 0;
  for (const Value* v : m.graph->initializers) {
    if (v->data.dtype() == DataType::kFloat && v->name.ends_with("_scale")) {
      EXPECT_GT(v->data.numel(), 1) << v->name;
      ++per_column;
    }
  }
  EXPECT_EQ(per_column, 2);
  EXPECT_GE(worst_cosine(mlp_text(), m), 0.99);
}

TEST(QuantDynamic, ConvOnlyWhenAsked) {
  Model m = load_text(cnn_text());
  run(m, {.mode = Mode::kDynamic});
  EXPECT_EQ(op_counts(m)["ConvInteger"], 0);
  EXPECT_EQ(op_counts(m)["Conv"], 2);
  Model c = load_text(cnn_text());
  run(c, {.mode = Mode::kDynamic, .include_ops = {"Conv"}});
  EXPECT_EQ(op_counts(c)["ConvInteger"], 2);
  EXPECT_GE(worst_cosine(cnn_text(), c), 0.99);
}

TEST(QuantDynamic, ConvIntegerTakesAScalarZeroPoint) {
  Model m = load_text(cnn_text());
  run(m, {.mode = Mode::kDynamic, .include_ops = {"Conv"}});
  for (const auto& n : m.graph->nodes())
    if (n->op_type == "ConvInteger") {
      ASSERT_TRUE(n->has_input(3));
      EXPECT_EQ(n->inputs[3]->data.numel(), 1);  // ONNX Runtime takes no per-channel zero point
    }
}

TEST(QuantStatic, OldOpsetIsRaised) {
  std::string text = cnn_text();
  text.replace(text.find("\"\" : 17"), 7, "\"\" : 11");
  Model m = load_text(text);
  const QuantizeResult r = run(m, {.mode = Mode::kStatic});
  EXPECT_EQ(m.opsets.at(""), 13);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("from 11 to 13"), std::string::npos) << r.notes[0];
  int per_channel = 0;
  for (const auto& n : m.graph->nodes()) per_channel += n->op_type == "DequantizeLinear" && n->attr("axis");
  EXPECT_GT(per_channel, 0);
  EXPECT_GE(worst_cosine(text, m), 0.99);
}

TEST(QuantStatic, QdqAroundConvsWithInt32Bias) {
  Model m = load_text(cnn_text());
  const QuantizeResult r = run(m, {.mode = Mode::kStatic});
  auto ops = op_counts(m);
  EXPECT_EQ(ops["Conv"], 2);
  EXPECT_EQ(ops["Gemm"], 1);
  EXPECT_GE(ops["QuantizeLinear"], 3);  // x, r1, c2, f (the Gemm's input)
  EXPECT_EQ(ops["QuantizeLinear"] + 3 + 2, ops["DequantizeLinear"]);  // + 3 weights, 2 biases
  int per_channel = 0, biases = 0;
  for (const auto& n : m.graph->nodes()) {
    if (n->op_type != "DequantizeLinear") continue;
    if (n->attr("axis") && n->inputs[0]->data.dtype() == DataType::kInt8) ++per_channel;
    if (n->inputs[0]->is_constant() && n->inputs[0]->data.dtype() == DataType::kInt32) ++biases;
  }
  EXPECT_EQ(per_channel, 2);  // the convs; the Gemm per tensor
  EXPECT_EQ(biases, 2);
  EXPECT_FALSE(r.ranges.empty());
  EXPECT_GE(worst_cosine(cnn_text(), m), 0.99);
}

// Convs inside If branches are quantized where the calibration sets reach them; the branch they
// never take stays float, saying so.
TEST(QuantStatic, IfBranchesWhereCalibrationReachesThem) {
  const std::string text = fmt::format(R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (float[1,3,8,8] x, bool c) => (float[1,4,8,8] y) {{
  w = Constant <value = {}> ()
  y = If (c) <then_branch = g1 () => (float[1,4,8,8] t) {{ t1 = Conv <pads = [1,1,1,1]> (x, w)
                                                           t = Relu(t1) }},
              else_branch = g2 () => (float[1,4,8,8] e) {{ e1 = Conv <pads = [1,1,1,1]> (x, w)
                                                           e = Sigmoid(e1) }}>
}})", literal({4, 3, 3, 3}, 11, 0.3));
  Model m = load_text(text);
  std::vector<FeedSet> sets;
  for (uint64_t i = 0; i < 4; ++i) {
    Tensor cond(DataType::kBool, {});
    cond.set_f64(0, 1);  // always the then branch
    sets.push_back({random_inputs({m.graph->inputs[0]}, {.seed = i})[0], RtValue::of(cond)});
  }
  const QuantizeResult r = quantize(m, {.mode = Mode::kStatic}, sets, {}, {.progress = false}, "if.onnx");
  int int8 = 0, unreached = 0;
  for (const auto& d : r.decisions) {
    int8 += d.precision == "int8";
    unreached += d.reason.find("no calibration set reached") != std::string::npos;
  }
  EXPECT_EQ(int8, 1);
  EXPECT_EQ(unreached, 1);
  // The then branch holds the Q/DQ pairs; the model still runs, close to the float one.
  Model reloaded = load_model_from_bytes(serialize_model(m), ".");
  auto f = engine::make_runner(load_text(text), engine::EngineKind::kReference);
  auto q = engine::make_runner(std::move(reloaded), engine::EngineKind::kReference);
  for (const OutputError& e : compare_models(*f, *q, sets)) EXPECT_GE(e.cosine, 0.99) << e.name;
}

TEST(QuantStatic, QOperatorForm) {
  Model m = load_text(cnn_text());
  const QuantizeResult r = run(m, {.mode = Mode::kStatic, .format = Format::kQOperator});
  auto ops = op_counts(m);
  EXPECT_EQ(ops["QLinearConv"], 2);
  EXPECT_EQ(ops["Conv"], 0);
  EXPECT_EQ(ops["Relu"], 1);  // the first absorbed; the one after the residual Add stays
  bool gemm_float = false;
  for (const auto& d : r.decisions) gemm_float |= d.op == "Gemm" && d.precision == "float";
  EXPECT_TRUE(gemm_float);
  EXPECT_GE(worst_cosine(cnn_text(), m), 0.99);
}

TEST(QuantStatic, CalibrationMethods) {
  for (RangeMethod method : {RangeMethod::kEntropy, RangeMethod::kPercentile}) {
    Model m = load_text(cnn_text());
    const QuantizeResult r = run(m, {.mode = Mode::kStatic, .method = method, .percentile = 99.9});
    Model mm = load_text(cnn_text());
    const QuantizeResult minmax = run(mm, {.mode = Mode::kStatic});
    for (const auto& [t, range] : r.ranges) {  // inside the min/max range
      EXPECT_GE(range.min, minmax.ranges.at(t).min - 1e-6) << t;
      EXPECT_LE(range.max, minmax.ranges.at(t).max + 1e-6) << t;
    }
    EXPECT_GE(worst_cosine(cnn_text(), m), 0.95) << method_name(method);
  }
}

TEST(QuantStatic, ExcludedNodeStaysFloat) {
  Model m = load_text(cnn_text());
  const QuantizeResult r = run(m, {.mode = Mode::kStatic, .exclude_nodes = {"c2"}});
  bool found = false;
  for (const auto& d : r.decisions)
    if (d.node == "c2") found = d.precision == "float" && d.reason.find("exclude") != std::string::npos;
  EXPECT_TRUE(found);
  int weight_dq = 0;
  for (const auto& n : m.graph->nodes())
    weight_dq += n->op_type == "DequantizeLinear" && n->inputs[0]->data.dtype() == DataType::kInt8;
  EXPECT_EQ(weight_dq, 2);
}

// --fallback bf16: the excluded conv reads its weight as bf16 through a Cast; the others int8.
TEST(QuantStatic, ExcludedNodeInBf16) {
  Model m = load_text(cnn_text());
  const QuantizeResult r =
      run(m, {.mode = Mode::kStatic, .exclude_nodes = {"c2"}, .fallback = DataType::kBFloat16});
  bool found = false;
  for (const auto& d : r.decisions)
    if (d.node == "c2") found = d.precision == "bf16" && d.reason.find("exclude") != std::string::npos;
  EXPECT_TRUE(found);
  int weight_dq = 0, bf16_casts = 0;
  for (const auto& n : m.graph->nodes()) {
    weight_dq += n->op_type == "DequantizeLinear" && n->inputs[0]->data.dtype() == DataType::kInt8;
    if (n->op_type == "Cast" && n->inputs[0]->data.dtype() == DataType::kBFloat16) {
      ++bf16_casts;
      ASSERT_EQ(n->outputs[0]->uses.size(), 1u);
      EXPECT_EQ(node_label(*n->outputs[0]->uses[0].node), "c2");
    }
  }
  EXPECT_EQ(weight_dq, 2);
  EXPECT_EQ(bf16_casts, 1);
  EXPECT_EQ(r.conversion.converted_initializers, 1);
  EXPECT_GE(worst_cosine(cnn_text(), m), 0.99);
}

TEST(QuantMixedPrecision, KeepsTheWorstNodesFloat) {
  Model pristine = load_text(cnn_text());
  Model m = load_text(cnn_text());
  const QuantizeOptions o{.mode = Mode::kStatic, .activation_type = DataType::kInt8};
  const QuantizeResult r = run(m, o, 4);
  auto reference = engine::make_runner(load_text(cnn_text()), engine::EngineKind::kFast);
  const auto sets = random_sets(pristine, 2, 50);
  const MixedPrecision loose = search_mixed_precision(pristine, o, r.ranges, r.decisions, *reference,
                                                      sets, 1.0, false);
  EXPECT_TRUE(loose.reached);
  EXPECT_TRUE(loose.kept_float.empty());
  ASSERT_GT(loose.loss_all, 0);
  const MixedPrecision tight = search_mixed_precision(pristine, o, r.ranges, r.decisions, *reference,
                                                      sets, loose.loss_all / 4, false);
  ASSERT_EQ(tight.damage.size(), 3u);  // two convs and the Gemm
  for (size_t i = 1; i < tight.damage.size(); ++i) EXPECT_GE(tight.damage[i - 1].second, tight.damage[i].second);
  ASSERT_FALSE(tight.kept_float.empty());
  EXPECT_EQ(tight.kept_float[0], tight.damage[0].first);
  EXPECT_LT(tight.loss_final, tight.loss_all);
  if (tight.reached) {
    EXPECT_LE(tight.loss_final, loose.loss_all / 4);
  }
}

TEST(QuantFloat16, ConvertsWithRangeChecks) {
  std::string text = cnn_text();
  Model m = load_text(text);
  const QuantizeResult r = run(m, {.mode = Mode::kFloat16});
  EXPECT_EQ(r.conversion.converted_initializers, 5);
  EXPECT_EQ(m.graph->inputs[0]->type.elem, DataType::kFloat);   // --keep-io-types
  EXPECT_EQ(m.graph->outputs[0]->type.elem, DataType::kFloat);
  int fp16_weights = 0;
  for (const Value* v : m.graph->initializers) fp16_weights += v->data.dtype() == DataType::kFloat16;
  EXPECT_EQ(fp16_weights, 5);
  EXPECT_GE(worst_cosine(text, m), 0.999);

  const std::string big = R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (float[3] x) => (float[3] y) {
  c = Constant <value = float[3] {1e6, -7e4, 0.5}> ()
  y = Mul(x, c)
})";
  Model b = load_text(big);
  EXPECT_EQ(run(b, {.mode = Mode::kFloat16}).conversion.clamped_values, 2);
}

TEST(QuantFloat16, ShapeInputsStayInt) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (float[2,6] x) => (float[3,4] y) {
  s = Constant <value = int64[2] {3, 4}> ()
  r = Reshape(x, s)
  y = Relu(r)
})";
  Model m = load_text(text);
  run(m, {.mode = Mode::kBFloat16, .bf16_whole_graph = true});
  for (const auto& n : m.graph->nodes())
    if (n->op_type == "Reshape") {
      EXPECT_EQ(n->inputs[1]->type.elem, DataType::kInt64);
    }
  EXPECT_GE(worst_cosine(text, m), 0.999);
}

// bf16's default form: the weights of the convs and the Gemm stored bf16 and read through Casts
// to float32, every op and every other value float32 (biases included).
TEST(QuantBFloat16, WeightsStoredBf16) {
  const std::string text = cnn_text();
  Model m = load_text(text);
  const QuantizeResult r = run(m, {.mode = Mode::kBFloat16});
  EXPECT_EQ(r.conversion.converted_initializers, 3);
  EXPECT_EQ(r.conversion.casts_added, 3);
  int bf16_weights = 0, float_initializers = 0;
  for (const Value* v : m.graph->initializers) {
    bf16_weights += v->data.dtype() == DataType::kBFloat16;
    float_initializers += v->data.dtype() == DataType::kFloat;
  }
  EXPECT_EQ(bf16_weights, 3);
  EXPECT_EQ(float_initializers, 2);  // the convs' biases
  for (const auto& n : m.graph->nodes()) {
    if (n->op_type == "Cast") {
      EXPECT_EQ(n->inputs[0]->data.dtype(), DataType::kBFloat16) << n->name;
      EXPECT_TRUE(n->outputs[0]->uses.size() == 1 && n->outputs[0]->uses[0].input_index == 1) << n->name;
    }
    for (const Value* v : n->outputs) EXPECT_EQ(v->type.elem, DataType::kFloat) << v->name;
  }
  EXPECT_EQ(op_counts(m)["Cast"], 3);
  int bf16_nodes = 0;
  for (const auto& d : r.decisions) bf16_nodes += d.precision == "bf16";
  EXPECT_EQ(bf16_nodes, 3);
  EXPECT_GE(worst_cosine(text, m), 0.999);

  // Nothing to store: no weight-reading op.
  Model none = load_text(R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (float[3] x) => (float[3] y) {
  y = Relu(x)
})");
  try {
    run(none, {.mode = Mode::kBFloat16});
    ADD_FAILURE() << "no refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadModel);
    EXPECT_NE(std::string(e.what()).find("nothing to store in bf16"), std::string::npos) << e.what();
  }
}

TEST(QuantErrors, BadFiltersAndNothingToQuantize) {
  auto kind_of = [](auto fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::kInternal;
  };
  Model m = load_text(mlp_text());
  EXPECT_EQ(kind_of([&] { run(m, {.mode = Mode::kDynamic, .exclude_nodes = {"nope"}}); }), ErrorKind::kBadInput);
  EXPECT_EQ(kind_of([&] { run(m, {.mode = Mode::kDynamic, .exclude_ops = {"Conv"}}); }), ErrorKind::kBadInput);
  EXPECT_EQ(kind_of([&] { run(m, {.mode = Mode::kDynamic, .include_ops = {"Softmax"}}); }), ErrorKind::kBadInput);
  Model relu = load_text(R"(<ir_version: 8, opset_import: ["" : 17]>
agraph (float[3] x) => (float[3] y) { y = Relu(x) })");
  EXPECT_EQ(kind_of([&] { run(relu, {.mode = Mode::kDynamic}); }), ErrorKind::kBadModel);
  // A calibration set of the wrong dtype names the set.
  Model c = load_text(cnn_text());
  std::vector<FeedSet> bad = {{RtValue::of(Tensor(DataType::kInt64, {1, 3, 8, 8}))}};
  try {
    quantize(c, {.mode = Mode::kStatic}, bad, {"set_a"}, {.progress = false}, "cnn.onnx");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("calibration set set_a"), std::string::npos) << e.what();
  }
}

TEST(QuantParams, RoundingAndZeroPoints) {
  EXPECT_EQ(quantize_value(2.5f, 1.0f, 0, DataType::kInt8), 2);  // half to even
  EXPECT_EQ(quantize_value(3.5f, 1.0f, 0, DataType::kInt8), 4);
  EXPECT_EQ(quantize_value(1000.0f, 1.0f, 0, DataType::kInt8), 127);
  EXPECT_EQ(quantize_value(-1.0f, 1.0f, 0, DataType::kUInt8), 0);
  const QuantParams p = params_for({-1.0f, 3.0f}, DataType::kUInt8, false);
  EXPECT_NEAR(p.scale[0], 4.0f / 255, 1e-7);
  EXPECT_EQ(p.zero_point[0], 64);
  const QuantParams s = params_for({-1.0f, 3.0f}, DataType::kInt8, true);
  EXPECT_NEAR(s.scale[0], 6.0f / 254, 1e-7);
  EXPECT_EQ(s.zero_point[0], 0);
  const QuantParams relu = params_for({0.0f, 2.0f}, DataType::kUInt8, false);
  EXPECT_EQ(relu.zero_point[0], 0);
}

TEST(QuantParams, HistogramThresholds) {
  Histogram h{.lo = 0, .hi = 10};
  std::vector<float> x;
  for (int i = 0; i < 10000; ++i) x.push_back(static_cast<float>(i % 1000) / 1000.0f);  // [0, 1)
  x.push_back(10.0f);  // one outlier
  h.add(x.data(), static_cast<int64_t>(x.size()));
  const Range p = percentile_range(h, 99.9);
  EXPECT_LT(p.max, 1.1f);
  EXPECT_GT(p.max, 0.9f);
  EXPECT_LT(entropy_threshold(h), 2.0f);
}

}  // namespace
}  // namespace kiln::quant
