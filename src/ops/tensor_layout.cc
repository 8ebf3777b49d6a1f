// Tensor ops that move blocks of elements along axes: Transpose Concat Split Slice Tile.
#include <algorithm>
#include <climits>

#include "ops/tensor_common.h"

namespace kiln {
namespace {
using namespace tensor_ops;

// ---------------------------------------------------------------------------------------------
// Transpose

template <typename Bad>
std::vector<int64_t> transpose_perm(const Node& n, int rank, Bad&& bad) {
  std::vector<int64_t> perm;
  if (auto p = attr_ints_opt(n, "perm")) {
    perm = *p;
  } else {
    for (int k = rank - 1; k >= 0; --k) perm.push_back(k);
  }
  if (static_cast<int>(perm.size()) != rank)
    bad(fmt::format("perm has {} entries for rank {}", perm.size(), rank));
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) bad(fmt::format("perm {} is not a permutation", dims_to_string(perm)));
    seen[p] = true;
  }
  return perm;
}

void infer_transpose(InferContext& ctx) {
  const Shape* in = input_shape_ptr(ctx, 0);
  std::optional<Shape> out;
  if (in) {
    auto perm = transpose_perm(ctx.node(), static_cast<int>(in->size()),
                               [&](const std::string& m) { ctx.fail_here(m); });
    out.emplace();
    for (int64_t p : perm) out->push_back((*in)[p]);
  } else if (auto p = attr_ints_opt(ctx.node(), "perm"); p && p->size() <= size_t(limits::kMaxRank)) {
    out = unknown_shape(static_cast<int>(p->size()));
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void run_transpose(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto perm = transpose_perm(ctx.node(), x.rank(), [&](const std::string& m) { ctx.fail_here(m); });
  const auto in_strides = strides_of(x.dims());
  std::vector<int64_t> dims, strides;
  for (int64_t p : perm) {
    dims.push_back(x.dim(static_cast<int>(p)));
    strides.push_back(in_strides[p]);
  }
  ctx.set_output(0, strided_tensor(ctx, x, dims, strides, 0));
}

// ---------------------------------------------------------------------------------------------
// Concat

int64_t concat_axis_attr(const Node& n) {
  return n.opset < 4 ? attr_int(n, "axis", 1) : attr_int_req(n, "axis");
}

void infer_concat(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  int rank = -1;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (ctx.input_dtype(i) != dt)
      ctx.fail_here(fmt::format("inputs have types {} and {}", dtype_name(dt),
                                dtype_name(ctx.input_dtype(i))));
    const int r = ctx.input_rank(i);
    if (r < 0) continue;
    if (rank >= 0 && r != rank) ctx.fail_here(fmt::format("inputs have ranks {} and {}", rank, r));
    rank = r;
  }
  if (rank < 0) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int axis = infer_axis(ctx, concat_axis_attr(ctx.node()), rank);
  Shape out(rank);
  Dim sum(0);
  bool sum_known = true;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const Shape* s = input_shape_ptr(ctx, i);
    if (!s) {
      sum_known = false;
      continue;
    }
    sum = dim_add(sum, (*s)[axis]);
    for (int k = 0; k < rank; ++k) {
      if (k == axis) continue;
      const Dim& d = (*s)[k];
      Dim& o = out[k];
      if (d.is_known() && o.is_known() && d.value() != o.value())
        ctx.fail_here(fmt::format("inputs differ in dim {}: {} and {}", k, o.value(), d.value()));
      if (d.is_known() || (o.is_unknown() && d.is_symbolic())) o = d;
    }
  }
  out[axis] = sum_known ? sum : Dim();
  if (rank == 1) {  // pieces of a shape being built
    std::vector<Dim> value;
    bool all = true;
    for (int i = 0; i < ctx.num_inputs() && all; ++i) {
      auto v = ctx.has_input(i) ? ctx.input_dims_value(i) : std::nullopt;
      if (!v) all = false;
      else value.insert(value.end(), v->begin(), v->end());
    }
    if (all) ctx.set_output_dims_value(0, std::move(value));
  }
  ctx.set_output(0, dt, std::move(out));
}

