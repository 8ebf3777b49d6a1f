// onednn.quant_conv, cpu.quantized_add and cpu.quantize / cpu.dequantize against the reference
// kernels of the QDQ form. The int8 conv may differ from the reference by one quantization step
// (oneDNN accumulates in int32 and scales once; the reference convolves the dequantized floats and
// rounds), on few elements; the native kernels compute as the reference does and must be equal.
// Run on every ISA the machine has: ctest runs these again under DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI
// and AVX512_CORE (tests/CMakeLists.txt).
#include <cmath>
#include <cstring>

#include "engine/onednn/int8_support.h"
#include "engine/onednn/quant_test_util.h"
#include "engine/onednn/weight_cache.h"

namespace kiln::engine {
namespace {

using namespace testing;

struct QuantConvCase {
  std::vector<int64_t> x, w;
  std::vector<Attribute> attrs;
  DataType act = DataType::kUInt8;  // the input's and the output's quantized type
  int zx = 128, zy = 0;
  bool per_channel = true, bias = true, relu = true, requantize = true;
  int weight_max = 127;  // 63: 7-bit weights (ONNX Runtime's reduce_range), exact on every ISA
};

// x -> Q -> DQ -> Conv(DQ(w)) [-> Relu] [-> Q] : the output is the quantized result, or the
// float one.
MakeModel quant_conv_model(const QuantConvCase& c) {
  return [=] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of(c.x));
    Value* sx = b.constant("sx", scalar_f(0.02f));
    Value* zx = b.constant("zx", zero_point(c.act, c.zx));
    Value* xd = b.op("DequantizeLinear", {b.op("QuantizeLinear", {x, sx, zx}), sx, zx});
    const int64_t m = c.w[0];
    Tensor sw = c.per_channel ? random_tensor({m}, 7, 0.002f, 0.01f) : scalar_f(0.005f);
    Value* wd = b.op("DequantizeLinear", {b.constant("wq", random_int8(c.w, 5, c.weight_max)), b.constant("sw", sw)},
                     {attr("axis", int64_t{0})});
    std::vector<Value*> ins = {xd, wd};
    if (c.bias) ins.push_back(b.constant("bias", random_tensor({m}, 3, -0.5f, 0.5f)));
    Value* y = b.op("Conv", ins, c.attrs);
    if (c.relu) y = b.op("Relu", {y});
    if (c.requantize)
      y = b.op("QuantizeLinear", {y, b.constant("sy", scalar_f(0.03f)), b.constant("zy", zero_point(c.act, c.zy))});
    b.output(y);
    return b.take();
  };
}

// Without VNNI the 8-bit weights of these cases stay float: the int8 kernels would saturate.
int int8_convs(int n) { return int8_dot_product() ? n : 0; }

void expect_quant_conv(const QuantConvCase& c) {
  const auto s = expect_close_to_reference(quant_conv_model(c), {random_tensor(c.x, 1, -2.f, 2.f)});
  const int int8 = c.weight_max <= 63 && c.act == DataType::kUInt8 ? 1 : int8_convs(1);
  EXPECT_EQ(steps_of(s, "onednn.quant_conv"), int8) << s.listing;
  EXPECT_EQ(steps_of(s, "reference"), 0) << s.listing;
  EXPECT_EQ(steps_of(s, "onednn.conv"), 1 - int8) << s.listing;
}

using Ints = std::vector<int64_t>;

TEST(QuantConv, Geometries) {
  const std::vector<QuantConvCase> cases = {
      {{1, 16, 14, 14}, {32, 16, 3, 3}, {attr("pads", Ints{1, 1, 1, 1})}},
      {{1, 3, 17, 15}, {8, 3, 7, 7}, {attr("strides", Ints{2, 2}), attr("pads", Ints{3, 3, 3, 3})}},
      {{2, 24, 9, 9}, {40, 24, 1, 1}, {}, DataType::kUInt8, 3, 7, false},
      {{1, 16, 10, 10}, {24, 8, 3, 3}, {attr("group", int64_t{2}), attr("pads", Ints{1, 1, 1, 1})}},
      {{1, 32, 12, 12}, {32, 1, 3, 3}, {attr("group", int64_t{32}), attr("pads", Ints{1, 1, 1, 1})}},
      {{1, 8, 11, 13}, {12, 8, 3, 3}, {attr("strides", Ints{2, 2})}, DataType::kInt8, 0, -3},
      {{1, 8, 11, 13}, {12, 8, 3, 3}, {attr("pads", Ints{1, 0, 1, 0})}, DataType::kInt8, 5, 2, true, false, false},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    expect_quant_conv(cases[i]);
  }
}

