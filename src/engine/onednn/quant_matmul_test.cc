// onednn.quant_matmul (static QDQ, dynamic QDQ, ONNX Runtime's MatMulInteger form) and
// cpu.dynamic_quantize against the reference kernels of the same graphs. The matmuls accumulate
// in int32 and scale once: float results agree to float rounding, quantized ones within one step
// on few elements; DynamicQuantizeLinear's three outputs are equal. Without VNNI the static
// forms' 8-bit weights stay float, and the dynamic forms run on kiln's int16 kernel where there is
// AVX2 (cpu.int16_matmul: the integer sums exactly, MatMulInteger's result bit for bit), else in
// float (onednn.quant_matmul_f32: the same integer sums, exactly, below 2^24).
#include "engine/compiled_model.h"
#include "engine/cpu/int16_gemm.h"
#include "engine/onednn/int8_support.h"
#include "engine/onednn/quant_test_util.h"
#include "engine/onednn/weight_cache.h"

namespace kiln::engine {
namespace {

using namespace testing;

int int8_steps(int n) { return int8_dot_product() ? n : 0; }
// The dynamic forms without VNNI: on kiln's int16 kernel with AVX2, else in float.
int int16_steps(int n) { return !int8_dot_product() && kiln::cpu::int16_gemm_supported() ? n : 0; }
int float_form_steps(int n) { return !int8_dot_product() && !kiln::cpu::int16_gemm_supported() ? n : 0; }

TEST(QuantMatmul, StaticQdqWithBiasReluRequantize) {
  auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of({2, 5, 64}));
    Value* sx = b.constant("sx", scalar_f(0.02f));
    Value* zx = b.constant("zx", zero_point(DataType::kUInt8, 120));
    Value* xd = b.op("DequantizeLinear", {b.op("QuantizeLinear", {x, sx, zx}), sx, zx});
    Value* wd = b.op("DequantizeLinear", {b.constant("w", random_int8({64, 48}, 3)),
                                          b.constant("sw", random_tensor({48}, 4, 0.002f, 0.01f))},
                     {attr("axis", int64_t{1})});
    Value* y = b.op("Relu", {b.op("Add", {b.op("MatMul", {xd, wd}), b.constant("bias", random_tensor({48}, 5))})});
    b.output(b.op("QuantizeLinear", {y, b.constant("sy", scalar_f(0.04f)), b.constant("zy", zero_point(DataType::kUInt8, 5))}));
    return b.take();
  };
  const auto s = expect_close_to_reference(make, {random_tensor({2, 5, 64}, 1, -2.f, 2.f)});
  EXPECT_EQ(steps_of(s, "onednn.quant_matmul"), int8_steps(1)) << s.listing;
  EXPECT_EQ(steps_of(s, "reference"), 0) << s.listing;
}

TEST(QuantMatmul, GemmTransposedWeightsFloatResult) {
  auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of({3, 40}));
    Value* sx = b.constant("sx", scalar_f(0.03f));
    Value* zx = b.constant("zx", zero_point(DataType::kInt8, -2));
    Value* xd = b.op("DequantizeLinear", {b.op("QuantizeLinear", {x, sx, zx}), sx, zx});
    Value* wd = b.op("DequantizeLinear", {b.constant("w", random_int8({24, 40}, 3)),
                                          b.constant("sw", random_tensor({24}, 4, 0.002f, 0.01f))},
                     {attr("axis", int64_t{0})});
    b.output(b.op("Gemm", {xd, wd, b.constant("c", random_tensor({24}, 6))}, {attr("transB", int64_t{1})}));
    return b.take();
  };
  const auto s = expect_close_to_reference(make, {random_tensor({3, 40}, 1, -2.f, 2.f)});
  EXPECT_EQ(steps_of(s, "onednn.quant_matmul"), int8_steps(1)) << s.listing;
  EXPECT_EQ(steps_of(s, "reference"), 0) << s.listing;
}

