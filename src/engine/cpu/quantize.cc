#include "engine/cpu/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/cpu/parallel.h"

namespace kiln::cpu {

namespace {

constexpr int64_t kChunk = 512;     // elements a pass of quantized_add keeps in float
constexpr int64_t kGrain = 1 << 17;  // elements per thread at least (~15 us of work)

// round_half_even(v) for |v| < 2^22: adding 1.5 * 2^23 leaves no fraction bits, and the FPU
// rounds to nearest even (the default mode), as std::nearbyint does.
constexpr float kRound = 12582912.f;

// The loops are compiled for AVX-512, AVX2 and baseline x86-64, the widest the CPU has chosen at
// load time (GCC's target_clones): the division must stay a division to round as the op does.
// On aarch64 NEON is the baseline, which the compiler vectorizes for: one version.
#if defined(__x86_64__)
#define KILN_WIDEST __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KILN_WIDEST
#endif

template <typename Q>
[[gnu::always_inline]] inline void quantize_t(const float* x, int64_t n, float scale, int32_t zp, Q* q) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::min() - zp);
  const float hi = static_cast<float>(std::numeric_limits<Q>::max() - zp);
  const float z = static_cast<float>(zp);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] / scale;
    v = v != v ? 0.f : v;                   // NaN: the zero point
    v = v < lo ? lo : (v > hi ? hi : v);  // saturate: the bounds are integers, so before rounding
    q[i] = static_cast<Q>(static_cast<int32_t>((v + kRound) - kRound + z));
  }
}

template <typename Q>
[[gnu::always_inline]] inline void dequantize_t(const Q* q, int64_t n, float scale, int32_t zp, float* x) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<int32_t>(q[i]) - zp) * scale;
}

KILN_WIDEST void quantize_s8(const float* x, int64_t n, float s, int32_t z, int8_t* q) { quantize_t(x, n, s, z, q); }
KILN_WIDEST void quantize_u8(const float* x, int64_t n, float s, int32_t z, uint8_t* q) { quantize_t(x, n, s, z, q); }
KILN_WIDEST void dequantize_s8(const int8_t* q, int64_t n, float s, int32_t z, float* x) { dequantize_t(q, n, s, z, x); }
KILN_WIDEST void dequantize_u8(const uint8_t* q, int64_t n, float s, int32_t z, float* x) { dequantize_t(q, n, s, z, x); }

// min(0, x...) and max(0, x...), NaN skipped (a comparison with it is false), in 16 lanes.
KILN_WIDEST void range_of(const float* x, int64_t n, float* lo_out, float* hi_out) {
  float lo[16] = {}, hi[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) {
      const float v = x[i + j];
      lo[j] = v < lo[j] ? v : lo[j];
      hi[j] = v > hi[j] ? v : hi[j];
    }
  for (; i < n; ++i) {
    lo[0] = x[i] < lo[0] ? x[i] : lo[0];
    hi[0] = x[i] > hi[0] ? x[i] : hi[0];
  }
  float l = 0.f, h = 0.f;
  for (int j = 0; j < 16; ++j) {
    l = std::min(l, lo[j]);
    h = std::max(h, hi[j]);
  }
  *lo_out = l;
  *hi_out = h;
}

// The residual add of uint8 tensors (ONNX Runtime's activations) in one pass: dequantize both,
// add, Relu, quantize, as the reference computes each step.
template <bool kRelu>
[[gnu::always_inline]] inline void add_u8_t(const uint8_t* a, float sa, int32_t za, const uint8_t* b, float sb,
                                            int32_t zb, int64_t n, float sy, int32_t zy, uint8_t* y) {
  const float lo = static_cast<float>(0 - zy), hi = static_cast<float>(255 - zy), z = static_cast<float>(zy);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float fa = static_cast<float>(static_cast<int32_t>(a[i]) - za) * sa;
    const float fb = static_cast<float>(static_cast<int32_t>(b[i]) - zb) * sb;
    float s = fa + fb;
    if constexpr (kRelu) s = s < 0.f ? 0.f : s;
    float v = s / sy;
    v = v != v ? 0.f : v;
    v = v < lo ? lo : (v > hi ? hi : v);
    y[i] = static_cast<uint8_t>(static_cast<int32_t>((v + kRound) - kRound + z));
  }
}
KILN_WIDEST void add_u8(const uint8_t* a, float sa, int32_t za, const uint8_t* b, float sb, int32_t zb,
                        bool relu, int64_t n, float sy, int32_t zy, uint8_t* y) {
  if (relu)
    add_u8_t<true>(a, sa, za, b, sb, zb, n, sy, zy, y);
  else
    add_u8_t<false>(a, sa, za, b, sb, zb, n, sy, zy, y);
}

