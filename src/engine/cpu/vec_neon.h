// Vec: 4 float32 lanes in a NEON (AdvSIMD) register, with fused multiply-add. Included only by
// kernels_neon.cc (see kernels_impl.h for the operations every Vec provides). NEON is part of
// the aarch64 base architecture, so no target region is needed around it.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "ir/dtype.h"

namespace kiln::cpu::neon {

struct Vec {
  static constexpr int kWidth = 4;
  static constexpr int kRegisters = 32;  // v0-31
  using Mask = uint32x4_t;  // all-ones lanes
  float32x4_t v;

  Vec() = default;
  Vec(float32x4_t x) : v(x) {}  // NOLINT: implicit, so intrinsics read naturally
  static Vec all(float x) { return vdupq_n_f32(x); }
  static Vec zero() { return vdupq_n_f32(0.0f); }
  static Vec load(const float* p) { return vld1q_f32(p); }
  // Lanes [0, n) from p, zeros above; reads nothing beyond p + n (n < 4).
  static Vec load(const float* p, int n) { return load_or(p, n, 0.0f); }
  // Lanes [0, n) from p, `fill` above.
  static Vec load_or(const float* p, int n, float fill) {
    float lanes[4] = {fill, fill, fill, fill};
    std::memcpy(lanes, p, static_cast<size_t>(n > 0 ? n : 0) * sizeof(float));
    return vld1q_f32(lanes);
  }
  void store(float* p) const { vst1q_f32(p, v); }
  void store(float* p, int n) const {
    float lanes[4];
    vst1q_f32(lanes, v);
    std::memcpy(p, lanes, static_cast<size_t>(n > 0 ? n : 0) * sizeof(float));
  }
  // 4 bytes from p as floats.
  static Vec load_bytes(const uint8_t* p) {
    uint8_t b[8] = {};
    std::memcpy(b, p, 4);
    return vcvtq_f32_u32(vmovl_u16(vget_low_u16(vmovl_u8(vld1_u8(b)))));
  }
  static Vec load_bytes(const int8_t* p) {
    int8_t b[8] = {};
    std::memcpy(b, p, 4);
    return vcvtq_f32_s32(vmovl_s16(vget_low_s16(vmovl_s8(vld1_s8(b)))));
  }
  // Each lane, an integer in the byte type's range, into 4 bytes at p.
  void store_bytes(uint8_t* p) const {
    const int16x4_t w = vqmovn_s32(vcvtnq_s32_f32(v));
    const uint8x8_t b = vqmovun_s16(vcombine_s16(w, w));
    std::memcpy(p, &b, 4);
  }
  void store_bytes(int8_t* p) const {
    const int16x4_t w = vqmovn_s32(vcvtnq_s32_f32(v));
    const int8x8_t b = vqmovn_s16(vcombine_s16(w, w));
    std::memcpy(p, &b, 4);
  }
  // 4 float16 / bfloat16 from p as floats, and back: a lane at a time through ir/dtype.h's
  // conversions (NEON's own float16 conversion would quiet a signaling NaN).
  static Vec load_halves(const uint16_t* p) { return lanes_of(p, half_to_float); }
  void store_halves(uint16_t* p) const { to_lanes(p, float_to_half); }
  static Vec load_bf16s(const uint16_t* p) { return lanes_of(p, bfloat16_to_float); }
  void store_bf16s(uint16_t* p) const { to_lanes(p, float_to_bfloat16); }

