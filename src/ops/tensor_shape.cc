// Tensor ops that read or reinterpret shapes: Identity Constant Shape Size Reshape Flatten Squeeze
// Unsqueeze Expand.
#include <algorithm>
#include <cmath>

#include "ops/tensor_common.h"

namespace kiln {
namespace {
using namespace tensor_ops;

// ---------------------------------------------------------------------------------------------
// Constant

// The value of a Constant node: exactly one of its value_* attributes.
Tensor constant_value(const Node& n) {
  Tensor t;
  int count = 0;
  for (const Attribute& a : n.attrs) {
    if (a.name == "value" && a.kind == AttrKind::kTensor) {
      t = a.t;
    } else if (a.name == "sparse_value" && a.kind == AttrKind::kSparseTensor) {
      t = with_context(n.where(), [&] { return a.sparse.to_dense(); });
    } else if (a.name == "value_float" && a.kind == AttrKind::kFloat) {
      t = Tensor(DataType::kFloat, {});
      t.data<float>()[0] = a.f;
    } else if (a.name == "value_floats" && a.kind == AttrKind::kFloats) {
      t = Tensor(DataType::kFloat, {static_cast<int64_t>(a.floats.size())});
      std::copy(a.floats.begin(), a.floats.end(), t.data<float>());
    } else if (a.name == "value_int" && a.kind == AttrKind::kInt) {
      t = Tensor(DataType::kInt64, {});
      t.data<int64_t>()[0] = a.i;
    } else if (a.name == "value_ints" && a.kind == AttrKind::kInts) {
      t = Tensor::from_int64s(a.ints);
    } else if (a.name == "value_string" && a.kind == AttrKind::kString) {
      t = Tensor(DataType::kString, {});
      t.strings()[0] = a.s;
    } else if (a.name == "value_strings" && a.kind == AttrKind::kStrings) {
      t = Tensor(DataType::kString, {static_cast<int64_t>(a.strings.size())});
      std::copy(a.strings.begin(), a.strings.end(), t.strings());
    } else {
      fail(ErrorKind::kBadModel, "{}unexpected attribute '{}' ({})", n.where(), a.name,
           attr_kind_name(a.kind));
    }
    ++count;
  }
  KILN_CHECK(count == 1, ErrorKind::kBadModel, "{}needs exactly one value attribute, has {}",
             n.where(), count);
  KILN_CHECK(t.defined(), ErrorKind::kBadModel, "{}value is not defined", n.where());
  return t;
}

void publish_if_small_ints(InferContext& ctx, const Tensor& t) {
  if (!is_integer(t.dtype()) || t.rank() > 1 || t.numel() > 64) return;
  std::vector<Dim> v;
  for (int64_t k = 0; k < t.numel(); ++k) v.emplace_back(t.get_i64(k));
  ctx.set_output_dims_value(0, std::move(v));
}

void infer_constant(InferContext& ctx) {
  const Node& n = ctx.node();
  if (n.attrs.size() == 1 && n.attrs[0].name == "sparse_value" &&
      n.attrs[0].kind == AttrKind::kSparseTensor) {  // type without densifying
    const SparseTensor& s = n.attrs[0].sparse;
    ctx.set_output(0, s.values.dtype(), shape_of(s.dims));
    return;
  }
  Tensor t = constant_value(n);
  ctx.set_output(0, t.dtype(), shape_of(t.dims()));
  publish_if_small_ints(ctx, t);
}

// ---------------------------------------------------------------------------------------------
// Shape, Size

// [start, end) of Shape's attributes, clamped to [0, rank].
std::pair<int, int> shape_range(const Node& n, int rank) {
  auto clamp = [&](int64_t v) {
    if (v < 0) v += rank;
    return static_cast<int>(std::clamp<int64_t>(v, 0, rank));
  };
  const int start = clamp(attr_int(n, "start", 0));
  const int end = clamp(attr_int(n, "end", rank));
  return {start, std::max(start, end)};
}

void infer_shape_op(InferContext& ctx) {
  const Shape* in = input_shape_ptr(ctx, 0);
  if (!in) {
    ctx.set_output(0, DataType::kInt64, Shape{Dim()});
    return;
  }
  auto [start, end] = shape_range(ctx.node(), static_cast<int>(in->size()));
  std::vector<Dim> value(in->begin() + start, in->begin() + end);
  ctx.set_output(0, DataType::kInt64, Shape{Dim(end - start)});
  ctx.set_output_dims_value(0, std::move(value));
}

void run_shape_op(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto [start, end] = shape_range(ctx.node(), x.rank());
  std::vector<int64_t> v(x.dims().begin() + start, x.dims().begin() + end);
  ctx.set_output(0, Tensor::from_int64s(v));
}

void infer_size(InferContext& ctx) {
  ctx.set_output(0, DataType::kInt64, Shape{});
  if (const Shape* in = input_shape_ptr(ctx, 0))
    ctx.set_output_dims_value(0, {dims_product(*in, 0, static_cast<int>(in->size()))});
}

// ---------------------------------------------------------------------------------------------
// Reshape

// The size of the one output dim left to infer (-1) so that the element count of `out` matches
// `in`. Equal symbolic factors cancel, so [batch,3,4] -> [batch,-1] gives 12.
Dim solve_missing_dim(const InferContext& ctx, const Shape& in, const Shape& out, size_t skip) {
  std::vector<Dim> num(in.begin(), in.end());
  int64_t den = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    if (k == skip) continue;
    const Dim& d = out[k];
    if (d.is_unknown()) return Dim();
    if (d.is_known()) {
      auto p = checked_mul(den, d.value());
      if (!p) return Dim();
      den = *p;
      continue;
    }
    auto it = std::find_if(num.begin(), num.end(), [&](const Dim& f) { return f.same_as(d); });
    if (it == num.end()) return Dim();  // a symbol of the output not in the input
    num.erase(it);
  }
  int64_t num_known = 1;
  Dim num_sym(1);
  for (const Dim& f : num) {
    if (f.is_unknown()) return Dim();
    if (f.is_known()) {
      auto p = checked_mul(num_known, f.value());
      if (!p) return Dim();
      num_known = *p;
    } else {
      num_sym = num_sym * f;
    }
  }
  if (den == 0) return Dim();
  if (num_known % den != 0) {
    if (num_sym.is_known())
      ctx.fail_here(fmt::format("cannot reshape {} to {}", shape_to_string(in), shape_to_string(out)));
    return Dim();
  }
  return Dim(num_known / den) * num_sym;
}

void infer_reshape(InferContext& ctx) {
  const Node& n = ctx.node();
  const DataType dt = ctx.input_dtype(0);
  const bool allowzero = attr_int(n, "allowzero") != 0;
  std::optional<std::vector<SymInt>> target;
  if (ctx.has_input(1)) {
    target = input_sym_ints(ctx, 1);
  } else if (auto a = attr_ints_opt(n, "shape")) {  // Reshape-1 kept its shape in an attribute
    target.emplace();
    for (int64_t v : *a) target->push_back({true, v, Dim()});
  }
  const Shape* in = input_shape_ptr(ctx, 0);
  if (!target) {
    ctx.set_output(0, dt, rank_from_shape_input(ctx, 1));
    return;
  }
  if (static_cast<int>(target->size()) > limits::kMaxRank)
    ctx.fail_here(fmt::format("target rank {} above the cap {}", target->size(), limits::kMaxRank));
  Shape out(target->size());
  int minus_one = -1, unknown_at = -1, unknowns = 0;
  for (size_t k = 0; k < target->size(); ++k) {
    const SymInt& s = (*target)[k];
    if (!s.exact) {
      out[k] = s.sym;
      if (s.sym.is_unknown()) ++unknowns, unknown_at = static_cast<int>(k);
    } else if (s.v == 0 && !allowzero) {
      if (in && k >= in->size())
        ctx.fail_here(fmt::format("shape element {} is 0 but the input has rank {}", k, in->size()));
      out[k] = in ? (*in)[k] : Dim();
    } else if (s.v == -1) {
      if (minus_one >= 0) ctx.fail_here("shape has more than one -1");
      minus_one = static_cast<int>(k);
    } else if (s.v < -1) {
      ctx.fail_here(fmt::format("shape element {} is {}", k, s.v));
    } else {
      out[k] = s.v;
    }
  }
  // An unknown element may be the -1; if it is not, the element count gives its size all the same.
  int solve = minus_one >= 0 ? (unknowns == 0 ? minus_one : -1) : (unknowns == 1 ? unknown_at : -1);
  if (solve >= 0 && in) out[solve] = solve_missing_dim(ctx, *in, out, solve);
  if (minus_one < 0 && unknowns == 0 && in) {
    auto a = known_dims(*in), b = known_dims(out);
    if (a && b && checked_product(*a) != checked_product(*b))
      ctx.fail_here(fmt::format("cannot reshape {} to {}", shape_to_string(*in), shape_to_string(out)));
  }
  if (out.size() <= 1)
    if (auto v = ctx.input_dims_value(0)) ctx.set_output_dims_value(0, *v);
  ctx.set_output(0, dt, std::move(out));
}

void run_reshape(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const bool allowzero = attr_int(n, "allowzero") != 0;
  std::vector<int64_t> shape =
      ctx.has_input(1) ? input_ints(ctx, 1, "shape") : attr_ints(n, "shape");
  if (static_cast<int>(shape.size()) > limits::kMaxRank)
    ctx.fail_here(fmt::format("target rank {} above the cap {}", shape.size(), limits::kMaxRank));
  int minus_one = -1;
  int64_t known = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t& d = shape[k];
    if (d == 0 && !allowzero) {
      if (static_cast<int>(k) >= x.rank())
        ctx.fail_here(fmt::format("shape element {} is 0 but the input has rank {}", k, x.rank()));
      d = x.dim(static_cast<int>(k));
    } else if (d == -1) {
      if (minus_one >= 0) ctx.fail_here("shape has more than one -1");
      minus_one = static_cast<int>(k);
      continue;
    } else if (d < 0) {
      ctx.fail_here(fmt::format("shape element {} is {}", k, d));
    }
    auto p = checked_mul(known, d);
    if (!p) ctx.fail_here(fmt::format("shape {} overflows", dims_to_string(shape)));
    known = *p;
  }
  if (minus_one >= 0) {
    if (known == 0 || x.numel() % known != 0)
      ctx.fail_here(fmt::format("cannot reshape {} to {}", dims_to_string(x.dims()),
                                dims_to_string(shape)));
    shape[minus_one] = x.numel() / known;
  } else if (known != x.numel()) {
    ctx.fail_here(fmt::format("cannot reshape {} to {}", dims_to_string(x.dims()),
                              dims_to_string(shape)));
  }
  if (!dims_fit(shape)) ctx.fail_here(fmt::format("shape {} overflows", dims_to_string(shape)));
  ctx.set_output(0, x.reshaped(std::move(shape)));
}

