// int16_gemm against the integer product computed plainly: exact, for rows around the register
// block (6), K odd and even, columns around the panel (16), u8 and s8 A with zero points at the
// types' ends, weights at -128 and 127 (where vpmaddubsw's sums saturate), per-column scales,
// with and without a bias, on one and two threads; the packing unpacks to the weights given.
#include "engine/cpu/int16_gemm.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln::cpu {
namespace {

struct Case {
  int64_t m, k, n;
  bool a_signed, transposed, per_column, bias;
  int32_t zero_point;
};

void check(const Case& c, int threads, std::mt19937& rng) {
  SCOPED_TRACE(testing::Message() << "m " << c.m << " k " << c.k << " n " << c.n << (c.a_signed ? " s8" : " u8")
                                  << (c.transposed ? " transposed" : "") << " zp " << c.zero_point
                                  << " threads " << threads);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> a(static_cast<size_t>(c.m * c.k));
  std::vector<int8_t> w(static_cast<size_t>(c.k * c.n));
  for (auto& v : a) v = static_cast<uint8_t>(byte(rng) < 32 ? (c.a_signed ? 128 : 255) : byte(rng));
  for (auto& v : w) v = static_cast<int8_t>(byte(rng) < 32 ? (byte(rng) & 1 ? 127 : -128) : byte(rng) - 128);
  std::vector<float> scale(c.per_column ? c.n : 1), bias(c.n);
  for (auto& s : scale) s = 0.001f * static_cast<float>(1 + byte(rng));
  for (auto& b : bias) b = 0.1f * static_cast<float>(byte(rng) - 128);
  const Int16Weights packed(w.data(), c.k, c.n, c.transposed);
  std::vector<int8_t> back(w.size());
  packed.unpack(back.data());
  ASSERT_EQ(back, w) << "unpacked";
  std::vector<int16_t> a16(static_cast<size_t>(int16_gemm_a_elements(c.m, packed)));
  std::vector<float> y(static_cast<size_t>(c.m * (c.n + 3)), -1.f);
  const Int16Epilogue e{.zero_point = c.zero_point, .scale = scale.data(), .per_column = c.per_column,
                        .bias = c.bias ? bias.data() : nullptr, .y = y.data(), .ldy = c.n + 3};
  int16_gemm(a.data(), c.a_signed, c.m, packed, a16.data(), e, threads);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      int32_t acc = 0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        const int32_t av = c.a_signed ? static_cast<int8_t>(a[i * c.k + kk]) : a[i * c.k + kk];
        const int32_t wv = c.transposed ? w[j * c.k + kk] : w[kk * c.n + j];
        acc += (av - c.zero_point) * wv;
      }
      float want = static_cast<float>(acc) * scale[c.per_column ? j : 0];
      if (c.bias) want += bias[j];
      ASSERT_EQ(y[i * (c.n + 3) + j], want) << "at " << i << ", " << j;
    }
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = c.n; j < c.n + 3; ++j) ASSERT_EQ(y[i * (c.n + 3) + j], -1.f) << "wrote past the row";
}

TEST(Int16Gemm, ExactIntegerProducts) {
  if (!int16_gemm_supported()) GTEST_SKIP() << "no AVX2 here";
  std::mt19937 rng(5);
  for (int64_t m : {1, 5, 6, 7, 13})
    for (int64_t k : {1, 2, 31, 64, 301})
      for (int64_t n : {1, 15, 16, 17, 40}) {
        const bool s = (m + k + n) % 2;
        check({m, k, n, s, n % 3 == 0, k % 2 == 1, m % 2 == 0, s ? -128 : 255}, 1, rng);
      }
  for (int threads : {1, 2}) {
    check({37, 768, 96, false, true, false, true, 128}, threads, rng);
    check({3, 3072, 20, true, false, true, false, 5}, threads, rng);
  }
}

}  // namespace
}  // namespace kiln::cpu