// x -> DynamicQuantizeLinear -> DequantizeLinear -> MatMul(DQ(w)) -> Add(bias) [-> Relu], twice on one x.
TEST(QuantMatmul, DynamicQdq) {
  auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of({1, 16, 96}));
    auto q = b.node("DynamicQuantizeLinear", {x}, {}, 3);
    Value* xd = b.op("DequantizeLinear", {q[0], q[1], q[2]});
    for (int k = 0; k < 2; ++k) {
      const std::string i = std::to_string(k);
      Value* wd = b.op("DequantizeLinear", {b.constant("w" + i, random_int8({96, 32}, 3 + k)),
                                            b.constant("sw" + i, random_tensor({32}, 4 + k, 0.002f, 0.01f))},
                       {attr("axis", int64_t{1})});
      Value* y = b.op("Add", {b.op("MatMul", {xd, wd}), b.constant("bias" + i, random_tensor({32}, 5 + k))});
      b.output(k == 0 ? y : b.op("Relu", {y}));  // an activation in the chain of the second
    }
    return b.take();
  };
  const auto s = expect_close_to_reference(make, {random_tensor({1, 16, 96}, 1, -3.f, 1.f)});
  EXPECT_EQ(steps_of(s, "onednn.quant_matmul"), int8_steps(2)) << s.listing;
  EXPECT_EQ(steps_of(s, "onednn.quant_matmul_f32"), float_form_steps(2)) << s.listing;
  EXPECT_EQ(steps_of(s, "cpu.int16_matmul"), int16_steps(2)) << s.listing;
  EXPECT_EQ(steps_of(s, "cpu.dynamic_quantize"), 1) << s.listing;
  EXPECT_EQ(steps_of(s, "reference"), 0) << s.listing;
}

// ONNX Runtime's quantize_dynamic: DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(x_scale *
// w_scale) -> Add(bias), per-tensor and per-column weight scales, sharing the quantized x.
TEST(QuantMatmul, MatMulIntegerForm) {
  auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of({2, 8, 64}));
    auto q = b.node("DynamicQuantizeLinear", {x}, {}, 3);
    for (int k = 0; k < 2; ++k) {
      const std::string i = std::to_string(k);
      Value* mi = b.op("MatMulInteger", {q[0], b.constant("w" + i, random_int8({64, 40}, 3 + k)), q[2],
                                         b.constant("wz" + i, zero_point(DataType::kInt8, 0))});
      Value* cast = b.op("Cast", {mi}, {attr("to", static_cast<int64_t>(DataType::kFloat))});
      Value* scale = b.op("Mul", {q[1], b.constant("ws" + i, k == 0 ? scalar_f(0.006f) : random_tensor({40}, 8, 0.002f, 0.01f))});
      b.output(b.op("Add", {b.op("Mul", {cast, scale}), b.constant("bias" + i, random_tensor({40}, 5 + k))}));
    }
    return b.take();
  };
  const auto s = expect_close_to_reference(make, {random_tensor({2, 8, 64}, 1, -1.f, 3.f)});
  EXPECT_EQ(steps_of(s, "onednn.quant_matmul"), int8_steps(2)) << s.listing;
  EXPECT_EQ(steps_of(s, "onednn.quant_matmul_f32"), float_form_steps(2)) << s.listing;
  EXPECT_EQ(steps_of(s, "cpu.int16_matmul"), int16_steps(2)) << s.listing;
  EXPECT_EQ(steps_of(s, "cpu.dynamic_quantize"), 1) << s.listing;
  EXPECT_EQ(steps_of(s, "reference"), 0) << s.listing;  // without VNNI too: the float form
}

