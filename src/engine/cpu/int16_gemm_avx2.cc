// int16_gemm's inner loops for AVX2 (int16_gemm.h): compiled for avx2 whatever the build's flags
// (not fma: the scale's multiply and the bias's add stay two roundings, as the graph's Mul and
// Add are), called only where the CPU has it.
#include "engine/cpu/int16_gemm_tiles.h"

#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

#include <immintrin.h>

#include <cstring>

namespace kiln::cpu::avx2 {

namespace {

constexpr int64_t kPanel = Int16Weights::kPanel;
using Sums = int32_t[kPanel];  // one row's integer products over a panel

// Rows [row0, row0 + rows) by panel p from their integer sums: the zero point's share taken
// away, then float, scale, bias, as the graph's Cast, Mul and Add.
void finish(const Sums* sums, int rows, const Int16Weights& b, int64_t p, int64_t row0,
            const Int16Epilogue& e) {
  const int64_t col0 = p * kPanel;
  const int cols = static_cast<int>(std::min<int64_t>(kPanel, b.n() - col0));
  alignas(32) int32_t colsum[kPanel] = {};
  alignas(32) float scale[kPanel], bias[kPanel] = {};
  std::memcpy(colsum, b.column_sums().data() + col0, sizeof(int32_t) * cols);
  for (int c = 0; c < kPanel; ++c) scale[c] = e.scale[e.per_column && c < cols ? col0 + c : 0];
  if (e.bias) std::memcpy(bias, e.bias + col0, sizeof(float) * cols);
  const __m256i zp = _mm256_set1_epi32(e.zero_point);
  for (int r = 0; r < rows; ++r) {
    alignas(32) float out[kPanel];
    for (int h = 0; h < 2; ++h) {
      const __m256i off = _mm256_mullo_epi32(zp, _mm256_load_si256(reinterpret_cast<const __m256i*>(colsum + 8 * h)));
      const __m256i s = _mm256_sub_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(sums[r] + 8 * h)), off);
      __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(s), _mm256_load_ps(scale + 8 * h));
      if (e.bias) v = _mm256_add_ps(v, _mm256_load_ps(bias + 8 * h));
      _mm256_store_ps(out + 8 * h, v);
    }
    std::memcpy(e.y + (row0 + r) * e.ldy + col0, out, sizeof(float) * cols);
  }
}

