// Reductions: ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum
// ReduceLogSumExp ReduceSumSquare (axes as input 1, see docs/ops.md), ArgMax, ArgMin.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/normalization_util.h"

namespace kiln::norm {

namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// keepdims is a flag: ONNX's inference keeps the reduced axes only for 1 and kiln's kernels for
// anything but 0, so a value other than 0 and 1 has no agreed meaning and is refused.
bool keepdims_of(const Node& n) {
  const int64_t k = attr_int(n, "keepdims");
  KILN_CHECK(k == 0 || k == 1, ErrorKind::kBadModel, "{}keepdims is {}, expected 0 or 1",
             n.where(), k);
  return k == 1;
}

// The axes a reduction reduces, from input 1; nullopt when not known at inference time.
std::optional<std::vector<int64_t>> infer_axes(const InferContext& ctx) {
  if (!ctx.has_input(1)) return std::vector<int64_t>{};
  // A constant first: negative axes do not survive as dims.
  if (const Tensor* c = ctx.input_constant(1); c && is_integer(c->dtype())) return c->to_int64s();
  if (auto v = ctx.input_dims_value(1)) {
    std::vector<int64_t> axes;
    for (const Dim& d : *v) {
      if (!d.is_known()) return std::nullopt;
      axes.push_back(d.value());
    }
    return axes;
  }
  const auto& s = ctx.input_shape(1);
  if (s && s->size() == 1 && (*s)[0].is_known() && (*s)[0].value() == 0)
    return std::vector<int64_t>{};
  return std::nullopt;
}

// Normalized, sorted, unique axes; fails on one out of range.
std::vector<int> normalize_axes(const Node& n, const std::vector<int64_t>& axes, int rank) {
  std::vector<int> out;
  if (rank == 0) return out;  // a scalar: axis 0 or -1 names nothing to reduce
  for (int64_t a : axes) out.push_back(normalize_axis(n, a, rank));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void infer_reduce(InferContext& ctx) {
  const Node& n = ctx.node();
  const DataType dt = ctx.input_dtype(0);
  const bool keep = keepdims_of(n);
  const bool noop = attr_int(n, "noop_with_empty_axes", 0) != 0;
  const auto& in = ctx.input_shape(0);
  const auto axes = infer_axes(ctx);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(in->size());
  if (!axes) {
    ctx.set_output(0, dt, keep ? std::optional<Shape>(Shape(rank, Dim())) : std::nullopt);
    return;
  }
  if (axes->empty() && noop) {
    ctx.set_output(0, dt, in);
    return;
  }
  std::vector<bool> reduced(rank, axes->empty());
  for (int a : normalize_axes(n, *axes, rank)) reduced[a] = true;
  Shape out;
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i])
      out.push_back((*in)[i]);
    else if (keep)
      out.push_back(Dim(1));
  }
  ctx.set_output(0, dt, out);
}

