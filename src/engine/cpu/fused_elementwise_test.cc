// Fused elementwise programs against the same ops run one by one through the reference kernels.
#include "engine/cpu/fused_elementwise.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/cpu/reference_op.h"
#include "engine/cpu/test_support.h"
#include "support/error.h"

namespace kiln::cpu {
namespace {

Tensor run_program(const EwProgram& p, const std::vector<Tensor>& inputs,
                   std::vector<int64_t> y_dims) {
  std::vector<EwInput> in;
  for (const Tensor& t : inputs) in.push_back({t.data<float>(), t.dims()});
  Tensor y(DataType::kFloat, std::move(y_dims));
  run_fused(p, in, y.data<float>(), y.dims());
  return y;
}

// Gelu written out as ops, as exporters emit it: x * 0.5 * (1 + erf(x / sqrt(2))).
EwProgram gelu_program() {
  EwProgram p;
  const EwValue x = p.input(0);
  const EwValue e = p.unary(UnaryOp::kErf, p.binary(BinaryOp::kDiv, x, p.constant(1.41421356f)));
  p.set_result(p.binary(BinaryOp::kMul, p.binary(BinaryOp::kMul, x, p.constant(0.5f)),
                        p.binary(BinaryOp::kAdd, e, p.constant(1.0f))));
  return p;
}

class CpuFused : public IsaTest {};

TEST_P(CpuFused, GeluChainMatchesTheReferenceOpByOp) {
  std::mt19937 rng(1);
  for (int64_t n : {0, 1, 15, 17, 1023, 70001}) {
    SCOPED_TRACE(n);
    const Tensor x = random_tensor({n}, rng, -6.0f, 6.0f);
    const Tensor sqrt2 = Tensor::scalar(DataType::kFloat, 1.41421356f);
    const Tensor half = Tensor::scalar(DataType::kFloat, 0.5f);
    const Tensor one = Tensor::scalar(DataType::kFloat, 1.0f);
    const Tensor e = ReferenceOp("Erf").run1({ReferenceOp("Div").run1({x, sqrt2})});
    const Tensor want = ReferenceOp("Mul").run1(
        {ReferenceOp("Mul").run1({x, half}), ReferenceOp("Add").run1({e, one})});
    // Only erf differs from the reference's erff (a few ulp, absolute near 1 + erf = 0).
    EXPECT_TRUE(tensors_near(run_program(gelu_program(), {x}, {n}), want, 4, 4e-7f));
  }
}

TEST_P(CpuFused, BiasAddReluOverChannelsIsExact) {
  std::mt19937 rng(2);
  // Rows (H x W) shorter than a block: the bias is copied per block; longer: read in place.
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{2, 16, 7, 9}, {2, 8, 40, 40}}) {
    SCOPED_TRACE(dims_to_string(dims));
    const Tensor x = random_tensor(dims, rng), bias = random_tensor({dims[1], 1, 1}, rng);
    EwProgram p;
    p.set_result(p.unary(UnaryOp::kRelu, p.binary(BinaryOp::kAdd, p.input(0), p.input(1))));
    const Tensor want = ReferenceOp("Relu").run1({ReferenceOp("Add").run1({x, bias})});
    EXPECT_TRUE(tensors_near(run_program(p, {x, bias}, x.dims()), want, 0));
  }
}

TEST_P(CpuFused, ChannelsLastScaleIsExact) {
  std::mt19937 rng(8);
  // A squeeze-excitation scale in channels-last order: rows of 24 repeated over H x W (tiled once
  // per image), next to a per-row operand (copied per block).
  const Tensor x = random_tensor({2, 5, 7, 24}, rng), s = random_tensor({2, 1, 1, 24}, rng),
               r = random_tensor({5, 7, 1}, rng);
  EwProgram p;
  p.set_result(p.binary(BinaryOp::kSub, p.binary(BinaryOp::kMul, p.input(0), p.input(1)), p.input(2)));
  const Tensor want = ReferenceOp("Sub").run1({ReferenceOp("Mul").run1({x, s}), r});
  EXPECT_TRUE(tensors_near(run_program(p, {x, s, r}, x.dims()), want, 0));
}