TEST(QuantConv, SevenBitWeightsOnEveryIsa) {
  QuantConvCase c{{1, 32, 14, 14}, {64, 32, 3, 3}, {attr("pads", Ints{1, 1, 1, 1})}};
  c.weight_max = 63;
  expect_quant_conv(c);
  c.attrs.push_back(attr("group", int64_t{4}));
  c.w = {64, 8, 3, 3};
  expect_quant_conv(c);
}

TEST(QuantConv, FloatResultWithoutQuantize) {
  QuantConvCase c{{1, 16, 9, 9}, {24, 16, 3, 3}, {attr("pads", Ints{1, 1, 1, 1})}};
  c.requantize = false;
  expect_quant_conv(c);
  c.relu = false;
  c.act = DataType::kInt8;
  c.zx = -4;
  expect_quant_conv(c);
}

// A value read by two int8 convs and a float op through one shared DequantizeLinear (ONNX
// Runtime's form): each conv takes a DequantizeLinear of its own, the float reader gets one too.
TEST(QuantConv, SharedDequantize) {
  auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of({1, 8, 8, 8}));
    Value* sx = b.constant("sx", scalar_f(0.02f));
    Value* zx = b.constant("zx", zero_point(DataType::kUInt8, 100));
    Value* xd = b.op("DequantizeLinear", {b.op("QuantizeLinear", {x, sx, zx}), sx, zx});
    Value* sy = b.constant("sy", scalar_f(0.05f));
    Value* zy = b.constant("zy", zero_point(DataType::kUInt8, 10));
    for (int k = 0; k < 2; ++k) {
      Value* wd = b.op("DequantizeLinear", {b.constant("w" + std::to_string(k), random_int8({8, 8, 1, 1}, 9 + k)),
                                            b.constant("s" + std::to_string(k), scalar_f(0.004f))});
      b.output(b.op("QuantizeLinear", {b.op("Conv", {xd, wd}), sy, zy}));
    }
    b.output(b.op("Sigmoid", {xd}));
    return b.take();
  };
  const auto s = expect_close_to_reference(make, {random_tensor({1, 8, 8, 8}, 4, -2.f, 2.f)});
  EXPECT_EQ(steps_of(s, "onednn.quant_conv"), int8_convs(2)) << s.listing;
  EXPECT_EQ(steps_of(s, "cpu.dequantize"), 3 - int8_convs(2)) << s.listing;
  EXPECT_EQ(steps_of(s, "reference"), 0) << s.listing;
}

