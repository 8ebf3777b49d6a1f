// Tensor ops driven by index tensors: Gather GatherElements GatherND ScatterElements ScatterND
// Scatter OneHot TensorScatter. Every index is checked before it is used.
#include <algorithm>
#include <cmath>

#include "ops/tensor_common.h"

namespace kiln {
namespace {
using namespace tensor_ops;

// ---------------------------------------------------------------------------------------------
// Scatter reductions

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parse_reduction(const Node& n) {
  const std::string r = attr_string(n, "reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  fail(ErrorKind::kBadModel, "{}unknown reduction '{}'", n.where(), r);
}

// dst = dst (op) src. Integers wrap instead of overflowing.
template <typename T>
void reduce_into(T& dst, const T& src, Reduction r) {
  if constexpr (std::is_same_v<T, bool>) {
    const bool any = r == Reduction::kAdd || r == Reduction::kMax;
    dst = any ? (dst || src) : (dst && src);
  } else if constexpr (std::is_integral_v<T>) {
    const uint64_t a = static_cast<uint64_t>(dst), b = static_cast<uint64_t>(src);
    switch (r) {
      case Reduction::kAdd: dst = static_cast<T>(a + b); break;
      case Reduction::kMul: dst = static_cast<T>(a * b); break;
      case Reduction::kMax: dst = std::max(dst, src); break;
      case Reduction::kMin: dst = std::min(dst, src); break;
      case Reduction::kNone: dst = src; break;
    }
  } else {
    using C = compute_t<T>;
    const C a = static_cast<C>(dst), b = static_cast<C>(src);
    C v = b;
    switch (r) {
      case Reduction::kAdd: v = a + b; break;
      case Reduction::kMul: v = a * b; break;
      case Reduction::kMax: v = std::max(a, b); break;
      case Reduction::kMin: v = std::min(a, b); break;
      case Reduction::kNone: break;
    }
    dst = static_cast<T>(v);
  }
}

// Calls fn(dst_offset, src_offset) for each update, assigning or reducing out[dst] with upd[src].
template <typename Fn>
void scatter_apply(const KernelContext& ctx, Tensor& out, const Tensor& upd, Reduction red, Fn&& walk) {
  if (red == Reduction::kNone) {
    visit_storage(ctx.node(), out.dtype(), [&]<typename S>() {
      S* o = out.data<S>();
      const S* u = upd.data<S>();
      walk([&](int64_t d, int64_t s) { o[d] = u[s]; });
    });
    return;
  }
  visit<KILN_NUMERIC_TYPES, bool>(ctx.node(), out.dtype(), [&]<typename T>() {
    T* o = out.data<T>();
    const T* u = upd.data<T>();
    walk([&](int64_t d, int64_t s) { reduce_into(o[d], u[s], red); });
  });
}

// ---------------------------------------------------------------------------------------------
// Gather

void infer_gather(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* data = input_shape_ptr(ctx, 0);
  const Shape* ind = input_shape_ptr(ctx, 1);
  if (!data || !ind) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(data->size());
  if (rank == 0) ctx.fail_here("cannot gather from a scalar");
  const int axis = infer_axis(ctx, attr_int(ctx.node(), "axis", 0), rank);
  Shape out(data->begin(), data->begin() + axis);
  out.insert(out.end(), ind->begin(), ind->end());
  out.insert(out.end(), data->begin() + axis + 1, data->end());
  // Gathering from a shape (Shape -> Gather): the picked dims are the value.
  if (rank == 1 && ind->size() <= 1)
    if (auto v = ctx.input_dims_value(0))
      if (auto idx = input_exact_ints(ctx, 1)) {
        const int64_t n = static_cast<int64_t>(v->size());
        std::vector<Dim> value;
        bool ok = true;  // an index out of range is reported if the node runs (maybe it never does)
        for (int64_t i : *idx) {
          ok = ok && i >= -n && i < n;
          if (ok) value.push_back((*v)[i < 0 ? i + n : i]);
        }
        if (ok) ctx.set_output_dims_value(0, std::move(value));
      }
  ctx.set_output(0, dt, std::move(out));
}

void run_gather(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  if (x.rank() == 0) ctx.fail_here("cannot gather from a scalar");
  const int axis = kernel_axis(ctx, attr_int(ctx.node(), "axis", 0), x.rank());
  auto idx = input_ints(ctx, 1, "indices");
  const int64_t d = x.dim(axis);
  for (int64_t& i : idx) i = checked_index(ctx, i, d, "index");
  std::vector<int64_t> dims(x.dims().begin(), x.dims().begin() + axis);
  dims.insert(dims.end(), ind.dims().begin(), ind.dims().end());
  dims.insert(dims.end(), x.dims().begin() + axis + 1, x.dims().end());
  Tensor out = new_tensor(ctx, x.dtype(), dims);
  const int64_t outer = dims_product(x.dims(), 0, axis);
  const int64_t inner = dims_product(x.dims(), axis + 1, x.rank());
  const int64_t n = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) copy_elems(out, (o * n + j) * inner, x, (o * d + idx[j]) * inner, inner);
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// GatherElements, ScatterElements, Scatter: one index per element along an axis

// Checks data / indices (/ updates) for the element-wise ops; returns the normalized axis.
int check_elements(const KernelContext& ctx, const Tensor& x, const Tensor& ind, const Tensor* upd) {
  if (x.rank() == 0) ctx.fail_here("data must have rank >= 1");
  if (ind.rank() != x.rank())
    ctx.fail_here(fmt::format("indices rank {} differs from data rank {}", ind.rank(), x.rank()));
  const int axis = kernel_axis(ctx, attr_int(ctx.node(), "axis", 0), x.rank());
  for (int k = 0; k < x.rank(); ++k)
    if (k != axis && ind.dim(k) > x.dim(k))
      ctx.fail_here(fmt::format("indices {} do not fit data {} on axis {}", dims_to_string(ind.dims()),
                                dims_to_string(x.dims()), k));
  if (upd && upd->dims() != ind.dims())
    ctx.fail_here(fmt::format("updates {} and indices {} differ", dims_to_string(upd->dims()),
                              dims_to_string(ind.dims())));
  if (upd && upd->dtype() != x.dtype()) ctx.fail_here("updates and data differ in type");
  return axis;
}

// Calls fn(i, data_offset) for every element i of indices (row-major).
template <typename Fn>
void walk_elements(const KernelContext& ctx, const Tensor& x, const Tensor& ind, int axis, Fn&& fn) {
  const auto idx = input_ints(ctx, 1, "indices");
  const auto xs = strides_of(x.dims());
  const int rank = ind.rank();
  std::vector<int64_t> pos(rank, 0);
  int64_t base = 0;  // offset of pos in data, the axis left out
  for (int64_t i = 0; i < ind.numel(); ++i) {
    fn(i, base + checked_index(ctx, idx[i], x.dim(axis), "index") * xs[axis]);
    for (int k = rank - 1; k >= 0; --k) {
      const int64_t s = k == axis ? 0 : xs[k];
      base += s;
      if (++pos[k] < ind.dim(k)) break;
      base -= s * ind.dim(k);
      pos[k] = 0;
    }
  }
}

void run_gather_elements(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const int axis = check_elements(ctx, x, ind, nullptr);
  Tensor out = new_tensor(ctx, x.dtype(), ind.dims());
  visit_storage(ctx.node(), x.dtype(), [&]<typename S>() {
    S* o = out.data<S>();
    const S* in = x.data<S>();
    walk_elements(ctx, x, ind, axis, [&](int64_t i, int64_t off) { o[i] = in[off]; });
  });
  ctx.set_output(0, std::move(out));
}

void run_scatter_elements(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const Tensor& upd = ctx.input(2);
  const int axis = check_elements(ctx, x, ind, &upd);
  const Reduction red = parse_reduction(ctx.node());
  Tensor out = x.clone();
  scatter_apply(ctx, out, upd, red, [&](auto&& apply) {
    walk_elements(ctx, x, ind, axis, [&](int64_t i, int64_t off) { apply(off, i); });
  });
  ctx.set_output(0, std::move(out));
}

void infer_elements(InferContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(1));
}

// ---------------------------------------------------------------------------------------------
// GatherND, ScatterND: index tuples into the leading dims

void infer_gather_nd(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* data = input_shape_ptr(ctx, 0);
  const Shape* ind = input_shape_ptr(ctx, 1);
  const int64_t b = attr_int(ctx.node(), "batch_dims", 0);
  if (!data || !ind || ind->empty() || !ind->back().is_known()) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int64_t m = ind->back().value();
  const int64_t r = static_cast<int64_t>(data->size()), q = static_cast<int64_t>(ind->size());
  if (b < 0 || b >= q || b + m > r)
    ctx.fail_here(fmt::format("batch_dims {} and index depth {} do not fit ranks {} and {}", b, m, r, q));
  Shape out(ind->begin(), ind->end() - 1);
  out.insert(out.end(), data->begin() + b + m, data->end());
  ctx.set_output(0, dt, std::move(out));
}

// Walks the index tuples of GatherND / ScatterND: fn(tuple number, data offset of its slice).
template <typename Fn>
void walk_tuples(const KernelContext& ctx, const Tensor& x, const Tensor& ind, int64_t b, Fn&& fn) {
  const auto idx = input_ints(ctx, 1, "indices");
  const int64_t m = ind.dim(ind.rank() - 1);
  const auto xs = strides_of(x.dims());
  const int64_t batches = dims_product(x.dims(), 0, static_cast<int>(b));
  const int64_t batch_block = dims_product(x.dims(), static_cast<int>(b), x.rank());
  const int64_t tuples = dims_product(ind.dims(), 0, ind.rank() - 1);
  const int64_t per_batch = batches == 0 ? 0 : tuples / batches;
  int64_t t = 0;
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t k = 0; k < per_batch; ++k, ++t) {
      int64_t off = bi * batch_block;
      for (int64_t j = 0; j < m; ++j) {
        const int dim = static_cast<int>(b + j);
        off += checked_index(ctx, idx[t * m + j], x.dim(dim), "index") * xs[dim];
      }
      fn(t, off);
    }
}

// Checks GatherND / ScatterND inputs; returns the index depth m.
int64_t check_nd(const KernelContext& ctx, const Tensor& x, const Tensor& ind, int64_t b) {
  if (ind.rank() < 1) ctx.fail_here("indices must have rank >= 1");
  const int64_t m = ind.dim(ind.rank() - 1);
  if (b < 0 || b >= ind.rank() || b + m > x.rank())
    ctx.fail_here(fmt::format("batch_dims {} and index depth {} do not fit data {} and indices {}", b,
                              m, dims_to_string(x.dims()), dims_to_string(ind.dims())));
  for (int k = 0; k < b; ++k)
    if (x.dim(k) != ind.dim(k))
      ctx.fail_here(fmt::format("batch dims of data {} and indices {} differ", dims_to_string(x.dims()),
                                dims_to_string(ind.dims())));
  return m;
}

void run_gather_nd(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const int64_t b = attr_int(ctx.node(), "batch_dims", 0);
  const int64_t m = check_nd(ctx, x, ind, b);
  std::vector<int64_t> dims(ind.dims().begin(), ind.dims().end() - 1);
  dims.insert(dims.end(), x.dims().begin() + b + m, x.dims().end());
  Tensor out = new_tensor(ctx, x.dtype(), dims);
  const int64_t slice = dims_product(x.dims(), static_cast<int>(b + m), x.rank());
  walk_tuples(ctx, x, ind, b, [&](int64_t t, int64_t off) { copy_elems(out, t * slice, x, off, slice); });
  ctx.set_output(0, std::move(out));
}

void run_scatter_nd(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const Tensor& upd = ctx.input(2);
  const int64_t m = check_nd(ctx, x, ind, 0);
  std::vector<int64_t> want(ind.dims().begin(), ind.dims().end() - 1);
  want.insert(want.end(), x.dims().begin() + m, x.dims().end());
  if (upd.dims() != want)
    ctx.fail_here(fmt::format("updates are {}, expected {}", dims_to_string(upd.dims()), dims_to_string(want)));
  if (upd.dtype() != x.dtype()) ctx.fail_here("updates and data differ in type");
  const Reduction red = parse_reduction(ctx.node());
  const int64_t slice = dims_product(x.dims(), static_cast<int>(m), x.rank());
  Tensor out = x.clone();
  scatter_apply(ctx, out, upd, red, [&](auto&& apply) {
    walk_tuples(ctx, x, ind, 0, [&](int64_t t, int64_t off) {
      for (int64_t e = 0; e < slice; ++e) apply(off + e, t * slice + e);
    });
  });
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// OneHot

int onehot_axis(int64_t axis, int out_rank, const std::function<void(const std::string&)>& bad) {
  if (axis < -out_rank || axis >= out_rank)
    bad(fmt::format("axis {} out of range for output rank {}", axis, out_rank));
  return static_cast<int>(axis < 0 ? axis + out_rank : axis);
}

// depth holds one value (a scalar, or a 1-element vector as ONNX also accepts), values two.
void check_onehot_inputs(const InferContext& ctx) {
  const Node& n = ctx.node();
  if (const auto& d = ctx.input_shape(1)) {
    KILN_CHECK(d->size() <= 1, ErrorKind::kBadModel,
               "{}depth has rank {}, expected a scalar (or a 1-element vector)", n.where(),
               d->size());
    KILN_CHECK(d->empty() || !(*d)[0].is_known() || (*d)[0].value() == 1, ErrorKind::kBadModel,
               "{}depth has {} elements, expected one", n.where(),
               d->empty() ? 1 : (*d)[0].value());
  }
  if (const auto& v = ctx.input_shape(2)) {
    KILN_CHECK(v->size() == 1, ErrorKind::kBadModel,
               "{}values has rank {}, expected 1 ([off_value, on_value])", n.where(), v->size());
    KILN_CHECK(!(*v)[0].is_known() || (*v)[0].value() == 2, ErrorKind::kBadModel,
               "{}values has {} elements, expected 2 ([off_value, on_value])", n.where(),
               (*v)[0].value());
  }
}

void infer_onehot(InferContext& ctx) {
  check_onehot_inputs(ctx);
  const DataType dt = ctx.input_dtype(2);
  const Shape* ind = input_shape_ptr(ctx, 0);
  if (!ind) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int out_rank = static_cast<int>(ind->size()) + 1;
  const int axis = onehot_axis(attr_int(ctx.node(), "axis", -1), out_rank,
                               [&](const std::string& m) { ctx.fail_here(m); });
  Dim depth;
  if (auto v = input_sym_ints(ctx, 1); v && v->size() == 1) depth = (*v)[0].dim();
  Shape out = *ind;
  out.insert(out.begin() + axis, depth);
  ctx.set_output(0, dt, std::move(out));
}

void run_onehot(KernelContext& ctx) {
  const Tensor& ind = ctx.input(0);
  const Tensor& depth_t = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (depth_t.numel() != 1) ctx.fail_here("depth must hold one value");
  if (values.numel() != 2) ctx.fail_here(fmt::format("values must hold 2 elements, has {}", values.numel()));
  if (depth_t.dtype() == DataType::kString || ind.dtype() == DataType::kString)
    ctx.fail_here("indices and depth must be numeric");
  const double dd = depth_t.get_f64(0);
  if (!(dd >= 0 && dd < 0x1p62)) ctx.fail_here(fmt::format("depth {} is out of range", dd));
  const int64_t depth = static_cast<int64_t>(dd);
  const int out_rank = ind.rank() + 1;
  const int axis = onehot_axis(attr_int(ctx.node(), "axis", -1), out_rank,
                               [&](const std::string& m) { ctx.fail_here(m); });
  std::vector<int64_t> dims = ind.dims();
  dims.insert(dims.begin() + axis, depth);
  Tensor out = new_tensor(ctx, values.dtype(), dims);
  const int64_t outer = dims_product(ind.dims(), 0, axis);
  const int64_t inner = dims_product(ind.dims(), axis, ind.rank());
  visit_storage(ctx.node(), values.dtype(), [&]<typename S>() {
    const S off = values.data<S>()[0], on = values.data<S>()[1];
    S* o = out.data<S>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = off;
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t j = 0; j < inner; ++j) {
        // Indices outside [-depth, depth) give an all-off row (the ONNX rule), not an error.
        const double v = ind.get_f64(a * inner + j);
        if (!(v >= -static_cast<double>(depth) && v < static_cast<double>(depth))) continue;
        int64_t k = static_cast<int64_t>(v);
        if (k < 0) k += depth;
        if (k < 0 || k >= depth) continue;
        o[(a * depth + k) * inner + j] = on;
      }
  });
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// TensorScatter: writes update into a cache along the sequence axis, per batch entry at its index

void run_tensor_scatter(KernelContext& ctx) {
  const Tensor& past = ctx.input(0);
  const Tensor& upd = ctx.input(1);
  const int rank = past.rank();
  if (rank < 2) ctx.fail_here(fmt::format("past_cache must have rank >= 2, has {}", rank));
  const int axis = kernel_axis(ctx, attr_int(ctx.node(), "axis", -2), rank);
  if (axis == 0) ctx.fail_here("axis cannot be the batch axis 0");
  const std::string mode = attr_string(ctx.node(), "mode", "linear");
  if (mode != "linear" && mode != "circular") ctx.fail_here(fmt::format("unknown mode '{}'", mode));
  if (upd.dtype() != past.dtype()) ctx.fail_here("update and past_cache differ in type");
  bool fits = upd.rank() == rank;
  for (int k = 0; fits && k < rank; ++k) fits = k == axis ? upd.dim(k) <= past.dim(k) : upd.dim(k) == past.dim(k);
  if (!fits)
    ctx.fail_here(fmt::format("update {} does not fit past_cache {}", dims_to_string(upd.dims()),
                              dims_to_string(past.dims())));
  const int64_t batch = past.dim(0), max_seq = past.dim(axis), seq = upd.dim(axis);
  std::vector<int64_t> writes(static_cast<size_t>(batch), 0);
  if (ctx.has_input(2)) {
    writes = input_ints(ctx, 2, "write_indices");
    if (static_cast<int64_t>(writes.size()) != batch)
      ctx.fail_here(fmt::format("write_indices has {} entries for a batch of {}", writes.size(), batch));
  }
  for (int64_t w : writes) {
    if (w < 0) ctx.fail_here(fmt::format("write index {} is negative", w));
    if (mode == "linear" && w > max_seq - seq)
      ctx.fail_here(fmt::format("write index {} + {} updates overflow the cache of {}", w, seq, max_seq));
  }
  Tensor out = past.clone();
  const int64_t prefix = dims_product(past.dims(), 0, axis);
  const int64_t per_batch = batch == 0 ? 0 : prefix / batch;
  const int64_t inner = dims_product(past.dims(), axis + 1, rank);
  for (int64_t p = 0; p < prefix; ++p) {
    const int64_t w = writes[p / per_batch];
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t pos = mode == "circular" ? (w + s) % max_seq : w + s;
      copy_elems(out, (p * max_seq + pos) * inner, upd, (p * seq + s) * inner, inner);
    }
  }
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_tensor_index_ops(OpRegistry& r) {
  r.add("", "Gather")
      .versions(1)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .shape(infer_gather)
      .run(run_gather);

  r.add("", "GatherElements")
      .versions(11)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .shape(infer_elements)
      .run(run_gather_elements);

  r.add("", "GatherND")
      .versions(11)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("batch_dims", AttrKind::kInt)
      .shape(infer_gather_nd)
      .run(run_gather_nd);

  r.add("", "ScatterElements")
      .versions(11)
      .inputs(3, 3)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .attr("reduction", AttrKind::kString)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_scatter_elements);

  r.add("", "Scatter")
      .versions(9, 11)
      .inputs(3, 3)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_scatter_elements);

  r.add("", "ScatterND")
      .versions(11)
      .inputs(3, 3)
      .outputs(1, 1)
      .attr("reduction", AttrKind::kString)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_scatter_nd);

  r.add("", "OneHot")
      .versions(9)
      .inputs(3, 3)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .shape(infer_onehot)
      .run(run_onehot);

  r.add("", "TensorScatter")
      .versions(24)
      .inputs(2, 3)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .attr("mode", AttrKind::kString)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run(run_tensor_scatter);
}

}  // namespace kiln
