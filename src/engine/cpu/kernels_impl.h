// The kernels of one ISA, written once against a Vec type and compiled three times: by
// kernels_avx512.cc, kernels_avx2.cc and kernels_scalar.cc, each of which defines KILN_CPU_ISA (the
// namespace: avx512, avx2, scalar), includes its vec_<isa>.h (inside a `#pragma GCC target`
// region for the vector ISAs) and then this file. No include guard: it is meant to be included
// once per ISA, and everything here lives in that ISA's namespace.
//
// What a Vec provides: kWidth lanes; all(x), zero(), load(p), load(p, n) (lanes [0, n), zeros
// above), load_or(p, n, fill), store(p), store(p, n), load_bytes(p) and store_bytes(p) (kWidth
// uint8_t or int8_t as floats; a stored lane is an integer in the type's range); + - * /, fma(a, b, c) = a * b + c, max/min
// with x86 semantics (the second operand when either is NaN), sqrt, abs, neg, copysign; masks from
// lt, le, is_nan, tested with any/all; select(m, a, b) = m ? a : b;
// load_halves / store_halves and load_bf16s / store_bf16s (kWidth float16 or bfloat16 bit
// patterns, converted as ir/dtype.h's functions do, bit for bit);
// round_nearest, ldexp(p, n) = p * 2^n; sum and max_lanes across lanes; transpose_tile of
// kWidth x kWidth floats.

#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/cpu/kernels.h"
#include "engine/cpu/vec_math.h"

namespace kiln::cpu::KILN_CPU_ISA {
namespace {

constexpr int W = Vec::kWidth;
constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------------------------
// Loops over contiguous floats: two registers per step (independent chains for the math
// functions), then one, then a partial register for the tail.

template <class F>
inline void map1(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const Vec a = f(Vec::load(x + i)), b = f(Vec::load(x + i + W));
    a.store(y + i);
    b.store(y + i + W);
  }
  for (; i + W <= n; i += W) f(Vec::load(x + i)).store(y + i);
  if (i < n) f(Vec::load(x + i, static_cast<int>(n - i))).store(y + i, static_cast<int>(n - i));
}

template <class F>
inline void map2(const float* a, const float* b, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const Vec u = f(Vec::load(a + i), Vec::load(b + i));
    const Vec v = f(Vec::load(a + i + W), Vec::load(b + i + W));
    u.store(y + i);
    v.store(y + i + W);
  }
  for (; i + W <= n; i += W) f(Vec::load(a + i), Vec::load(b + i)).store(y + i);
  if (i < n) {
    const int r = static_cast<int>(n - i);
    f(Vec::load(a + i, r), Vec::load(b + i, r)).store(y + i, r);
  }
}

// A register at a time over [0, n), the last one partial: for_lanes(n, f) calls f(k, lanes), and
// load_lanes / store_lanes read and write lanes [k, k + lanes) of p.

inline Vec load_lanes(const float* p, int64_t k, int lanes) {
  return lanes == W ? Vec::load(p + k) : Vec::load(p + k, lanes);
}

inline void store_lanes(Vec v, float* p, int64_t k, int lanes) {
  if (lanes == W)
    v.store(p + k);
  else
    v.store(p + k, lanes);
}

template <class F>
inline void for_lanes(int64_t n, F f) {
  int64_t k = 0;
  for (; k + W <= n; k += W) f(k, W);
  if (k < n) f(k, static_cast<int>(n - k));
}

// ---------------------------------------------------------------------------------------------
// Unary ops.