// ResNet's residual: DQ(a) + DQ(b) -> Relu -> Q, exact; and the boundaries Q and DQ, exact.
TEST(QuantConv, QuantizedAddAndBoundaries) {
  for (DataType ct : {DataType::kInt8, DataType::kUInt8})  // u8 + u8 -> u8: the one-pass kernel
    for (bool relu : {true, false}) {
      SCOPED_TRACE(std::string(relu ? "relu " : "no relu ") + std::string(dtype_name(ct)));
      auto make = [relu, ct] {
        ModelBuilder b;
        Value* a = b.input("a", shape_of({2, 5, 7, 3}), DataType::kUInt8);
        Value* c = b.input("c", shape_of({2, 5, 7, 3}), ct);
        Value* da = b.op("DequantizeLinear", {a, b.constant("sa", scalar_f(0.013f)), b.constant("za", zero_point(DataType::kUInt8, 120))});
        Value* dc = b.op("DequantizeLinear", {c, b.constant("sc", scalar_f(0.021f)), b.constant("zc", zero_point(ct, ct == DataType::kInt8 ? -7 : 131))});
        Value* y = b.op("Add", {da, dc});
        if (relu) y = b.op("Relu", {y});
        b.output(b.op("QuantizeLinear", {y, b.constant("sy", scalar_f(0.017f)), b.constant("zy", zero_point(DataType::kUInt8, 3))}));
        return b.take();
      };
      const auto s = expect_close_to_reference(
          make, {random_uint8({2, 5, 7, 3}, 1), ct == DataType::kInt8 ? random_int8({2, 5, 7, 3}, 2) : random_uint8({2, 5, 7, 3}, 2)}, 0);
      EXPECT_EQ(steps_of(s, "cpu.quantized_add"), 1) << s.listing;
      EXPECT_EQ(s.steps, 1) << s.listing;
    }
  auto boundaries = [] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of({3, 1000}));
    Value* s = b.constant("s", scalar_f(0.0078125f));  // ties: x / s lands on .5
    for (DataType t : {DataType::kUInt8, DataType::kInt8}) {
      Value* q = b.op("QuantizeLinear", {x, s, b.constant(t == DataType::kInt8 ? "z8" : "zu", zero_point(t, t == DataType::kInt8 ? -5 : 130))});
      b.output(q);
      b.output(b.op("DequantizeLinear", {q, s, b.constant(t == DataType::kInt8 ? "z8d" : "zud", zero_point(t, t == DataType::kInt8 ? -5 : 130))}));
    }
    return b.take();
  };
  Tensor x = random_tensor({3, 1000}, 3, -1.5f, 1.5f);
  for (int64_t i = 0; i < 200; ++i) x.data<float>()[i] = (static_cast<float>(i) - 100.5f) * 0.0078125f;
  x.data<float>()[200] = std::nanf("");
  const auto s = expect_close_to_reference(boundaries, {x}, 0);
  EXPECT_EQ(steps_of(s, "cpu.quantize"), 2) << s.listing;
  EXPECT_EQ(steps_of(s, "cpu.dequantize"), 2) << s.listing;
}

// QLinearConv (the QOperator form) on the same primitive: per-channel weight scales, int32 bias.
TEST(QuantConv, QLinearConv) {
  for (DataType t : {DataType::kUInt8, DataType::kInt8}) {
    auto make = [t] {
      ModelBuilder b;
      Value* x = b.input("x", shape_of({1, 16, 10, 10}), t);
      Tensor bias(DataType::kInt32, {24});
      for (int k = 0; k < 24; ++k) bias.data<int32_t>()[k] = (k * 7919) % 4001 - 2000;
      Tensor wz(DataType::kInt8, {24});
      for (int k = 0; k < 24; ++k) wz.data<int8_t>()[k] = 0;
      b.output(b.op("QLinearConv",
                    {x, b.constant("xs", scalar_f(0.02f)), b.constant("xz", zero_point(t, t == DataType::kUInt8 ? 130 : -3)),
                     b.constant("w", random_int8({24, 16, 3, 3}, 4)), b.constant("ws", random_tensor({24}, 5, 0.002f, 0.01f)),
                     b.constant("wz", wz), b.constant("ys", scalar_f(0.05f)), b.constant("yz", zero_point(t, 4)),
                     b.constant("b", bias)},
                    {attr("pads", Ints{1, 1, 1, 1}), attr("strides", Ints{2, 1})}));
      return b.take();
    };
    const auto s = expect_close_to_reference(make, {t == DataType::kUInt8 ? random_uint8({1, 16, 10, 10}, 1)
                                                                           : random_int8({1, 16, 10, 10}, 1)});
    EXPECT_EQ(steps_of(s, "onednn.quant_conv"), int8_convs(1)) << s.listing;
  }
}

// ConvInteger: the int32 accumulator, exact; the zero point constant or DynamicQuantizeLinear's.
TEST(QuantConv, ConvInteger) {
  for (bool dynamic : {false, true}) {
    auto make = [dynamic] {
      ModelBuilder b;
      Value* x = b.input("x", shape_of({1, 8, 9, 9}));
      auto q = b.node("DynamicQuantizeLinear", {x}, {}, 3);
      Value* zp = dynamic ? q[2] : b.constant("xz", zero_point(DataType::kUInt8, 77));
      b.output(b.op("ConvInteger", {q[0], b.constant("w", random_int8({12, 8, 3, 3}, 4)), zp},
                    {attr("pads", Ints{1, 1, 1, 1})}));
      return b.take();
    };
    const auto s = expect_close_to_reference(make, {random_tensor({1, 8, 9, 9}, 1, -1.f, 2.f)}, 0);
    EXPECT_EQ(steps_of(s, "onednn.quant_conv"), int8_convs(1)) << s.listing;
  }
}

