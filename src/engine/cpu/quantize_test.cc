// The quantization kernels against ONNX's formulas, written out here in scalar code, on every
// ISA: lengths around the registers (partial last ones), int8 and uint8 on every side, zero points
// at both ends, NaN and infinities, values on rounding ties and beyond the type's range. Results
// must agree bit for bit (the reference kernels of the QDQ form compute the same).
#include <algorithm>

#include "engine/cpu/kernels.h"
#include "engine/cpu/quantize.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

class CpuQuantize : public IsaTest {};

constexpr int64_t kLengths[] = {1, 3, 4, 7, 8, 15, 16, 17, 33, 100};
constexpr DataType kTypes[] = {DataType::kUInt8, DataType::kInt8};

int32_t lowest(DataType t) { return t == DataType::kInt8 ? -128 : 0; }
int32_t highest(DataType t) { return t == DataType::kInt8 ? 127 : 255; }

// QuantizeLinear of one value, as the ONNX op defines it.
int32_t quantize_one(float x, const QuantScale& p) {
  float v = x / p.scale;
  if (std::isnan(v)) v = 0.0f;
  const float r = std::nearbyint(std::clamp(v, float(lowest(p.type) - p.zero_point), float(highest(p.type) - p.zero_point)));
  return static_cast<int32_t>(r) + p.zero_point;
}

float dequantize_one(int32_t q, const QuantScale& p) { return static_cast<float>(q - p.zero_point) * p.scale; }

int32_t byte_at(const std::vector<uint8_t>& v, int64_t i, DataType t) {
  return t == DataType::kInt8 ? static_cast<int8_t>(v[i]) : v[i];
}

std::vector<uint8_t> random_bytes(int64_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(0, 255);
  std::vector<uint8_t> v(static_cast<size_t>(n));
  for (uint8_t& b : v) b = static_cast<uint8_t>(u(rng));
  return v;
}

// Floats that reach every case: ties of x / scale, beyond the range, NaN, infinities, zeros.
std::vector<float> hard_floats(int64_t n, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-300.0f, 300.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (i % 7) {
      case 0: v[i] = (std::round(u(rng)) + 0.5f) * scale; break;  // a tie
      case 1: v[i] = i % 2 ? std::nanf("") : -std::numeric_limits<float>::infinity(); break;
      case 2: v[i] = i % 3 ? -0.0f : 1e30f; break;
      default: v[i] = u(rng) * scale;
    }
  }
  return v;
}

QuantScale params(DataType t, int which) {
  const int32_t z[] = {lowest(t), highest(t), (lowest(t) + highest(t)) / 2};
  return QuantScale{.scale = which == 1 ? 0.5f : 0.0371f, .zero_point = z[which % 3], .type = t};
}

TEST_P(CpuQuantize, QuantizeMatchesTheFormula) {
  std::mt19937 rng(21);
  for (DataType t : kTypes)
    for (int which = 0; which < 3; ++which)
      for (int64_t n : kLengths) {
        SCOPED_TRACE(std::to_string(n) + (t == DataType::kInt8 ? " int8 " : " uint8 ") + std::to_string(which));
        const QuantScale p = params(t, which);
        const auto x = hard_floats(n, p.scale, rng);
        std::vector<uint8_t> q(n + 1, 0x5a);  // one past the end stays
        kernels().quantize(x.data(), n, p, q.data());
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(byte_at(q, i, t), quantize_one(x[i], p)) << "x " << x[i];
        EXPECT_EQ(q[n], 0x5a);
      }
}

TEST_P(CpuQuantize, DequantizeMatchesTheFormula) {
  std::mt19937 rng(22);
  for (DataType t : kTypes)
    for (int which = 0; which < 3; ++which)
      for (int64_t n : kLengths) {
        const QuantScale p = params(t, which);
        const auto q = random_bytes(n, rng);
        std::vector<float> x(n + 1, 42.0f);
        kernels().dequantize(q.data(), n, p, x.data());
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(x[i], dequantize_one(byte_at(q, i, t), p));
        EXPECT_EQ(x[n], 42.0f);
      }
}