void unary_kernel(UnaryOp op, UnaryParams p, const float* x, float* y, int64_t n) {
  const Vec zero = Vec::zero(), one = Vec::all(1.0f), half = Vec::all(0.5f);
  const Vec alpha = Vec::all(p.alpha), beta = Vec::all(p.beta);
  switch (op) {
    case UnaryOp::kRelu:
      return map1(x, y, n, [&](Vec v) { return max(zero, v); });
    case UnaryOp::kLeakyRelu:
      return map1(x, y, n, [&](Vec v) { return select(lt(v, zero), alpha * v, v); });
    case UnaryOp::kSigmoid:
      return map1(x, y, n, [](Vec v) { return sigmoid(v); });
    case UnaryOp::kTanh:
      return map1(x, y, n, [](Vec v) { return tanh(v); });
    case UnaryOp::kErf:
      return map1(x, y, n, [](Vec v) { return erf(v); });
    case UnaryOp::kGeluErf: {
      const Vec k = Vec::all(0.70710678118654752f);
      return map1(x, y, n, [&](Vec v) { return (half * v) * (one + erf(v * k)); });
    }
    case UnaryOp::kGeluTanh: {
      const Vec k = Vec::all(0.79788456080286536f), c = Vec::all(0.044715f);
      return map1(x, y, n, [&](Vec v) {
        return (half * v) * (one + tanh(k * fma(c * v * v, v, v)));
      });
    }
    case UnaryOp::kHardSigmoid:
      return map1(x, y, n, [&](Vec v) { return min(one, max(zero, fma(alpha, v, beta))); });
    case UnaryOp::kHardSwish: {
      const Vec six = Vec::all(6.0f);
      return map1(x, y, n, [&](Vec v) { return v * min(one, max(zero, v / six + half)); });
    }
    case UnaryOp::kClip:
      return map1(x, y, n, [&](Vec v) { return min(beta, max(alpha, v)); });
    case UnaryOp::kSwish:
      return map1(x, y, n, [&](Vec v) { return swish(v, alpha); });
    case UnaryOp::kExp:
      return map1(x, y, n, [](Vec v) { return exp(v); });
    case UnaryOp::kSqrt:
      return map1(x, y, n, [](Vec v) { return sqrt(v); });
    case UnaryOp::kNeg:
      return map1(x, y, n, [](Vec v) { return neg(v); });
    case UnaryOp::kAbs:
      return map1(x, y, n, [](Vec v) { return abs(v); });
    case UnaryOp::kReciprocal:
      return map1(x, y, n, [&](Vec v) { return one / v; });
    case UnaryOp::kIdentity:
    case UnaryOp::kCount:
      break;
  }
  if (x != y) map1(x, y, n, [](Vec v) { return v; });
}

// ---------------------------------------------------------------------------------------------
// Binary ops. Max and Min follow the reference kernel exactly: NaN wins, and between -0 and +0
// Max keeps a unless b > a, Min keeps a unless b < a (so b goes first into x86's max/min).

inline Vec max_nan(Vec a, Vec b) { return select(is_nan(b), b, max(b, a)); }
inline Vec min_nan(Vec a, Vec b) { return select(is_nan(b), b, min(b, a)); }

// Pow through the C library, element by element (exponents without a fast path are rare).
float pow_scalar(float a, float b) { return std::pow(a, b); }

