// The steps on kiln's CPU kernels against the reference kernels: fused elementwise chains (with
// broadcasting, in place, on channels-last tensors), Softmax, LayerNormalization, Transpose,
// Gather, Concat, the reductions and Cast between float32 and float16 / bfloat16.
#include <cstring>
#include <limits>

#include "engine/engine_test_util.h"

namespace kiln::engine {
namespace {

using namespace testing;
using V = std::vector<int64_t>;

Value* scalar(ModelBuilder& b, const std::string& name, float v) {
  return b.constant(name, Tensor::scalar(DataType::kFloat, v));
}

TEST(NativeElementwise, ChainWithBroadcastingIsOneStep) {
  for (const V& bias : {V{5}, V{3, 1}, V{1}, V{2, 3, 5}}) {
    SCOPED_TRACE(dims_to_string(bias));
    const auto make = [bias] {
      ModelBuilder b;
      Value* x = b.input("x", {2, 3, 5});
      Value* y = b.op("Add", {x, b.input("b", shape_of(bias))});
      y = b.op("Mul", {b.op("Sigmoid", {y}), scalar(b, "k", 1.5f)});
      b.output(b.op("Clip", {y, scalar(b, "lo", 0.2f), scalar(b, "hi", 1.f)}));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor({2, 3, 5}, 1), random_tensor(bias, 2)});
    EXPECT_EQ(steps_of(s, "cpu.elementwise"), 1);
    EXPECT_EQ(s.steps, 1);
  }
}

// A Dropout that drops nothing (inference, or a train-mode export of ratio 0) is a view; one that
// drops (training with ratio 0.5) stays on the reference kernel, random as it is.
TEST(EngineView, DropoutThatDropsNothing) {
  for (const bool training : {false, true}) {
    const auto make = [training] {
      ModelBuilder b;
      Value* on = b.constant("on", Tensor::scalar(DataType::kBool, training ? 1.0 : 0.0));
      b.output(b.op("Relu", {b.op("Dropout", {b.input("x", {2, 8}), scalar(b, "ratio", 0.0f), on})}));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor({2, 8}, 4)});
    EXPECT_EQ(steps_of(s, "engine.view"), 1) << training;
    EXPECT_EQ(steps_of(s, "reference"), 0) << training;
  }
  ModelBuilder b;
  Value* on = b.constant("on", Tensor::scalar(DataType::kBool, 1.0));
  b.output(b.op("Dropout", {b.input("x", {2, 8}), scalar(b, "ratio", 0.5f), on}));
  CompiledModel m(b.take());
  const PlanSummary s = m.summary({{2, 8}});
  EXPECT_EQ(steps_of(s, "engine.view"), 0);
  EXPECT_EQ(steps_of(s, "reference"), 1);
}

TEST(NativeElementwise, OddSizesAndEveryOp) {
  for (const std::string op : {"Relu", "Sigmoid", "Tanh", "Erf", "HardSwish", "Exp", "Neg", "Abs"}) {
    for (int64_t n : {1, 15, 17, 1023}) {
      SCOPED_TRACE(op + " " + std::to_string(n));
      const auto make = [op, n] {
        ModelBuilder b;
        b.output(b.op(op, {b.input("x", {n})}));
        return b.take();
      };
      const auto s = expect_same_as_reference(make, {random_tensor({n}, 3, -4, 4)}, 1e-5, 1e-6);
      EXPECT_EQ(steps_of(s, "cpu.elementwise"), 1);
    }
  }
  for (const std::string op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    SCOPED_TRACE(op);
    const auto make = [op] {
      ModelBuilder b;
      b.output(b.op(op, {b.input("a", {4, 1, 7}), b.input("b", {3, 1})}));
      return b.take();
    };
    expect_same_as_reference(make, {random_tensor({4, 1, 7}, 1), random_tensor({3, 1}, 2, 0.5f, 2)});
  }
}

// Squeeze-and-excitation: a conv's channels-last output scaled by a per-channel vector. The chain
// runs in the tensor's own layout: no reorder before it.
TEST(NativeElementwise, ChannelsLastInItsOwnOrder) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {1, 16, 7, 7});
    Value* c = b.op("Conv", {x, b.constant("w", random_tensor({16, 16, 1, 1}, 2))});
    Value* scale = b.op("Sigmoid", {b.op("GlobalAveragePool", {c})});
    b.output(b.op("Relu", {b.op("Mul", {c, scale})}));
    return b.take();
  };
  const auto s = expect_same_as_reference(make, {random_tensor({1, 16, 7, 7}, 1)});
  EXPECT_EQ(steps_of(s, "cpu.elementwise"), 2);  // the Sigmoid, then the Mul
  if (testing::convs_write_channels_last()) {
    EXPECT_LE(steps_of(s, "onednn.reorder"), 2);  // the input and the output only
  }
}

