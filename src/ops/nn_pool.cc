// nn family: pooling. AveragePool, MaxPool, LpPool, GlobalAveragePool, GlobalMaxPool,
// GlobalLpPool, MaxUnpool.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/nn_common.h"

namespace kiln {
namespace {

using nn::Geom3;
using nn::Window;

enum class Pool { kMax, kAvg, kLp };

struct PoolSetup {
  Window win;
  Geom3 g;
  std::vector<int64_t> out_dims;
};

PoolSetup pool_setup(const KernelContext& ctx, const Tensor& x) {
  const Node& n = ctx.node();
  if (x.rank() < 3)
    ctx.fail_here(fmt::format("input has rank {}, expected at least 3", x.rank()));
  const int nsp = x.rank() - 2;
  auto w = nn::read_window(n, nsp, std::nullopt, true);
  if (!w) fail(ErrorKind::kBadModel, "{}attribute 'kernel_shape' is required", n.where());
  PoolSetup s;
  s.win = *w;
  std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end()), out(nsp);
  for (int i = 0; i < nsp; ++i) out[i] = nn::window_out(n, s.win, i, in[i], ErrorKind::kRuntime);
  s.g = nn::lift3(n, s.win, in, out);
  s.out_dims = {x.dim(0), x.dim(1)};
  s.out_dims.insert(s.out_dims.end(), out.begin(), out.end());
  return s;
}

void infer_pool(InferContext& ctx) {
  const Node& n = ctx.node();
  const auto& xs = ctx.input_shape(0);
  const DataType dt = ctx.input_dtype(0);
  if (!xs) {
    ctx.set_output(0, dt, std::nullopt);
    if (ctx.has_output(1)) ctx.set_output(1, DataType::kInt64, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(xs->size());
  if (rank < 3) ctx.fail_here(fmt::format("input has rank {}, expected at least 3", rank));
  auto w = nn::read_window(n, rank - 2, std::nullopt, true);
  if (!w) ctx.fail_here("attribute 'kernel_shape' is required");
  Shape out(*xs);
  for (int i = 0; i < rank - 2; ++i) out[2 + i] = nn::window_out_dim(n, *w, i, (*xs)[2 + i]);
  ctx.set_output(0, dt, out);
  if (ctx.has_output(1)) ctx.set_output(1, DataType::kInt64, out);
}

// floor(a / b) for b > 0.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Kernel positions k in [0, K) whose input index st + k*d lies in [lo, hi).
inline void k_range(int64_t st, int64_t d, int64_t lo, int64_t hi, int64_t K, int64_t& a,
                    int64_t& b) {
  a = std::max<int64_t>(0, -floor_div(st - lo, d));  // ceil((lo - st) / d)
  b = std::min<int64_t>(K, floor_div(hi - 1 - st, d) + 1);
  if (b < a) b = a;
}

// One pooling pass over NC planes. idx (MaxPool Indices) may be null. Only the kernel positions
// inside the input are visited; count_include_pad counts those inside the padded input.
template <typename T>
void pool_kernel(Pool kind, const T* x, T* y, int64_t* idx, int64_t NC, const Geom3& g,
                 bool count_include_pad, double p, bool col_major) {
  using A = compute_t<T>;
  const int64_t insz = g.in_size(), outsz = g.out_size();
#pragma omp parallel for
  for (int64_t nc = 0; nc < NC; ++nc) {
    const T* xp = x + nc * insz;
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
          const int64_t o[3] = {o0, o1, o2};
          int64_t st[3], ka[3], kb[3];
          int64_t padded = 1;
          for (int j = 0; j < 3; ++j) {
            st[j] = o[j] * g.s[j] - g.pb[j];
            k_range(st[j], g.d[j], 0, g.in[j], g.k[j], ka[j], kb[j]);
            int64_t pa, pz;
            k_range(st[j], g.d[j], -g.pb[j], g.in[j] + g.pe[j], g.k[j], pa, pz);
            padded *= pz - pa;
          }
          A best = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                        : std::numeric_limits<A>::lowest();
          int64_t best_i = -1;
          double sum = 0;
          int64_t count = 0;
          for (int64_t k0 = ka[0]; k0 < kb[0]; ++k0) {
            const int64_t i0 = st[0] + k0 * g.d[0];
            for (int64_t k1 = ka[1]; k1 < kb[1]; ++k1) {
              const int64_t i1 = st[1] + k1 * g.d[1];
              for (int64_t k2 = ka[2]; k2 < kb[2]; ++k2) {
                const int64_t i2 = st[2] + k2 * g.d[2];
                const int64_t off = (i0 * g.in[1] + i1) * g.in[2] + i2;
                const A v = static_cast<A>(xp[off]);
                if (kind == Pool::kMax) {
                  if (v > best || best_i < 0) {
                    best = v;
                    best_i = col_major ? i0 + i1 * g.in[0] + i2 * g.in[0] * g.in[1] : off;
                  }
                } else if (kind == Pool::kAvg) {
                  sum += static_cast<double>(v);
                  ++count;
                } else {
                  sum += std::pow(std::fabs(static_cast<double>(v)), p);
                }
              }
            }
          }
          if (count_include_pad) count = padded;
          const int64_t oi = nc * outsz + (o0 * g.out[1] + o1) * g.out[2] + o2;
          if (kind == Pool::kMax) {
            y[oi] = nn::from_num<T>(best);
            if (idx) idx[oi] = nc * insz + std::max<int64_t>(best_i, 0);
          } else if (kind == Pool::kAvg) {
            y[oi] = nn::from_num<T>(count ? static_cast<A>(sum / static_cast<double>(count))
                                          : A(0));
          } else {
            y[oi] = nn::from_num<T>(static_cast<A>(std::pow(sum, 1.0 / p)));
          }
        }
  }
}

// The p of LpPool / GlobalLpPool: an int (opset >= 2) or a float (opset 1).
double lp_p(const Node& n) {
  const Attribute* a = n.attr("p");
  if (!a) return 2.0;
  double p;
  if (a->kind == AttrKind::kFloat) p = a->f;
  else p = static_cast<double>(attr_int(n, "p", 2));
  if (!(p > 0) || !std::isfinite(p)) fail(ErrorKind::kBadModel, "{}p must be positive", n.where());
  return p;
}

void run_pool(KernelContext& ctx, Pool kind) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  PoolSetup s = pool_setup(ctx, x);
  const bool cip = attr_int(n, "count_include_pad", 0) != 0;
  const int64_t order = attr_int(n, "storage_order", 0);
  if (order != 0 && order != 1) ctx.fail_here("storage_order must be 0 or 1");
  const double p = kind == Pool::kLp ? lp_p(n) : 0.0;
  const int64_t NC = x.dim(0) * x.dim(1);
  Tensor y(x.dtype(), s.out_dims);
  Tensor ind;
  const bool want_idx = kind == Pool::kMax && ctx.wants_output(1);
  if (want_idx) ind = Tensor(DataType::kInt64, s.out_dims);
  auto go = [&]<typename T>() {
    pool_kernel<T>(kind, x.data<T>(), y.data<T>(), want_idx ? ind.data<int64_t>() : nullptr, NC,
                   s.g, cip, p, order == 1);
  };
  if (kind == Pool::kMax)
    visit<KILN_FLOAT_TYPES, int8_t, uint8_t>(n, x.dtype(), go);
  else
    visit<KILN_FLOAT_TYPES>(n, x.dtype(), go);
  ctx.set_output(0, std::move(y));
  if (want_idx) ctx.set_output(1, std::move(ind));
}

void infer_global_pool(InferContext& ctx) {
  const auto& xs = ctx.input_shape(0);
  const DataType dt = ctx.input_dtype(0);
  if (!xs) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  if (xs->size() < 2) ctx.fail_here(fmt::format("input has rank {}, expected at least 2", xs->size()));
  Shape out(*xs);
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  ctx.set_output(0, dt, out);
}

void run_global_pool(KernelContext& ctx, Pool kind) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_here(fmt::format("input has rank {}, expected at least 2", x.rank()));
  std::vector<int64_t> od = x.dims();
  int64_t sz = 1;
  for (int i = 2; i < x.rank(); ++i) {
    sz *= od[i];
    od[i] = 1;
  }
  const int64_t NC = x.dim(0) * x.dim(1);
  const double p = kind == Pool::kLp ? lp_p(n) : 0.0;
  Tensor y(x.dtype(), od);
  auto go = [&]<typename T>() {
    using A = compute_t<T>;
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
#pragma omp parallel for
    for (int64_t nc = 0; nc < NC; ++nc) {
      const T* r = xp + nc * sz;
      if (kind == Pool::kMax) {
        A best = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                      : std::numeric_limits<A>::lowest();
        for (int64_t i = 0; i < sz; ++i) best = std::max(best, static_cast<A>(r[i]));
        yp[nc] = nn::from_num<T>(best);
      } else {
        double sum = 0;
        for (int64_t i = 0; i < sz; ++i) {
          const double v = static_cast<double>(static_cast<A>(r[i]));
          sum += kind == Pool::kAvg ? v : std::pow(std::fabs(v), p);
        }
        const double v = kind == Pool::kAvg ? (sz ? sum / static_cast<double>(sz) : 0.0)
                                            : std::pow(sum, 1.0 / p);
        yp[nc] = nn::from_num<T>(static_cast<A>(v));
      }
    }
  };
  if (kind == Pool::kMax)
    visit<KILN_FLOAT_TYPES, int8_t, uint8_t>(n, x.dtype(), go);
  else
    visit<KILN_FLOAT_TYPES>(n, x.dtype(), go);
  ctx.set_output(0, std::move(y));
}