TEST_P(CpuQuantize, QuantizedAddMatchesTheFormulaForEveryTypeMix) {
  std::mt19937 rng(23);
  for (DataType ta : kTypes)
    for (DataType tb : kTypes)
      for (DataType ty : kTypes)
        for (bool relu : {false, true})
          for (int64_t n : kLengths) {
            SCOPED_TRACE(std::to_string(n) + (relu ? " relu" : ""));
            const QuantScale pa = params(ta, n % 3), pb = params(tb, (n + 1) % 3);
            // Output scales that put sums on ties and beyond the range too.
            const QuantScale py{.scale = n % 2 ? 0.025f : 0.0371f, .zero_point = ty == DataType::kInt8 ? -3 : 7, .type = ty};
            const auto a = random_bytes(n, rng), b = random_bytes(n, rng);
            std::vector<uint8_t> y(n + 1, 0x5a);
            kernels().quantized_add(a.data(), pa, b.data(), pb, relu, n, py, y.data());
            for (int64_t i = 0; i < n; ++i) {
              float s = dequantize_one(byte_at(a, i, ta), pa) + dequantize_one(byte_at(b, i, tb), pb);
              if (relu) s = s < 0.0f ? 0.0f : s;
              ASSERT_EQ(byte_at(y, i, ty), quantize_one(s, py)) << "element " << i;
            }
            EXPECT_EQ(y[n], 0x5a);
          }
}

TEST_P(CpuQuantize, RangeSkipsNaNAndIncludesZero) {
  std::mt19937 rng(24);
  for (int64_t n : kLengths) {
    std::vector<float> x = hard_floats(n, 0.1f, rng);
    for (float& v : x) v = std::isinf(v) ? 5.0f : v;
    float want_lo = 0.0f, want_hi = 0.0f;
    for (float v : x)
      if (!std::isnan(v)) want_lo = std::min(want_lo, v), want_hi = std::max(want_hi, v);
    float lo = 1, hi = -1;
    kernels().range(x.data(), n, &lo, &hi);
    EXPECT_EQ(lo, want_lo);
    EXPECT_EQ(hi, want_hi);
  }
  const float positive[3] = {1.0f, 2.0f, 3.0f};
  float lo = 1, hi = -1;
  kernels().range(positive, 3, &lo, &hi);
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 3.0f);
}

// DynamicQuantizeLinear split over the threads (parallel range, then quantize): the whole
// tensor's range, wherever its extremes lie, and every value quantized with its parameters.
TEST_P(CpuQuantize, DynamicQuantizeOverThreadsMatchesTheFormula) {
  std::mt19937 rng(25);
  for (int64_t n : {int64_t{100}, int64_t{98304}, int64_t{200003}}) {
    std::vector<float> x(static_cast<size_t>(n));
    std::uniform_real_distribution<float> u(-1.0f, 2.0f);
    for (float& v : x) v = u(rng);
    x[0] = 7.5f;                                    // the maximum, in the first chunk
    x[static_cast<size_t>(n - 2)] = -3.25f;         // the minimum, in the last
    x[static_cast<size_t>(n / 2)] = std::nanf("");  // skipped by the range, quantized as 0
    const float s = (7.5f - -3.25f) / 255.0f;
    const auto zp = static_cast<uint8_t>(std::nearbyint(std::clamp(0.0f - -3.25f / s, 0.0f, 255.0f)));
    std::vector<uint8_t> q(static_cast<size_t>(n));
    float scale = 0;
    uint8_t zero_point = 0;
    dynamic_quantize(x.data(), n, q.data(), &scale, &zero_point);
    EXPECT_EQ(scale, s) << n;
    EXPECT_EQ(zero_point, zp) << n;
    const QuantScale p{.scale = s, .zero_point = zp, .type = DataType::kUInt8};
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(q[static_cast<size_t>(i)], quantize_one(x[static_cast<size_t>(i)], p)) << i;
  }
}

KILN_INSTANTIATE_FOR_ISAS(CpuQuantize);

}  // namespace
}  // namespace kiln::cpu
