// int16_gemm's inner loops for AVX2 (int16_gemm.h): compiled for avx2 whatever the build's flags,
// called only where the CPU has it.
#include "engine/cpu/int16_gemm_tiles.h"

#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")  // no fma: the Mul and the Add stay two roundings, as in the graph
#endif

#include <immintrin.h>

#include <cstring>

namespace kiln::cpu::avx2 {

namespace {

constexpr int64_t kPanel = Int16Weights::kPanel;

// Rows [row0, row0 + R) by panel p: 2R accumulators over every pair of K, then the epilogue.
template <int R>
void tile(const int16_t* a, int64_t lda, const Int16Weights& b, int64_t p, int64_t row0,
          const Int16Epilogue& e) {
  const int16_t* w = b.panel(p);
  const int64_t pairs = b.pairs();
  // Twelve named accumulators, not an array: GCC keeps an array of them on the stack.
  const __m256i z = _mm256_setzero_si256();
  __m256i c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z,
          c50 = z, c51 = z;
  const int16_t* ar = a + row0 * lda;
  for (int64_t k = 0; k < pairs; ++k) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + k * 2 * kPanel));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + k * 2 * kPanel + 16));
#define KILN_INT16_ROW(r)                                                          \
  if constexpr (R > r) {                                                           \
    int32_t pair;                                                                  \
    std::memcpy(&pair, ar + r * lda + 2 * k, sizeof(pair));                        \
    const __m256i av = _mm256_set1_epi32(pair);                                    \
    c##r##0 = _mm256_add_epi32(c##r##0, _mm256_madd_epi16(av, b0));                \
    c##r##1 = _mm256_add_epi32(c##r##1, _mm256_madd_epi16(av, b1));                \
  }
    KILN_INT16_ROW(0)
    KILN_INT16_ROW(1)
    KILN_INT16_ROW(2)
    KILN_INT16_ROW(3)
    KILN_INT16_ROW(4)
    KILN_INT16_ROW(5)
#undef KILN_INT16_ROW
  }
  alignas(32) int32_t sums_of[6][kPanel];
  const auto keep = [&](int r, __m256i lo, __m256i hi) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums_of[r]), lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(sums_of[r] + 8), hi);
  };
  keep(0, c00, c01);
  if constexpr (R > 1) keep(1, c10, c11);
  if constexpr (R > 2) keep(2, c20, c21);
  if constexpr (R > 3) keep(3, c30, c31);
  if constexpr (R > 4) keep(4, c40, c41);
  if constexpr (R > 5) keep(5, c50, c51);
  const int64_t col0 = p * kPanel;
  const int cols = static_cast<int>(std::min<int64_t>(kPanel, b.n() - col0));
  const int32_t* colsum = b.column_sums().data() + col0;
  alignas(32) int32_t sums[kPanel] = {};
  alignas(32) float scale[kPanel], bias[kPanel] = {};
  std::memcpy(sums, colsum, sizeof(int32_t) * cols);
  for (int c = 0; c < kPanel; ++c) scale[c] = e.scale[e.per_column && c < cols ? col0 + c : 0];
  if (e.bias) std::memcpy(bias, e.bias + col0, sizeof(float) * cols);
  const __m256i zp = _mm256_set1_epi32(e.zero_point);
  __m256i off[2];
  __m256 sc[2], bi[2];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    off[h] = _mm256_mullo_epi32(zp, _mm256_load_si256(reinterpret_cast<const __m256i*>(sums + 8 * h)));
    sc[h] = _mm256_load_ps(scale + 8 * h);
    bi[h] = _mm256_load_ps(bias + 8 * h);
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* y = e.y + (row0 + r) * e.ldy + col0;
    alignas(32) float out[kPanel];
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      // The product as float, then scaled, then the bias: the Cast, the Mul and the Add of the
      // graph, in their order (the scale times the exact integer rounds once, as the Mul does).
      __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(
          _mm256_load_si256(reinterpret_cast<const __m256i*>(sums_of[r] + 8 * h)), off[h])), sc[h]);
      if (e.bias) v = _mm256_add_ps(v, bi[h]);
      if (cols == kPanel)
        _mm256_storeu_ps(y + 8 * h, v);
      else
        _mm256_store_ps(out + 8 * h, v);
    }
    if (cols < kPanel) std::memcpy(y, out, sizeof(float) * cols);
  }
}

}  // namespace

void int16_rows(const int16_t* a, int64_t lda, int64_t m, const Int16Weights& b, int64_t p_first,
                int64_t p_last, const Int16Epilogue& e) {
  for (int64_t row0 = 0; row0 < m; row0 += kTileRows) {
    const int64_t rows = std::min<int64_t>(kTileRows, m - row0);
    for (int64_t p = p_first; p < p_last; ++p) {
      switch (rows) {
        case 6: tile<6>(a, lda, b, p, row0, e); break;
        case 5: tile<5>(a, lda, b, p, row0, e); break;
        case 4: tile<4>(a, lda, b, p, row0, e); break;
        case 3: tile<3>(a, lda, b, p, row0, e); break;
        case 2: tile<2>(a, lda, b, p, row0, e); break;
        default: tile<1>(a, lda, b, p, row0, e); break;
      }
    }
  }
}

}  // namespace kiln::cpu::avx2

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // __x86_64__
