// Tensor ops that order or accumulate along an axis: TopK Unique CumSum CumProd.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/tensor_common.h"

namespace kiln {
namespace {
using namespace tensor_ops;

// The value an element is compared by: float for the small float kinds, int64 for sub-byte ints.
template <typename T>
auto sort_key(const T& v) {
  if constexpr (std::is_class_v<T> && is_float_like_v<T>) return static_cast<float>(v);
  else if constexpr (is_small_int_v<T>) return static_cast<int64_t>(v);
  else return v;
}

// A strict total order: NaN above every number and equal to itself.
template <typename K>
bool key_less(const K& a, const K& b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// ---------------------------------------------------------------------------------------------
// TopK

void infer_topk(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* in = input_shape_ptr(ctx, 0);
  std::optional<Shape> out;
  if (in) {
    out = *in;
    const int axis = infer_axis(ctx, attr_int(ctx.node(), "axis", -1), static_cast<int>(in->size()));
    Dim k;
    if (auto v = input_sym_ints(ctx, 1); v && v->size() == 1) {
      if ((*v)[0].exact && (*v)[0].v < 0) ctx.fail_here(fmt::format("k {} is negative", (*v)[0].v));
      k = (*v)[0].dim();
    }
    (*out)[axis] = k;
  }
  ctx.set_output(0, dt, out);
  ctx.set_output(1, DataType::kInt64, out);
}

template <typename T>
void topk_kernel(KernelContext& ctx, const Tensor& x, int axis, int64_t k) {
  const bool largest = attr_int(ctx.node(), "largest", 1) != 0;
  std::vector<int64_t> dims = x.dims();
  const int64_t d = dims[axis];
  dims[axis] = k;
  Tensor values = new_tensor(ctx, x.dtype(), dims);
  Tensor indices = new_tensor(ctx, DataType::kInt64, dims);
  const int64_t outer = dims_product(x.dims(), 0, axis);
  const int64_t inner = dims_product(x.dims(), axis + 1, x.rank());
  const T* in = x.data<T>();
  T* ov = values.data<T>();
  int64_t* oi = indices.data<int64_t>();
  using K = decltype(sort_key(std::declval<T>()));
  std::vector<K> keys(d);
  std::vector<int64_t> order(d);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * d * inner + i;
      for (int64_t j = 0; j < d; ++j) keys[j] = sort_key(in[base + j * inner]);
      std::iota(order.begin(), order.end(), 0);
      // Best first; equal values keep their index order.
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
        if (key_less(keys[a], keys[b])) return !largest;
        if (key_less(keys[b], keys[a])) return largest;
        return a < b;
      });
      const int64_t out_base = o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        ov[out_base + j * inner] = in[base + order[j] * inner];
        oi[out_base + j * inner] = order[j];
      }
    }
  ctx.set_output(0, std::move(values));
  ctx.set_output(1, std::move(indices));
}

void run_topk(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail_here("input must have rank >= 1");
  const int axis = kernel_axis(ctx, attr_int(ctx.node(), "axis", -1), x.rank());
  const int64_t k = input_scalar_int(ctx, 1, "k");
  if (k < 0 || k > x.dim(axis))
    ctx.fail_here(fmt::format("k {} out of range [0, {}]", k, x.dim(axis)));
  visit<KILN_NUMERIC_TYPES>(ctx.node(), x.dtype(), [&]<typename T>() { topk_kernel<T>(ctx, x, axis, k); });
}

// ---------------------------------------------------------------------------------------------
// Unique

void infer_unique(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const Shape* in = input_shape_ptr(ctx, 0);
  auto axis = attr_int_opt(ctx.node(), "axis");
  std::optional<Shape> y;
  Dim total;
  if (!axis) {
    y = Shape{Dim()};
    if (in) total = dims_product(*in, 0, static_cast<int>(in->size()));
  } else if (in) {
    const int a = infer_axis(ctx, *axis, static_cast<int>(in->size()));
    y = *in;
    total = (*in)[a];
    (*y)[a] = Dim();
  }
  ctx.set_output(0, dt, y);
  ctx.set_output(1, DataType::kInt64, Shape{Dim()});
  ctx.set_output(2, DataType::kInt64, Shape{total});
  ctx.set_output(3, DataType::kInt64, Shape{Dim()});
}

