// Op family: elementwise (see docs/ops.md for the contract every op follows).
//
// The family is split by kind: elementwise_unary.cc (math and activations), elementwise_binary.cc
// (arithmetic, comparison, logic, Where, variadic ops, Clip) and elementwise_cast.cc (Cast,
// CastLike, BitCast). This file registers them all and holds the helpers they share.
#include "ops/elementwise_common.h"
#include "ops/op.h"

namespace kiln {

namespace ew {

std::optional<std::vector<int64_t>> legacy_b_dims(const Node& n, const std::vector<int64_t>& a,
                                                  const std::vector<int64_t>& b) {
  if (n.opset >= 7 || attr_int(n, "broadcast", 0) == 0) return std::nullopt;
  const auto axis_attr = attr_int_opt(n, "axis");
  if (!axis_attr) return std::nullopt;  // no axis: B lines up with A's trailing dims (numpy)
  const int ra = static_cast<int>(a.size()), rb = static_cast<int>(b.size());
  int64_t axis = *axis_attr < 0 ? *axis_attr + ra : *axis_attr;
  if (axis < 0 || axis + rb > ra)
    fail(ErrorKind::kBadModel, "{}broadcast axis {} does not fit shapes {} and {}", n.where(),
         *axis_attr, dims_to_string(a), dims_to_string(b));
  std::vector<int64_t> out(ra, 1);
  for (int k = 0; k < rb; ++k) out[axis + k] = b[k];
  return out;
}

Tensor binary_input_b(const KernelContext& ctx) {
  const Tensor& b = ctx.input(1);
  if (ctx.opset() < 7) {
    const auto& a = ctx.input(0).dims();
    if (auto d = legacy_b_dims(ctx.node(), a, b.dims())) return b.reshaped(*d);
    // PRelu < 7: a 1-D slope of C elements applies along the channels (dim 1) of X.
    if (ctx.node().op_type == "PRelu" && b.rank() == 1 && a.size() >= 2 && b.dim(0) == a[1] &&
        b.dim(0) != 1) {
      std::vector<int64_t> d(a.size() - 1, 1);
      d[0] = b.dim(0);
      return b.reshaped(d);
    }
  }
  return b;
}

void infer_binary(InferContext& ctx, DataType out_dtype) {
  if (ctx.opset() < 7 && ctx.num_inputs() >= 2 && attr_int_opt(ctx.node(), "axis") &&
      attr_int(ctx.node(), "broadcast", 0) != 0) {
    // Legacy broadcasting: B fits inside A, so the output has A's shape.
    const DataType dt = out_dtype == DataType::kUndefined ? ctx.input_dtype(0) : out_dtype;
    ctx.set_output(0, dt, ctx.input_shape(0));
    return;
  }
  infer_broadcast(ctx, out_dtype);
}

std::optional<DimVals> input_vals(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return std::nullopt;
  const Tensor* c = ctx.input_constant(i);
  if (c && (is_integer(c->dtype()) || c->dtype() == DataType::kBool) && c->rank() <= 1 &&
      c->numel() <= 64) {
    DimVals v;
    for (int64_t k = 0; k < c->numel(); ++k) v.push_back(DimVal::known(c->get_i64(k)));
    return v;
  }
  auto dims = ctx.input_dims_value(i);
  if (!dims) return std::nullopt;
  DimVals v;
  for (const Dim& d : *dims) v.push_back(DimVal::of(d));
  return v;
}

void publish_vals(InferContext& ctx, int i, const DimVals& v) {
  bool any = false;
  std::vector<Dim> dims;
  dims.reserve(v.size());
  for (const DimVal& x : v) {
    any = any || !x.is_unknown();
    dims.push_back(x.dim);
  }
  if (any) ctx.set_output_dims_value(i, std::move(dims));
}

}  // namespace ew

void register_elementwise_ops(OpRegistry& r) {
  ew::register_ew_unary(r);
  ew::register_ew_binary(r);
  ew::register_ew_cast(r);
}

}  // namespace kiln
