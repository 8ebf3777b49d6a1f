// Vec: 16 float32 lanes in an AVX-512 register. Included only by kernels_avx512.cc, inside its
// `#pragma GCC target` region (see kernels_impl.h for the operations every Vec provides).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace kiln::cpu::avx512 {

struct Vec {
  static constexpr int kWidth = 16;
  static constexpr int kRegisters = 32;  // zmm0-31
  using Mask = __mmask16;
  __m512 v;

  Vec() = default;
  Vec(__m512 x) : v(x) {}  // NOLINT: implicit, so intrinsics read naturally
  static Vec all(float x) { return _mm512_set1_ps(x); }
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static Mask first(int n) { return static_cast<Mask>((1u << n) - 1u); }  // lanes [0, n), n < 16
  // Lanes [0, n) from p, zeros above; reads nothing beyond p + n.
  static Vec load(const float* p, int n) { return _mm512_maskz_loadu_ps(first(n), p); }
  // Lanes [0, n) from p, `fill` above.
  static Vec load_or(const float* p, int n, float fill) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), first(n), p);
  }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  void store(float* p, int n) const { _mm512_mask_storeu_ps(p, first(n), v); }
  // 16 bytes from p as floats.
  static Vec load_bytes(const uint8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static Vec load_bytes(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  // Each lane, an integer in the byte type's range, into 16 bytes at p.
  void store_bytes(uint8_t* p) const {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(v)));
  }
  void store_bytes(int8_t* p) const {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(v)));
  }
  // 16 float16 from p as floats, and back (rounded to nearest even, overflow to infinity); NaN
  // lanes as half_to_float / float_to_half make them (the instructions would quiet a signaling
  // NaN, keep a payload): the same bits as the reference's conversions.
  static Vec load_halves(const uint16_t* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m512i w = _mm512_cvtepu16_epi32(h);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(w, _mm512_set1_epi32(0x7fff)), _mm512_set1_epi32(0x7c00));
    const __m512i nan_bits = _mm512_or_si512(
        _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x8000)), 16), _mm512_set1_epi32(0x7f800000)),
        _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3ff)), 13));
    return _mm512_mask_blend_ps(nan, _mm512_cvtph_ps(h), _mm512_castsi512_ps(nan_bits));
  }
  void store_halves(uint16_t* p) const {
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i nan_bits = _mm512_or_si512(
        _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(v), 16), _mm512_set1_epi32(0x8000)), _mm512_set1_epi32(0x7e00));
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_mask_blend_epi16(nan, h, _mm512_cvtepi32_epi16(nan_bits)));
  }
  // 16 bfloat16 from p as floats, and back as float_to_bfloat16 rounds (to nearest even, NaN
  // quieted).
  static Vec load_bf16s(const uint16_t* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  void store_bf16s(uint16_t* p) const {
    const __m512i x = _mm512_castps_si512(v);
    const __m512i high = _mm512_srli_epi32(x, 16);
    const __m512i odd = _mm512_and_si512(high, _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_or_si512(high, _mm512_set1_epi32(0x40)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(r));
  }
};

inline Vec operator+(Vec a, Vec b) { return _mm512_add_ps(a.v, b.v); }
inline Vec operator-(Vec a, Vec b) { return _mm512_sub_ps(a.v, b.v); }
inline Vec operator*(Vec a, Vec b) { return _mm512_mul_ps(a.v, b.v); }
inline Vec operator/(Vec a, Vec b) { return _mm512_div_ps(a.v, b.v); }
inline Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a.v, b.v, c.v); }  // a * b + c
// x86 max/min: b when either is NaN.
inline Vec max(Vec a, Vec b) { return _mm512_max_ps(a.v, b.v); }
inline Vec min(Vec a, Vec b) { return _mm512_min_ps(a.v, b.v); }
inline Vec sqrt(Vec a) { return _mm512_sqrt_ps(a.v); }
inline Vec abs(Vec a) { return _mm512_abs_ps(a.v); }
inline Vec neg(Vec a) { return _mm512_xor_ps(a.v, _mm512_set1_ps(-0.0f)); }
// Magnitude of mag with the sign of sgn.
inline Vec copysign(Vec mag, Vec sgn) {
  const __m512 s = _mm512_set1_ps(-0.0f);
  return _mm512_or_ps(_mm512_andnot_ps(s, mag.v), _mm512_and_ps(s, sgn.v));
}

