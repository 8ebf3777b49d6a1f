// Vec: one float32 lane, for CPUs without AVX2. Included only by kernels_scalar.cc (see
// kernels_impl.h for the operations every Vec provides). fma is a multiply and an add: without
// the instruction, std::fma is a slow library call.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/dtype.h"

namespace kiln::cpu::scalar {

struct Vec {
  static constexpr int kWidth = 1;
  static constexpr int kRegisters = 16;  // what a compiler keeps in general registers, roughly
  using Mask = bool;
  float v;

  Vec() = default;
  Vec(float x) : v(x) {}  // NOLINT
  static Vec all(float x) { return x; }
  static Vec zero() { return 0.0f; }
  static Vec load(const float* p) { return *p; }
  static Vec load(const float* p, int n) { return n > 0 ? *p : 0.0f; }
  static Vec load_or(const float* p, int n, float fill) { return n > 0 ? *p : fill; }
  void store(float* p) const { *p = v; }
  void store(float* p, int n) const {
    if (n > 0) *p = v;
  }
  // A byte from p as a float, and back (the lane an integer in the byte type's range).
  static Vec load_bytes(const uint8_t* p) { return static_cast<float>(*p); }
  static Vec load_bytes(const int8_t* p) { return static_cast<float>(*p); }
  void store_bytes(uint8_t* p) const { *p = static_cast<uint8_t>(static_cast<int32_t>(v)); }
  void store_bytes(int8_t* p) const { *p = static_cast<int8_t>(static_cast<int32_t>(v)); }
  // A float16 / bfloat16 from p as a float, and back (ir/dtype.h's conversions).
  static Vec load_halves(const uint16_t* p) { return half_to_float(*p); }
  void store_halves(uint16_t* p) const { *p = float_to_half(v); }
  static Vec load_bf16s(const uint16_t* p) { return bfloat16_to_float(*p); }
  void store_bf16s(uint16_t* p) const { *p = float_to_bfloat16(v); }
};

inline Vec operator+(Vec a, Vec b) { return a.v + b.v; }
inline Vec operator-(Vec a, Vec b) { return a.v - b.v; }
inline Vec operator*(Vec a, Vec b) { return a.v * b.v; }
inline Vec operator/(Vec a, Vec b) { return a.v / b.v; }
inline Vec fma(Vec a, Vec b, Vec c) { return a.v * b.v + c.v; }
// x86 max/min: b when either is NaN.
inline Vec max(Vec a, Vec b) { return a.v > b.v ? a.v : b.v; }
inline Vec min(Vec a, Vec b) { return a.v < b.v ? a.v : b.v; }
inline Vec sqrt(Vec a) { return std::sqrt(a.v); }
inline Vec abs(Vec a) { return std::fabs(a.v); }
inline Vec neg(Vec a) { return -a.v; }
inline Vec copysign(Vec mag, Vec sgn) { return std::copysign(mag.v, sgn.v); }

inline bool lt(Vec a, Vec b) { return a.v < b.v; }
inline bool le(Vec a, Vec b) { return a.v <= b.v; }
inline bool is_nan(Vec a) { return a.v != a.v; }
inline bool any(bool m) { return m; }
inline bool all(bool m) { return m; }
inline Vec select(bool m, Vec a, Vec b) { return m ? a : b; }

// Nearest integer (ties to even) for |a| < 2^22, which is all the kernels ask.
inline Vec round_nearest(Vec a) {
  const float magic = 12582912.0f;  // 1.5 * 2^23: the add rounds away the fraction
  return (a.v + magic) - magic;
}
// p * 2^n for integral n in [-160, 160], rounding once (two exact power-of-two factors).
inline Vec ldexp(Vec p, Vec n) {
  const int e = static_cast<int>(n.v);
  const int e1 = e >> 1, e2 = e - e1;
  auto pow2 = [](int k) {
    const uint32_t bits = static_cast<uint32_t>(k + 127) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  };
  return p.v * pow2(e1) * pow2(e2);
}

inline float sum(Vec a) { return a.v; }
inline float max_lanes(Vec a) { return a.v; }

}  // namespace kiln::cpu::scalar

namespace kiln::cpu::scalar {

inline void transpose_tile(const float* x, int64_t, float* y, int64_t) { *y = *x; }

}  // namespace kiln::cpu::scalar