void binary_vv_kernel(BinaryOp op, const float* a, const float* b, float* y, int64_t n) {
  switch (op) {
    case BinaryOp::kAdd: return map2(a, b, y, n, [](Vec u, Vec v) { return u + v; });
    case BinaryOp::kSub: return map2(a, b, y, n, [](Vec u, Vec v) { return u - v; });
    case BinaryOp::kMul: return map2(a, b, y, n, [](Vec u, Vec v) { return u * v; });
    case BinaryOp::kDiv: return map2(a, b, y, n, [](Vec u, Vec v) { return u / v; });
    case BinaryOp::kMax: return map2(a, b, y, n, [](Vec u, Vec v) { return max_nan(u, v); });
    case BinaryOp::kMin: return map2(a, b, y, n, [](Vec u, Vec v) { return min_nan(u, v); });
    case BinaryOp::kPow:
    case BinaryOp::kCount:
      break;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = pow_scalar(a[i], b[i]);
}

// a op s, or (reversed) s op a.
template <bool kReversed>
void binary_scalar_kernel(BinaryOp op, const float* a, float s, float* y, int64_t n) {
  const Vec c = Vec::all(s);
  auto run = [&](auto f) {
    if constexpr (kReversed) map1(a, y, n, [&](Vec v) { return f(c, v); });
    else map1(a, y, n, [&](Vec v) { return f(v, c); });
  };
  switch (op) {
    case BinaryOp::kAdd: return run([](Vec u, Vec v) { return u + v; });
    case BinaryOp::kSub: return run([](Vec u, Vec v) { return u - v; });
    case BinaryOp::kMul: return run([](Vec u, Vec v) { return u * v; });
    case BinaryOp::kDiv: return run([](Vec u, Vec v) { return u / v; });
    case BinaryOp::kMax: return run([](Vec u, Vec v) { return max_nan(u, v); });
    case BinaryOp::kMin: return run([](Vec u, Vec v) { return min_nan(u, v); });
    case BinaryOp::kPow:
    case BinaryOp::kCount:
      break;
  }
  if (!kReversed && s == 2.0f) return map1(a, y, n, [](Vec v) { return v * v; });
  if (!kReversed && s == 1.0f) return map1(a, y, n, [](Vec v) { return v; });
  for (int64_t i = 0; i < n; ++i) y[i] = kReversed ? pow_scalar(s, a[i]) : pow_scalar(a[i], s);
}

void binary_vs_kernel(BinaryOp op, const float* a, float s, float* y, int64_t n) {
  binary_scalar_kernel<false>(op, a, s, y, n);
}
void binary_sv_kernel(BinaryOp op, float s, const float* b, float* y, int64_t n) {
  binary_scalar_kernel<true>(op, b, s, y, n);
}

// ---------------------------------------------------------------------------------------------
// Passes along one row.

// The maximum of x[0, n), NaN if any element is NaN; -inf when empty.
float row_max(const float* x, int64_t n) {
  Vec m0 = Vec::all(-kInf), m1 = m0;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    m0 = max_nan(m0, Vec::load(x + i));
    m1 = max_nan(m1, Vec::load(x + i + W));
  }
  for (; i + W <= n; i += W) m0 = max_nan(m0, Vec::load(x + i));
  if (i < n) m0 = max_nan(m0, Vec::load_or(x + i, static_cast<int>(n - i), -kInf));
  const Vec m = max_nan(m0, m1);
  return any(is_nan(m)) ? std::numeric_limits<float>::quiet_NaN() : max_lanes(m);
}

// Sum of f(x[i]) over [0, n). The lanes past n in the last register read `fill`, and f(fill)
// must be 0.
template <class F>
float row_sum(const float* x, int64_t n, float fill, F f) {
  Vec s0 = Vec::zero(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    s0 = s0 + f(Vec::load(x + i));
    s1 = s1 + f(Vec::load(x + i + W));
    s2 = s2 + f(Vec::load(x + i + 2 * W));
    s3 = s3 + f(Vec::load(x + i + 3 * W));
  }
  for (; i + W <= n; i += W) s0 = s0 + f(Vec::load(x + i));
  if (i < n) s1 = s1 + f(Vec::load_or(x + i, static_cast<int>(n - i), fill));
  return sum((s0 + s1) + (s2 + s3));
}

// Sums of d and d^2 for d = f(x[i]) over [0, n) (lanes past n read `fill`, with f(fill) = 0):
// returns the sum of squares, *sum_out gets the sum.
template <class F>
float row_sum2(const float* x, int64_t n, float fill, F f, float* sum_out) {
  Vec s[4] = {Vec::zero(), Vec::zero(), Vec::zero(), Vec::zero()};
  Vec q[4] = {Vec::zero(), Vec::zero(), Vec::zero(), Vec::zero()};
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    for (int k = 0; k < 4; ++k) {
      const Vec d = f(Vec::load(x + i + k * W));
      s[k] = s[k] + d;
      q[k] = fma(d, d, q[k]);
    }
  }
  for (int k = 0; i < n; i += W, ++k) {
    const Vec d = f(i + W <= n ? Vec::load(x + i) : Vec::load_or(x + i, static_cast<int>(n - i), fill));
    s[k] = s[k] + d;
    q[k] = fma(d, d, q[k]);
  }
  *sum_out = sum((s[0] + s[1]) + (s[2] + s[3]));
  return sum((q[0] + q[1]) + (q[2] + q[3]));
}

// ---------------------------------------------------------------------------------------------
// Softmax and LogSoftmax. A NaN in a row makes the row NaN, as in the reference (whose max
// skips NaN, but exp(NaN - max) then poisons the sum).

