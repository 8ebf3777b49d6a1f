// Tensor ops that make a tensor from a shape or from scalars: ConstantOfShape Range EyeLike.
#include <algorithm>
#include <cmath>

#include "ops/tensor_common.h"

namespace kiln {
namespace {
using namespace tensor_ops;

// ---------------------------------------------------------------------------------------------
// ConstantOfShape

Tensor constant_of_shape_value(const Node& n) {
  const Tensor* v = attr_tensor_opt(n, "value");
  if (!v) return Tensor(DataType::kFloat, {1});
  KILN_CHECK(v->numel() == 1, ErrorKind::kBadModel, "{}value must hold one element, has {}",
             n.where(), v->numel());
  return *v;
}

void infer_constant_of_shape(InferContext& ctx) {
  const Tensor value = constant_of_shape_value(ctx.node());
  std::optional<Shape> out;
  if (auto v = input_sym_ints(ctx, 0)) {
    out.emplace();
    for (const SymInt& s : *v) {
      if (s.exact && s.v < 0) ctx.fail_here(fmt::format("shape element {} is negative", s.v));
      out->push_back(s.dim());
    }
  } else {
    out = rank_from_shape_input(ctx, 0);
  }
  if (out && static_cast<int>(out->size()) > limits::kMaxRank)
    ctx.fail_here(fmt::format("output rank {} above the cap {}", out->size(), limits::kMaxRank));
  // A shape vector of known length filled with an integer: its value is known.
  if (out && out->size() == 1 && (*out)[0].is_known() && (*out)[0].value() <= 64 &&
      is_integer(value.dtype()))
    ctx.set_output_dims_value(0, std::vector<Dim>(size_t((*out)[0].value()), Dim(value.get_i64(0))));
  ctx.set_output(0, value.dtype(), std::move(out));
}

void run_constant_of_shape(KernelContext& ctx) {
  const Tensor value = constant_of_shape_value(ctx.node());
  std::vector<int64_t> dims = input_ints(ctx, 0, "shape");
  Tensor out = new_tensor(ctx, value.dtype(), dims);
  visit_storage(ctx.node(), value.dtype(), [&]<typename S>() {
    S* o = out.data<S>();
    const S v = value.data<S>()[0];
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = v;
  });
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// Range

void infer_range(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  Dim n;
  auto start = input_sym_ints(ctx, 0), limit = input_sym_ints(ctx, 1), delta = input_sym_ints(ctx, 2);
  if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1) {
    const SymInt &s = (*start)[0], &l = (*limit)[0], &d = (*delta)[0];
    if (s.exact && l.exact && d.exact && d.v != 0) {
      const __int128 diff = static_cast<__int128>(l.v) - s.v;
      const __int128 step = d.v;
      __int128 count = 0;
      if (step > 0 && diff > 0) count = (diff + step - 1) / step;
      if (step < 0 && diff < 0) count = (-diff - step - 1) / -step;
      if (count <= INT64_MAX) n = Dim(static_cast<int64_t>(count));
    } else if (s.exact && s.v >= 0 && d.exact && d.v == 1 && l.sym.is_symbolic()) {
      n = l.sym - Dim(s.v);  // Range(0, seq, 1) has seq elements
    }
  }
  ctx.set_output(0, dt, Shape{n});
}

template <typename T>
void range_kernel(KernelContext& ctx) {
  const Tensor &ts = ctx.input(0), &tl = ctx.input(1), &td = ctx.input(2);
  for (int i = 0; i < 3; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.numel() != 1) ctx.fail_here(fmt::format("input {} must be a scalar", i));
    if (t.dtype() != ts.dtype()) ctx.fail_here("start, limit and delta must have one type");
  }
  int64_t n = 0;
  if constexpr (std::is_integral_v<T>) {
    const __int128 s = ts.data<T>()[0], l = tl.data<T>()[0], d = td.data<T>()[0];
    if (d == 0) ctx.fail_here("delta is 0");
    __int128 count = 0;
    if (d > 0 && l > s) count = (l - s + d - 1) / d;
    if (d < 0 && l < s) count = (s - l - d - 1) / -d;
    if (count > INT64_MAX) ctx.fail_here("too many elements");
    n = static_cast<int64_t>(count);
    Tensor out = new_tensor(ctx, ts.dtype(), {n});
    T* o = out.data<T>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(s + static_cast<__int128>(i) * d);
    ctx.set_output(0, std::move(out));
  } else {
    const double s = static_cast<double>(static_cast<compute_t<T>>(ts.data<T>()[0]));
    const double l = static_cast<double>(static_cast<compute_t<T>>(tl.data<T>()[0]));
    const double d = static_cast<double>(static_cast<compute_t<T>>(td.data<T>()[0]));
    if (d == 0) ctx.fail_here("delta is 0");
    const double count = std::ceil((l - s) / d);
    if (!std::isfinite(count)) ctx.fail_here("start, limit and delta must be finite");
    if (count > 0x1p62) ctx.fail_here(fmt::format("{} elements is too many", count));
    n = count > 0 ? static_cast<int64_t>(count) : 0;
    Tensor out = new_tensor(ctx, ts.dtype(), {n});
    T* o = out.data<T>();
    for (int64_t i = 0; i < n; ++i) o[i] = T(static_cast<compute_t<T>>(s + static_cast<double>(i) * d));
    ctx.set_output(0, std::move(out));
  }
}

// ---------------------------------------------------------------------------------------------
// EyeLike

DataType eyelike_dtype(const Node& n, DataType input) {
  auto d = attr_int_opt(n, "dtype");
  if (!d) return input;
  KILN_CHECK(is_valid_dtype(static_cast<int32_t>(*d)) && *d != 0 &&
                 *d != static_cast<int64_t>(DataType::kString),
             ErrorKind::kBadModel, "{}dtype {} is not valid", n.where(), *d);
  return static_cast<DataType>(*d);
}

void infer_eyelike(InferContext& ctx) {
  const int rank = ctx.input_rank(0);
  if (rank >= 0 && rank != 2) ctx.fail_here(fmt::format("input must be 2-D, has rank {}", rank));
  std::optional<Shape> out = ctx.input_shape(0);
  if (!out) out = unknown_shape(2);
  ctx.set_output(0, eyelike_dtype(ctx.node(), ctx.input_dtype(0)), out);
}

void run_eyelike(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) ctx.fail_here(fmt::format("input must be 2-D, has rank {}", x.rank()));
  const DataType dt = eyelike_dtype(ctx.node(), x.dtype());
  const int64_t k = attr_int(ctx.node(), "k", 0);
  Tensor out = new_tensor(ctx, dt, x.dims());
  const int64_t rows = x.dim(0), cols = x.dim(1);
  for (int64_t i = 0; i < rows; ++i) {
    const __int128 j = static_cast<__int128>(i) + k;  // k may be huge
    if (j >= 0 && j < cols) out.set_f64(i * cols + static_cast<int64_t>(j), 1.0);
  }
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_tensor_make_ops(OpRegistry& r) {
  r.add("", "ConstantOfShape")
      .versions(9)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("value", AttrKind::kTensor)
      .shape(infer_constant_of_shape)
      .run(run_constant_of_shape);

  r.add("", "Range")
      .versions(11)
      .inputs(3, 3)
      .outputs(1, 1)
      .shape(infer_range)
      .run([](KernelContext& ctx) {
        visit<float, double, int16_t, int32_t, int64_t, Half, BFloat16>(
            ctx.node(), ctx.input(0).dtype(), [&]<typename T>() { range_kernel<T>(ctx); });
      });

  r.add("", "EyeLike")
      .versions(9)
      .inputs(1, 1)
      .outputs(1, 1)
      .attr("dtype", AttrKind::kInt)
      .attr("k", AttrKind::kInt)
      .shape(infer_eyelike)
      .run(run_eyelike);
}

}  // namespace kiln