// A hard-swish (x * clip(x + 3, 0, 6) / 6, PaddleOCR's form) between two convs whose result is
// channel-blocked (AVX2's convs write nChw8c; AVX-512's Winograd ones nChw16c), then times an
// operand: none, a per-channel scale (squeeze-and-excitation's), one broadcast along the channels,
// or one whose row-major bytes do not lie in the blocks' order ([1, C, H, 1], read row-major, the
// chain then too). The chain works on the blocks in place: no reorder on either side but for the
// last.
TEST(NativeElementwise, ChannelBlockedInItsBlocks) {
  using V = std::vector<int64_t>;
  for (const V& scale : {V{}, V{1, 32, 1, 1}, V{32, 1, 1}, V{1, 1, 12, 12}, V{1, 32, 12, 1}}) {
    SCOPED_TRACE("scale " + dims_to_string(scale));
    const auto make = [=] {
      ModelBuilder b;
      int k = 0;
      const auto scalar = [&](float v) {
        return b.constant("k" + std::to_string(k++), Tensor::scalar(DataType::kFloat, v));
      };
      const auto pads = attr("pads", std::vector<int64_t>{1, 1, 1, 1});
      Value* x = b.input("x", {1, 16, 12, 12});
      Value* c = b.op("Conv", {x, b.constant("w", random_tensor({32, 16, 3, 3}, 2))}, {pads});
      Value* h = b.op("Clip", {b.op("Add", {c, scalar(3.0f)}), scalar(0.0f), scalar(6.0f)});
      Value* y = b.op("Div", {b.op("Mul", {c, h}), scalar(6.0f)});
      if (!scale.empty()) y = b.op("Mul", {y, b.constant("s", random_tensor(scale, 4))});
      b.output(b.op("Conv", {y, b.constant("w2", random_tensor({32, 32, 3, 3}, 3))}, {pads}));
      return b.take();
    };
    const auto s = expect_same_as_reference(make, {random_tensor({1, 16, 12, 12}, 1)}, 1e-4, 1e-4);
    EXPECT_EQ(steps_of(s, "cpu.elementwise"), 1) << s.listing;
    V d = scale;
    d.insert(d.begin(), 4 - d.size(), 1);  // right-aligned against [N, C, H, W]
    const bool in_blocks = scale.empty() || d[1] == 1 || (d[2] == 1 && d[3] == 1);
    if (in_blocks && cpu::active_isa() == cpu::Isa::kAvx2) {  // oneDNN's convs write nChw8c
      EXPECT_LE(steps_of(s, "onednn.reorder"), 2) << s.listing;  // the input and the output only
    }
  }
}

TEST(NativeSoftmax, AxesAndOpsets) {
  for (int opset : {11, 13}) {
    for (int64_t axis : {-1, 0, 1, 2}) {
      for (const std::string op : {"Softmax", "LogSoftmax"}) {
        SCOPED_TRACE(op + " opset " + std::to_string(opset) + " axis " + std::to_string(axis));
        const auto make = [=] {
          ModelBuilder b(opset);
          b.output(b.op(op, {b.input("x", {3, 4, 17})}, {attr("axis", axis)}));
          return b.take();
        };
        const auto s = expect_same_as_reference(make, {random_tensor({3, 4, 17}, 1, -5, 5)}, 1e-5, 1e-6);
        EXPECT_EQ(s.steps, 1);
        EXPECT_EQ(steps_of(s, "reference"), 0);
      }
    }
  }
}

TEST(NativeLayerNorm, AxesBiasAndStatistics) {
  for (int64_t axis : {-1, -2, 1}) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + (bias ? " bias" : ""));
      const auto make = [=] {
        ModelBuilder b;
        Value* x = b.input("x", {2, 5, 33});
        const V pd = axis == -1 ? V{33} : V{5, 33};
        std::vector<Value*> ins = {x, b.constant("s", random_tensor(pd, 2))};
        if (bias) ins.push_back(b.constant("b", random_tensor(pd, 3)));
        auto outs = b.node("LayerNormalization", ins, {attr("axis", axis), attr("epsilon", 1e-3f)}, 3);
        for (Value* o : outs) b.output(o);
        return b.take();
      };
      const auto s = expect_same_as_reference(make, {random_tensor({2, 5, 33}, 1, -3, 3)}, 1e-4, 1e-5);
      EXPECT_EQ(steps_of(s, "cpu.layer_norm"), 1);
    }
  }
}

TEST(NativeDataMovement, TransposeGatherConcat) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {2, 3, 4, 5});
    Value* t = b.op("Transpose", {x}, {attr("perm", V{2, 0, 3, 1})});
    Value* ids = b.input("ids", {2, 3}, DataType::kInt64);
    Value* g0 = b.op("Gather", {b.constant("table", random_tensor({10, 6}, 5)), ids});
    Value* g1 = b.op("Gather", {x, b.constant("i", int64_tensor({2}, {-1, 0}))}, {attr("axis", int64_t{2})});
    b.output(t);
    b.output(g0);
    b.output(b.op("Concat", {g1, g1, x}, {attr("axis", int64_t{2})}));
    b.output(b.op("Concat", {ids, ids}, {attr("axis", int64_t{1})}));  // int64: kiln's kernel
    return b.take();
  };
  const auto s = expect_same_as_reference(
      make, {random_tensor({2, 3, 4, 5}, 1), int64_tensor({2, 3}, {0, 9, 3, 3, -1, 7})});
  EXPECT_EQ(steps_of(s, "cpu.transpose"), 1);
  EXPECT_EQ(steps_of(s, "cpu.gather"), 2);
  // row-major pieces, float or not: kiln's copies (oneDNN takes concats of its layouts)
  EXPECT_EQ(steps_of(s, "cpu.concat"), 2);
  EXPECT_EQ(steps_of(s, "onednn.concat"), 0);
}

