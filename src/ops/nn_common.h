// Helpers shared by the nn family's files (nn_*.cc): element conversion to a compute type,
// quantization rounding, dim arithmetic; the window geometry of convolutions and pools is
// ops/window_geometry.h (which the engine reads too).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/scalar_types.h"
#include "ops/attrs.h"
#include "ops/kernel_util.h"
#include "ops/op.h"
#include "ops/window_geometry.h"

namespace kiln {
void register_nn_conv_ops(OpRegistry& r);
void register_nn_pool_ops(OpRegistry& r);
void register_nn_matmul_ops(OpRegistry& r);  // MatMul, MatMulInteger, QLinearMatMul, Gemm
void register_nn_einsum_ops(OpRegistry& r);  // einsum.cc
void register_nn_det_ops(OpRegistry& r);     // det.cc
void register_nn_quant_ops(OpRegistry& r);
void register_nn_attention_ops(OpRegistry& r);
}  // namespace kiln

namespace kiln::nn {

// Accumulation type of the matrix products (nn_matmul.cc, einsum.cc): the compute type for floats; 64-bit unsigned (wrapping) for integers.
template <typename T>
using acc_t = std::conditional_t<is_small_int_v<T> || std::is_integral_v<T>,
                                 std::conditional_t<std::is_same_v<T, bool>, bool, uint64_t>,
                                 compute_t<T>>;


// One element of any numeric kiln type as the arithmetic type C.
template <typename C, typename T>
inline C to_num(const T& v) {
  if constexpr (std::is_arithmetic_v<T>) return static_cast<C>(v);
  else if constexpr (is_small_int_v<T>) return static_cast<C>(static_cast<int64_t>(v));
  else return static_cast<C>(static_cast<float>(v));
}
// An arithmetic value as element type T (a plain conversion: no rounding or saturation for ints).
template <typename T, typename C>
inline T from_num(C v) {
  if constexpr (std::is_arithmetic_v<T>) return static_cast<T>(v);
  else if constexpr (is_small_int_v<T>) return T(static_cast<int64_t>(v));
  else return T(static_cast<float>(v));
}

#define KILN_NN_LOADABLE_TYPES KILN_NUMERIC_TYPES, bool, KILN_FLOAT8_TYPES, KILN_SMALL_INT_TYPES

// All elements of a numeric tensor converted to C.
template <typename C>
std::vector<C> load_as(const Node& n, const Tensor& t) {
  std::vector<C> out(static_cast<size_t>(t.numel()));
  visit<KILN_NN_LOADABLE_TYPES>(n, t.dtype(), [&]<typename T>() {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = to_num<C>(p[i]);
  });
  return out;
}

// A tensor's elements as C, without a copy when it already holds C.
template <typename C>
struct View {
  std::vector<C> owned;
  const C* p = nullptr;
  const C& operator[](int64_t i) const { return p[i]; }
};
template <typename C>
View<C> view_as(const Node& n, const Tensor& t) {
  View<C> v;
  if (t.dtype() == dtype_of<C>) {
    v.p = t.data<C>();
  } else {
    v.owned = load_as<C>(n, t);
    v.p = v.owned.data();
  }
  return v;
}

// A float / double tensor converted to dtype `to` (a float type); the same tensor when equal.
Tensor convert_float(const Node& n, Tensor src, DataType to);

// Overflow-checked size arithmetic: fails with `kind` naming the node (sizes from files).
int64_t ck_add(const Node& n, int64_t a, int64_t b, ErrorKind kind);
int64_t ck_mul(const Node& n, int64_t a, int64_t b, ErrorKind kind);

// Fails (kRuntime) when a scratch buffer of the given dims and element size would overflow or be
// above the allocation cap, as a Tensor of that size would.
void check_scratch(const Node& n, const std::vector<int64_t>& dims, size_t elem_size);

// The compute type of a float kind: double for double, float otherwise.
inline DataType compute_dtype(DataType t) {
  return t == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
}

// ---------------------------------------------------------------------------------------------
// Quantization.

template <typename Q>
constexpr std::pair<int64_t, int64_t> int_range() {
  if constexpr (is_small_int_v<Q>) {
    constexpr bool s = small_int_traits<Q>::is_signed;
    constexpr int bits = small_int_traits<Q>::bits;
    if constexpr (s) return {-(int64_t{1} << (bits - 1)), (int64_t{1} << (bits - 1)) - 1};
    else return {0, (int64_t{1} << bits) - 1};
  } else {
    return {static_cast<int64_t>(std::numeric_limits<Q>::lowest()),
            static_cast<int64_t>(std::numeric_limits<Q>::max())};
  }
}

// Rounds half to even and clamps to Q's range (NaN gives 0).
template <typename Q>
inline Q saturate_int(double v) {
  constexpr auto r = int_range<Q>();
  if (std::isnan(v)) return from_num<Q>(int64_t{0});
  v = std::nearbyint(v);
  if (v < static_cast<double>(r.first)) return from_num<Q>(r.first);
  if (v > static_cast<double>(r.second)) return from_num<Q>(r.second);
  return from_num<Q>(static_cast<int64_t>(v));
}

// v (already divided by the scale, zero point not yet added) quantized to Q: integers round half to
// even then add zp and saturate; float kinds add zp then convert (saturating or not).
template <typename Q>
inline Q quantize_one(double v, double zp, bool saturate) {
  if constexpr (is_small_float_v<Q>) {
    Q q;
    q.bits = float_to_float8(dtype_of<Q>, static_cast<float>(v + zp), saturate);
    return q;
  } else {
    if (std::isnan(v)) return saturate_int<Q>(zp);
    return saturate_int<Q>(std::nearbyint(v) + zp);
  }
}

#define KILN_NN_QUANT_TYPES                                                                    \
  int8_t, uint8_t, int16_t, uint16_t, int32_t, ::kiln::Int4, ::kiln::UInt4, ::kiln::Int2,      \
      ::kiln::UInt2, ::kiln::Float8E4M3FN, ::kiln::Float8E4M3FNUZ, ::kiln::Float8E5M2,         \
      ::kiln::Float8E5M2FNUZ, ::kiln::Float4E2M1, ::kiln::Float8E8M0

// ---------------------------------------------------------------------------------------------
// Dim arithmetic of the window shapes (the window itself: ops/window_geometry.h).

// a + c with a constant c, written as a - |c| for a negative one.
Dim add_const(const Dim& a, int64_t c);
// Dim sum / product that give an unknown dim instead of overflowing on known values.
Dim dim_add(const Dim& a, const Dim& b);
Dim dim_mul(const Dim& a, const Dim& b);

// Spatial dims of a shape (those after N and C), or nullopt.
std::optional<std::vector<int64_t>> spatial_dims(const std::optional<Shape>& s);

}  // namespace kiln::nn