template <typename T>
void unique_kernel(KernelContext& ctx, const Tensor& x) {
  auto axis_attr = attr_int_opt(ctx.node(), "axis");
  const bool sorted = attr_int(ctx.node(), "sorted", 1) != 0;
  // Items are elements (no axis) or slices along the axis: item j is x[o, j, i] for all (o, i).
  std::vector<int64_t> dims = axis_attr ? x.dims() : std::vector<int64_t>{x.numel()};
  if (axis_attr && x.rank() == 0) ctx.fail_here("axis given for a scalar input");
  const int axis = axis_attr ? kernel_axis(ctx, *axis_attr, x.rank()) : 0;
  const int64_t n = dims[axis];
  const int64_t outer = dims_product(dims, 0, axis);
  const int64_t inner = dims_product(dims, axis + 1, static_cast<int>(dims.size()));
  const T* in = x.data<T>();
  auto item_less = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const auto ka = sort_key(in[(o * n + a) * inner + i]), kb = sort_key(in[(o * n + b) * inner + i]);
        if (key_less(ka, kb)) return true;
        if (key_less(kb, ka)) return false;
      }
    return false;
  };
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), item_less);
  // Groups of equal items, each led by its first occurrence (stable sort keeps index order).
  std::vector<int64_t> group_of(n), first, count;
  for (int64_t j = 0; j < n; ++j) {
    if (j == 0 || item_less(order[j - 1], order[j])) {
      first.push_back(order[j]);
      count.push_back(0);
    }
    group_of[order[j]] = static_cast<int64_t>(first.size()) - 1;
    ++count.back();
  }
  const int64_t u = static_cast<int64_t>(first.size());
  std::vector<int64_t> rank(u);  // output position of each group
  std::iota(rank.begin(), rank.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(u);
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    for (int64_t p = 0; p < u; ++p) rank[by_first[p]] = p;
  }
  std::vector<int64_t> y_dims = axis_attr ? x.dims() : std::vector<int64_t>{u};
  if (axis_attr) y_dims[axis] = u;
  Tensor y = new_tensor(ctx, x.dtype(), y_dims);
  Tensor indices = new_tensor(ctx, DataType::kInt64, {u});
  Tensor inverse = new_tensor(ctx, DataType::kInt64, {n});
  Tensor counts = new_tensor(ctx, DataType::kInt64, {u});
  T* oy = y.data<T>();
  for (int64_t g = 0; g < u; ++g) {
    const int64_t p = rank[g];
    indices.data<int64_t>()[p] = first[g];
    counts.data<int64_t>()[p] = count[g];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) oy[(o * u + p) * inner + i] = in[(o * n + first[g]) * inner + i];
  }
  for (int64_t j = 0; j < n; ++j) inverse.data<int64_t>()[j] = rank[group_of[j]];
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, std::move(indices));
  ctx.set_output(2, std::move(inverse));
  ctx.set_output(3, std::move(counts));
}

// ---------------------------------------------------------------------------------------------
// CumSum, CumProd

template <typename T>
void cumulate(KernelContext& ctx, const Tensor& x, int axis, bool product) {
  const bool exclusive = attr_int(ctx.node(), "exclusive", 0) != 0;
  const bool reverse = attr_int(ctx.node(), "reverse", 0) != 0;
  Tensor out = new_tensor(ctx, x.dtype(), x.dims());
  const int64_t d = x.dim(axis);
  const int64_t outer = dims_product(x.dims(), 0, axis);
  const int64_t inner = dims_product(x.dims(), axis + 1, x.rank());
  const T* in = x.data<T>();
  T* o = out.data<T>();
  // Integers accumulate with wrap-around instead of overflowing.
  using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, compute_t<T>>;
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t i = 0; i < inner; ++i) {
      Acc acc = product ? Acc(1) : Acc(0);
      for (int64_t step = 0; step < d; ++step) {
        const int64_t j = reverse ? d - 1 - step : step;
        const int64_t at = (a * d + j) * inner + i;
        const Acc v = static_cast<Acc>(static_cast<compute_t<T>>(in[at]));
        if (exclusive) o[at] = static_cast<T>(static_cast<compute_t<T>>(acc));
        acc = product ? acc * v : acc + v;
        if (!exclusive) o[at] = static_cast<T>(static_cast<compute_t<T>>(acc));
      }
    }
  ctx.set_output(0, std::move(out));
}

void run_cumulative(KernelContext& ctx, bool product) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail_here("input must have rank >= 1");
  const int axis = kernel_axis(ctx, input_scalar_int(ctx, 1, "axis"), x.rank());
  visit<KILN_NUMERIC_TYPES>(ctx.node(), x.dtype(), [&]<typename T>() { cumulate<T>(ctx, x, axis, product); });
}

}  // namespace

void register_tensor_sort_ops(OpRegistry& r) {
  r.add("", "TopK")
      .versions(1)
      .inputs(2, 2)
      .outputs(2, 2)
      .attr("axis", AttrKind::kInt)
      .attr("largest", AttrKind::kInt)
      .attr("sorted", AttrKind::kInt)
      .shape(infer_topk)
      .run(run_topk);

  r.add("", "Unique")
      .versions(11)
      .inputs(1, 1)
      .outputs(1, 4)
      .attr("axis", AttrKind::kInt)
      .attr("sorted", AttrKind::kInt)
      .shape(infer_unique)
      .run([](KernelContext& ctx) {
        const Tensor& x = ctx.input(0);
        visit<KILN_NUMERIC_TYPES, bool, std::string, KILN_SMALL_INT_TYPES>(
            ctx.node(), x.dtype(), [&]<typename T>() { unique_kernel<T>(ctx, x); });
      });

  r.add("", "CumSum")
      .versions(11)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("exclusive", AttrKind::kInt)
      .attr("reverse", AttrKind::kInt)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run([](KernelContext& ctx) { run_cumulative(ctx, false); });

  r.add("", "CumProd")
      .versions(26)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("exclusive", AttrKind::kInt)
      .attr("reverse", AttrKind::kInt)
      .shape([](InferContext& ctx) { infer_same_as_input(ctx); })
      .run([](KernelContext& ctx) { run_cumulative(ctx, true); });
}

}  // namespace kiln