// Converts a double to an integer type without undefined behaviour (NaN -> 0, saturating).
template <typename T>
T int_from_double(double v) {
  if (std::isnan(v)) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <typename T>
void reduce_typed(KernelContext& ctx, Reduce kind, const Tensor& x,
                  const std::vector<bool>& reduced, bool keep) {
  const auto& in_dims = x.dims();
  std::vector<int64_t> keep_dims, out_dims;
  int64_t count = 1;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    if (reduced[i]) {
      keep_dims.push_back(1);
      if (keep) out_dims.push_back(1);
      count *= in_dims[i];
    } else {
      keep_dims.push_back(in_dims[i]);
      out_dims.push_back(in_dims[i]);
    }
  }
  const int64_t out_n = prod(keep_dims);
  Tensor out(x.dtype(), out_dims);
  const T* src = x.data<T>();
  T* dst = out.data<T>();
  // Walks the input; off[0] is the offset of the output element it reduces into.
  auto walk = [&](auto&& fn) {
    for_each_broadcast(in_dims, {keep_dims}, [&](int64_t i, const int64_t* off) { fn(i, off[0]); });
  };

  if constexpr (std::is_same_v<T, bool>) {
    // Only ReduceMax (any) and ReduceMin (all) take bool.
    const bool init = kind == Reduce::kMin;
    std::vector<uint8_t> acc(out_n, init);
    walk([&](int64_t i, int64_t o) {
      if (kind == Reduce::kMax)
        acc[o] = acc[o] || src[i];
      else
        acc[o] = acc[o] && src[i];
    });
    for (int64_t o = 0; o < out_n; ++o) dst[o] = acc[o] != 0;
  } else if constexpr (is_float_like_v<T>) {
    using C = compute_t<T>;
    auto val = [&](int64_t i) { return static_cast<double>(static_cast<C>(src[i])); };
    const double inf = std::numeric_limits<double>::infinity();
    double init = 0;
    if (kind == Reduce::kProd) init = 1;
    if (kind == Reduce::kMax || kind == Reduce::kLogSumExp) init = -inf;
    if (kind == Reduce::kMin) init = inf;
    std::vector<double> acc(out_n, init);
    walk([&](int64_t i, int64_t o) {
      const double v = val(i);
      double& a = acc[o];
      switch (kind) {
        case Reduce::kSum:
        case Reduce::kMean:
        case Reduce::kLogSum:
          a += v;
          break;
        case Reduce::kProd:
          a *= v;
          break;
        case Reduce::kL1:
          a += std::fabs(v);
          break;
        case Reduce::kL2:
        case Reduce::kSumSquare:
          a += v * v;
          break;
        case Reduce::kMax:
        case Reduce::kLogSumExp:
          if (v > a || std::isnan(v)) a = std::isnan(a) ? a : v;
          break;
        case Reduce::kMin:
          if (v < a || std::isnan(v)) a = std::isnan(a) ? a : v;
          break;
      }
    });
    if (kind == Reduce::kLogSumExp) {
      std::vector<double> sum(out_n, 0.0);
      walk([&](int64_t i, int64_t o) {
        if (std::isfinite(acc[o])) sum[o] += std::exp(val(i) - acc[o]);
      });
      for (int64_t o = 0; o < out_n; ++o)
        acc[o] = std::isfinite(acc[o]) ? acc[o] + std::log(sum[o]) : acc[o];
    }
    for (int64_t o = 0; o < out_n; ++o) {
      double r = acc[o];
      if (kind == Reduce::kMean)
        r = r / static_cast<double>(count);
      else if (kind == Reduce::kL2)
        r = std::sqrt(r);
      else if (kind == Reduce::kLogSum)
        r = std::log(r);
      dst[o] = T(static_cast<C>(r));
    }
  } else {
    // Integers: sums and products wrap like the type itself (computed modulo 2^64, then cast).
    using U = uint64_t;
    if (kind == Reduce::kMax || kind == Reduce::kMin) {
      std::vector<T> acc(out_n, kind == Reduce::kMax ? std::numeric_limits<T>::lowest()
                                                     : std::numeric_limits<T>::max());
      walk([&](int64_t i, int64_t o) {
        if (kind == Reduce::kMax ? src[i] > acc[o] : src[i] < acc[o]) acc[o] = src[i];
      });
      std::copy(acc.begin(), acc.end(), dst);
    } else if (kind == Reduce::kL2 || kind == Reduce::kLogSum || kind == Reduce::kLogSumExp) {
      std::vector<double> acc(
          out_n, kind == Reduce::kLogSumExp ? -std::numeric_limits<double>::infinity() : 0.0);
      if (kind == Reduce::kLogSumExp) {
        walk([&](int64_t i, int64_t o) { acc[o] = std::max(acc[o], static_cast<double>(src[i])); });
        std::vector<double> sum(out_n, 0.0);
        walk([&](int64_t i, int64_t o) {
          sum[o] += std::exp(static_cast<double>(src[i]) - acc[o]);
        });
        for (int64_t o = 0; o < out_n; ++o)
          acc[o] = std::isfinite(acc[o]) ? acc[o] + std::log(sum[o]) : acc[o];
      } else {
        walk([&](int64_t i, int64_t o) {
          const double v = static_cast<double>(src[i]);
          acc[o] += kind == Reduce::kL2 ? v * v : v;
        });
        for (int64_t o = 0; o < out_n; ++o)
          acc[o] = kind == Reduce::kL2 ? std::sqrt(acc[o]) : std::log(acc[o]);
      }
      for (int64_t o = 0; o < out_n; ++o) dst[o] = int_from_double<T>(acc[o]);
    } else {
      std::vector<U> acc(out_n, kind == Reduce::kProd ? U(1) : U(0));
      walk([&](int64_t i, int64_t o) {
        const U v = static_cast<U>(
            static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(src[i]));
        switch (kind) {
          case Reduce::kSum:
          case Reduce::kMean:
            acc[o] += v;
            break;
          case Reduce::kProd:
            acc[o] *= v;
            break;
          case Reduce::kSumSquare:
            acc[o] += v * v;
            break;
          case Reduce::kL1:
            if constexpr (std::is_signed_v<T>)
              acc[o] += src[i] < 0 ? U(0) - v : v;
            else
              acc[o] += v;
            break;
          default:
            break;
        }
      });
      for (int64_t o = 0; o < out_n; ++o) {
        if (kind == Reduce::kMean) {
          if (count == 0) {
            dst[o] = T(0);
          } else if constexpr (std::is_signed_v<T>) {
            dst[o] = static_cast<T>(static_cast<int64_t>(acc[o]) / count);
          } else {
            dst[o] = static_cast<T>(acc[o] / static_cast<U>(count));
          }
        } else {
          dst[o] = static_cast<T>(acc[o]);
        }
      }
    }
  }
  ctx.set_output(0, std::move(out));
}

