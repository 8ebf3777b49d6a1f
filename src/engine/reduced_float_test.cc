// float16 and bfloat16 graphs computed in float32 by the fast engine (reduced_float.h).
#include "engine/reduced_float.h"

#include <gtest/gtest.h>

#include "engine/compiled_model.h"
#include "engine/engine_test_util.h"
#include "ops/infer.h"

namespace kiln::engine {
namespace {

using testing::expect_same_as_reference;
using testing::random_tensor;

Tensor narrowed(const Tensor& f, DataType t) {
  Tensor r(t, f.dims());
  for (int64_t i = 0; i < f.numel(); ++i) {
    const float v = f.data<float>()[i];
    r.data<uint16_t>()[i] = t == DataType::kFloat16 ? float_to_half(v) : float_to_bfloat16(v);
  }
  return r;
}

int count_ops(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op_type == op;
  return n;
}

// x -> Conv (w, b) -> Relu -> Add x -> GlobalAveragePool, every value of type t; the pooled
// value and the sum are the outputs.
Model conv_block(DataType t) {
  testing::ModelBuilder b;
  Value* x = b.input("x", {1, 8, 6, 6}, t);
  Value* w = b.constant("w", narrowed(random_tensor({8, 8, 3, 3}, 1, -0.2f, 0.2f), t));
  Value* bias = b.constant("b", narrowed(random_tensor({8}, 2), t));
  Value* c = b.op("Conv", {x, w, bias}, {testing::attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
  Value* sum = b.op("Add", {b.op("Relu", {c}), x});
  b.output(b.op("GlobalAveragePool", {sum}));
  b.output(sum);
  return b.take();
}

// x -> MatMul w -> Add b -> Relu, every value of type t (ONNX's Conv has no bfloat16).
Model matmul_block(DataType t) {
  testing::ModelBuilder b;
  Value* x = b.input("x", {4, 16}, t);
  Value* w = b.constant("w", narrowed(random_tensor({16, 8}, 4), t));
  Value* bias = b.constant("b", narrowed(random_tensor({8}, 5), t));
  b.output(b.op("Relu", {b.op("Add", {b.op("MatMul", {x, w}), bias})}));
  return b.take();
}

TEST(ReducedFloat, ComputesInFloat32BetweenCastsAtTheEdges) {
  Model m = conv_block(DataType::kFloat16);
  infer_shapes(m);
  ASSERT_EQ(compute_reduced_floats_in_float32(*m.graph), 4);
  const Graph& g = *m.graph;
  // x widened once (read by Conv and Add); the sum and the pooled value narrowed back for the
  // graph's outputs; nothing between Conv, Relu and Add.
  EXPECT_EQ(count_ops(g, "Cast"), 3);
  for (const auto& n : g.nodes()) {
    if (n->op_type == "Cast") continue;
    for (const Value* v : n->inputs) EXPECT_EQ(v->type.elem, DataType::kFloat) << n->op_type << " reads " << v->name;
    for (const Value* v : n->outputs) EXPECT_EQ(v->type.elem, DataType::kFloat) << n->op_type << " makes " << v->name;
  }
  // The weights converted once; the float16 initializers gone.
  EXPECT_EQ(g.initializers.size(), 2u);
  for (const Value* v : g.initializers) EXPECT_EQ(v->data.dtype(), DataType::kFloat);
  for (const Value* v : g.outputs) EXPECT_EQ(v->type.elem, DataType::kFloat16) << v->name;
  EXPECT_EQ(g.outputs[1]->name, "Add_2_out0");
}

// On the fast engine: float16 and bfloat16 blocks run on its float32 kernels (not the reference
// kernel), their outputs of the reduced type, within that type's rounding of the reference's.
TEST(ReducedFloat, FastKernelsRunReducedFloatModels) {
  struct Case {
    DataType t;
    Model (*make)(DataType);
    std::vector<int64_t> x;
    const char* kernel;
    double tol;
  };
  for (const Case& c : {Case{DataType::kFloat16, conv_block, {1, 8, 6, 6}, "onednn.conv", 2e-3},
                        Case{DataType::kBFloat16, matmul_block, {4, 16}, "cpu.matmul", 2e-2}}) {
    const Tensor x = narrowed(random_tensor(c.x, 3), c.t);
    const PlanSummary s = expect_same_as_reference([&] { return c.make(c.t); }, {x}, c.tol, c.tol);
    EXPECT_EQ(s.kernels.count(c.kernel), 1u) << s.listing;
    int reference = 0;
    for (const auto& [kernel, steps] : s.kernels)
      if (kernel == "reference") reference = steps;
    EXPECT_LE(reference, 3) << "only the Casts at the edges: " << s.listing;
    CompiledModel fast(c.make(c.t));
    for (const RtValue& out : fast.run({RtValue::of(x)})) EXPECT_EQ(out.tensor.dtype(), c.t);
  }
}

// What stays as it is: a node whose reduced-type values are inputs only (Shape), Cast itself,
// and float32 graphs.
TEST(ReducedFloat, LeavesWhatHasNothingToComputeInFloat32) {
  testing::ModelBuilder b;
  Value* x = b.input("x", {2, 3}, DataType::kFloat16);
  b.output(b.op("Shape", {x}));
  b.output(b.op("Cast", {x}, {testing::attr("to", int64_t{1})}));
  Model m = b.take();
  infer_shapes(m);
  EXPECT_EQ(compute_reduced_floats_in_float32(*m.graph), 0);
  Model f = conv_block(DataType::kFloat);
  infer_shapes(f);
  EXPECT_EQ(compute_reduced_floats_in_float32(*f.graph), 0);
}

}  // namespace
}  // namespace kiln::engine