 private:
  static Vec lanes_of(const uint16_t* p, float (*f)(uint16_t)) {
    const float lanes[4] = {f(p[0]), f(p[1]), f(p[2]), f(p[3])};
    return vld1q_f32(lanes);
  }
  void to_lanes(uint16_t* p, uint16_t (*f)(float)) const {
    float lanes[4];
    vst1q_f32(lanes, v);
    for (int i = 0; i < 4; ++i) p[i] = f(lanes[i]);
  }
};

inline Vec operator+(Vec a, Vec b) { return vaddq_f32(a.v, b.v); }
inline Vec operator-(Vec a, Vec b) { return vsubq_f32(a.v, b.v); }
inline Vec operator*(Vec a, Vec b) { return vmulq_f32(a.v, b.v); }
inline Vec operator/(Vec a, Vec b) { return vdivq_f32(a.v, b.v); }
inline Vec fma(Vec a, Vec b, Vec c) { return vfmaq_f32(c.v, a.v, b.v); }  // a * b + c, one rounding
// x86 max/min semantics, which the kernels are written against: b when either is NaN (NEON's
// vmaxq/vminq would give NaN for either).
inline Vec max(Vec a, Vec b) { return vbslq_f32(vcgtq_f32(a.v, b.v), a.v, b.v); }
inline Vec min(Vec a, Vec b) { return vbslq_f32(vcltq_f32(a.v, b.v), a.v, b.v); }
inline Vec sqrt(Vec a) { return vsqrtq_f32(a.v); }
inline Vec abs(Vec a) { return vabsq_f32(a.v); }
inline Vec neg(Vec a) { return vnegq_f32(a.v); }
inline Vec copysign(Vec mag, Vec sgn) {
  return vbslq_f32(vdupq_n_u32(0x80000000u), sgn.v, mag.v);  // the sign bit from sgn
}

inline Vec::Mask lt(Vec a, Vec b) { return vcltq_f32(a.v, b.v); }
inline Vec::Mask le(Vec a, Vec b) { return vcleq_f32(a.v, b.v); }
inline Vec::Mask is_nan(Vec a) { return vmvnq_u32(vceqq_f32(a.v, a.v)); }
inline bool any(Vec::Mask m) { return vmaxvq_u32(m) != 0; }
inline bool all(Vec::Mask m) { return vminvq_u32(m) == 0xffffffffu; }
inline Vec select(Vec::Mask m, Vec a, Vec b) { return vbslq_f32(m, a.v, b.v); }  // m ? a : b

inline Vec round_nearest(Vec a) { return vrndnq_f32(a.v); }  // ties to even
// p * 2^n for integral n in [-160, 160]: two exact power-of-two factors, so the product rounds
// once, into the subnormals and up to inf.
inline Vec ldexp(Vec p, Vec n) {
  const int32x4_t e = vcvtq_s32_f32(n.v);  // n is integral: truncation is exact
  const int32x4_t e1 = vshrq_n_s32(e, 1);
  const int32x4_t e2 = vsubq_s32(e, e1);
  const int32x4_t bias = vdupq_n_s32(127);
  const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(e1, bias), 23));
  const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(e2, bias), 23));
  return vmulq_f32(vmulq_f32(p.v, s1), s2);
}

inline float sum(Vec a) { return vaddvq_f32(a.v); }
// The largest lane, with max's semantics folded pairwise like the x86 tables (a NaN lane is
// dropped unless it is the last one compared); the kernels that must see NaN test is_nan first.
inline float max_lanes(Vec a) {
  const Vec hi = vcombine_f32(vget_high_f32(a.v), vget_high_f32(a.v));
  const Vec m = max(a, hi);  // lanes 0, 1: max(a0, a2), max(a1, a3)
  const float l0 = vgetq_lane_f32(m.v, 0), l1 = vgetq_lane_f32(m.v, 1);
  return l0 > l1 ? l0 : l1;
}

// y[c * ldy + r] = x[r * ldx + c] for a 4x4 tile.
inline void transpose_tile(const float* x, int64_t ldx, float* y, int64_t ldy) {
  const float32x4_t r0 = vld1q_f32(x), r1 = vld1q_f32(x + ldx);
  const float32x4_t r2 = vld1q_f32(x + 2 * ldx), r3 = vld1q_f32(x + 3 * ldx);
  // Pairs of rows interleaved by 32 bits, then by 64.
  const float32x4_t t0 = vtrn1q_f32(r0, r1), t1 = vtrn2q_f32(r0, r1);
  const float32x4_t t2 = vtrn1q_f32(r2, r3), t3 = vtrn2q_f32(r2, r3);
  auto lo = [](float32x4_t a, float32x4_t b) {
    return vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)));
  };
  auto hi = [](float32x4_t a, float32x4_t b) {
    return vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)));
  };
  vst1q_f32(y, lo(t0, t2));
  vst1q_f32(y + ldy, lo(t1, t3));
  vst1q_f32(y + 2 * ldy, hi(t0, t2));
  vst1q_f32(y + 3 * ldy, hi(t1, t3));
}

}  // namespace kiln::cpu::neon
