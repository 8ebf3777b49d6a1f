// onednn.matmul against the reference MatMul and Gemm: weights (Linear) and batched (attention)
// problems, broadcasting, 1-D operands, Transposes read and written through strides, Gemm's
// transA / transB / alpha / beta / C, and the chains fused after them.
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;

Value* scalar(ModelBuilder& b, const std::string& name, float v) {
  return b.constant(name, Tensor::scalar(DataType::kFloat, v));
}

// (A product of more than one thread's work: smaller ones run on cpu.matmul.)
TEST(OnednnMatMul, LinearWithBiasAndErfGelu) {
  for (const std::vector<int64_t>& a : {std::vector<int64_t>{2, 3, 128}, {5, 128}, {128}}) {
    SCOPED_TRACE(dims_to_string(a));
    const auto make = [a] {
      ModelBuilder b;
      Value* x = b.input("x", shape_of(a));
      Value* y = b.op("Add", {b.constant("bias", random_tensor({1024}, 4)),
                              b.op("MatMul", {x, b.constant("w", random_tensor({128, 1024}, 2))})});
      // torch's erf Gelu: (y * (erf(y / sqrt 2) + 1)) * 0.5
      Value* e = b.op("Erf", {b.op("Div", {y, scalar(b, "r2", 1.4142135f)})});
      b.output(b.op("Mul", {b.op("Mul", {y, b.op("Add", {e, scalar(b, "one", 1)})}), scalar(b, "half", 0.5f)}));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor(a, 1)});
    EXPECT_EQ(steps_of(s, "onednn.matmul"), 1);
    EXPECT_EQ(s.steps, 1);  // bias and Gelu fused
  }
}

TEST(OnednnMatMul, BatchedWithBroadcasting) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{2, 1, 5, 7}, {3, 7, 4}}, {{4, 6, 9}, {4, 9, 3}}, {{1, 3, 8}, {2, 8, 5}}, {{6}, {2, 6, 3}},
      {{2, 4, 6}, {6}}};
  for (const auto& [a, bdims] : cases) {
    SCOPED_TRACE(dims_to_string(a) + " x " + dims_to_string(bdims));
    const auto make = [a = a, bd = bdims] {
      ModelBuilder b;
      b.output(b.op("MatMul", {b.input("a", shape_of(a)), b.input("b", shape_of(bd))}));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor(a, 1), random_tensor(bdims, 2)});
    EXPECT_EQ(steps_of(s, "onednn.matmul"), 1);
  }
}