// Kahan's compensated sum: the rounding error of each add is carried into the next, so long rows
// sum as accurately as short ones.
// (The constructor is spelled out: GCC 12 at -O0 leaves default member initializers of vector
// type inside a `#pragma GCC target` region unrun, which made Debug builds sum garbage.)
struct KahanSum {
  Vec sum, carry;
  KahanSum() : sum(Vec::zero()), carry(Vec::zero()) {}
  void add(Vec v) {
    const Vec y = v - carry;
    const Vec t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
};

// The total of two compensated sums: every lane's sum less its carry, added in double, so the
// horizontal reduction adds no rounding of its own (with 4 lanes, as NEON's, a row of 15 was
// 4 ulp off when the lanes were added in float). The lanes are added pairwise, a tree of log2(W)
// levels: one chain of 2W dependent adds cost as much as the rest of a 128-long row
// (BERT's attention rows).
inline float total(const KahanSum& a, const KahanSum& b) {
  alignas(64) float lanes[4][W];
  a.sum.store(lanes[0]);
  a.carry.store(lanes[1]);
  b.sum.store(lanes[2]);
  b.carry.store(lanes[3]);
  double t[W];
  for (int l = 0; l < W; ++l)
    t[l] = (static_cast<double>(lanes[0][l]) - lanes[1][l]) + (static_cast<double>(lanes[2][l]) - lanes[3][l]);
  for (int half = W / 2; half > 0; half /= 2)
    for (int l = 0; l < half; ++l) t[l] += t[l + half];
  return static_cast<float>(t[0]);
}

// The sum of e^(x[i] - mx); with y, also y[i] = e^(x[i] - mx) (0 below FLT_MIN: exp_or_zero).
float exp_sum(const float* x, float* y, int64_t n, Vec mx) {
  KahanSum s0, s1;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const Vec e0 = exp_or_zero(Vec::load(x + i) - mx), e1 = exp_or_zero(Vec::load(x + i + W) - mx);
    if (y) {
      e0.store(y + i);
      e1.store(y + i + W);
    }
    s0.add(e0);
    s1.add(e1);
  }
  for (; i + W <= n; i += W) {
    const Vec e = exp_or_zero(Vec::load(x + i) - mx);
    if (y) e.store(y + i);
    s0.add(e);
  }
  if (i < n) {
    const int t = static_cast<int>(n - i);
    const Vec e = exp_or_zero(Vec::load_or(x + i, t, -kInf) - mx);  // e^-inf = 0 past the row
    if (y) e.store(y + i, t);
    s1.add(e);
  }
  return total(s0, s1);
}

void softmax_rows_kernel(const float* x, float* y, int64_t rows, int64_t len, bool log) {
  for (int64_t r = 0; r < rows; ++r, x += len, y += len) {
    if (len == 0) continue;
    const Vec mx = Vec::all(row_max(x, len));
    if (log) {
      const Vec lse = Vec::all(std::log(exp_sum(x, nullptr, len, mx)));
      map1(x, y, len, [&](Vec v) { return (v - mx) - lse; });
    } else {
      const Vec inv = Vec::all(1.0f / exp_sum(x, y, len, mx));
      map1(y, y, len, [&](Vec v) { return v * inv; });
    }
  }
}