// ---------------------------------------------------------------------------------------------
// Flatten

int flatten_axis(int64_t axis, int rank, const std::function<void(const std::string&)>& bad) {
  if (axis < -rank || axis > rank) bad(fmt::format("axis {} out of range for rank {}", axis, rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

void infer_flatten(InferContext& ctx) {
  const Shape* in = input_shape_ptr(ctx, 0);
  if (!in) {
    ctx.set_output(0, ctx.input_dtype(0), unknown_shape(2));
    return;
  }
  const int rank = static_cast<int>(in->size());
  const int axis = flatten_axis(attr_int(ctx.node(), "axis", 1), rank,
                                [&](const std::string& m) { ctx.fail_here(m); });
  ctx.set_output(0, ctx.input_dtype(0),
                 Shape{dims_product(*in, 0, axis), dims_product(*in, axis, rank)});
}

void run_flatten(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int axis = flatten_axis(attr_int(ctx.node(), "axis", 1), x.rank(),
                                [&](const std::string& m) { ctx.fail_here(m); });
  ctx.set_output(0, x.reshaped({dims_product(x.dims(), 0, axis),
                                dims_product(x.dims(), axis, x.rank())}));
}

// ---------------------------------------------------------------------------------------------
// Squeeze, Unsqueeze

// Marks the axes (normalized against rank); duplicates and out-of-range axes call bad().
template <typename Bad>
std::vector<bool> axes_mask(const std::vector<int64_t>& axes, int rank, Bad&& bad) {
  std::vector<bool> mask(rank, false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) bad(fmt::format("axis {} out of range for rank {}", a, rank));
    const int k = static_cast<int>(a < 0 ? a + rank : a);
    if (mask[k]) bad(fmt::format("axis {} given twice", a));
    mask[k] = true;
  }
  return mask;
}

void publish_passthrough(InferContext& ctx, const std::optional<Shape>& out) {
  if (out && out->size() <= 1)
    if (auto v = ctx.input_dims_value(0)) ctx.set_output_dims_value(0, *v);
}

void infer_squeeze(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* in = input_shape_ptr(ctx, 0);
  std::optional<Shape> out;
  if (in) {
    const int rank = static_cast<int>(in->size());
    auto bad = [&](const std::string& m) { ctx.fail_here(m); };
    if (ctx.has_input(1)) {
      if (auto axes = input_exact_ints(ctx, 1)) {
        auto mask = axes_mask(*axes, rank, bad);
        out.emplace();
        for (int k = 0; k < rank; ++k) {
          const Dim& d = (*in)[k];
          if (mask[k] && d.is_known() && d.value() != 1)
            ctx.fail_here(fmt::format("cannot squeeze axis {} of size {}", k, d.value()));
          if (!mask[k]) out->push_back(d);
        }
      }
    } else {
      out.emplace();
      for (const Dim& d : *in) {
        if (!d.is_known()) {  // might be 1
          out.reset();
          break;
        }
        if (d.value() != 1) out->push_back(d);
      }
    }
  }
  publish_passthrough(ctx, out);
  ctx.set_output(0, dt, out);
}

void run_squeeze(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> out;
  if (ctx.has_input(1)) {
    auto mask = axes_mask(input_ints(ctx, 1, "axes"), x.rank(),
                          [&](const std::string& m) { ctx.fail_here(m); });
    for (int k = 0; k < x.rank(); ++k) {
      if (mask[k] && x.dim(k) != 1)
        ctx.fail_here(fmt::format("cannot squeeze axis {} of size {}", k, x.dim(k)));
      if (!mask[k]) out.push_back(x.dim(k));
    }
  } else {
    for (int64_t d : x.dims())
      if (d != 1) out.push_back(d);
  }
  ctx.set_output(0, x.reshaped(std::move(out)));
}

// The output dims of Unsqueeze: `in` with size-1 dims inserted at axes (of the output rank).
template <typename D, typename Bad>
std::vector<D> unsqueeze_dims(const std::vector<D>& in, const std::vector<int64_t>& axes, Bad&& bad) {
  const int rank = static_cast<int>(in.size() + axes.size());
  if (rank > limits::kMaxRank) bad(fmt::format("output rank {} above the cap", rank));
  auto mask = axes_mask(axes, rank, bad);
  std::vector<D> out;
  size_t next = 0;
  for (int k = 0; k < rank; ++k) out.push_back(mask[k] ? D(1) : in[next++]);
  return out;
}

void infer_unsqueeze(InferContext& ctx) {
  const Shape* in = input_shape_ptr(ctx, 0);
  auto axes = input_exact_ints(ctx, 1);
  std::optional<Shape> out;
  if (in && axes) out = unsqueeze_dims(*in, *axes, [&](const std::string& m) { ctx.fail_here(m); });
  publish_passthrough(ctx, out);
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void run_unsqueeze(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto dims = unsqueeze_dims(x.dims(), input_ints(ctx, 1, "axes"),
                             [&](const std::string& m) { ctx.fail_here(m); });
  ctx.set_output(0, x.reshaped(std::move(dims)));
}

// ---------------------------------------------------------------------------------------------
// Expand

void infer_expand(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* in = input_shape_ptr(ctx, 0);
  std::optional<Shape> target;
  if (auto v = input_sym_ints(ctx, 1)) {
    target.emplace();
    for (const SymInt& s : *v) {
      if (s.exact && s.v < 0) ctx.fail_here(fmt::format("shape element {} is negative", s.v));
      target->push_back(s.dim());
    }
  } else {
    target = rank_from_shape_input(ctx, 1);
  }
  if (target && static_cast<int>(target->size()) > limits::kMaxRank)
    ctx.fail_here(fmt::format("target rank {} above the cap {}", target->size(), limits::kMaxRank));
  if (!in || !target) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  auto out = broadcast_shapes(*in, *target);
  if (!out)
    ctx.fail_here(fmt::format("cannot expand {} to {}", shape_to_string(*in), shape_to_string(*target)));
  // A small int tensor expanded (a shape being built): its value, repeated where broadcast.
  if (out->size() == 1 && (*out)[0].is_known() && (*out)[0].value() <= 64)
    if (auto v = ctx.input_dims_value(0); v && (v->size() == 1 || v->size() == size_t((*out)[0].value()))) {
      std::vector<Dim> value = *v;
      if (value.size() == 1) value.assign(static_cast<size_t>((*out)[0].value()), (*v)[0]);
      ctx.set_output_dims_value(0, std::move(value));
    }
  ctx.set_output(0, dt, std::move(out));
}

void run_expand(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> shape = input_ints(ctx, 1, "shape");
  for (int64_t d : shape)
    if (d < 0) ctx.fail_here(fmt::format("shape {} has a negative dim", dims_to_string(shape)));
  if (static_cast<int>(shape.size()) > limits::kMaxRank)
    ctx.fail_here(fmt::format("target rank {} above the cap", shape.size()));
  const auto out_dims = broadcast_dims(ctx.node(), x.dims(), shape);
  ctx.set_output(0, strided_tensor(ctx, x, out_dims, broadcast_strides(x.dims(), out_dims), 0));
}

}  // namespace

void register_tensor_shape_ops(OpRegistry& r) {
  r.add("", "Identity")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .shape([](InferContext& ctx) {
        infer_same_as_input(ctx);
        if (auto v = ctx.input_dims_value(0)) ctx.set_output_dims_value(0, *v);
      })
      .run([](KernelContext& ctx) { ctx.set_output(0, ctx.input_value(0)); });

  r.add("", "Constant")
      .versions(1)
      .inputs(0, 0)
      .outputs(1, 1)
      .attr("value", AttrKind::kTensor)
      .attr("sparse_value", AttrKind::kSparseTensor)
      .attr("value_float", AttrKind::kFloat)
      .attr("value_floats", AttrKind::kFloats)
      .attr("value_int", AttrKind::kInt)
      .attr("value_ints", AttrKind::kInts)
      .attr("value_string", AttrKind::kString)
      .attr("value_strings", AttrKind::kStrings)
      .shape(infer_constant)
      .run([](KernelContext& ctx) { ctx.set_output(0, constant_value(ctx.node())); });

  r.add("", "Shape")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("start", AttrKind::kInt)
      .attr("end", AttrKind::kInt)
      .shape(infer_shape_op)
      .run(run_shape_op);

  r.add("", "Size")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .shape(infer_size)
      .run([](KernelContext& ctx) {
        ctx.set_output(0, Tensor::scalar(DataType::kInt64, ctx.input(0).numel()));
      });

  r.add("", "Reshape")
      .versions(1)
      .inputs(1, 2)
      .outputs(1, 1)
      .attr("allowzero", AttrKind::kInt, 0)
      .attr("shape", AttrKind::kInts)  // Reshape-1 only
      .shape(infer_reshape)
      .run(run_reshape);

  r.add("", "Flatten")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .shape(infer_flatten)
      .run(run_flatten);

  r.add("", "Squeeze")
      .versions(1)
      .inputs(1, 2)
      .outputs(1, 1)
      .shape(infer_squeeze)
      .run(run_squeeze);

  r.add("", "Unsqueeze")
      .versions(1)
      .inputs(2, 2)
      .outputs(1, 1)
      .shape(infer_unsqueeze)
      .run(run_unsqueeze);

  r.add("", "Expand")
      .versions(8)
      .inputs(2, 2)
      .outputs(1, 1)
      .shape(infer_expand)
      .run(run_expand);
}

}  // namespace kiln