void run_concat(KernelContext& ctx) {
  std::vector<const Tensor*> ins;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) ins.push_back(&ctx.input(i));
  if (ins.empty()) ctx.fail_here("no inputs");
  const Tensor& first = *ins[0];
  const int rank = first.rank();
  if (rank == 0) ctx.fail_here("cannot concatenate scalars");
  const int axis = kernel_axis(ctx, concat_axis_attr(ctx.node()), rank);
  std::vector<int64_t> out_dims = first.dims();
  int64_t sum = 0;
  for (const Tensor* t : ins) {
    if (t->dtype() != first.dtype())
      ctx.fail_here(fmt::format("inputs have types {} and {}", dtype_name(first.dtype()),
                                dtype_name(t->dtype())));
    bool same = t->rank() == rank;
    for (int k = 0; same && k < rank; ++k) same = k == axis || t->dim(k) == first.dim(k);
    if (!same)
      ctx.fail_here(fmt::format("cannot concatenate {} and {} on axis {}",
                                dims_to_string(first.dims()), dims_to_string(t->dims()), axis));
    auto s = checked_add(sum, t->dim(axis));
    if (!s) ctx.fail_here("concatenated dim overflows");
    sum = *s;
  }
  out_dims[axis] = sum;
  Tensor out = new_tensor(ctx, first.dtype(), out_dims);
  const int64_t outer = dims_product(out_dims, 0, axis);
  const int64_t out_block = dims_product(out_dims, axis, rank);
  int64_t at = 0;
  for (const Tensor* t : ins) {
    const int64_t block = dims_product(t->dims(), axis, rank);
    for (int64_t o = 0; o < outer; ++o) copy_elems(out, o * out_block + at, *t, o * block, block);
    at += block;
  }
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// Split

// Equal parts: ceil(d / n) each, the last one smaller (opset 18's num_outputs rule).
template <typename Bad>
std::vector<int64_t> equal_split(int64_t d, int64_t n, Bad&& bad) {
  if (n <= 0) bad("no outputs to split into");
  const int64_t chunk = d / n + (d % n != 0);
  std::vector<int64_t> parts(n, chunk);
  parts.back() = d - chunk * (n - 1);
  if (parts.back() < 0) bad(fmt::format("cannot split a dim of {} into {} parts", d, n));
  return parts;
}

void check_num_outputs(const Node& n, int outputs, const std::function<void(const std::string&)>& bad) {
  if (auto k = attr_int_opt(n, "num_outputs"); k && *k != outputs)
    bad(fmt::format("num_outputs is {} but the node has {} outputs", *k, outputs));
}

// Without split sizes, Split-2 to Split-13 cut the axis into equal parts; only Split-18 lets the
// last part be smaller (Split-1 has no rule and is treated as 18 is).
void check_even_split(const Node& n, int64_t d, int parts) {
  KILN_CHECK(n.opset < 2 || n.opset >= 18 || d % parts == 0, ErrorKind::kBadModel,
             "{}a dim of {} does not split evenly into {} outputs (Split-{} makes equal parts; "
             "unequal ones need split sizes)",
             n.where(), d, parts, n.opset >= 13 ? 13 : n.opset >= 11 ? 11 : 2);
}

void infer_split(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const int n = ctx.num_outputs();
  auto bad = [&](const std::string& m) { ctx.fail_here(m); };
  if (n <= 0) bad("no outputs");
  check_num_outputs(ctx.node(), n, bad);
  const Shape* in = input_shape_ptr(ctx, 0);
  if (!in) {
    for (int i = 0; i < n; ++i) ctx.set_output(i, dt, std::nullopt);
    return;
  }
  const int axis = infer_axis(ctx, attr_int(ctx.node(), "axis", 0), static_cast<int>(in->size()));
  const Dim d = (*in)[axis];
  std::vector<Dim> parts(n);
  if (ctx.has_input(1)) {
    if (auto v = input_sym_ints(ctx, 1)) {
      if (static_cast<int>(v->size()) != n)
        ctx.fail_here(fmt::format("split has {} entries for {} outputs", v->size(), n));
      int64_t total = 0;
      bool exact = true;
      for (int i = 0; i < n; ++i) {
        const SymInt& s = (*v)[i];
        if (s.exact && s.v < 0) ctx.fail_here(fmt::format("split entry {} is negative", s.v));
        parts[i] = s.dim();
        exact = exact && s.exact;
        if (s.exact && total >= 0) total = checked_add(total, s.v).value_or(-1);  // -1: overflow
      }
      // A mismatch with the dim is left to run time: this may be the untaken branch of an If.
      if (exact && d.is_known() && total != d.value()) parts.assign(n, Dim());
    }
  } else if (d.is_known()) {
    check_even_split(ctx.node(), d.value(), n);
    const int64_t chunk = d.value() / n + (d.value() % n != 0);
    if (d.value() - chunk * (n - 1) >= 0) {  // else unknown, as above
      auto sizes = equal_split(d.value(), n, bad);
      for (int i = 0; i < n; ++i) parts[i] = sizes[i];
    }
  } else if (n == 1) {
    parts[0] = d;
  } else if (ctx.opset() < 18) {  // older opsets require equal parts
    for (int i = 0; i < n; ++i) parts[i] = Dim::floor_div(d, Dim(n));
  }
  for (int i = 0; i < n; ++i) {
    Shape s = *in;
    s[axis] = parts[i];
    ctx.set_output(i, dt, std::move(s));
  }
}