// A 1 MiB int8 weight is held once however many plans read it: packed once (oneDNN's s8 layout
// with a dot product; without one int16 panels with AVX2, 2 bytes a weight, shared by every plan,
// MatMulInteger's result bit for bit; else the float form's widened f32 copy), the int8 bytes let
// go of (plain_weights.h) and read back from the packing, exactly, before the next plan.
// Batches 1, 3, 1 give the reference's results each time.
TEST(QuantMatmul, Int8WeightsAreHeldOnce) {
  const auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", {Dim::symbol("batch"), 1024});
    auto q = b.node("DynamicQuantizeLinear", {x}, {}, 3);
    Value* mi = b.op("MatMulInteger", {q[0], b.constant("w", random_int8({1024, 1024}, 3)), q[2]});
    Value* cast = b.op("Cast", {mi}, {attr("to", static_cast<int64_t>(DataType::kFloat))});
    b.output(b.op("Mul", {cast, q[1]}));
    return b.take();
  };
  CompiledModel m(make());
  Session ref(make());
  const double tol = int16_steps(1) ? 0.0 : 1e-6;
  for (int64_t batch : {1, 3, 1}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const auto in = std::vector<RtValue>{RtValue::of(random_tensor({batch, 1024}, 7 + batch))};
    const Comparison c = compare_values(m.run(in)[0], ref.run(in)[0], Tolerance{tol, tol});
    EXPECT_TRUE(c.equal) << c.reason;
    const PlanSummary sum = m.summary({{batch, 1024}});
    if (int8_steps(1)) {
      EXPECT_EQ(steps_of(sum, "onednn.quant_matmul"), 1) << sum.listing;
      EXPECT_GE(sum.released_bytes, size_t{1024} * 1024) << "the int8 bytes let go of";
      // the plan at batch 3 matched on the weights' dims and bound their packed copy (BERT-base
      // dynamic int8: 62 -> 17 ms of lowering a plan)
      EXPECT_EQ(m.weight_cache().restored(), 0) << "a new plan brought the int8 weights back";
    }
    if (float_form_steps(1)) {
      EXPECT_EQ(steps_of(sum, "onednn.quant_matmul_f32"), 1) << sum.listing;
      EXPECT_GE(sum.released_bytes, size_t{1024} * 1024);
    }
    if (int16_steps(1)) {
      EXPECT_EQ(steps_of(sum, "cpu.int16_matmul"), 1) << sum.listing;
      EXPECT_GE(sum.weight_bytes, size_t{2} * 1024 * 1024);
      EXPECT_LE(sum.weight_bytes, size_t{2} * 1024 * 1024 + 4096) << "packed once for both plans";
      EXPECT_GE(sum.released_bytes, size_t{1024} * 1024) << "the int8 bytes let go of";
    }
  }
}

TEST(QuantMatmul, QLinearMatMul) {
  for (DataType t : {DataType::kUInt8, DataType::kInt8}) {
    auto make = [t] {
      ModelBuilder b;
      Value* a = b.input("a", shape_of({3, 7, 48}), t);
      Tensor wz(DataType::kInt8, {20});
      for (int k = 0; k < 20; ++k) wz.data<int8_t>()[k] = 0;
      b.output(b.op("QLinearMatMul", {a, b.constant("as", scalar_f(0.02f)), b.constant("az", zero_point(t, t == DataType::kUInt8 ? 128 : 3)),
                                      b.constant("w", random_int8({48, 20}, 4)), b.constant("ws", random_tensor({20}, 5, 0.002f, 0.01f)),
                                      b.constant("wz", wz), b.constant("ys", scalar_f(0.03f)), b.constant("yz", zero_point(t, -1 + 2 * (t == DataType::kUInt8)))}));
      return b.take();
    };
    const auto s = expect_close_to_reference(make, {t == DataType::kUInt8 ? random_uint8({3, 7, 48}, 1) : random_int8({3, 7, 48}, 1)});
    EXPECT_EQ(steps_of(s, "onednn.quant_matmul"), int8_steps(1)) << s.listing;
  }
}

TEST(QuantMatmul, DynamicQuantizeLinearExact) {
  for (auto [lo, hi] : {std::pair{-3.f, 1.f}, std::pair{0.5f, 2.f}, std::pair{-2.f, -1.f}}) {
    auto make = [] {
      ModelBuilder b;
      Value* x = b.input("x", shape_of({7, 333}));
      for (Value* v : b.node("DynamicQuantizeLinear", {x}, {}, 3)) b.output(v);
      return b.take();
    };
    const auto s = expect_close_to_reference(make, {random_tensor({7, 333}, 2, lo, hi)}, 0, 0);
    EXPECT_EQ(steps_of(s, "cpu.dynamic_quantize"), 1) << s.listing;
  }
}

}  // namespace
}  // namespace kiln::engine