// Attention: Q [1,h,s,d] and K^T from Transposes, scaled, a broadcast mask added, Softmax, then
// V and a Transpose of the result: the Transposes are strides, not steps.
TEST(OnednnMatMul, AttentionReadsAndWritesThroughTransposes) {
  const auto make = [] {
    ModelBuilder b;
    Value* q = b.input("q", {1, 7, 2, 5});  // [batch, seq, heads, head dim]
    Value* k = b.input("k", {1, 7, 2, 5});
    Value* v = b.input("v", {1, 7, 2, 5});
    Value* mask = b.input("mask", {1, 1, 1, 7});
    Value* qt = b.op("Transpose", {q}, {attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
    Value* kt = b.op("Transpose", {k}, {attr("perm", std::vector<int64_t>{0, 2, 3, 1})});
    Value* vt = b.op("Transpose", {v}, {attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
    Value* scores = b.op("Add", {b.op("Div", {b.op("MatMul", {qt, kt}), scalar(b, "d", 2.236f)}), mask});
    Value* p = b.op("Softmax", {scores}, {attr("axis", int64_t{-1})});
    b.output(b.op("Transpose", {b.op("MatMul", {p, vt})}, {attr("perm", std::vector<int64_t>{0, 2, 1, 3})}));
    return b.take();
  };
  const auto s = expect_same_as_reference(
      make, {random_tensor({1, 7, 2, 5}, 1), random_tensor({1, 7, 2, 5}, 2),
             random_tensor({1, 7, 2, 5}, 3), random_tensor({1, 1, 1, 7}, 4, -3, 0)});
  EXPECT_EQ(steps_of(s, "onednn.matmul"), 2);
  EXPECT_EQ(steps_of(s, "cpu.transpose"), 0);
  EXPECT_EQ(s.steps, 3);  // two matmuls and the softmax
}

// A residual added after a Linear layer (a sum), kept when it is read again.
TEST(OnednnMatMul, ResidualSum) {
  for (bool read_again : {false, true}) {
    const auto make = [read_again] {
      ModelBuilder b;
      Value* x = b.input("x", {3, 8});
      Value* h = b.op("Relu", {x});
      Value* y = b.op("Add", {h, b.op("MatMul", {h, b.constant("w", random_tensor({8, 8}, 2))})});
      b.output(read_again ? b.op("Sub", {y, h}) : y);
      return b.take();
    };
    expect_same_as_reference(make, {random_tensor({3, 8}, 1)});
  }
}

struct GemmCase {
  std::vector<int64_t> a, b, c;  // c empty: no C
  bool trans_a = false, trans_b = false, c_constant = true;
  float alpha = 1, beta = 1;
};

TEST(OnednnGemm, TransposesAlphaBetaAndC) {
  const std::vector<GemmCase> cases = {
      {{4, 9}, {9, 5}, {5}},
      {{4, 9}, {5, 9}, {1, 5}, false, true},
      {{9, 4}, {9, 5}, {4, 5}, true, false, true, 0.5f, 2.f},
      {{9, 4}, {5, 9}, {}, true, true, true, 1.5f},
      {{4, 9}, {9, 5}, {4, 5}, false, false, false},
      {{4, 9}, {9, 5}, {4, 1}, false, false, false},
      {{4, 9}, {9, 5}, {1}, false, false, true, 1.f, 3.f},
      {{1, 768}, {256, 768}, {256}, false, true},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const GemmCase g = cases[i];
    const auto make = [g] {
      ModelBuilder b;
      std::vector<Value*> ins = {b.input("a", shape_of(g.a)), b.constant("b", random_tensor(g.b, 2))};
      if (!g.c.empty()) ins.push_back(g.c_constant ? b.constant("c", random_tensor(g.c, 3)) : b.input("c", shape_of(g.c)));
      b.output(b.op("Relu", {b.op("Gemm", ins, {attr("transA", int64_t{g.trans_a}), attr("transB", int64_t{g.trans_b}),
                                                attr("alpha", g.alpha), attr("beta", g.beta)})}));
      return b.take();
    };
    // Built with reserve + push_back: GCC 12's -Warray-bounds misfires on an initializer list
    // of one Tensor followed by a push_back.
    std::vector<Tensor> feeds;
    feeds.reserve(2);
    feeds.push_back(random_tensor(g.a, 1));
    if (!g.c.empty() && !g.c_constant) feeds.push_back(random_tensor(g.c, 5));
    const auto s = expect_same_as_reference(make, feeds);
    // these small products: cpu.matmul where it takes the form (small_matmul_step.cc)
    EXPECT_EQ(steps_of(s, "onednn.matmul") + steps_of(s, "cpu.matmul"), 1);
    EXPECT_EQ(steps_of(s, "reference"), 0);
  }
}

// Both operands activations: no weights to prepare, transposes as strides.
TEST(OnednnGemm, ActivationOperands) {
  const auto make = [] {
    ModelBuilder b;
    b.output(b.op("Gemm", {b.input("a", {6, 3}), b.input("b", {5, 6}), b.input("c", {3, 5})},
                  {attr("transA", int64_t{1}), attr("transB", int64_t{1})}));
    return b.take();
  };
  const auto s = expect_same_as_reference(make, {random_tensor({6, 3}, 1), random_tensor({5, 6}, 2),
                                                 random_tensor({3, 5}, 3)});
  EXPECT_EQ(steps_of(s, "onednn.matmul"), 1);
}

}  // namespace
}  // namespace kiln::engine