void run_split(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int n = ctx.num_outputs();
  auto bad = [&](const std::string& m) { ctx.fail_here(m); };
  check_num_outputs(ctx.node(), n, bad);
  if (x.rank() == 0) ctx.fail_here("cannot split a scalar");
  const int axis = kernel_axis(ctx, attr_int(ctx.node(), "axis", 0), x.rank());
  const int64_t d = x.dim(axis);
  std::vector<int64_t> parts;
  if (ctx.has_input(1)) {
    parts = input_ints(ctx, 1, "split");
    if (static_cast<int>(parts.size()) != n)
      ctx.fail_here(fmt::format("split has {} entries for {} outputs", parts.size(), n));
    int64_t total = 0;
    for (int64_t p : parts) {
      if (p < 0) ctx.fail_here(fmt::format("split entry {} is negative", p));
      total = checked_add(total, p).value_or(-1);
      if (total < 0 || total > d) break;
    }
    if (total != d) ctx.fail_here(fmt::format("split {} does not sum to the dim {}", dims_to_string(parts), d));
  } else {
    check_even_split(ctx.node(), d, n);
    parts = equal_split(d, n, bad);
  }
  const int64_t outer = dims_product(x.dims(), 0, axis);
  const int64_t inner = dims_product(x.dims(), axis + 1, x.rank());
  int64_t at = 0;
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> dims = x.dims();
    dims[axis] = parts[i];
    Tensor out = new_tensor(ctx, x.dtype(), dims);
    const int64_t block = parts[i] * inner;
    for (int64_t o = 0; o < outer; ++o) copy_elems(out, o * block, x, o * d * inner + at * inner, block);
    at += parts[i];
    ctx.set_output(i, std::move(out));
  }
}

// ---------------------------------------------------------------------------------------------
// Slice

struct SliceRange {
  int64_t start = 0, len = 0;
};

// ONNX slice clamping of [start, end) by step over a dim of size d. step != 0.
SliceRange slice_range(int64_t d, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += d;  // no overflow: d >= 0
  if (end < 0) end += d;
  SliceRange r;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
    r.start = start;
    r.len = end > start ? static_cast<int64_t>((static_cast<__int128>(end) - start - 1) / step + 1) : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, d - 1);
    end = std::clamp<int64_t>(end, -1, d - 1);
    r.start = start;
    r.len = start > end
                ? static_cast<int64_t>((static_cast<__int128>(start) - end - 1) / -static_cast<__int128>(step) + 1)
                : 0;
  }
  if (d == 0) r = {0, 0};
  return r;
}

constexpr int64_t kSliceToEnd = int64_t(1) << 30;  // an end this large means "to the end" for sure-ish

// Slice inputs as per-axis entries: (axis, start, end, step), axes normalized.
struct SliceSpec {
  int axis;
  SymInt start, end;
  int64_t step;
  bool step_known;
};