TEST_P(CpuFused, InputsWithDifferentBroadcastsAndReversedOperands) {
  std::mt19937 rng(3);
  // (a + b) * c - 2 / a, then Max with d: a full, b per channel, c per last axis, d a scalar.
  const Tensor a = random_tensor({3, 5, 33}, rng), b = random_tensor({5, 1}, rng),
               c = random_tensor({33}, rng), d = random_tensor({}, rng);
  EwProgram p;
  const EwValue s = p.binary(BinaryOp::kMul, p.binary(BinaryOp::kAdd, p.input(0), p.input(1)),
                             p.input(2));
  const EwValue q = p.binary(BinaryOp::kDiv, p.constant(2.0f), p.input(0));
  p.set_result(p.binary(BinaryOp::kMax, p.binary(BinaryOp::kSub, s, q), p.input(3)));
  const Tensor two = Tensor::scalar(DataType::kFloat, 2.0f);
  const Tensor ws = ReferenceOp("Mul").run1({ReferenceOp("Add").run1({a, b}), c});
  const Tensor wq = ReferenceOp("Div").run1({two, a});
  const Tensor want = ReferenceOp("Max").run1({ReferenceOp("Sub").run1({ws, wq}), d});
  EXPECT_TRUE(tensors_near(run_program(p, {a, b, c, d}, a.dims()), want, 0));
}

TEST_P(CpuFused, OutputBroadcastBeyondEveryInput) {
  std::mt19937 rng(4);
  const Tensor a = random_tensor({4, 1}, rng), b = random_tensor({1, 300}, rng);
  EwProgram p;
  p.set_result(p.unary(UnaryOp::kTanh, p.binary(BinaryOp::kMul, p.input(0), p.input(1))));
  const Tensor want = ReferenceOp("Tanh").run1({ReferenceOp("Mul").run1({a, b})});
  EXPECT_TRUE(tensors_near(run_program(p, {a, b}, {4, 300}), want, 2));
}

TEST_P(CpuFused, RunsInPlaceOverItsFullInput) {
  std::mt19937 rng(5);
  const Tensor x = random_tensor({1000}, rng);
  Tensor y = x.clone();
  EwProgram p;
  p.set_result(p.binary(BinaryOp::kAdd, p.unary(UnaryOp::kSigmoid, p.input(0)), p.input(0)));
  const std::vector<EwInput> in = {{y.data<float>(), y.dims()}};
  run_fused(p, in, y.data<float>(), y.dims());
  const Tensor want = ReferenceOp("Add").run1({ReferenceOp("Sigmoid").run1({x}), x});
  EXPECT_TRUE(tensors_near(y, want, 4, 3e-7f));  // absolute where the sum cancels
}

TEST_P(CpuFused, AKernelPlannedOnceRunsOnNewData) {
  std::mt19937 rng(7);
  EwProgram p;
  p.set_result(p.binary(BinaryOp::kMul, p.unary(UnaryOp::kTanh, p.input(0)), p.input(1)));
  const std::vector<std::vector<int64_t>> dims = {{3, 200}, {200}};
  const FusedKernel kernel(p, dims, {3, 200});
  for (int round = 0; round < 2; ++round) {
    const Tensor a = random_tensor({3, 200}, rng), b = random_tensor({200}, rng);
    Tensor y(DataType::kFloat, {3, 200});
    const float* in[] = {a.data<float>(), b.data<float>()};
    kernel.run(in, y.data<float>());
    const Tensor want = ReferenceOp("Mul").run1({ReferenceOp("Tanh").run1({a}), b});
    EXPECT_TRUE(tensors_near(y, want, 2, 6e-8f));
  }
}

TEST_P(CpuFused, ResultWithoutInstructions) {
  std::mt19937 rng(6);
  const Tensor x = random_tensor({3, 5}, rng);
  EwProgram copy;
  copy.set_result(copy.input(0));
  EXPECT_TRUE(tensors_near(run_program(copy, {x}, {3, 5}), x, 0));
  EwProgram fill;
  fill.set_result(EwProgram::constant(2.5f));
  const Tensor y = run_program(fill, {}, {2, 2});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y.data<float>()[i], 2.5f);
}

TEST_P(CpuFused, ConstantOperandsOnly) {
  EwProgram p;
  p.set_result(p.unary(UnaryOp::kExp, p.binary(BinaryOp::kAdd, p.constant(1.0f), p.constant(-1.0f))));
  const Tensor y = run_program(p, {}, {5});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(y.data<float>()[i], 1.0f);
}