// MaxUnpool output spatial size: (in - 1) * s + k - pb - pe.
void infer_max_unpool(InferContext& ctx) {
  const Node& n = ctx.node();
  const DataType dt = ctx.input_dtype(0);
  if (ctx.has_input(2)) {
    auto v = ctx.input_dims_value(2);
    if (v) {
      ctx.set_output(0, dt, *v);
    } else {
      const auto& ss = ctx.input_shape(2);
      if (ss && ss->size() == 1 && (*ss)[0].is_known())
        ctx.set_output(0, dt, Shape(static_cast<size_t>((*ss)[0].value())));
      else
        ctx.set_output(0, dt, std::nullopt);
    }
    return;
  }
  const auto& xs = ctx.input_shape(0);
  if (!xs) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(xs->size());
  if (rank < 3) ctx.fail_here(fmt::format("input has rank {}, expected at least 3", rank));
  auto w = nn::read_window(n, rank - 2, std::nullopt);
  if (!w) ctx.fail_here("attribute 'kernel_shape' is required");
  Shape out(*xs);
  for (int i = 0; i < rank - 2; ++i)
    out[2 + i] = nn::add_const(nn::dim_mul((*xs)[2 + i], Dim(w->s[i])),
                               w->k[i] - w->s[i] - w->pb[i] - w->pe[i]);
  ctx.set_output(0, dt, out);
}

