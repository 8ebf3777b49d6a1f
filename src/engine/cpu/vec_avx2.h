// Vec: 8 float32 lanes in an AVX2 register, with FMA. Included only by kernels_avx2.cc, inside its
// `#pragma GCC target` region (see kernels_impl.h for the operations every Vec provides).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace kiln::cpu::avx2 {

struct Vec {
  static constexpr int kWidth = 8;
  static constexpr int kRegisters = 16;  // ymm0-15
  using Mask = __m256;  // all-ones lanes
  __m256 v;

  Vec() = default;
  Vec(__m256 x) : v(x) {}  // NOLINT: implicit, so intrinsics read naturally
  static Vec all(float x) { return _mm256_set1_ps(x); }
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static __m256i first(int n) {  // lanes [0, n), n < 8
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  // Lanes [0, n) from p, zeros above; reads nothing beyond p + n.
  static Vec load(const float* p, int n) { return _mm256_maskload_ps(p, first(n)); }
  // Lanes [0, n) from p, `fill` above.
  static Vec load_or(const float* p, int n, float fill) {
    const __m256i m = first(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  void store(float* p, int n) const { _mm256_maskstore_ps(p, first(n), v); }
  // 8 bytes from p as floats.
  static Vec load_bytes(const uint8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static Vec load_bytes(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  // Each lane, an integer in the byte type's range, into 8 bytes at p.
  void store_bytes(uint8_t* p) const { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(words(), words())); }
  void store_bytes(int8_t* p) const { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packs_epi16(words(), words())); }
  // 8 float16 from p as floats, and back (rounded to nearest even, overflow to infinity); NaN
  // lanes as half_to_float / float_to_half make them (the instructions would quiet a signaling
  // NaN, keep a payload): the same bits as the reference's conversions.
  static Vec load_halves(const uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m256i w = _mm256_cvtepu16_epi32(h);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x7fff)), _mm256_set1_epi32(0x7c00));
    const __m256i nan_bits = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16), _mm256_set1_epi32(0x7f800000)),
        _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x3ff)), 13));
    return _mm256_blendv_ps(_mm256_cvtph_ps(h), _mm256_castsi256_ps(nan_bits), _mm256_castsi256_ps(nan));
  }
  void store_halves(uint16_t* p) const {
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    const __m256i nan_bits = _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(v), 16), _mm256_set1_epi32(0x8000)), _mm256_set1_epi32(0x7e00));
    const __m256i h = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    store_words(p, _mm256_blendv_epi8(h, nan_bits, _mm256_castps_si256(nan)));
  }
  // 8 bfloat16 from p as floats, and back as float_to_bfloat16 rounds (to nearest even, NaN
  // quieted).
  static Vec load_bf16s(const uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  void store_bf16s(uint16_t* p) const {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(x, 16);
    const __m256i odd = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
    const __m256i quiet = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
    store_words(p, _mm256_blendv_epi8(r, quiet, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))));
  }

 private:
  // 8 lanes, each in [0, 65535], as 8 uint16 at p.
  static void store_words(uint16_t* p, __m256i w) {
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(w, w), 0x08);  // qwords 0, 2
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
  __m128i words() const {  // the lanes as 8 int16
    const __m256i i = _mm256_cvtps_epi32(v);
    return _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
  }
};

inline Vec operator+(Vec a, Vec b) { return _mm256_add_ps(a.v, b.v); }
inline Vec operator-(Vec a, Vec b) { return _mm256_sub_ps(a.v, b.v); }
inline Vec operator*(Vec a, Vec b) { return _mm256_mul_ps(a.v, b.v); }
inline Vec operator/(Vec a, Vec b) { return _mm256_div_ps(a.v, b.v); }
inline Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a.v, b.v, c.v); }  // a * b + c
// x86 max/min: b when either is NaN.
inline Vec max(Vec a, Vec b) { return _mm256_max_ps(a.v, b.v); }
inline Vec min(Vec a, Vec b) { return _mm256_min_ps(a.v, b.v); }
inline Vec sqrt(Vec a) { return _mm256_sqrt_ps(a.v); }
inline Vec abs(Vec a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.v); }
inline Vec neg(Vec a) { return _mm256_xor_ps(a.v, _mm256_set1_ps(-0.0f)); }
inline Vec copysign(Vec mag, Vec sgn) {
  const __m256 s = _mm256_set1_ps(-0.0f);
  return _mm256_or_ps(_mm256_andnot_ps(s, mag.v), _mm256_and_ps(s, sgn.v));
}

inline Vec::Mask lt(Vec a, Vec b) { return _mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ); }
inline Vec::Mask le(Vec a, Vec b) { return _mm256_cmp_ps(a.v, b.v, _CMP_LE_OQ); }
inline Vec::Mask is_nan(Vec a) { return _mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q); }
inline bool any(Vec::Mask m) { return _mm256_movemask_ps(m) != 0; }
inline bool all(Vec::Mask m) { return _mm256_movemask_ps(m) == 0xff; }
inline Vec select(Vec::Mask m, Vec a, Vec b) { return _mm256_blendv_ps(b.v, a.v, m); }  // m ? a : b

inline Vec round_nearest(Vec a) {
  return _mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
// p * 2^n for integral n in [-160, 160]: two exact power-of-two factors, so the product rounds
// once, into the subnormals and up to inf.
inline Vec ldexp(Vec p, Vec n) {
  const __m256i e = _mm256_cvtps_epi32(n.v);
  const __m256i e1 = _mm256_srai_epi32(e, 1);
  const __m256i e2 = _mm256_sub_epi32(e, e1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p.v, s1), s2);
}

inline float sum(Vec a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float max_lanes(Vec a) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace kiln::cpu::avx2

namespace kiln::cpu::avx2 {

// y[c * ldy + r] = x[r * ldx + c] for an 8x8 tile.
inline void transpose_tile(const float* x, int64_t ldx, float* y, int64_t ldy) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(x + i * ldx);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    for (int j = 0; j < 2; ++j) {
      r[i + j] = _mm256_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(1, 0, 1, 0));
      r[i + j + 2] = _mm256_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(3, 2, 3, 2));
    }
  }
  // r[0..3] hold rows 0-3's columns {0,4}, {2,6}, {1,5}, {3,7} (by 128-bit half); r[4..7] rows 4-7.
  static constexpr int kCol[4] = {0, 2, 1, 3};
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(y + kCol[k] * ldy, _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
    _mm256_storeu_ps(y + (kCol[k] + 4) * ldy, _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
  }
}

}  // namespace kiln::cpu::avx2