void run_reduce(KernelContext& ctx, Reduce kind) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const bool keep = keepdims_of(n);
  const bool noop = attr_int(n, "noop_with_empty_axes", 0) != 0;
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    const Tensor& a = ctx.input(1);
    if (!is_integer(a.dtype())) ctx.fail_here("axes must be an integer tensor");
    axes = a.to_int64s();
  }
  const int rank = x.rank();
  if (axes.empty() && noop) {
    ctx.set_output(0, x);
    return;
  }
  for (int64_t a : axes)
    if (a < -rank || a >= std::max(rank, 1))
      ctx.fail_here(fmt::format("axis {} out of range for rank {}", a, rank));
  std::vector<bool> reduced(rank, axes.empty());
  for (int a : normalize_axes(n, axes, rank)) reduced[a] = true;
  auto go = [&]<typename T>() { reduce_typed<T>(ctx, kind, x, reduced, keep); };
  if (kind == Reduce::kMax || kind == Reduce::kMin)
    visit<KILN_NUMERIC_TYPES, bool>(n, x.dtype(), go);
  else
    visit<KILN_NUMERIC_TYPES>(n, x.dtype(), go);
}

// ---------------------------------------------------------------------------------------------
// ArgMax / ArgMin

void infer_arg(InferContext& ctx) {
  const Node& n = ctx.node();
  const auto& in = ctx.input_shape(0);
  if (!in) {
    ctx.set_output(0, DataType::kInt64, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(in->size());
  const int axis = normalize_axis(n, attr_int(n, "axis", 0), rank);
  const bool keep = keepdims_of(n);
  Shape out;
  for (int i = 0; i < rank; ++i) {
    if (i != axis)
      out.push_back((*in)[i]);
    else if (keep)
      out.push_back(Dim(1));
  }
  ctx.set_output(0, DataType::kInt64, out);
}

void run_arg(KernelContext& ctx, bool is_max) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  const int axis = normalize_axis(n, attr_int(n, "axis", 0), rank);
  const bool keep = keepdims_of(n);
  const bool last = attr_int(n, "select_last_index", 0) != 0;
  const auto& d = x.dims();
  const int64_t len = rank == 0 ? 1 : d[axis];
  if (len == 0) ctx.fail_here("ArgMax/ArgMin over an empty axis");
  const int64_t outer = prod(d, 0, axis), inner = prod(d, axis + 1, d.size());
  std::vector<int64_t> out_dims;
  for (int i = 0; i < rank; ++i) {
    if (i != axis)
      out_dims.push_back(d[i]);
    else if (keep)
      out_dims.push_back(1);
  }
  Tensor out(DataType::kInt64, out_dims);
  int64_t* dst = out.data<int64_t>();
  visit<KILN_NUMERIC_TYPES>(n, x.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* src = x.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        const T* p = src + o * len * inner + in;
        C best = static_cast<C>(p[0]);
        int64_t bi = 0;
        for (int64_t k = 1; k < len; ++k) {
          const C v = static_cast<C>(p[k * inner]);
          const bool better =
              is_max ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
          if (better) {
            best = v;
            bi = k;
          }
        }
        dst[o * inner + in] = bi;
      }
  });
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_reduce(OpRegistry& r) {
  struct Def {
    const char* name;
    Reduce kind;
  };
  const Def defs[] = {
      {"ReduceSum", Reduce::kSum},
      {"ReduceMean", Reduce::kMean},
      {"ReduceMax", Reduce::kMax},
      {"ReduceMin", Reduce::kMin},
      {"ReduceProd", Reduce::kProd},
      {"ReduceL1", Reduce::kL1},
      {"ReduceL2", Reduce::kL2},
      {"ReduceLogSum", Reduce::kLogSum},
      {"ReduceLogSumExp", Reduce::kLogSumExp},
      {"ReduceSumSquare", Reduce::kSumSquare},
  };
  for (const Def& d : defs) {
    const Reduce kind = d.kind;
    r.add("", d.name)
        .versions(1)
        .inputs(1, 2)
        .outputs(1, 1)
        .attr("keepdims", AttrKind::kInt, 1)
        .attr("noop_with_empty_axes", AttrKind::kInt)
        .shape(infer_reduce)
        .run([kind](KernelContext& ctx) { run_reduce(ctx, kind); });
  }
  for (bool is_max : {true, false}) {
    r.add("", is_max ? "ArgMax" : "ArgMin")
        .versions(1)
        .inputs(1, 1)
        .outputs(1, 1)
        .attr("axis", AttrKind::kInt)
        .attr("keepdims", AttrKind::kInt, 1)
        .attr("select_last_index", AttrKind::kInt)
        .shape(infer_arg)
        .run([is_max](KernelContext& ctx) { run_arg(ctx, is_max); });
  }
}

}  // namespace kiln::norm
