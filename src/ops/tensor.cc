// Op family: tensor (see docs/ops.md for the contract every op follows).
//
// Data movement and shape ops, split by theme:
//   tensor_shape.cc   Identity Constant Shape Size Reshape Flatten Squeeze Unsqueeze Expand
//                     ConstantOfShape Range EyeLike
//   tensor_layout.cc  Transpose Concat Split Slice Tile DepthToSpace SpaceToDepth Trilu
//                     ReverseSequence Compress NonZero
//   tensor_pad.cc     Pad CenterCropPad
//   tensor_index.cc   Gather GatherElements GatherND ScatterElements ScatterND Scatter OneHot
//                     TensorScatter
//   tensor_sort.cc    TopK Unique CumSum CumProd
//   tensor_image.cc   Col2Im
// This file holds the helpers they share (tensor_common.h).
#include "ops/kernel_util.h"
#include "ops/op.h"
#include "ops/tensor_common.h"

namespace kiln {

void register_tensor_ops(OpRegistry& r) {
  register_tensor_shape_ops(r);
  register_tensor_make_ops(r);
  register_tensor_layout_ops(r);
  register_tensor_rearrange_ops(r);
  register_tensor_pad_ops(r);
  register_tensor_index_ops(r);
  register_tensor_sort_ops(r);
  register_tensor_image_ops(r);
}

namespace tensor_ops {

Tensor strided_tensor(const KernelContext& ctx, const Tensor& src, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& strides, int64_t offset) {
  Tensor out = new_tensor(ctx, src.dtype(), dims);
  visit_storage(ctx.node(), src.dtype(), [&]<typename S>() {
    strided_copy(out.data<S>(), src.data<S>(), dims, strides, offset);
  });
  return out;
}

Tensor new_tensor(const KernelContext& ctx, DataType dtype, std::vector<int64_t> dims) {
  if (dims.size() > size_t(limits::kMaxRank))
    ctx.fail_here(fmt::format("output rank {} above the cap {}", dims.size(), limits::kMaxRank));
  for (int64_t d : dims)
    if (d < 0) ctx.fail_here(fmt::format("output dims {} are negative", dims_to_string(dims)));
  if (!dims_fit(dims)) ctx.fail_here(fmt::format("output dims {} overflow", dims_to_string(dims)));
  return with_context(ctx.node().where(), [&] { return Tensor(dtype, std::move(dims)); });
}

bool dims_fit(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0) return false;
    if (d == 0) continue;
    auto r = checked_mul(p, d);
    if (!r) return false;
    p = *r;
  }
  return true;
}

std::vector<int64_t> input_ints(const KernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (!is_integer(t.dtype()))
    ctx.fail_here(fmt::format("{} must be an integer tensor, got {}", what, dtype_name(t.dtype())));
  return t.to_int64s();
}

int64_t input_scalar_int(const KernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (!is_integer(t.dtype()))
    ctx.fail_here(fmt::format("{} must be an integer tensor, got {}", what, dtype_name(t.dtype())));
  if (t.numel() != 1)
    ctx.fail_here(fmt::format("{} must hold one value, got {}", what, dims_to_string(t.dims())));
  return t.get_i64(0);
}

int kernel_axis(const KernelContext& ctx, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank)
    ctx.fail_here(fmt::format("axis {} out of range for rank {}", axis, rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

int64_t dims_product(const std::vector<int64_t>& dims, int from, int to) {
  int64_t p = 1;
  for (int k = from; k < to; ++k) p *= dims[k];
  return p;
}

std::optional<std::vector<SymInt>> input_sym_ints(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return std::nullopt;
  if (const Tensor* c = ctx.input_constant(i); c && is_integer(c->dtype()) && c->rank() <= 1) {
    std::vector<SymInt> v(static_cast<size_t>(c->numel()));
    for (int64_t k = 0; k < c->numel(); ++k) v[k] = {true, c->get_i64(k), Dim()};
    return v;
  }
  auto dv = ctx.input_dims_value(i);
  if (!dv) return std::nullopt;
  std::vector<SymInt> v;
  v.reserve(dv->size());
  for (const Dim& d : *dv) {
    if (d.is_known()) v.push_back({true, d.value(), Dim()});
    else v.push_back({false, 0, d});
  }
  return v;
}

std::optional<std::vector<int64_t>> input_exact_ints(const InferContext& ctx, int i) {
  auto v = input_sym_ints(ctx, i);
  if (!v) return std::nullopt;
  std::vector<int64_t> out;
  for (const SymInt& s : *v) {
    if (!s.exact) return std::nullopt;
    out.push_back(s.v);
  }
  return out;
}

Dim dim_mul(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    auto r = checked_mul(a.value(), b.value());
    return r ? Dim(*r) : Dim();
  }
  return a * b;
}

Dim dim_add(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    auto r = checked_add(a.value(), b.value());
    return r ? Dim(*r) : Dim();
  }
  return a + b;
}

Dim dims_product(const Shape& s, int from, int to) {
  Dim p(1);
  for (int k = from; k < to; ++k) p = dim_mul(p, s[k]);
  return p;
}

std::optional<Shape> rank_from_shape_input(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return std::nullopt;
  const Shape* s = input_shape_ptr(ctx, i);
  if (!s || s->size() != 1 || !(*s)[0].is_known()) return std::nullopt;
  if ((*s)[0].value() > limits::kMaxRank)
    ctx.fail_here(fmt::format("shape input {} has {} elements, above the rank cap {}", i,
                              (*s)[0].value(), limits::kMaxRank));
  return unknown_shape(static_cast<int>((*s)[0].value()));
}

int infer_axis(const InferContext& ctx, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank)
    ctx.fail_here(fmt::format("axis {} out of range for rank {}", axis, rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace tensor_ops
}  // namespace kiln
