// cpu.matmul (small_matmul_step.cc): MatMul and Gemm of few multiply-adds on a constant float
// weight, against the reference kernels: the weight as [K, N] and as a Linear layer's [N, K],
// leading dims folded into M, Gemm's C as a bias with beta, a bias Add and an activation after
// it taken as the step's own; what it leaves to oneDNN (alpha, a product too large for one
// thread, two activations).
#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;

TEST(SmallMatmul, MatMulWithItsBiasAndActivationIsOneStep) {
  const auto make = [] {
    ModelBuilder b;
    Value* y = b.op("MatMul", {b.input("x", {2, 3, 37}), b.constant("w", random_tensor({37, 21}, 2))});
    y = b.op("Add", {y, b.constant("bias", random_tensor({21}, 3))});
    b.output(b.op("Relu", {y}));
    return b.take();
  };
  const PlanSummary s = expect_same_as_reference(make, {random_tensor({2, 3, 37}, 1)});
  EXPECT_EQ(steps_of(s, "cpu.matmul"), 1);
  EXPECT_EQ(s.steps, 1);
}

TEST(SmallMatmul, GemmOfEveryWeightLayoutAndBias) {
  for (const bool trans_b : {true, false})
    for (const float beta : {1.0f, 0.5f})
      for (const bool with_c : {true, false}) {
        SCOPED_TRACE(std::string(trans_b ? "transB" : "") + " beta " + std::to_string(beta) + (with_c ? " C" : ""));
        const auto make = [=] {
          ModelBuilder b;
          std::vector<Value*> in = {b.input("x", {5, 70}),
                                    b.constant("w", random_tensor(trans_b ? std::vector<int64_t>{33, 70} : std::vector<int64_t>{70, 33}, 4))};
          if (with_c) in.push_back(b.constant("c", random_tensor({33}, 5)));
          b.output(b.op("Gemm", in, {attr("transB", int64_t{trans_b}), attr("beta", beta)}));
          return b.take();
        };
        const PlanSummary s = expect_same_as_reference(make, {random_tensor({5, 70}, 6)});
        EXPECT_EQ(steps_of(s, "cpu.matmul"), 1);
      }
}

TEST(SmallMatmul, LeavesToOneDnnWhatItDoesNotTake) {
  struct Case {
    std::string what;
    std::vector<int64_t> x, w;
    float alpha;
  };
  for (const Case& c : {Case{"alpha", {4, 64}, {64, 32}, 2.0f}, Case{"large", {64, 256}, {256, 256}, 1.0f}}) {
    SCOPED_TRACE(c.what);
    const auto make = [&] {
      ModelBuilder b;
      b.output(b.op("Gemm", {b.input("x", shape_of(c.x)), b.constant("w", random_tensor(c.w, 7))}, {attr("alpha", c.alpha)}));
      return b.take();
    };
    const PlanSummary s = expect_same_as_reference(make, {random_tensor(c.x, 8)}, 1e-4, 1e-4);
    EXPECT_EQ(steps_of(s, "cpu.matmul"), 0);
    EXPECT_EQ(steps_of(s, "onednn.matmul"), 1);
  }
  ModelBuilder b;  // two activations: attention's products
  b.output(b.op("MatMul", {b.input("q", {4, 8}), b.input("k", {8, 4})}));
  CompiledModel m(b.take());
  EXPECT_EQ(steps_of(m.summary({{4, 8}, {8, 4}}), "cpu.matmul"), 0);
}

}  // namespace
}  // namespace kiln::engine