void infer_slice(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* in = input_shape_ptr(ctx, 0);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(in->size());
  auto starts = input_sym_ints(ctx, 1), ends = input_sym_ints(ctx, 2);
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.has_input(3)) axes = input_exact_ints(ctx, 3);
  if (ctx.has_input(4)) steps = input_exact_ints(ctx, 4);
  const bool axes_unknown = ctx.has_input(3) && !axes;
  Shape out = *in;
  if (!starts || !ends || axes_unknown) {
    // Which axes change is unknown (or by how much): those we cannot name become unknown.
    if (axes && !axes_unknown) {
      for (int64_t a : *axes) out[infer_axis(ctx, a, rank)] = Dim();
    } else {
      out = unknown_shape(rank);
    }
    ctx.set_output(0, dt, std::move(out));
    return;
  }
  const size_t n = starts->size();
  if (ends->size() != n || (axes && axes->size() != n))
    ctx.fail_here("starts, ends and axes differ in length");
  if (steps && steps->size() != n) ctx.fail_here("steps and starts differ in length");
  std::vector<bool> seen(rank, false);
  bool exact_all = true;
  std::vector<SliceSpec> specs;
  for (size_t i = 0; i < n; ++i) {
    const int axis = infer_axis(ctx, axes ? (*axes)[i] : static_cast<int64_t>(i), rank);
    if (seen[axis]) ctx.fail_here(fmt::format("axis {} sliced twice", axis));
    seen[axis] = true;
    const bool step_known = !ctx.has_input(4) || steps;
    const int64_t step = steps ? (*steps)[i] : 1;
    if (step_known && step == 0) ctx.fail_here("step is 0");
    specs.push_back({axis, (*starts)[i], (*ends)[i], step, step_known});
    exact_all = exact_all && step_known && (*starts)[i].exact && (*ends)[i].exact;
  }
  for (const SliceSpec& s : specs) {
    const Dim d = (*in)[s.axis];
    Dim r;
    if (!s.step_known) {
      r = Dim();
    } else if (d.is_known() && s.start.exact && s.end.exact) {
      r = slice_range(d.value(), s.start.v, s.end.v, s.step).len;
    } else if (s.step > 0 && s.start.exact && s.start.v >= 0) {
      if (s.end.exact && s.end.v >= kSliceToEnd) {  // [start:] of a symbolic dim
        r = s.step == 1 ? d - Dim(s.start.v) : Dim::ceil_div(d - Dim(s.start.v), Dim(s.step));
      } else if (!s.end.exact && s.end.sym.is_symbolic() && s.step == 1) {
        // [start:end] with end a symbol (x[:, :seq] in torch exports): assumed within the dim.
        r = s.end.sym - Dim(s.start.v);
      }
    } else if (s.step < 0 && s.start.exact && (s.start.v == -1 || s.start.v >= kSliceToEnd) &&
               s.end.exact && s.end.v <= -kSliceToEnd) {  // full reverse
      r = s.step == -1 ? d : Dim::ceil_div(d, Dim(-s.step));
    }
    out[s.axis] = r;
  }
  // Slicing a shape being built (Shape -> Slice): its value is known.
  if (rank == 1 && exact_all)
    if (auto v = ctx.input_dims_value(0)) {
      const SliceSpec& s = specs.empty() ? SliceSpec{0, {true, 0, Dim()}, {true, INT64_MAX, Dim()}, 1, true}
                                         : specs[0];
      SliceRange sr = slice_range(static_cast<int64_t>(v->size()), s.start.v, s.end.v, s.step);
      std::vector<Dim> value;
      for (int64_t k = 0; k < sr.len; ++k) value.push_back((*v)[sr.start + k * s.step]);
      ctx.set_output_dims_value(0, std::move(value));
    }
  ctx.set_output(0, dt, std::move(out));
}

void run_slice(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  const auto starts = input_ints(ctx, 1, "starts");
  const auto ends = input_ints(ctx, 2, "ends");
  const size_t n = starts.size();
  std::vector<int64_t> axes, steps(n, 1);
  if (ctx.has_input(3)) {
    axes = input_ints(ctx, 3, "axes");
  } else {
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (ctx.has_input(4)) steps = input_ints(ctx, 4, "steps");
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    ctx.fail_here("starts, ends, axes and steps differ in length");
  std::vector<int64_t> dims = x.dims(), strides = strides_of(x.dims());
  int64_t offset = 0;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    if (axes[i] < -rank || axes[i] >= rank)
      ctx.fail_here(fmt::format("axis {} out of range for rank {}", axes[i], rank));
    const int axis = static_cast<int>(axes[i] < 0 ? axes[i] + rank : axes[i]);
    if (seen[axis]) ctx.fail_here(fmt::format("axis {} sliced twice", axis));
    seen[axis] = true;
    if (steps[i] == 0) ctx.fail_here("step is 0");
    const SliceRange r = slice_range(x.dim(axis), starts[i], ends[i], steps[i]);
    offset += r.start * strides[axis];
    dims[axis] = r.len;
    // With more than one element picked, |step * stride| stays inside the tensor.
    strides[axis] = r.len > 1 ? strides[axis] * steps[i] : 0;
  }
  ctx.set_output(0, strided_tensor(ctx, x, dims, strides, offset));
}