void run_max_unpool(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  if (x.rank() < 3) ctx.fail_here(fmt::format("input has rank {}, expected at least 3", x.rank()));
  if (ind.dims() != x.dims())
    ctx.fail_here(fmt::format("indices have shape {}, the input {}", dims_to_string(ind.dims()),
                              dims_to_string(x.dims())));
  const int nsp = x.rank() - 2;
  auto w = nn::read_window(n, nsp, std::nullopt);
  if (!w) fail(ErrorKind::kBadModel, "{}attribute 'kernel_shape' is required", n.where());
  // indices address the inferred output (x - 1) * s + k - pads; an output_shape input gives a
  // larger (or smaller) output holding that one in its leading corner
  std::vector<int64_t> od = x.dims();
  for (int i = 0; i < nsp; ++i) {
    od[2 + i] = nn::ck_mul(n, x.dim(2 + i) - 1, w->s[i], ErrorKind::kRuntime) + w->k[i] -
                w->pb[i] - w->pe[i];
    if (od[2 + i] < 0) ctx.fail_here("output size is negative");
  }
  Tensor y(x.dtype(), od);
  const int64_t ysz = y.numel();
  const auto idx = nn::load_as<int64_t>(n, ind);
  const size_t esz = dtype_size(x.dtype());
  if (esz == 0) ctx.fail_here("unsupported element type");
  const auto* src = static_cast<const unsigned char*>(x.raw());
  auto* dst = static_cast<unsigned char*>(y.raw());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t j = idx[i];
    if (j < 0 || j >= ysz)
      ctx.fail_here(fmt::format("index {} out of range [0, {})", j, ysz));
    std::memcpy(dst + j * esz, src + i * esz, esz);
  }
  if (ctx.has_input(2)) {
    std::vector<int64_t> full = ctx.input(2).to_int64s();
    if (static_cast<int>(full.size()) != x.rank())
      ctx.fail_here(fmt::format("output_shape has {} values for rank {}", full.size(), x.rank()));
    if (full[0] != x.dim(0) || full[1] != x.dim(1))
      ctx.fail_here("output_shape must keep the batch and channel dims");
    if (full != od) {
      Tensor z(x.dtype(), full);
      // copy the overlap, row by row along the last dim
      const int rank = x.rank();
      std::vector<int64_t> common(rank);
      for (int i = 0; i < rank; ++i) common[i] = std::min(od[i], full[i]);
      const auto ys = strides_of(od), zs = strides_of(full);
      std::vector<int64_t> outer(common.begin(), common.end() - 1);
      const int64_t row = common.back();
      auto* zd = static_cast<unsigned char*>(z.raw());
      int64_t rows = 1;
      for (int64_t d : outer) rows *= d;
      std::vector<int64_t> at(outer.size(), 0);
      for (int64_t r = 0; r < rows && row > 0; ++r) {
        int64_t yo = 0, zo = 0;
        for (size_t i = 0; i < at.size(); ++i) {
          yo += at[i] * ys[i];
          zo += at[i] * zs[i];
        }
        std::memcpy(zd + zo * esz, dst + yo * esz, row * esz);
        for (int i = static_cast<int>(at.size()) - 1; i >= 0; --i) {
          if (++at[i] < outer[i]) break;
          at[i] = 0;
        }
      }
      y = std::move(z);
    }
  }
  ctx.set_output(0, std::move(y));
}

}  // namespace