// DQ -> MaxPool -> Q of one set of parameters: the max of the 8-bit values, exact.
TEST(QuantConv, QuantizedMaxPool) {
  for (DataType t : {DataType::kUInt8, DataType::kInt8}) {
    auto make = [t] {
      ModelBuilder b;
      Value* x = b.input("x", shape_of({1, 8, 11, 11}), t);
      Value* s = b.constant("s", scalar_f(0.03f));
      Value* z = b.constant("z", zero_point(t, 9));
      Value* p = b.op("MaxPool", {b.op("DequantizeLinear", {x, s, z})},
                      {attr("kernel_shape", Ints{3, 3}), attr("strides", Ints{2, 2}), attr("pads", Ints{1, 1, 1, 1})});
      b.output(b.op("QuantizeLinear", {p, s, z}));
      return b.take();
    };
    const auto s = expect_close_to_reference(make, {t == DataType::kUInt8 ? random_uint8({1, 8, 11, 11}, 1) : random_int8({1, 8, 11, 11}, 1)}, 0);
    EXPECT_EQ(steps_of(s, "onednn.quant_pool"), 1) << s.listing;
    EXPECT_EQ(s.steps, 1) << s.listing;
  }
}

// A residual block in ONNX Runtime's QDQ form (the Relus in the uint8 ranges, one shared
// DequantizeLinear per tensor): every op runs int8, no DequantizeLinear -> QuantizeLinear pair
// between them; the float result within a few output steps of the reference (one-step
// differences of the first conv travel through the second).
TEST(QuantConv, ResidualBlockStaysInt8) {
  auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of({1, 32, 14, 14}));
    auto qdq = [&](Value* v, const std::string& name, float scale, int zp) {
      Value* s = b.constant(name + "_s", scalar_f(scale));
      Value* z = b.constant(name + "_z", zero_point(DataType::kUInt8, zp));
      return b.op("DequantizeLinear", {b.op("QuantizeLinear", {v, s, z}), s, z});
    };
    auto conv = [&](Value* in, const std::string& name, uint32_t seed) {
      Value* wd = b.op("DequantizeLinear", {b.constant(name + "_w", random_int8({32, 32, 3, 3}, seed)),
                                            b.constant(name + "_ws", random_tensor({32}, seed + 1, 0.001f, 0.004f))},
                       {attr("axis", int64_t{0})});
      return b.op("Conv", {in, wd, b.constant(name + "_b", random_tensor({32}, seed + 2, -0.2f, 0.2f))},
                  {attr("pads", Ints{1, 1, 1, 1})});
    };
    Value* in = qdq(x, "in", 0.016f, 128);
    Value* c1 = qdq(conv(in, "c1", 10), "c1", 0.02f, 0);
    Value* c2 = qdq(conv(c1, "c2", 20), "c2", 0.03f, 100);
    b.output(qdq(b.op("Add", {c2, in}), "sum", 0.04f, 0));
    return b.take();
  };
  const std::vector<RtValue> feeds = {RtValue::of(random_tensor({1, 32, 14, 14}, 1, -2.f, 2.f))};
  Session reference(make());
  CompiledModel fast(make());
  const Tensor e = reference.run(feeds)[0].tensor, a = fast.run(feeds)[0].tensor;
  ASSERT_EQ(a.dims(), e.dims());
  float worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) worst = std::max(worst, std::abs(a.data<float>()[i] - e.data<float>()[i]));
  EXPECT_LE(worst, 4 * 0.04f + 1e-6f);
  const auto s = fast.summary({{1, 32, 14, 14}});
  if (!int8_dot_product()) return;
  EXPECT_EQ(steps_of(s, "onednn.quant_conv"), 2) << s.listing;
  EXPECT_EQ(steps_of(s, "cpu.quantized_add"), 1) << s.listing;
  EXPECT_EQ(steps_of(s, "cpu.quantize"), 1) << s.listing;    // the input
  EXPECT_EQ(steps_of(s, "cpu.dequantize"), 1) << s.listing;  // the output
  EXPECT_EQ(s.steps - steps_of(s, "onednn.reorder"), 5) << s.listing;
}

