// Op family: nn (see docs/ops.md for the contract every op follows). The ops live in nn_*.cc:
// nn_conv.cc (Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv), nn_pool.cc (pools,
// MaxUnpool), nn_matmul.cc (MatMul, Gemm, their integer forms, Einsum, Det), nn_quant.cc
// (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear), nn_attention.cc (Attention,
// RotaryEmbedding). This file holds their shared helpers (nn_common.h).
#include <algorithm>

#include "support/checked_math.h"

#include "ops/kernel_util.h"
#include "ops/nn_common.h"
#include "ops/op.h"

namespace kiln {

void register_nn_ops(OpRegistry& r) {
  register_nn_conv_ops(r);
  register_nn_pool_ops(r);
  register_nn_matmul_ops(r);
  register_nn_einsum_ops(r);
  register_nn_det_ops(r);
  register_nn_quant_ops(r);
  register_nn_attention_ops(r);
}

namespace nn {

Tensor convert_float(const Node& n, Tensor src, DataType to) {
  if (src.dtype() == to) return src;
  Tensor out(to, src.dims());
  visit<KILN_FLOAT_TYPES>(n, src.dtype(), [&]<typename S>() {
    visit<KILN_FLOAT_TYPES>(n, to, [&]<typename T>() {
      const S* s = src.data<S>();
      T* d = out.data<T>();
      for (int64_t i = 0; i < src.numel(); ++i) d[i] = from_num<T>(to_num<compute_t<S>>(s[i]));
    });
  });
  return out;
}

int64_t ck_add(const Node& n, int64_t a, int64_t b, ErrorKind kind) {
  auto r = checked_add(a, b);
  if (!r) fail(kind, "{}size arithmetic overflows ({} + {})", n.where(), a, b);
  return *r;
}

int64_t ck_mul(const Node& n, int64_t a, int64_t b, ErrorKind kind) {
  auto r = checked_mul(a, b);
  if (!r) fail(kind, "{}size arithmetic overflows ({} * {})", n.where(), a, b);
  return *r;
}

void check_scratch(const Node& n, const std::vector<int64_t>& dims, size_t elem_size) {
  std::vector<int64_t> d = dims;
  d.push_back(static_cast<int64_t>(elem_size));
  auto bytes = checked_product(d);
  if (!bytes || *bytes > allocation_cap())
    fail(ErrorKind::kRuntime, "{}a buffer of {} elements of {} bytes is above the allocation cap",
         n.where(), dims_to_string(dims), elem_size);
}

Dim dim_add(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    auto r = checked_add(a.value(), b.value());
    return r ? Dim(*r) : Dim();
  }
  return a + b;
}

Dim dim_mul(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    auto r = checked_mul(a.value(), b.value());
    return r ? Dim(*r) : Dim();
  }
  return a * b;
}

Dim add_const(const Dim& a, int64_t c) {
  if (a.is_known()) return dim_add(a, Dim(c));
  return c >= 0 ? a + Dim(c) : a - Dim(-c);
}

std::optional<std::vector<int64_t>> spatial_dims(const std::optional<Shape>& s) {
  if (!s || s->size() < 2) return std::nullopt;
  auto k = known_dims(Shape(s->begin() + 2, s->end()));
  return k;
}

}  // namespace nn
}  // namespace kiln