void register_nn_pool_ops(OpRegistry& r) {
  auto window_attrs = [](OpSchema& s) -> OpSchema& {
    return s.attr("auto_pad", AttrKind::kString)
        .attr("ceil_mode", AttrKind::kInt, 0)
        .attr("dilations", AttrKind::kInts)
        .attr("kernel_shape", AttrKind::kInts, true)
        .attr("pads", AttrKind::kInts)
        .attr("strides", AttrKind::kInts);
  };
  window_attrs(r.add("", "AveragePool").versions(1).inputs(1, 1).outputs(1, 1))
      .attr("count_include_pad", AttrKind::kInt, 0)
      .shape(infer_pool)
      .run([](KernelContext& ctx) { run_pool(ctx, Pool::kAvg); });
  window_attrs(r.add("", "MaxPool").versions(1).inputs(1, 1).outputs(1, 2))
      .attr("storage_order", AttrKind::kInt)
      .shape(infer_pool)
      .run([](KernelContext& ctx) { run_pool(ctx, Pool::kMax); });
  // "p" is an int since opset 2 and a float in opset 1: left undeclared so that the checker
  // accepts both kinds; lp_p() reads either.
  window_attrs(r.add("", "LpPool").versions(1).inputs(1, 1).outputs(1, 1))
      .shape(infer_pool)
      .run([](KernelContext& ctx) { run_pool(ctx, Pool::kLp); });
  r.add("", "GlobalAveragePool")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .shape(infer_global_pool)
      .run([](KernelContext& ctx) { run_global_pool(ctx, Pool::kAvg); });
  r.add("", "GlobalMaxPool")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)
      .shape(infer_global_pool)
      .run([](KernelContext& ctx) { run_global_pool(ctx, Pool::kMax); });
  r.add("", "GlobalLpPool")
      .versions(1)
      .inputs(1, 1)
      .outputs(1, 1)  // "p": see LpPool
      .shape(infer_global_pool)
      .run([](KernelContext& ctx) { run_global_pool(ctx, Pool::kLp); });
  r.add("", "MaxUnpool")
      .versions(9)
      .inputs(2, 3)
      .outputs(1, 1)
      .attr("kernel_shape", AttrKind::kInts, true)
      .attr("pads", AttrKind::kInts)
      .attr("strides", AttrKind::kInts)
      .shape(infer_max_unpool)
      .run(run_max_unpool);
}

}  // namespace kiln
