// Helpers shared by the elementwise op files (elementwise_*.cc): type lists, element loops with
// broadcasting, integer arithmetic without undefined behaviour, legacy (opset < 7) broadcasting and
// the propagation of small integer values (dims) through shape inference.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "ops/attrs.h"
#include "ops/kernel_util.h"

namespace kiln::ew {

// ---------------------------------------------------------------------------------------------
// Type lists, so a registration can name the types its kernel handles as one value.
template <typename... Ts>
struct TypeList {};

using FloatTypes = TypeList<KILN_FLOAT_TYPES>;
using SignedTypes = TypeList<KILN_FLOAT_TYPES, int8_t, int16_t, int32_t, int64_t>;
using NumericTypes = TypeList<KILN_NUMERIC_TYPES>;
using IntTypes = TypeList<KILN_INT_TYPES>;
using UIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using BoolTypes = TypeList<bool>;

template <typename... Ts, typename Fn>
void visit_in(TypeList<Ts...>, const Node& n, DataType t, Fn&& fn) {
  visit<Ts...>(n, t, std::forward<Fn>(fn));
}

// ---------------------------------------------------------------------------------------------
// Integer arithmetic that wraps (two's complement) instead of overflowing into UB. For floating
// types these are the plain operators.
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(uint64_t(a) + uint64_t(b));
  else return a + b;
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(uint64_t(a) - uint64_t(b));
  else return a - b;
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(uint64_t(a) * uint64_t(b));
  else return a * b;
}
template <typename T>
T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(uint64_t(0) - uint64_t(a));
  else return -a;
}

// A double converted to the integer type I without UB: truncates toward zero; NaN and values out of
// int64's range give int64's minimum (what x86 conversions give), then wraps to I's width.
template <typename I>
I float_to_int(double v) {
  if constexpr (std::is_same_v<I, uint64_t>) {
    if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return static_cast<uint64_t>(v);
  }
  int64_t w = std::numeric_limits<int64_t>::min();
  if (v > -9223372036854775808.0 && v < 9223372036854775808.0) w = static_cast<int64_t>(v);
  return static_cast<I>(w);
}

// ---------------------------------------------------------------------------------------------
// Element loops. fn must not throw (it may run on several threads for large tensors).
template <typename Fn>
void parallel_range(int64_t n, Fn&& fn) {
#ifdef _OPENMP
  constexpr int64_t kChunk = 1 << 15;
  if (n >= 4 * kChunk) {
    const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) fn(c * kChunk, std::min(n, (c + 1) * kChunk));
    return;
  }
#endif
  fn(int64_t{0}, n);
}

// y[i] = f(x[i]) for tensors of equal element counts.
template <typename TOut, typename TIn, typename F>
void map_into(const Tensor& x, Tensor& y, F&& f) {
  const TIn* a = x.data<TIn>();
  TOut* o = y.data<TOut>();
  parallel_range(x.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = f(a[i]);
  });
}

// out = f(a, b) elementwise, with a and b broadcast to out's dims (numpy rules, already checked).
template <typename TOut, typename TA, typename TB, typename F>
void broadcast_into(const Tensor& a, const Tensor& b, Tensor& out, F&& f) {
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TOut* po = out.data<TOut>();
  const int64_t n = out.numel();
  if (n == 0) return;
  if (a.numel() == n && b.numel() == n) {
    parallel_range(n, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], pb[i]);
    });
    return;
  }
  if (a.numel() == n && b.numel() == 1) {
    const TB v = pb[0];
    parallel_range(n, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], v);
    });
    return;
  }
  if (a.numel() == 1 && b.numel() == n) {
    const TA u = pa[0];
    parallel_range(n, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) po[i] = f(u, pb[i]);
    });
    return;
  }
  // General case: walk the outer dims, run the innermost one as a strided loop.
  const auto& od = out.dims();
  const int rank = static_cast<int>(od.size());
  const auto sa = broadcast_strides(a.dims(), od);
  const auto sb = broadcast_strides(b.dims(), od);
  const int64_t inner = od[rank - 1];
  const int64_t ia = sa[rank - 1], ib = sb[rank - 1];
  const int64_t outer = n / inner;
  std::vector<int64_t> idx(rank, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t o = 0; o < outer; ++o) {
    TOut* row = po + o * inner;
    for (int64_t k = 0; k < inner; ++k) row[k] = f(pa[oa + k * ia], pb[ob + k * ib]);
    for (int d = rank - 2; d >= 0; --d) {
      ++idx[d];
      oa += sa[d];
      ob += sb[d];
      if (idx[d] < od[d]) break;
      oa -= sa[d] * od[d];
      ob -= sb[d] * od[d];
      idx[d] = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Legacy broadcasting (opset < 7): with broadcast=1 and an `axis`, B's dims line up with A's
// starting at axis. Returns B's dims padded to A's rank, or nullopt when the numpy rule applies.
std::optional<std::vector<int64_t>> legacy_b_dims(const Node& n, const std::vector<int64_t>& a,
                                                  const std::vector<int64_t>& b);
// Input 1 of a binary node, reshaped for legacy broadcasting where that applies.
Tensor binary_input_b(const KernelContext& ctx);
// Output 0 of a binary op: broadcast of inputs 0 and 1 (legacy rules where they apply).
void infer_binary(InferContext& ctx, DataType out_dtype = DataType::kUndefined);

// ---------------------------------------------------------------------------------------------
// Values of small integer tensors during shape inference. `v` is the exact value when known (any
// sign, from a constant or a known dim); `dim` is the size form (symbolic, or unknown).
struct DimVal {
  Dim dim;
  std::optional<int64_t> v;
  static DimVal known(int64_t x) { return {x >= 0 ? Dim(x) : Dim(), x}; }
  static DimVal of(const Dim& d) {
    return d.is_known() ? known(d.value()) : DimVal{d, std::nullopt};
  }
  bool is_unknown() const { return !v && !dim.is_symbolic(); }
};
using DimVals = std::vector<DimVal>;

// Input i's value: from a constant (integer or bool, rank <= 1, small) or from propagation.
std::optional<DimVals> input_vals(const InferContext& ctx, int i);
// Publishes output i's value as dims, unless every element is unknown.
void publish_vals(InferContext& ctx, int i, const DimVals& v);
// Elementwise combination of two values with 0/1-D broadcasting; nullopt when lengths mismatch.
template <typename F>
std::optional<DimVals> combine_vals(const DimVals& a, const DimVals& b, F&& f) {
  const size_t n = std::max(a.size(), b.size());
  if ((a.size() != n && a.size() != 1) || (b.size() != n && b.size() != 1)) return std::nullopt;
  DimVals out(n);
  for (size_t k = 0; k < n; ++k) out[k] = f(a[a.size() == 1 ? 0 : k], b[b.size() == 1 ? 0 : k]);
  return out;
}
// Publishes output 0 = f(input 0, input 1) when both values are known.
template <typename F>
void propagate_binary_vals(InferContext& ctx, F&& f) {
  if (ctx.num_inputs() < 2) return;
  auto a = input_vals(ctx, 0), b = input_vals(ctx, 1);
  if (!a || !b) return;
  if (auto out = combine_vals(*a, *b, f)) publish_vals(ctx, 0, *out);
}

// Registration helpers used across the family.
void register_ew_unary(OpRegistry& r);
void register_ew_binary(OpRegistry& r);
void register_ew_cast(OpRegistry& r);

}  // namespace kiln::ew
