// Shared helpers of the tensor op family (src/ops/tensor*.cc): type-generic element storage,
// strided copies, index checks and the reading of small integer inputs during shape inference.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ops/attrs.h"
#include "ops/kernel_util.h"
#include "support/checked_math.h"
#include "support/limits.h"

namespace kiln {

// The sub-families, each in its own file; register_tensor_ops (tensor.cc) calls them all.
void register_tensor_shape_ops(OpRegistry& r);      // tensor_shape.cc
void register_tensor_make_ops(OpRegistry& r);       // tensor_make.cc
void register_tensor_layout_ops(OpRegistry& r);     // tensor_layout.cc
void register_tensor_rearrange_ops(OpRegistry& r);  // tensor_rearrange.cc
void register_tensor_pad_ops(OpRegistry& r);        // tensor_pad.cc
void register_tensor_index_ops(OpRegistry& r);      // tensor_index.cc
void register_tensor_sort_ops(OpRegistry& r);       // tensor_sort.cc
void register_tensor_image_ops(OpRegistry& r);      // tensor_image.cc

namespace tensor_ops {

// ---------------------------------------------------------------------------------------------
// Storage: data movement does not care what an element means, only how big it is. visit_storage
// calls fn.template operator()<S>() with S an unsigned type of the element's size (or std::string
// for strings), so one instantiation moves every dtype of that size.
struct Bytes16 {
  uint64_t lo, hi;
};

template <typename Fn>
void visit_storage(const Node& n, DataType t, Fn&& fn) {
  if (t == DataType::kString) return fn.template operator()<std::string>();
  switch (dtype_size(t)) {
    case 1: return fn.template operator()<uint8_t>();
    case 2: return fn.template operator()<uint16_t>();
    case 4: return fn.template operator()<uint32_t>();
    case 8: return fn.template operator()<uint64_t>();
    case 16: return fn.template operator()<Bytes16>();
    default: fail(ErrorKind::kUnsupported, "{}type {} is not supported", n.where(), dtype_name(t));
  }
}

// Copies n elements src[si..si+n) to dst[di..di+n) of the same dtype.
inline void copy_elems(Tensor& dst, int64_t di, const Tensor& src, int64_t si, int64_t n) {
  if (n <= 0) return;
  if (dst.dtype() == DataType::kString) {
    for (int64_t k = 0; k < n; ++k) dst.strings()[di + k] = src.strings()[si + k];
    return;
  }
  const size_t es = dtype_size(dst.dtype());
  std::memcpy(static_cast<char*>(dst.raw()) + di * es, static_cast<const char*>(src.raw()) + si * es,
              static_cast<size_t>(n) * es);
}

// dst[i] = src[offset + sum_k idx_k * strides[k]] for every index idx of out_dims (row-major i).
// Strides may be 0 (broadcast) or negative; this is transpose, slice, expand and tile in one.
template <typename S>
void strided_copy(S* dst, const S* src, const std::vector<int64_t>& out_dims,
                  const std::vector<int64_t>& strides, int64_t offset) {
  const int rank = static_cast<int>(out_dims.size());
  for (int64_t d : out_dims)
    if (d == 0) return;
  if (rank == 0) {
    dst[0] = src[offset];
    return;
  }
  const int64_t inner = out_dims[rank - 1], inner_stride = strides[rank - 1];
  int64_t outer = 1;
  for (int k = 0; k + 1 < rank; ++k) outer *= out_dims[k];
  std::vector<int64_t> idx(rank, 0);
  int64_t off = offset;
  for (int64_t o = 0; o < outer; ++o) {
    if (inner_stride == 1) {
      for (int64_t j = 0; j < inner; ++j) dst[j] = src[off + j];
    } else {
      for (int64_t j = 0; j < inner; ++j) dst[j] = src[off + j * inner_stride];
    }
    dst += inner;
    for (int k = rank - 2; k >= 0; --k) {
      off += strides[k];
      if (++idx[k] < out_dims[k]) break;
      off -= strides[k] * out_dims[k];
      idx[k] = 0;
    }
  }
}

// The tensor of dtype and dims the kernel returns, as strided_copy of src. Any dtype.
Tensor strided_tensor(const KernelContext& ctx, const Tensor& src, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& strides, int64_t offset);

// ---------------------------------------------------------------------------------------------
// Kernel helpers.

// Non-negative dims whose non-zero ones multiply without overflow, so that strides and partial
// products computed from them are safe even when a zero dim makes the element count 0.
bool dims_fit(const std::vector<int64_t>& dims);

// Allocates an output; a bad dim, an overflow or the allocation cap fail naming the node.
Tensor new_tensor(const KernelContext& ctx, DataType dtype, std::vector<int64_t> dims);

// The elements of an integer input as int64 (fails naming the node on a non-integer type).
std::vector<int64_t> input_ints(const KernelContext& ctx, int i, const char* what);
// A scalar (or one-element) integer input.
int64_t input_scalar_int(const KernelContext& ctx, int i, const char* what);

// Index v into a dim of size d, negative counting from the end; out of [-d, d) fails cleanly.
inline int64_t checked_index(const KernelContext& ctx, int64_t v, int64_t d, const char* what) {
  if (v < -d || v >= d)
    ctx.fail_here(fmt::format("{} {} out of range [{}, {})", what, v, -d, d));
  return v < 0 ? v + d : v;
}

// An axis in [-rank, rank), normalized; out of range (any axis of a scalar) fails naming the node.
int kernel_axis(const KernelContext& ctx, int64_t axis, int rank);

// Product of dims [from, to).
int64_t dims_product(const std::vector<int64_t>& dims, int from, int to);

// ---------------------------------------------------------------------------------------------
// Inference helpers.

// One element of a small integer input during inference: exact (negatives included, which a Dim
// cannot hold), a symbol, or unknown.
struct SymInt {
  bool exact = false;
  int64_t v = 0;  // when exact
  Dim sym;        // when not exact: a symbol or unknown
  Dim dim() const { return exact ? (v >= 0 ? Dim(v) : Dim()) : sym; }
};
// The value of input i from its constant or propagated dims value; nullopt when unknown.
std::optional<std::vector<SymInt>> input_sym_ints(const InferContext& ctx, int i);
// Input i's value when every element is exactly known.
std::optional<std::vector<int64_t>> input_exact_ints(const InferContext& ctx, int i);

// Dim products and sums that give unknown instead of overflowing.
Dim dim_mul(const Dim& a, const Dim& b);
Dim dim_add(const Dim& a, const Dim& b);
Dim dims_product(const Shape& s, int from, int to);

// Shape of input i when its rank is known.
inline const Shape* input_shape_ptr(const InferContext& ctx, int i) {
  const auto& s = ctx.input_shape(i);
  return s ? &*s : nullptr;
}
// A shape of `rank` unknown dims.
inline Shape unknown_shape(int rank) { return Shape(static_cast<size_t>(rank), Dim()); }
// Unknown dims, as many as the 1-D shape input i has elements, when that length is known.
std::optional<Shape> rank_from_shape_input(const InferContext& ctx, int i);

// An axis in [-rank, rank) normalized during inference; out of range (or a scalar) fails.
int infer_axis(const InferContext& ctx, int64_t axis, int rank);

}  // namespace tensor_ops
}  // namespace kiln
