#include "ops/control_common.h"

#include <cstring>

#include "support/error.h"

namespace kiln::control {

std::optional<Shape> merge_shapes(const std::optional<Shape>& a, const std::optional<Shape>& b) {
  if (!a || !b || a->size() != b->size()) return std::nullopt;
  Shape out(a->size());
  for (size_t i = 0; i < a->size(); ++i) out[i] = (*a)[i] == (*b)[i] ? (*a)[i] : Dim();
  return out;
}

TypeInfo merge_types(const TypeInfo& a, const TypeInfo& b) {
  using K = TypeInfo::Kind;
  if (a.kind == K::kUnknown) return b;
  if (b.kind == K::kUnknown) return a;
  if (a.kind != b.kind) {
    // An optional and its element merge to the optional.
    if (a.kind == K::kOptional && a.inner) return TypeInfo::optional(merge_types(*a.inner, b));
    if (b.kind == K::kOptional && b.inner) return TypeInfo::optional(merge_types(a, *b.inner));
    return a;
  }
  TypeInfo r = a;
  if (r.elem == DataType::kUndefined) r.elem = b.elem;
  if (a.kind == K::kTensor || a.kind == K::kSparseTensor) {
    r.shape = merge_shapes(a.shape, b.shape);
    return r;
  }
  if (a.inner && b.inner)
    r.inner = std::make_shared<TypeInfo>(merge_types(*a.inner, *b.inner));
  else if (b.inner)
    r.inner = b.inner;
  return r;
}

bool same_type(const TypeInfo& a, const TypeInfo& b) { return a.to_string() == b.to_string(); }

RtValue input_or_none(const KernelContext& ctx, int i) {
  if (i >= ctx.num_inputs() || !ctx.node().has_input(i)) return RtValue{};
  return ctx.input_value(i);
}

void copy_elements(Tensor& dst, int64_t dst_off, const Tensor& src, int64_t src_off, int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DataType::kString) {
    for (int64_t k = 0; k < n; ++k) dst.strings()[dst_off + k] = src.strings()[src_off + k];
    return;
  }
  const size_t es = dtype_size(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw()) + dst_off * es,
              static_cast<const char*>(src.raw()) + src_off * es, static_cast<size_t>(n) * es);
}

namespace {
void outer_inner(const std::vector<int64_t>& dims, int axis, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
}
}  // namespace

Tensor take_along(const Tensor& t, int axis, int64_t i) {
  std::vector<int64_t> od = t.dims();
  const int64_t len = od[axis];
  od.erase(od.begin() + axis);
  Tensor out(t.dtype(), od);
  int64_t outer, inner;
  outer_inner(t.dims(), axis, outer, inner);
  for (int64_t o = 0; o < outer; ++o)
    copy_elements(out, o * inner, t, (o * len + i) * inner, inner);
  return out;
}

void put_along(Tensor& dst, int axis, int64_t i, const Tensor& src) {
  const int64_t len = dst.dims()[axis];
  int64_t outer, inner;
  outer_inner(dst.dims(), axis, outer, inner);
  for (int64_t o = 0; o < outer; ++o)
    copy_elements(dst, (o * len + i) * inner, src, o * inner, inner);
}

Tensor stack_along(const Node& n, const std::vector<Tensor>& parts, int axis) {
  KILN_ASSERT(!parts.empty(), "stack of nothing");
  const Tensor& first = parts[0];
  for (const Tensor& p : parts)
    KILN_CHECK(p.dtype() == first.dtype() && p.dims() == first.dims(), ErrorKind::kRuntime,
               "{}outputs to stack differ: {} {} vs {} {}", n.where(), dtype_name(first.dtype()),
               dims_to_string(first.dims()), dtype_name(p.dtype()), dims_to_string(p.dims()));
  std::vector<int64_t> od = first.dims();
  od.insert(od.begin() + axis, static_cast<int64_t>(parts.size()));
  Tensor out(first.dtype(), od);
  for (size_t k = 0; k < parts.size(); ++k) put_along(out, axis, static_cast<int64_t>(k), parts[k]);
  return out;
}

Tensor scalar_bool(bool v) {
  Tensor t(DataType::kBool, {});
  t.data<bool>()[0] = v;
  return t;
}

Tensor scalar_int64(int64_t v) {
  Tensor t(DataType::kInt64, {});
  t.data<int64_t>()[0] = v;
  return t;
}

std::optional<std::vector<int64_t>> known_shape(const TypeInfo& t) {
  if (!t.is_tensor() || !t.shape) return std::nullopt;
  return known_dims(*t.shape);
}

}  // namespace kiln::control