// An int8 weight is held once: packed, its initializer is let go of where oneDNN's s8 layout
// reads back exactly (no compensation appended: an input zero point of 0), read back from the
// packing for the next plan (before its inference where inference may fold it: up to 65536
// elements; a larger one only if asked for); with compensation (zero point 128) it is kept.
// Batches 1, 2, 1 give the bits of a model that keeps every plain weight.
TEST(QuantConv, Int8WeightsAreHeldOnce) {
  for (int64_t in_channels : {16, 128})
    for (int zx : {0, 128}) {
      SCOPED_TRACE(std::to_string(in_channels) + " input channels, input zero point " + std::to_string(zx));
      const auto make = [=] {
        ModelBuilder b;
        Value* x = b.input("x", {Dim::symbol("batch"), in_channels, 8, 8});
        Value* sx = b.constant("sx", scalar_f(0.02f));
        Value* z = b.constant("zx", zero_point(DataType::kUInt8, zx));
        Value* xd = b.op("DequantizeLinear", {b.op("QuantizeLinear", {x, sx, z}), sx, z});
        Value* wd = b.op("DequantizeLinear", {b.constant("w", random_int8({64, in_channels, 3, 3}, 5)),
                                              b.constant("sw", random_tensor({64}, 7, 0.002f, 0.01f))},
                         {attr("axis", int64_t{0})});
        Value* y = b.op("Relu", {b.op("Conv", {xd, wd}, {attr("pads", Ints{1, 1, 1, 1})})});
        b.output(b.op("QuantizeLinear", {y, b.constant("sy", scalar_f(0.03f)), b.constant("zy", zero_point(DataType::kUInt8, 0))}));
        return b.take();
      };
      EngineOptions keep;
      keep.keep_plain_weights = true;
      CompiledModel fast(make()), kept(make(), keep);
      PlanSummary s;
      for (int64_t batch : {1, 2, 1}) {
        const std::vector<RtValue> in = {RtValue::of(random_tensor({batch, in_channels, 8, 8}, 3 + batch, -2.f, 2.f))};
        const Tensor a = fast.run(in)[0].tensor, e = kept.run(in)[0].tensor;
        ASSERT_EQ(a.dims(), e.dims());
        EXPECT_EQ(std::memcmp(a.raw(), e.raw(), e.nbytes()), 0) << "batch " << batch;
        s = fast.summary({{batch, in_channels, 8, 8}});
        EXPECT_EQ(steps_of(s, "onednn.quant_conv"), int8_convs(1)) << s.listing;
      }
      if (int8_convs(1) && zx == 0) {
        EXPECT_GE(s.released_bytes, static_cast<size_t>(64 * in_channels * 9)) << "the int8 bytes let go of";
        // Above inference's fold limit, the plan at batch 2 matched the conv on the weights'
        // dims and bound their packed copy: the bytes were never brought back (with a dot
        // product: without, whether int8 is exact depends on them).
        if (in_channels == 128 && int8_dot_product()) {
          EXPECT_EQ(fast.weight_cache().restored(), 0) << "a new plan brought the int8 weights back";
        }
      }
    }
}

// Bad quantization parameters never reach oneDNN: a scale of 0 (or NaN), a zero point of the
// other type: the reference kernels run the node (and say what is wrong, where they do).
TEST(QuantConv, BadParametersFallBack) {
  for (float scale : {0.f, std::nanf("")}) {
    auto make = [scale] {
      ModelBuilder b;
      Value* x = b.input("x", shape_of({1, 4, 6, 6}));
      Value* sx = b.constant("sx", scalar_f(0.02f));
      Value* zx = b.constant("zx", zero_point(DataType::kUInt8, 128));
      Value* xd = b.op("DequantizeLinear", {b.op("QuantizeLinear", {x, sx, zx}), sx, zx});
      Value* wd = b.op("DequantizeLinear", {b.constant("w", random_int8({4, 4, 3, 3}, 3)), b.constant("sw", scalar_f(scale))});
      b.output(b.op("Conv", {xd, wd}));
      return b.take();
    };
    CompiledModel fast(make());
    const auto s = fast.summary({{1, 4, 6, 6}});
    EXPECT_EQ(steps_of(s, "onednn.quant_conv"), 0) << s.listing;
    EXPECT_NO_THROW(fast.run({RtValue::of(random_tensor({1, 4, 6, 6}, 1))}));
  }
}

}  // namespace
}  // namespace kiln::engine