inline Vec::Mask lt(Vec a, Vec b) { return _mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ); }
inline Vec::Mask le(Vec a, Vec b) { return _mm512_cmp_ps_mask(a.v, b.v, _CMP_LE_OQ); }
inline Vec::Mask is_nan(Vec a) { return _mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q); }
inline bool any(Vec::Mask m) { return m != 0; }
inline bool all(Vec::Mask m) { return m == 0xffff; }
inline Vec select(Vec::Mask m, Vec a, Vec b) { return _mm512_mask_blend_ps(m, b.v, a.v); }  // m ? a : b

// Nearest integer (ties to even), as a float.
inline Vec round_nearest(Vec a) {
  return _mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
// p * 2^n for integral n in [-160, 160]: one rounding, into the subnormals and up to inf.
inline Vec ldexp(Vec p, Vec n) { return _mm512_scalef_ps(p.v, n.v); }

inline float sum(Vec a) { return _mm512_reduce_add_ps(a.v); }
inline float max_lanes(Vec a) { return _mm512_reduce_max_ps(a.v); }

}  // namespace kiln::cpu::avx512

namespace kiln::cpu::avx512 {

// y[c * ldy + r] = x[r * ldx + c] for a 16x16 tile.
inline void transpose_tile(const float* x, int64_t ldx, float* y, int64_t ldy) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(x + i * ldx);
  // Interleave pairs of rows, then pairs of pairs: each 128-bit lane of t[k] becomes a 4x4 tile.
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    for (int j = 0; j < 2; ++j) {
      const __m512d a = _mm512_castps_pd(t[i + j]), b = _mm512_castps_pd(t[i + j + 2]);
      r[i + j] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      r[i + j + 2] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    }
  }
  // r[4g + m] holds, in 128-bit lane q, column 4q + {0, 2, 1, 3}[m] of rows 4g..4g+3. Gather the
  // lanes: first pairs of row groups, then the two halves.
  for (int m = 0; m < 4; ++m) {
    t[m] = _mm512_shuffle_f32x4(r[m], r[4 + m], _MM_SHUFFLE(2, 0, 2, 0));       // q 0,2 | 0,2
    t[4 + m] = _mm512_shuffle_f32x4(r[m], r[4 + m], _MM_SHUFFLE(3, 1, 3, 1));   // q 1,3 | 1,3
    t[8 + m] = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], _MM_SHUFFLE(2, 0, 2, 0));
    t[12 + m] = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], _MM_SHUFFLE(3, 1, 3, 1));
  }
  // t[4h + m] and t[8 + 4h + m] hold lanes q = h and h + 2 of all four row groups.
  static constexpr int kCol[4] = {0, 2, 1, 3};
  for (int m = 0; m < 4; ++m) {
    for (int h = 0; h < 2; ++h) {
      const __m512 lo = _mm512_shuffle_f32x4(t[4 * h + m], t[8 + 4 * h + m], _MM_SHUFFLE(2, 0, 2, 0));
      const __m512 hi = _mm512_shuffle_f32x4(t[4 * h + m], t[8 + 4 * h + m], _MM_SHUFFLE(3, 1, 3, 1));
      _mm512_storeu_ps(y + (kCol[m] + 4 * h) * ldy, lo);
      _mm512_storeu_ps(y + (kCol[m] + 4 * h + 8) * ldy, hi);
    }
  }
}

}  // namespace kiln::cpu::avx512
