// Helpers shared by reference kernels and shape inference: broadcasting, index walking, dispatch.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ir/scalar_types.h"
#include "ops/op.h"
#include "support/error.h"

namespace kiln {

// Numpy broadcast of concrete dims; fails (kRuntime, naming the node) when they do not broadcast.
std::vector<int64_t> broadcast_dims(const Node& n, const std::vector<int64_t>& a,
                                    const std::vector<int64_t>& b);
// Row-major strides of dims.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims);
// Strides to read `in` as if broadcast to `out` (0 on broadcast axes). in.rank <= out.rank.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

// Calls fn(out_index, in_offsets) for every element of out_dims, where in_offsets[k] is the
// element offset in input k (broadcast). Inputs are given by their dims.
template <typename Fn>
void for_each_broadcast(const std::vector<int64_t>& out_dims,
                        const std::vector<std::vector<int64_t>>& in_dims, Fn&& fn) {
  const size_t k = in_dims.size();
  const int rank = static_cast<int>(out_dims.size());
  std::vector<std::vector<int64_t>> st(k);
  for (size_t j = 0; j < k; ++j) st[j] = broadcast_strides(in_dims[j], out_dims);
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  if (total == 0) return;
  std::vector<int64_t> idx(rank, 0), off(k, 0);
  for (int64_t i = 0; i < total; ++i) {
    fn(i, off.data());
    for (int d = rank - 1; d >= 0; --d) {
      ++idx[d];
      for (size_t j = 0; j < k; ++j) off[j] += st[j][d];
      if (idx[d] < out_dims[d]) break;
      for (size_t j = 0; j < k; ++j) off[j] -= st[j][d] * out_dims[d];
      idx[d] = 0;
    }
  }
}

// Kinds of element types, named by the types themselves: "converts to float" would not do, since
// the sub-byte integers convert to int64 and so, implicitly, to float too.
template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool is_small_float_v = false;  // the 8- and 4-bit floats
template <DataType D>
inline constexpr bool is_small_float_v<SmallFloat<D>> = true;
template <typename T>
struct small_int_traits {};  // int4, uint4, int2, uint2: their width and signedness
template <bool Signed, int Bits>
struct small_int_traits<SmallInt<Signed, Bits>> {
  static constexpr bool is_signed = Signed;
  static constexpr int bits = Bits;
};
template <typename T>
inline constexpr bool is_small_int_v = requires { small_int_traits<T>::bits; };
template <typename T>
inline constexpr bool is_float_like_v =
    std::is_floating_point_v<T> || is_half_v<T> || is_small_float_v<T>;
template <typename T>
inline constexpr bool is_complex_v =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// The type arithmetic is done in: double for double, float for the other floats, int64 for the
// sub-byte integers, T otherwise.
template <typename T>
using compute_t = std::conditional_t<
    std::is_same_v<T, double>, double,
    std::conditional_t<is_float_like_v<T>, float,
                       std::conditional_t<is_small_int_v<T>, int64_t, T>>>;

// Dispatch over a set of types: visit<float, double, int32_t>(dtype, fn) calls fn.template
// operator()<T>() for the matching T, or fails (kRuntime) naming the node and the type.
template <typename... Ts, typename Fn>
void visit(const Node& n, DataType t, Fn&& fn) {
  bool done = false;
  ((!done && dtype_of<Ts> == t ? (fn.template operator()<Ts>(), done = true) : false), ...);
  if (!done) fail(ErrorKind::kUnsupported, "{}type {} is not supported", n.where(), dtype_name(t));
}

// Type lists for visit<>.
#define KILN_FLOAT_TYPES float, double, ::kiln::Half, ::kiln::BFloat16
#define KILN_INT_TYPES int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
#define KILN_NUMERIC_TYPES KILN_FLOAT_TYPES, KILN_INT_TYPES
#define KILN_FLOAT8_TYPES                                                                  \
  ::kiln::Float8E4M3FN, ::kiln::Float8E4M3FNUZ, ::kiln::Float8E5M2, ::kiln::Float8E5M2FNUZ, \
      ::kiln::Float8E8M0, ::kiln::Float4E2M1
#define KILN_SMALL_INT_TYPES ::kiln::Int4, ::kiln::UInt4, ::kiln::Int2, ::kiln::UInt2
#define KILN_ALL_TYPES \
  KILN_NUMERIC_TYPES, bool, std::string, KILN_FLOAT8_TYPES, KILN_SMALL_INT_TYPES, \
      std::complex<float>, std::complex<double>

// Common shape inference rules.
void infer_same_as_input(InferContext& ctx, int input = 0);      // output 0 = input's type
void infer_broadcast(InferContext& ctx, DataType out_dtype = DataType::kUndefined);  // all inputs

}  // namespace kiln
