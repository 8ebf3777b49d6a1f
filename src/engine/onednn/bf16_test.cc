// EngineOptions::bf16: convs and matmuls with constant weights in bf16 on oneDNN where the CPU
// has AVX-512 BF16 (else float32), against the float reference at bf16's precision (8 bits of
// mantissa in the inputs and weights; float accumulation).
#include "engine/engine_test_util.h"
#include "engine/onednn/bf16_support.h"

namespace kiln::engine {
namespace {

using namespace testing;

TEST(Bf16Precision, ConvAndMatmul) {
  auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of({1, 16, 12, 12}));
    Value* y = b.op("Relu", {b.op("Conv", {x, b.constant("w", random_tensor({32, 16, 3, 3}, 2)),
                                           b.constant("b", random_tensor({32}, 3))},
                                  {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})});
    // the second conv reads the first's result in bf16, as it was made
    y = b.op("Conv", {y, b.constant("w2", random_tensor({32, 32, 1, 1}, 6)), b.constant("b2", random_tensor({32}, 7))});
    Value* g = b.op("GlobalAveragePool", {y});
    Value* f = b.op("Flatten", {g});
    b.output(b.op("Add", {b.op("MatMul", {f, b.constant("m", random_tensor({32, 10}, 4))}),
                          b.constant("c", random_tensor({10}, 5))}));
    return b.take();
  };
  EngineOptions opts;
  opts.bf16 = true;
  // |x|, |w| < 1 over 144 products: bf16's rounding (2^-9 relative) leaves errors near 1e-2
  const auto s = expect_same_as_reference(make, {random_tensor({1, 16, 12, 12}, 1)}, 3e-2, 3e-2, opts);
  const int native = native_bf16() ? 1 : 0;
  EXPECT_EQ(steps_of(s, "onednn.conv_bf16"), 2 * native) << s.listing;
  EXPECT_EQ(steps_of(s, "onednn.matmul_bf16"), native) << s.listing;
  EXPECT_EQ(steps_of(s, "onednn.conv"), 2 - 2 * native) << s.listing;
  // reorders: the input to bf16 (not the first conv's result), the matmul's input to bf16
  if (native) {
    EXPECT_LE(steps_of(s, "onednn.reorder"), 2) << s.listing;
  }
  // and float32 by default
  const auto f = expect_same_as_reference(make, {random_tensor({1, 16, 12, 12}, 1)});
  EXPECT_EQ(steps_of(f, "onednn.conv_bf16"), 0) << f.listing;
}

// bf16 weights in the file (`kiln quantize --mode bf16`: a bfloat16 initializer read through a
// Cast to float32): those convs and matmuls compute in bf16 without EngineOptions::bf16, the
// others stay float32.
Value* stored_bf16(ModelBuilder& b, const std::string& name, const Tensor& w) {
  Tensor low(DataType::kBFloat16, w.dims());
  for (int64_t i = 0; i < w.numel(); ++i) low.data<uint16_t>()[i] = float_to_bfloat16(w.data<float>()[i]);
  return b.op("Cast", {b.constant(name, std::move(low))},
              {attr("to", static_cast<int64_t>(DataType::kFloat))});
}

TEST(Bf16Precision, StoredWeights) {
  auto make = [] {
    ModelBuilder b;
    Value* x = b.input("x", shape_of({1, 16, 12, 12}));
    Value* y = b.op("Relu", {b.op("Conv", {x, stored_bf16(b, "w", random_tensor({32, 16, 3, 3}, 2)),
                                           b.constant("b", random_tensor({32}, 3))},
                                  {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})});
    y = b.op("Conv", {y, b.constant("w2", random_tensor({32, 32, 1, 1}, 6)), b.constant("b2", random_tensor({32}, 7))});
    Value* f = b.op("Flatten", {b.op("GlobalAveragePool", {y})});
    b.output(b.op("Gemm", {f, stored_bf16(b, "m", random_tensor({10, 32}, 4)), b.constant("c", random_tensor({10}, 5))},
                  {attr("transB", int64_t{1})}));
    return b.take();
  };
  const auto s = expect_same_as_reference(make, {random_tensor({1, 16, 12, 12}, 1)}, 3e-2, 3e-2);
  const int native = native_bf16() ? 1 : 0;
  EXPECT_EQ(steps_of(s, "onednn.conv_bf16"), native) << s.listing;
  EXPECT_EQ(steps_of(s, "onednn.conv"), 2 - native) << s.listing;
  EXPECT_EQ(steps_of(s, "onednn.matmul_bf16"), native) << s.listing;
}

}  // namespace
}  // namespace kiln::engine
