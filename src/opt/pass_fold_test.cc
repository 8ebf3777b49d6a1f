// fold-constants and the optimizer's inference on weights kept quantized: DequantizeLinear of
// int8 weights and Casts of bf16/fp16 weights stay in the model and are not decoded before every
// pass (opt::kept_weight_decoding).
#include <gtest/gtest.h>

#include "ops/infer.h"
#include "opt/opt_test_util.h"
#include "opt/passes.h"

namespace kiln::opt {
namespace {

using namespace test_util;  // NOLINT: the shared test helpers

// Decoding quantized weights is kept, and the optimizer's inference does not evaluate it before
// every pass (a DequantizeLinear of int8 weights, a Cast of bf16 weights to float32; a 1-D Cast,
// a Resize's scales say, folds as before).
TEST(OptFold, WeightDecodingIsKept) {
  Model m = load_text(model(17, "(float[2,4] x) => (float[2,3] y)", R"(
      w = Constant <value = float[4,3] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}> ()
      q = Constant <value = int8[3,3] {1, -2, 3, -4, 5, -6, 7, -8, 9}> ()
      s = Constant <value = float {0.5}> ()
      h = Constant <value = float[3] {1, 2, 3}> ()
      wf = Cast <to = 1> (w)
      qf = DequantizeLinear(q, s)
      hf = Cast <to = 1> (h)
      a = MatMul(x, wf)
      p = MatMul(a, qf)
      hh = Add(hf, hf)
      y = Add(p, hh)
  )"));
  // w as bf16, h as fp16 (the text format has no bfloat16 literals)
  for (const auto& n : m.graph->nodes()) {
    const std::string& out = n->outputs[0]->name;
    if (n->op_type != "Constant" || (out != "w" && out != "h")) continue;
    Tensor& t = n->attr("value")->t;
    Tensor low(out == "w" ? DataType::kBFloat16 : DataType::kFloat16, t.dims());
    for (int64_t i = 0; i < t.numel(); ++i)
      low.data<uint16_t>()[i] = out == "w" ? float_to_bfloat16(t.data<float>()[i]) : float_to_half(t.data<float>()[i]);
    t = std::move(low);
  }
  infer_shapes(m);
  const OptimizeResult r = optimize(m, {"fold-constants", "dce"});
  std::map<std::string, int64_t> ops = model_stats(m).ops;
  EXPECT_EQ(ops, (std::map<std::string, int64_t>{{"Add", 1}, {"Cast", 1}, {"DequantizeLinear", 1}, {"MatMul", 2}}));
  EXPECT_TRUE(near_missed(r, "fold-constants", "quantized weights"));
  EXPECT_TRUE(near_missed(r, "fold-constants", "reduced-precision weights"));
  InferOptions opts;
  opts.keep_unevaluated = kept_weight_decoding;
  InferFacts facts;
  infer_shapes(m, opts, &facts);
  for (const auto& n : m.graph->nodes())
    if (n->op_type == "Cast" || n->op_type == "DequantizeLinear") {
      EXPECT_FALSE(facts.constants.contains(n->outputs[0])) << n->op_type << " was evaluated";
    }
}

}  // namespace
}  // namespace kiln::opt
