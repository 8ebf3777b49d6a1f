#include "serve/gate.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "serve/compile_request.h"
#include "serve/quantize_request.h"
#include "support/error.h"

namespace kiln::serve {
namespace {

using json = nlohmann::json;

json target(const std::string& name, double p50, double max_abs = 0, std::optional<double> cosine = std::nullopt) {
  json t = {{"target", name}, {"state", "succeeded"},
            {"measured", {{"latency_p50_ms", p50}}},
            {"accuracy", {{"outputs_match", true}, {"outputs", {{{"name", "y"}, {"max_abs_error", max_abs}}}}}}};
  if (cosine)
    t["quantize"] = {{"accuracy", {{"outputs", {{{"name", "y"}, {"compared", true}, {"max_abs", 0.01}, {"cosine", *cosine}}}}}}};
  return t;
}

TEST(ServeGate, LatencyAgainstTheBaseline) {
  const GateThresholds t = parse_gate_thresholds(json{{"latency_regression", 0.10}});
  EXPECT_TRUE(evaluate_gate(json::array({target("x86-64", 1.05)}), json::array({target("x86-64", 1.0)}), t).passed);
  const GateVerdict slow = evaluate_gate(json::array({target("x86-64", 1.2)}), json::array({target("x86-64", 1.0)}), t);
  EXPECT_FALSE(slow.passed);
  EXPECT_NE(gate_failures(slow).find("latency +20.0% > +10.0%"), std::string::npos) << gate_failures(slow);
  // No baseline: nothing to compare, the gate passes on accuracy alone.
  EXPECT_TRUE(evaluate_gate(json::array({target("x86-64", 9.0)}), json::array(), t).passed);
  // A speed-up demanded (negative threshold) and not delivered.
  const GateThresholds faster = parse_gate_thresholds(json{{"latency_regression", -0.5}});
  EXPECT_FALSE(evaluate_gate(json::array({target("x86-64", 0.9)}), json::array({target("x86-64", 1.0)}), faster).passed);
}

TEST(ServeGate, AccuracyOfFloatAndQuantizedTargets) {
  const GateThresholds t = parse_gate_thresholds(json{{"tolerance", {{"max_abs", 0.005}, {"min_cosine", 0.999}}}});
  EXPECT_TRUE(evaluate_gate(json::array({target("x86-64", 1, 1e-4)}), json::array(), t).passed);
  EXPECT_FALSE(evaluate_gate(json::array({target("x86-64", 1, 0.01)}), json::array(), t).passed);
  // Quantized: the quantized model's error against the float one (0.01) plus the artifact's counts.
  const GateVerdict q = evaluate_gate(json::array({target("x86-64", 1, 0, 0.9999)}), json::array(), t);
  EXPECT_FALSE(q.passed);
  ASSERT_EQ(q.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*q.rows[0].max_abs, 0.01);
  const GateThresholds cos = parse_gate_thresholds(json{{"tolerance", {{"min_cosine", 0.999}}}});
  EXPECT_TRUE(evaluate_gate(json::array({target("x86-64", 1, 0, 0.9995)}), json::array(), cos).passed);
  EXPECT_FALSE(evaluate_gate(json::array({target("x86-64", 1, 0, 0.99)}), json::array(), cos).passed);
}

// A latency made of reference-kernel steps (int8 MatMulInteger at an ISA without VNNI) passes
// with a note saying so, in the table too.
TEST(ServeGate, ReferenceKernelStepsAreNoted) {
  const GateThresholds t = parse_gate_thresholds(json{{"latency_regression", 0.1}});
  json slow = target("x86-64-v3", 0.3);
  slow["measured"]["plan"] = {{"steps", 10}, {"kernels", {{"cpu.elementwise", 6}, {"reference", 4}}}};
  const GateVerdict v = evaluate_gate(json::array({slow}), json::array(), t);
  EXPECT_TRUE(v.passed);
  ASSERT_EQ(v.rows[0].why.size(), 1u);
  EXPECT_EQ(v.rows[0].why[0], "4 of 10 steps on the reference kernels");
  EXPECT_NE(gate_table(v).find("pass: 4 of 10 steps on the reference kernels"), std::string::npos) << gate_table(v);
  json fast = target("x86-64-v4", 0.005);
  fast["measured"]["plan"] = {{"steps", 6}, {"kernels", {{"onednn.quant_matmul", 2}}}};
  EXPECT_TRUE(evaluate_gate(json::array({fast}), json::array(), t).rows[0].why.empty());
}

TEST(ServeGate, FailedTargetsFailAndFallbacksPassUnverified) {
  const GateThresholds t = parse_gate_thresholds(json{{"latency_regression", 0.1}});
  const json failed = {{"target", "x86-64"}, {"state", "failed"}, {"error", "the compile crashed"}};
  EXPECT_FALSE(evaluate_gate(json::array({failed}), json::array(), t).passed);
  const json fell = {{"target", "aarch64-linux"}, {"state", "fell-back"}, {"fallback", {{"reason", "not here"}}}};
  const GateVerdict v = evaluate_gate(json::array({fell}), json::array(), t);
  EXPECT_TRUE(v.passed);
  EXPECT_NE(v.rows[0].why[0].find("not verified here"), std::string::npos);
  // Latency asked for, nothing measured (runs 0): fails.
  const json unmeasured = {{"target", "x86-64"}, {"state", "succeeded"}, {"accuracy", json::object()}};
  EXPECT_FALSE(evaluate_gate(json::array({unmeasured}), json::array(), t).passed);
  EXPECT_NE(gate_table(v).find("aarch64-linux"), std::string::npos);
}

TEST(ServeGate, StricterThresholdsTakeTheStricterOfEach) {
  const GateThresholds gate{.max_abs = 1e-2, .min_cosine = std::nullopt, .latency_regression = 0.5};
  const GateThresholds policy{.max_abs = 1e-3, .min_cosine = 0.99, .latency_regression = 0.1};
  const GateThresholds s = stricter_thresholds(gate, policy);
  EXPECT_EQ(s.max_abs, 1e-3);
  EXPECT_EQ(s.min_cosine, 0.99);
  EXPECT_EQ(s.latency_regression, 0.1);
  const GateThresholds strict_gate{.max_abs = 1e-4, .min_cosine = 0.999, .latency_regression = -0.2};
  const GateThresholds t = stricter_thresholds(strict_gate, policy);
  EXPECT_EQ(t.max_abs, 1e-4);
  EXPECT_EQ(t.min_cosine, 0.999);
  EXPECT_EQ(t.latency_regression, -0.2);
  EXPECT_FALSE(stricter_thresholds({}, {}).max_abs);
}

TEST(ServeGate, ThresholdsAreChecked) {
  EXPECT_THROW(parse_gate_thresholds(json{{"latency_regression", "10%"}}), Error);
  EXPECT_THROW(parse_gate_thresholds(json{{"latency_regression", -1.5}}), Error);
  EXPECT_THROW(parse_gate_thresholds(json{{"tolerance", {{"max_abs", -1}}}}), Error);
  EXPECT_THROW(parse_gate_thresholds(json{{"tolerance", {{"colour", 1}}}}), Error);
  EXPECT_THROW(parse_gate_thresholds(json{{"tolerance", {{"min_cosine", 2}}}}), Error);
  const GateThresholds t = parse_gate_thresholds(gate_thresholds_json(
      parse_gate_thresholds(json{{"tolerance", {{"max_abs", 0.5}}}, {"latency_regression", 0.2}})));
  EXPECT_DOUBLE_EQ(*t.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(*t.latency_regression, 0.2);
}

TEST(ServeQuantizeRequest, ChecksValuesAndMapsToKilnQuantize) {
  EXPECT_THROW(parse_quantize_request(json{{"mode", "int4"}}), Error);
  EXPECT_THROW(parse_quantize_request(json{{"mode", "static"}}), Error);  // no calibration
  EXPECT_THROW(parse_quantize_request(json{{"mode", "fp16"}, {"max_loss", 0.1}}), Error);
  EXPECT_THROW(parse_quantize_request(json{{"calibrate", {{"abc"}}}}), Error);
  EXPECT_THROW(parse_quantize_request(json{{"dims", {"batch"}}}), Error);
  EXPECT_THROW(parse_quantize_request(json{{"include_ops", {"Conv,MatMul"}}}), Error);
  const QuantizeRequest q = parse_quantize_request(
      json{{"mode", "static"}, {"calibrate_random", 8}, {"per_channel", false}, {"exclude_ops", {"Add"}}});
  const std::vector<std::string> a = quantize_args(q, "m.onnx", "q.onnx", "r.json", "calib", 7, 2, 1);
  const auto has_in = [](const std::vector<std::string>& args, const std::string& flag, const std::string& value) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == flag && args[i + 1] == value) return true;
    return false;
  };
  const auto has = [&](const std::string& flag, const std::string& value) { return has_in(a, flag, value); };
  EXPECT_TRUE(has("--mode", "static"));
  EXPECT_TRUE(has("--calibrate-random", "8"));
  EXPECT_TRUE(has("--exclude-ops", "Add"));
  EXPECT_TRUE(has("--seed", "7"));
  EXPECT_NE(std::find(a.begin(), a.end(), "--per-tensor"), a.end());
  EXPECT_EQ(std::find(a.begin(), a.end(), "--calibrate"), a.end());
  // The key changes with the request and the seed, and round-trips through the stored JSON.
  const std::string k = quantized_model_key(std::string(64, 'a'), q, 7);
  EXPECT_EQ(k, quantized_model_key(std::string(64, 'a'), parse_quantize_request(quantize_request_json(q)), 7));
  EXPECT_NE(k, quantized_model_key(std::string(64, 'a'), q, 8));
  EXPECT_NE(k, quantized_model_key(std::string(64, 'a'), parse_quantize_request(json{{"mode", "dynamic"}}), 7));
  // Every word reaches kiln quantize and the key: the fallback and bf16's form too.
  const QuantizeRequest f = parse_quantize_request(json{{"mode", "static"}, {"calibrate_random", 8}, {"per_channel", false},
                                                        {"exclude_ops", {"Add"}}, {"fallback", "bf16"}});
  const std::vector<std::string> fa = quantize_args(f, "m.onnx", "q.onnx", "r.json", "calib", 7, 2, 1);
  EXPECT_TRUE(has_in(fa, "--fallback", "bf16"));
  EXPECT_NE(k, quantized_model_key(std::string(64, 'a'), f, 7));
  EXPECT_EQ(quantized_model_key(std::string(64, 'a'), f, 7),
            quantized_model_key(std::string(64, 'a'), parse_quantize_request(quantize_request_json(f)), 7));
  const QuantizeRequest w = parse_quantize_request(json{{"mode", "bf16"}, {"bf16_whole_graph", true}});
  const std::vector<std::string> wa = quantize_args(w, "m.onnx", "q.onnx", "r.json", "calib", 7, 2, 1);
  EXPECT_NE(std::find(wa.begin(), wa.end(), "--bf16-whole-graph"), wa.end());
  EXPECT_NE(quantized_model_key(std::string(64, 'a'), w, 7),
            quantized_model_key(std::string(64, 'a'), parse_quantize_request(json{{"mode", "bf16"}}), 7));
  // In a compile request.
  const CompileRequest r = parse_compile_request(json{{"targets", {"x86-64"}}, {"quantize", {{"mode", "dynamic"}}}});
  ASSERT_TRUE(r.quantize.has_value());
  EXPECT_EQ(compile_request_json(r)["quantize"]["mode"], "dynamic");
  EXPECT_FALSE(parse_compile_request(json{{"targets", {"x86-64"}}}).quantize.has_value());
}

}  // namespace
}  // namespace kiln::serve