// Random programs of exact ops (so the comparison is exact) over up to three inputs with random
// broadcasts, against the same ops one by one: operand order, buffer reuse, staging.
TEST_P(CpuFused, RandomProgramsMatchOpByOp) {
  std::mt19937 rng(9);
  const UnaryOp unaries[] = {UnaryOp::kRelu, UnaryOp::kNeg, UnaryOp::kAbs};
  const BinaryOp binaries[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kMax,
                               BinaryOp::kMin};
  for (int t = 0; t < 150; ++t) {
    std::vector<int64_t> out = random_dims(rng, 4, 6);
    if (!out.empty() && rng() % 2) out.back() = 1 + rng() % 300;  // long rows too
    const int n_in = 1 + static_cast<int>(rng() % 3);
    std::vector<Tensor> ins;
    for (int i = 0; i < n_in; ++i)
      ins.push_back(random_tensor(i == 0 ? out : random_broadcast_operand(out, rng), rng));
    // Values: the program's and the reference's, side by side.
    EwProgram p;
    std::vector<EwValue> vals;
    std::vector<Tensor> refs;
    for (int i = 0; i < n_in; ++i) {
      vals.push_back(p.input(i));
      refs.push_back(ins[i]);
    }
    const int n_ops = 1 + static_cast<int>(rng() % 7);
    std::string trace;
    for (int k = 0; k < n_ops; ++k) {
      const size_t a = rng() % vals.size(), b = rng() % vals.size();
      if (rng() % 3 == 0) {
        const UnaryOp op = unaries[rng() % 3];
        vals.push_back(p.unary(op, vals[a]));
        refs.push_back(ReferenceOp(unary_name(op)).run1({refs[a]}));
      } else if (rng() % 4 == 0) {
        const BinaryOp op = binaries[rng() % 5];
        const float c = static_cast<float>(rng() % 7) - 3.0f;
        vals.push_back(p.binary(op, EwProgram::constant(c), vals[a]));
        refs.push_back(ReferenceOp(binary_name(op)).run1({Tensor::scalar(DataType::kFloat, c), refs[a]}));
      } else {
        const BinaryOp op = binaries[rng() % 5];
        vals.push_back(p.binary(op, vals[a], vals[b]));
        refs.push_back(ReferenceOp(binary_name(op)).run1({refs[a], refs[b]}));
      }
    }
    p.set_result(vals.back());
    SCOPED_TRACE(dims_to_string(out) + "\n" + p.to_string());
    // The last value may not span every input's broadcast: its dims are the output's then.
    const Tensor& want = refs.back();
    const Tensor got = run_program(p, ins, want.dims());
    ASSERT_TRUE(tensors_near(got, want, 0));
  }
}

TEST(CpuFusedProgram, BuffersAreReusedByLiveness) {
  // A straight chain needs one buffer, whatever its length (each op runs in place).
  EwProgram chain;
  EwValue v = chain.input(0);
  for (int i = 0; i < 20; ++i) v = chain.unary(i % 2 ? UnaryOp::kRelu : UnaryOp::kNeg, v);
  chain.set_result(v);
  EXPECT_EQ(chain.num_regs(), 1) << chain.to_string();
  // The Gelu chain keeps x * 0.5 alive while erf runs: two.
  EXPECT_EQ(gelu_program().num_regs(), 2) << gelu_program().to_string();
}

// Found by RandomProgramsMatchOpByOp: a constant first operand (whose index is 0) hid a read of
// temp 0, whose buffer was then reused while still live.
TEST_P(CpuFused, ATempReadAfterAConstantStaysLive) {
  EwProgram p;
  const EwValue t0 = p.unary(UnaryOp::kNeg, p.input(0));
  p.unary(UnaryOp::kAbs, t0);  // dead, but takes a buffer
  p.set_result(p.binary(BinaryOp::kSub, EwProgram::constant(-1.0f), t0));
  Tensor x(DataType::kFloat, {3});
  const float v[3] = {1, -2, 3};
  std::copy(v, v + 3, x.data<float>());
  const Tensor y = run_program(p, {x}, {3});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y.data<float>()[i], -1.0f + v[i]) << p.to_string();
}

TEST(CpuFusedProgram, TooManyLiveValuesIsUnsupported) {
  // Nine values alive at once, summed at the end.
  EwProgram p;
  std::vector<EwValue> live;
  for (int i = 0; i < 9; ++i) live.push_back(p.unary(UnaryOp::kExp, p.input(i % 2)));
  EwValue sum = live[0];
  for (int i = 1; i < 9; ++i) sum = p.binary(BinaryOp::kAdd, sum, live[i]);
  try {
    p.set_result(sum);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
  }
  EXPECT_FALSE(p.finished());  // so run_fused refuses it
}

TEST(CpuFusedProgram, MissingInputsAreAnError) {
  EwProgram p;
  p.set_result(p.binary(BinaryOp::kAdd, p.input(0), p.input(1)));
  const float x[2] = {1, 2};
  const std::vector<int64_t> dims = {2};
  const std::vector<EwInput> in = {{x, dims}};
  float y[2];
  EXPECT_THROW(run_fused(p, in, y, dims), Error);
}

KILN_INSTANTIATE_FOR_ISAS(CpuFused);

}  // namespace
}  // namespace kiln::cpu
