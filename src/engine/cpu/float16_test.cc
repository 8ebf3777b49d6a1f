// The float16 / bfloat16 conversion kernels against ir/dtype.h's scalar conversions, bit for bit,
// on every ISA: every one of the 65536 bit patterns widened; floats of every exponent, the ties
// of both formats, their subnormals, overflow, infinities and NaNs (signaling, with payloads,
// of either sign) narrowed; lengths around the registers (a partial last one).
#include <bit>

#include "engine/cpu/float16.h"
#include "engine/cpu/kernels.h"
#include "engine/cpu/test_support.h"

namespace kiln::cpu {
namespace {

class CpuFloat16 : public IsaTest {};

constexpr DataType kReduced[] = {DataType::kFloat16, DataType::kBFloat16};

float widen_one(DataType t, uint16_t b) { return t == DataType::kFloat16 ? half_to_float(b) : bfloat16_to_float(b); }
uint16_t narrow_one(DataType t, float f) { return t == DataType::kFloat16 ? float_to_half(f) : float_to_bfloat16(f); }

// Floats whose narrowing takes every path: random bit patterns (every exponent, NaNs with
// payloads), each format's ties and values just beside them, their subnormals, overflow.
std::vector<float> hard_floats(int64_t n, std::mt19937& rng) {
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_int_distribution<uint32_t> half(0, 0xffff);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t r = bits(rng);
    switch (i % 6) {
      case 0: v[i] = std::bit_cast<float>(r); break;
      case 1:  // a float16 (bit pattern h) and a half step above it, or beside that
        v[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(half_to_float(static_cast<uint16_t>(half(rng)))) + 0x1000 + (r % 3) - 1);
        break;
      case 2:  // a bfloat16 tie, or beside one
        v[i] = std::bit_cast<float>((r & 0xffff0000u) | (0x8000 + (r % 3) - 1));
        break;
      case 3: v[i] = std::ldexp(static_cast<float>(r % 4096) / 4096.0f, -14 - static_cast<int>(r % 12)); break;
      case 4: v[i] = std::bit_cast<float>(0x7f800001u | (r & 0x807fffffu)); break;  // NaN, any payload
      default: v[i] = (r % 2 ? -1.0f : 1.0f) * (65504.0f + static_cast<float>(r % 64)); break;
    }
  }
  return v;
}

TEST_P(CpuFloat16, WidensEveryBitPatternAsTheScalarConversion) {
  std::vector<uint16_t> x(65536);
  for (uint32_t i = 0; i < 65536; ++i) x[i] = static_cast<uint16_t>(i);
  for (DataType t : kReduced)
    for (int64_t n : {int64_t{65536}, int64_t{65535}, int64_t{37}, int64_t{1}}) {
      std::vector<float> y(static_cast<size_t>(n) + 1, 42.0f);
      kernels().widen(t, x.data() + (65536 - n), y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t b = x[65536 - n + i];
        ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(widen_one(t, b)))
            << dtype_name(t) << " bits 0x" << std::hex << b;
      }
      EXPECT_EQ(y[n], 42.0f);
    }
}

TEST_P(CpuFloat16, NarrowsAsTheScalarConversion) {
  std::mt19937 rng(31);
  for (DataType t : kReduced)
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{17}, int64_t{100003}}) {
      const auto x = hard_floats(n, rng);
      std::vector<uint16_t> y(static_cast<size_t>(n) + 1, 0x5a5a);
      kernels().narrow(t, x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(y[i], narrow_one(t, x[i]))
            << dtype_name(t) << " from bits 0x" << std::hex << std::bit_cast<uint32_t>(x[i]);
      EXPECT_EQ(y[n], 0x5a5a);
    }
}

TEST_P(CpuFloat16, SplitsOverTheThreadsAsOneLoop) {
  std::mt19937 rng(32);
  const auto x = hard_floats(200001, rng);
  for (DataType t : kReduced) {
    std::vector<uint16_t> y(x.size());
    narrow(t, x.data(), y.data(), static_cast<int64_t>(x.size()));
    std::vector<float> back(x.size());
    widen(t, y.data(), back.data(), static_cast<int64_t>(y.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(y[i], narrow_one(t, x[i])) << i;
      ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(widen_one(t, y[i]))) << i;
    }
  }
}

KILN_INSTANTIATE_FOR_ISAS(CpuFloat16);

}  // namespace
}  // namespace kiln::cpu