// Row-major pieces of one row (leading dims 1) are runs of the concat's result: the steps that
// make them write them there, and the concat copies nothing. A graph input is copied.
TEST(NativeDataMovement, ConcatPiecesWrittenInPlace) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {1, 3, 5});
    Value* a = b.op("Mul", {x, scalar(b, "two", 2.f)});
    Value* c = b.op("Sigmoid", {x});
    Value* cat = b.op("Concat", {a, x, c}, {attr("axis", int64_t{1})});
    b.output(b.op("Add", {cat, scalar(b, "one", 1.f)}));
    return b.take();
  };
  const auto s = expect_same_as_reference(make, {random_tensor({1, 3, 5}, 1)});
  EXPECT_EQ(steps_of(s, "cpu.concat"), 1);
  EXPECT_EQ(inputs_in_place(s), 2) << s.listing;
}

TEST(NativeDataMovement, GatherOutOfRangeFails) {
  ModelBuilder b;
  Value* ids = b.input("ids", {2}, DataType::kInt64);
  b.output(b.op("Gather", {b.constant("table", random_tensor({4, 3}, 5)), ids}));
  CompiledModel m(b.take());
  EXPECT_THROW(m.run({RtValue::of(int64_tensor({2}, {1, 4}))}), Error);
}

TEST(NativeReduce, LeadingTrailingAndMiddleAxes) {
  for (const std::string op : {"ReduceSum", "ReduceMean", "ReduceMax"}) {
    for (const V& axes : {V{-1}, V{0}, V{1, 2}, V{1}}) {
      for (int64_t keep : {0, 1}) {
        SCOPED_TRACE(op + " " + dims_to_string(axes) + " keepdims " + std::to_string(keep));
        const auto make = [=] {
          ModelBuilder b;
          b.output(b.op(op, {b.input("x", {3, 4, 9}), b.constant("axes", Tensor::from_int64s(axes))},
                        {attr("keepdims", keep)}));
          return b.take();
        };
        const auto s = expect_same_as_reference(make, {random_tensor({3, 4, 9}, 1)}, 1e-5, 1e-5);
        EXPECT_EQ(steps_of(s, "cpu.reduce"), 1);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::engine

namespace kiln::engine {
namespace {

// Cast float32 -> float16 -> float32 and float32 -> bfloat16 -> float32 on cpu.cast, the same bits
// as the reference kernel's: rounding to nearest even, halfway cases, subnormals, values beyond
// float16's range (to infinity), infinities and NaN.
TEST(NativeCast, SameBitsAsTheReference) {
  const std::vector<float> special = {0.f, -0.f, 1.f, -2.5f, 65504.f, 65520.f, 1e6f, -1e6f,
                                      6e-8f, 3e-8f, 1e-10f, 1.00048828125f, 1.0009765625f,
                                      std::numeric_limits<float>::infinity(),
                                      -std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN(), 3.1415926f, 1.0039062f};
  Tensor x = testing::random_tensor({3, 7, 1000}, 11, -70000.f, 70000.f);
  std::copy(special.begin(), special.end(), x.data<float>());
  for (DataType mid : {DataType::kFloat16, DataType::kBFloat16}) {
    const auto make = [&] {
      testing::ModelBuilder b;
      Value* in = b.input("x", {3, 7, 1000});
      Value* narrow = b.op("Cast", {in}, {testing::attr("to", static_cast<int64_t>(mid))});
      b.output(narrow);
      b.output(b.op("Cast", {narrow}, {testing::attr("to", static_cast<int64_t>(DataType::kFloat))}));
      return b.take();
    };
    const PlanSummary s = testing::expect_same_as_reference(make, {x}, 0, 0);
    EXPECT_EQ(s.kernels.count("cpu.cast"), 1u) << s.listing;
    EXPECT_EQ(s.kernels.at("cpu.cast"), 2) << s.listing;
    Session reference(make());
    CompiledModel fast(make());
    const auto want = reference.run({RtValue::of(x)});
    const auto got = fast.run({RtValue::of(x)});
    for (size_t k = 0; k < 2; ++k)
      EXPECT_EQ(std::memcmp(got[k].tensor.raw(), want[k].tensor.raw(), want[k].tensor.nbytes()), 0)
          << dtype_name(mid) << " output " << k;
  }
}

}  // namespace
}  // namespace kiln::engine