// ---------------------------------------------------------------------------------------------
// Tile

// Tile-1 (opset < 6) tiled one axis: (input, tiles, axis) scalars.
std::vector<int64_t> tile_repeats(KernelContext& ctx, int rank) {
  if (ctx.opset() < 6 && ctx.has_input(2)) {
    std::vector<int64_t> reps(rank, 1);
    reps[kernel_axis(ctx, input_scalar_int(ctx, 2, "axis"), rank)] = input_scalar_int(ctx, 1, "tiles");
    return reps;
  }
  return input_ints(ctx, 1, "repeats");
}

void infer_tile(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* in = input_shape_ptr(ctx, 0);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  Shape out = unknown_shape(static_cast<int>(in->size()));
  if (ctx.opset() >= 6 || !ctx.has_input(2))
    if (auto reps = input_sym_ints(ctx, 1)) {
      if (reps->size() != in->size())
        ctx.fail_here(fmt::format("repeats has {} entries for rank {}", reps->size(), in->size()));
      for (size_t k = 0; k < in->size(); ++k) {
        const SymInt& r = (*reps)[k];
        if (r.exact && r.v < 0) ctx.fail_here(fmt::format("repeat {} is negative", r.v));
        out[k] = dim_mul((*in)[k], r.dim());
      }
    }
  ctx.set_output(0, dt, std::move(out));
}

void run_tile(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  const auto reps = tile_repeats(ctx, rank);
  if (static_cast<int>(reps.size()) != rank)
    ctx.fail_here(fmt::format("repeats has {} entries for rank {}", reps.size(), rank));
  std::vector<int64_t> out_dims(rank), view_dims, view_strides;
  const auto in_strides = strides_of(x.dims());
  for (int k = 0; k < rank; ++k) {
    if (reps[k] < 0) ctx.fail_here(fmt::format("repeat {} is negative", reps[k]));
    auto d = checked_mul(x.dim(k), reps[k]);
    if (!d) ctx.fail_here(fmt::format("tiling {} by {} overflows", dims_to_string(x.dims()), dims_to_string(reps)));
    out_dims[k] = *d;
    // out[r, i] = in[i]: the view [rep_0, dim_0, rep_1, dim_1 ...] with stride 0 on the reps.
    view_dims.insert(view_dims.end(), {reps[k], x.dim(k)});
    view_strides.insert(view_strides.end(), {0, in_strides[k]});
  }
  Tensor out = new_tensor(ctx, x.dtype(), out_dims);
  visit_storage(ctx.node(), x.dtype(), [&]<typename S>() {
    strided_copy(out.data<S>(), x.data<S>(), view_dims, view_strides, 0);
  });
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_tensor_layout_ops(OpRegistry& r) {
  r.add("", "Transpose")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("perm", AttrKind::kInts)
      .shape(infer_transpose)
      .run(run_transpose);

  r.add("", "Concat")
      .versions(1)
      .inputs(1, -1)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .shape(infer_concat)
      .run(run_concat);

  r.add("", "Split")
      .versions(1)
      .inputs(1, 2)
      .outputs(1, -1)
      .attr("axis", AttrKind::kInt)
      .attr("num_outputs", AttrKind::kInt)
      .shape(infer_split)
      .run(run_split);

  r.add("", "Slice")
      .versions(1)
      .inputs(3, 5)
      .outputs(1, 1)
      .shape(infer_slice)
      .run(run_slice);

  r.add("", "Tile")
      .versions(1)
      .inputs(2, 3)
      .outputs(1, 1)
      .shape(infer_tile)
      .run(run_tile);
}

}  // namespace kiln