// Six rows by one panel, its 12 accumulators, the panel's two registers, A's pair and a product
// in the 16 registers: written out, since GCC spills the accumulators of this loop to the stack.
// sums[r] gets row r's integer products. lda in int16 elements.
void block6(const int16_t* a, int64_t lda, const int16_t* w, int64_t pairs, Sums* sums) {
  const int16_t* a3 = a + 3 * lda;
  const int64_t stride = lda * static_cast<int64_t>(sizeof(int16_t));
#define KILN_ROW(load, lo, hi)                       \
  "vpbroadcastd " load ", %%ymm14\n\t"               \
  "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n\t"           \
  "vpaddd %%ymm15, %%ymm" lo ", %%ymm" lo "\n\t"     \
  "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n\t"           \
  "vpaddd %%ymm15, %%ymm" hi ", %%ymm" hi "\n\t"
  asm volatile(
      "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"
      "vpxor %%xmm1, %%xmm1, %%xmm1\n\t"
      "vpxor %%xmm2, %%xmm2, %%xmm2\n\t"
      "vpxor %%xmm3, %%xmm3, %%xmm3\n\t"
      "vpxor %%xmm4, %%xmm4, %%xmm4\n\t"
      "vpxor %%xmm5, %%xmm5, %%xmm5\n\t"
      "vpxor %%xmm6, %%xmm6, %%xmm6\n\t"
      "vpxor %%xmm7, %%xmm7, %%xmm7\n\t"
      "vpxor %%xmm8, %%xmm8, %%xmm8\n\t"
      "vpxor %%xmm9, %%xmm9, %%xmm9\n\t"
      "vpxor %%xmm10, %%xmm10, %%xmm10\n\t"
      "vpxor %%xmm11, %%xmm11, %%xmm11\n\t"
      "test %[n], %[n]\n\t"
      "jz 2f\n\t"
      "1:\n\t"
      "vmovdqu (%[w]), %%ymm12\n\t"
      "vmovdqu 32(%[w]), %%ymm13\n\t"
      KILN_ROW("(%[a0])", "0", "1")
      KILN_ROW("(%[a0],%[ld])", "2", "3")
      KILN_ROW("(%[a0],%[ld],2)", "4", "5")
      KILN_ROW("(%[a3])", "6", "7")
      KILN_ROW("(%[a3],%[ld])", "8", "9")
      KILN_ROW("(%[a3],%[ld],2)", "10", "11")
      "add $64, %[w]\n\t"
      "add $4, %[a0]\n\t"
      "add $4, %[a3]\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "2:\n\t"
      "vmovdqu %%ymm0, (%[s])\n\t"
      "vmovdqu %%ymm1, 32(%[s])\n\t"
      "vmovdqu %%ymm2, 64(%[s])\n\t"
      "vmovdqu %%ymm3, 96(%[s])\n\t"
      "vmovdqu %%ymm4, 128(%[s])\n\t"
      "vmovdqu %%ymm5, 160(%[s])\n\t"
      "vmovdqu %%ymm6, 192(%[s])\n\t"
      "vmovdqu %%ymm7, 224(%[s])\n\t"
      "vmovdqu %%ymm8, 256(%[s])\n\t"
      "vmovdqu %%ymm9, 288(%[s])\n\t"
      "vmovdqu %%ymm10, 320(%[s])\n\t"
      "vmovdqu %%ymm11, 352(%[s])\n\t"
      : [w] "+r"(w), [a0] "+r"(a), [a3] "+r"(a3), [n] "+r"(pairs)
      : [ld] "r"(stride), [s] "r"(sums)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
#undef KILN_ROW
}

// Up to four rows by one panel (what is left below the six-row blocks): GCC keeps their eight
// accumulators in registers.
template <int R>
void block(const int16_t* a, int64_t lda, const int16_t* w, int64_t pairs, Sums* sums) {
  __m256i lo[R], hi[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
  for (int64_t k = 0; k < pairs; ++k) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + k * 2 * kPanel));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + k * 2 * kPanel + 16));
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + r * lda + 2 * k, sizeof(pair));
      const __m256i av = _mm256_set1_epi32(pair);
      lo[r] = _mm256_add_epi32(lo[r], _mm256_madd_epi16(av, b0));
      hi[r] = _mm256_add_epi32(hi[r], _mm256_madd_epi16(av, b1));
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums[r]), lo[r]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums[r] + 8), hi[r]);
  }
}

void rows_by_panel(const int16_t* a, int64_t lda, int rows, const int16_t* w, int64_t pairs, Sums* sums) {
  switch (rows) {
    case 6: return block6(a, lda, w, pairs, sums);
    case 4: return block<4>(a, lda, w, pairs, sums);
    case 3: return block<3>(a, lda, w, pairs, sums);
    case 2: return block<2>(a, lda, w, pairs, sums);
    default: return block<1>(a, lda, w, pairs, sums);
  }
}

}  // namespace

void int16_rows(const int16_t* a, int64_t lda, int64_t m, const Int16Weights& b, int64_t p_first,
                int64_t p_last, const Int16Epilogue& e) {
  alignas(32) Sums sums[kTileRows];
  for (int64_t row0 = 0; row0 < m;) {
    // Blocks of 6, then 4, 3, 2, 1 (5 = 4 + 1).
    const int64_t left = m - row0;
    const int rows = left >= 6 ? 6 : left >= 4 ? 4 : static_cast<int>(left);
    for (int64_t p = p_first; p < p_last; ++p) {
      rows_by_panel(a + row0 * lda, lda, rows, b.panel(p), b.pairs(), sums);
      finish(sums, rows, b, p, row0, e);
    }
    row0 += rows;
  }
}

}  // namespace kiln::cpu::avx2

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // __x86_64__