void softmax_strided_kernel(const float* x, float* y, int64_t len, int64_t stride, int64_t cols,
                            bool log) {
  if (len == 0) return;
  for (int64_t c = 0; c < cols; c += W) {
    const int lanes = static_cast<int>(cols - c < W ? cols - c : W);
    auto at = [&](const float* p, int64_t k) {
      return lanes == W ? Vec::load(p + k * stride + c) : Vec::load(p + k * stride + c, lanes);
    };
    auto put = [&](Vec v, int64_t k) {
      if (lanes == W) v.store(y + k * stride + c);
      else v.store(y + k * stride + c, lanes);
    };
    Vec mx = Vec::all(-kInf);
    for (int64_t k = 0; k < len; ++k) mx = max_nan(mx, at(x, k));
    KahanSum ks;
    for (int64_t k = 0; k < len; ++k) {
      const Vec e = exp_or_zero(at(x, k) - mx);
      if (!log) put(e, k);
      ks.add(e);
    }
    const Vec s = ks.sum - ks.carry;
    if (log) {
      alignas(64) float lane_sums[W];
      s.store(lane_sums);
      for (float& v : lane_sums) v = std::log(v);
      const Vec lse = Vec::load(lane_sums);
      for (int64_t k = 0; k < len; ++k) put((at(x, k) - mx) - lse, k);
    } else {
      const Vec inv = Vec::all(1.0f) / s;
      for (int64_t k = 0; k < len; ++k) put(at(y, k) * inv, k);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// LayerNormalization and RMSNormalization over rows.

void norm_rows_kernel(const float* x, const float* scale, const float* bias, float* y,
                      int64_t rows, int64_t cols, float epsilon, bool rms, float* mean_out,
                      float* inv_std_out) {
  const float inv_cols = 1.0f / static_cast<float>(cols > 0 ? cols : 1);
  for (int64_t r = 0; r < rows; ++r, x += cols, y += cols) {
    // The mean is carried in two floats, hi + lo: hi from a first pass, lo = the mean of the
    // deviations from hi (zero in exact arithmetic), which the second pass sums with the squares
    // (the corrected two-pass algorithm of Chan, Golub and LeVeque). x - hi is then exact for x
    // near the mean, so the output keeps the precision of the deviations, not of the mean.
    float hi = 0, lo = 0, var;
    if (rms) {
      var = row_sum(x, cols, 0.0f, [](Vec v) { return v * v; }) * inv_cols;
    } else {
      hi = row_sum(x, cols, 0.0f, [](Vec v) { return v; }) * inv_cols;
      const Vec m = Vec::all(hi);
      float dev = 0;
      const float sq = row_sum2(x, cols, hi, [&](Vec v) { return v - m; }, &dev);
      lo = dev * inv_cols;
      var = (sq - dev * lo) * inv_cols;
    }
    const float inv_std = 1.0f / std::sqrt(var + epsilon);
    if (mean_out) mean_out[r] = hi + lo;
    if (inv_std_out) inv_std_out[r] = inv_std;
    const Vec m_hi = Vec::all(hi), m_lo = Vec::all(lo), s = Vec::all(inv_std);
    if (!bias) {
      map2(x, scale, y, cols, [&](Vec v, Vec g) { return ((v - m_hi) - m_lo) * s * g; });
      continue;
    }
    auto f = [&](Vec v, Vec g, Vec b) { return fma(((v - m_hi) - m_lo) * s, g, b); };
    int64_t i = 0;
    for (; i + W <= cols; i += W)
      f(Vec::load(x + i), Vec::load(scale + i), Vec::load(bias + i)).store(y + i);
    if (i < cols) {
      const int t = static_cast<int>(cols - i);
      f(Vec::load(x + i, t), Vec::load(scale + i, t), Vec::load(bias + i, t)).store(y + i, t);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reductions.

void reduce_rows_kernel(ReduceOp op, const float* x, float* y, int64_t rows, int64_t len) {
  for (int64_t r = 0; r < rows; ++r, x += len) {
    if (op == ReduceOp::kMax) {
      y[r] = row_max(x, len);
      continue;
    }
    const float s = row_sum(x, len, 0.0f, [](Vec v) { return v; });
    y[r] = op == ReduceOp::kMean ? s / static_cast<float>(len) : s;
  }
}

void reduce_cols_kernel(ReduceOp op, const float* x, float* y, int64_t len, int64_t stride,
                        int64_t cols) {
  const bool is_max = op == ReduceOp::kMax;
  const Vec init = Vec::all(is_max ? -kInf : 0.0f);
  auto step = [&](Vec acc, Vec v) { return is_max ? max_nan(acc, v) : acc + v; };
  auto finish = [&](Vec acc) {
    return op == ReduceOp::kMean ? acc / Vec::all(static_cast<float>(len)) : acc;
  };
  int64_t c = 0;
  for (; c + 4 * W <= cols; c += 4 * W) {
    Vec a0 = init, a1 = init, a2 = init, a3 = init;
    for (int64_t k = 0; k < len; ++k) {
      const float* p = x + k * stride + c;
      a0 = step(a0, Vec::load(p));
      a1 = step(a1, Vec::load(p + W));
      a2 = step(a2, Vec::load(p + 2 * W));
      a3 = step(a3, Vec::load(p + 3 * W));
    }
    finish(a0).store(y + c);
    finish(a1).store(y + c + W);
    finish(a2).store(y + c + 2 * W);
    finish(a3).store(y + c + 3 * W);
  }
  for (; c < cols; c += W) {
    const int lanes = static_cast<int>(cols - c < W ? cols - c : W);
    Vec a = init;
    for (int64_t k = 0; k < len; ++k) a = step(a, Vec::load(x + k * stride + c, lanes));
    finish(a).store(y + c, lanes);
  }
}

void scale_runs_kernel(const float* x, const float* s, const int32_t* index, float* y,
                       int64_t runs, int64_t len) {
  for (int64_t r = 0; r < runs; ++r) {
    const Vec k = Vec::all(s[index[r]]);
    map1(x + r * len, y + r * len, len, [&](Vec v) { return v * k; });
  }
}

// float16 / bfloat16 to float32 and back (float16.h): a register at a time, the tail through
// ir/dtype.h's conversions, whose bits the registers' match.

template <bool kHalf>
void widen_loop(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) (kHalf ? Vec::load_halves(x + i) : Vec::load_bf16s(x + i)).store(y + i);
  for (; i < n; ++i) y[i] = kHalf ? half_to_float(x[i]) : bfloat16_to_float(x[i]);
}

template <bool kHalf>
void narrow_loop(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const Vec v = Vec::load(x + i);
    kHalf ? v.store_halves(y + i) : v.store_bf16s(y + i);
  }
  for (; i < n; ++i) y[i] = kHalf ? float_to_half(x[i]) : float_to_bfloat16(x[i]);
}

void widen_kernel(DataType from, const uint16_t* x, float* y, int64_t n) {
  from == DataType::kFloat16 ? widen_loop<true>(x, y, n) : widen_loop<false>(x, y, n);
}

void narrow_kernel(DataType to, const float* x, uint16_t* y, int64_t n) {
  to == DataType::kFloat16 ? narrow_loop<true>(x, y, n) : narrow_loop<false>(x, y, n);
}

// ---------------------------------------------------------------------------------------------
#include "engine/cpu/kernels_impl_blocks.h"  // depthwise conv rows, rows x matrix, transposes
#include "engine/cpu/kernels_impl_recurrent.h"  // LSTM and GRU gates
#include "engine/cpu/kernels_impl_quant.h"  // linear quantization, the quantized residual add

}  // namespace

const IsaKernels& isa_kernels() {
  static const IsaKernels table{
      .isa = Isa::KILN_CPU_ISA_ENUM,
      .width = W,
      .unary = unary_kernel,
      .binary_vv = binary_vv_kernel,
      .binary_vs = binary_vs_kernel,
      .binary_sv = binary_sv_kernel,
      .softmax_rows = softmax_rows_kernel,
      .softmax_strided = softmax_strided_kernel,
      .norm_rows = norm_rows_kernel,
      .reduce_rows = reduce_rows_kernel,
      .reduce_cols = reduce_cols_kernel,
      .scale_runs = scale_runs_kernel,
      .lerp = lerp_kernel,
      .rows_times_matrix = rows_times_matrix_kernel,
      .rows_times_rows = rows_times_rows_kernel,
      .depthwise_row = depthwise_row_kernel,
      .pool_row = pool_row_kernel,
      .block_affine = block_affine_kernel,
      .transpose_4b = transpose_4b_kernel,
      .lstm_cell = lstm_cell_kernel,
      .gru_cell = gru_cell_kernel,
      .gru_reset = gru_reset_kernel,
      .quantize = quantize_kernel,
      .dequantize = dequantize_kernel,
      .quantized_add = quantized_add_kernel,
      .range = range_kernel,
      .widen = widen_kernel,
      .narrow = narrow_kernel,
  };
  return table;
}

}  // namespace kiln::cpu::KILN_CPU_ISA
