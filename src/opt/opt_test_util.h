// What the optimizer's tests share: a model in ONNX text syntax optimized with every pass checked,
// its outputs proven unchanged through the reference runtime, and its ops counted.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/text_format.h"
#include "ops/check.h"
#include "ops/infer.h"
#include "opt/pipeline.h"
#include "opt/record.h"
#include "opt/verify.h"

namespace kiln::opt::test_util {

struct Optimized {
  Model model;
  OptimizeResult result;
  std::map<std::string, int64_t> ops;
};

inline Model load_text(const std::string& text) {
  Model m = parse_model_text(text);
  check_model(m);
  infer_shapes(m);
  return m;
}

// Optimizes, checking the model after every pass, then proves the outputs unchanged.
inline Optimized optimize_text(const std::string& text, const std::vector<std::string>& passes,
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
inline std::string literal(const std::vector<int64_t>& dims, uint32_t seed, double lo = -1, double hi = 1) {
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

inline std::string model(int opset, const std::string& signature, const std::string& body) {
  return fmt::format("<ir_version: 8, opset_import: [\"\" : {}]>\nagraph {} {{\n{}\n}}", opset,
                     signature, body);
}

inline bool near_missed(const OptimizeResult& r, const std::string& pass, const std::string& text) {
  for (const auto& n : r.near_misses)
    if (n.pass == pass && n.reason.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace kiln::opt::test_util