void quantize_any(const float* x, int64_t n, const QuantScale& p, void* q) {
  if (p.type == DataType::kInt8)
    quantize_s8(x, n, p.scale, p.zero_point, static_cast<int8_t*>(q));
  else
    quantize_u8(x, n, p.scale, p.zero_point, static_cast<uint8_t*>(q));
}

void dequantize_any(const void* q, int64_t n, const QuantScale& p, float* x) {
  if (p.type == DataType::kInt8)
    dequantize_s8(static_cast<const int8_t*>(q), n, p.scale, p.zero_point, x);
  else
    dequantize_u8(static_cast<const uint8_t*>(q), n, p.scale, p.zero_point, x);
}

const void* advance(const void* p, int64_t elems) { return static_cast<const int8_t*>(p) + elems; }
void* advance(void* p, int64_t elems) { return static_cast<int8_t*>(p) + elems; }

}  // namespace

void quantize(const float* x, int64_t n, const QuantScale& p, void* q) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { quantize_any(x + b, e - b, p, advance(q, b)); }, 64);
}

void dequantize(const void* q, int64_t n, const QuantScale& p, float* x) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { dequantize_any(advance(q, b), e - b, p, x + b); }, 64);
}

void quantized_add(const void* a, const QuantScale& pa, const void* b, const QuantScale& pb,
                   bool relu, int64_t n, const QuantScale& py, void* y) {
  constexpr DataType u8 = DataType::kUInt8;
  if (pa.type == u8 && pb.type == u8 && py.type == u8)
    return parallel_for(n, kGrain, [&](int64_t from, int64_t to) {
      add_u8(static_cast<const uint8_t*>(a) + from, pa.scale, pa.zero_point, static_cast<const uint8_t*>(b) + from,
             pb.scale, pb.zero_point, relu, to - from, py.scale, py.zero_point, static_cast<uint8_t*>(y) + from);
    }, 64);
  parallel_for(n, kGrain, [&](int64_t from, int64_t to) {
    alignas(64) float fa[kChunk], fb[kChunk];
    for (int64_t at = from; at < to; at += kChunk) {
      const int64_t len = std::min(kChunk, to - at);
      dequantize_any(advance(a, at), len, pa, fa);
      dequantize_any(advance(b, at), len, pb, fb);
      if (relu) {
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) {
          const float s = fa[i] + fb[i];
          fa[i] = s < 0.f ? 0.f : s;  // Relu keeps a NaN, as max(x, 0) of the reference does
        }
      } else {
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) fa[i] += fb[i];
      }
      quantize_any(fa, len, py, advance(y, at));
    }
  }, 64);
}

void dynamic_quantize(const float* x, int64_t n, uint8_t* q, float* scale, uint8_t* zero_point) {
  float lo = 0.f, hi = 0.f;
  range_of(x, n, &lo, &hi);
  const float s = (hi == lo ? 1.0f : (hi - lo)) / 255.0f;
  const float z = std::clamp(0.0f - lo / s, 0.0f, 255.0f);
  const auto zp = static_cast<uint8_t>(std::nearbyint(z));
  *scale = s;
  *zero_point = zp;
  quantize(x, n, QuantScale{.scale = s, .zero_point = zp, .type = DataType::kUInt8}, q);
}

}  // namespace kiln::cpu
