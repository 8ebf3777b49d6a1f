// nn family: matrix products. MatMul, MatMulInteger, QLinearMatMul, Gemm (Einsum: einsum.cc,
// Det: det.cc).
#include <algorithm>
#include <cmath>
#include <map>

#include "support/checked_math.h"

#include "ops/nn_common.h"

namespace kiln {
namespace {

using nn::acc_t;


#define KILN_NN_MATMUL_TYPES KILN_FLOAT_TYPES, int32_t, int64_t, uint32_t, uint64_t

// ---------------------------------------------------------------------------------------------
// Batched matrix product with numpy broadcasting of the batch dims.

struct MatMulPlan {
  std::vector<int64_t> out_dims;
  int64_t M = 1, K = 1, N = 1, nb = 1;
  std::vector<int64_t> a_off, b_off;  // element offsets of each batch's matrices
};

MatMulPlan plan_matmul(const Node& n, std::vector<int64_t> ad, std::vector<int64_t> bd) {
  if (ad.empty() || bd.empty())
    fail(ErrorKind::kRuntime, "{}MatMul inputs must have rank >= 1", n.where());
  const bool a1 = ad.size() == 1, b1 = bd.size() == 1;
  if (a1) ad.insert(ad.begin(), 1);
  if (b1) bd.push_back(1);
  MatMulPlan p;
  p.M = ad[ad.size() - 2];
  p.K = ad.back();
  p.N = bd.back();
  if (bd[bd.size() - 2] != p.K)
    fail(ErrorKind::kRuntime, "{}inner dims differ: {} x {}", n.where(), dims_to_string(ad),
         dims_to_string(bd));
  std::vector<int64_t> ab(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
  std::vector<int64_t> batch = broadcast_dims(n, ab, bb);
  {
    std::vector<int64_t> all = batch;
    all.push_back(p.M);
    all.push_back(p.N);
    nn::check_scratch(n, all, 1);
  }
  p.nb = 1;
  for (int64_t d : batch) p.nb *= d;
  p.out_dims = batch;
  if (!a1) p.out_dims.push_back(p.M);
  if (!b1) p.out_dims.push_back(p.N);
  if (p.nb == 0 || p.M == 0 || p.N == 0) {  // empty output
    p.nb = 0;
    return p;
  }
  p.a_off.reserve(p.nb);
  p.b_off.reserve(p.nb);
  const int64_t asz = p.M * p.K, bsz = p.K * p.N;
  if (batch.empty()) {
    p.a_off.push_back(0);
    p.b_off.push_back(0);
  } else {
    for_each_broadcast(batch, {ab, bb}, [&](int64_t, const int64_t* off) {
      p.a_off.push_back(off[0] * asz);
      p.b_off.push_back(off[1] * bsz);
    });
  }
  return p;
}

// y (nb x M x N, zero-filled or not) = a x b per batch.
template <typename A>
void matmul_kernel(const MatMulPlan& p, const A* a, const A* b, A* y) {
  constexpr int64_t kBlock = 256;
  const int64_t nj = (p.N + kBlock - 1) / kBlock;
  const int64_t tasks = p.nb * p.M * nj;
#pragma omp parallel for schedule(dynamic, 4)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t r = t / nj, jb = t % nj;
    const int64_t bi = r / p.M, i = r % p.M;
    const int64_t j0 = jb * kBlock, j1 = std::min(p.N, j0 + kBlock);
    A* yr = y + r * p.N;
    for (int64_t j = j0; j < j1; ++j) yr[j] = A(0);
    const A* ar = a + p.a_off[bi] + i * p.K;
    const A* bm = b + p.b_off[bi];
    for (int64_t k = 0; k < p.K; ++k) {
      const A av = ar[k];
      const A* br = bm + k * p.N;
      for (int64_t j = j0; j < j1; ++j) yr[j] += av * br[j];
    }
  }
}

// Shape inference of MatMul-like ops (inputs a at 0, b at bi).
void infer_matmul(InferContext& ctx, int bi, DataType dt) {
  const auto& as = ctx.input_shape(0);
  const auto& bs = ctx.input_shape(bi);
  if (!as || !bs) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  Shape a = *as, b = *bs;
  if (a.empty() || b.empty()) ctx.fail_here("MatMul inputs must have rank >= 1");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), Dim(1));
  if (b1) b.push_back(Dim(1));
  const Dim& ka = a.back();
  const Dim& kb = b[b.size() - 2];
  if (ka.is_known() && kb.is_known() && ka.value() != kb.value())
    ctx.fail_here(fmt::format("inner dims differ: {} x {}", shape_to_string(*as),
                              shape_to_string(*bs)));
  auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!batch) ctx.fail_here("batch dims do not broadcast");
  Shape out = *batch;
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  ctx.set_output(0, dt, out);
}

void run_matmul(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype())
    ctx.fail_here(fmt::format("input types differ: {} and {}", dtype_name(a.dtype()),
                              dtype_name(b.dtype())));
  MatMulPlan p = plan_matmul(n, a.dims(), b.dims());
  visit<KILN_NN_MATMUL_TYPES>(n, a.dtype(), [&]<typename T>() {
    using A = acc_t<T>;
    auto av = nn::view_as<A>(n, a);
    auto bv = nn::view_as<A>(n, b);
    if constexpr (std::is_same_v<A, T>) {
      Tensor y(a.dtype(), p.out_dims);
      matmul_kernel<A>(p, av.p, bv.p, y.data<A>());
      ctx.set_output(0, std::move(y));
    } else {
      nn::check_scratch(n, p.out_dims, sizeof(A));
      std::vector<A> acc(static_cast<size_t>(p.nb * p.M * p.N));
      matmul_kernel<A>(p, av.p, bv.p, acc.data());
      Tensor y(a.dtype(), p.out_dims);
      T* yp = y.data<T>();
      for (size_t i = 0; i < acc.size(); ++i) yp[i] = nn::from_num<T>(acc[i]);
      ctx.set_output(0, std::move(y));
    }
  });
}

// ---------------------------------------------------------------------------------------------
// MatMulInteger, QLinearMatMul.

// t - zp as double, where zp is a scalar, a per-row (`rows`, of dims[-2]) or per-column vector
// (dims[-1]), or a tensor broadcasting to t.
std::vector<double> centered(const KernelContext& ctx, const Tensor& t, const Tensor* zp,
                             bool per_row) {
  const Node& n = ctx.node();
  std::vector<double> v = nn::load_as<double>(n, t);
  if (!zp || zp->numel() == 0) return v;
  const auto z = nn::load_as<double>(n, *zp);
  if (zp->numel() == 1) {
    for (auto& e : v) e -= z[0];
    return v;
  }
  if (zp->rank() == 1 && t.rank() >= 2) {
    const int64_t rows = t.dim(t.rank() - 2), cols = t.dim(t.rank() - 1);
    if (zp->numel() != (per_row ? rows : cols))
      ctx.fail_here(fmt::format("zero point has {} elements for a {} of {}", zp->numel(),
                                per_row ? "row count" : "column count", per_row ? rows : cols));
    for (int64_t i = 0; i < t.numel(); ++i)
      v[i] -= z[per_row ? (i / cols) % rows : i % cols];
    return v;
  }
  if (broadcast_dims(n, t.dims(), zp->dims()) != t.dims())
    ctx.fail_here(fmt::format("zero point of shape {} does not broadcast to {}",
                              dims_to_string(zp->dims()), dims_to_string(t.dims())));
  for_each_broadcast(t.dims(), {zp->dims()},
                     [&](int64_t i, const int64_t* off) { v[i] -= z[off[0]]; });
  return v;
}

void check_q8(const KernelContext& ctx, int i) {
  const DataType t = ctx.input(i).dtype();
  if (t != DataType::kUInt8 && t != DataType::kInt8)
    ctx.fail_here(fmt::format("input {} is {}, expected uint8 or int8", i, dtype_name(t)));
}

void run_matmul_integer(KernelContext& ctx) {
  const Node& n = ctx.node();
  check_q8(ctx, 0);
  check_q8(ctx, 1);
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  MatMulPlan p = plan_matmul(n, a.dims(), b.dims());
  auto ad = centered(ctx, a, ctx.has_input(2) ? &ctx.input(2) : nullptr, true);
  auto bd = centered(ctx, b, ctx.has_input(3) ? &ctx.input(3) : nullptr, false);
  Tensor y(DataType::kInt32, p.out_dims);
  nn::check_scratch(n, {y.numel()}, sizeof(double));
  std::vector<double> acc(static_cast<size_t>(y.numel()));
  matmul_kernel<double>(p, ad.data(), bd.data(), acc.data());
  int32_t* yp = y.data<int32_t>();
  for (size_t i = 0; i < acc.size(); ++i)
    yp[i] = static_cast<int32_t>(static_cast<int64_t>(acc[i]));
  ctx.set_output(0, std::move(y));
}

// a * b / c rounded the way the scale's type would (float16 / bfloat16 round each step).
double scale_product(DataType t, double a, double b, double c) {
  auto rnd = [&](double v) -> double {
    if (t == DataType::kFloat16) return static_cast<float>(Half(static_cast<float>(v)));
    if (t == DataType::kBFloat16) return static_cast<float>(BFloat16(static_cast<float>(v)));
    if (t == DataType::kDouble) return v;
    return static_cast<float>(v);
  };
  return rnd(rnd(rnd(a) * rnd(b)) / rnd(c));
}

void run_qlinear_matmul(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& a = ctx.input(0);
  const Tensor& as = ctx.input(1);
  const Tensor& b = ctx.input(3);
  const Tensor& bs = ctx.input(4);
  const Tensor& ys = ctx.input(6);
  const Tensor& yzp = ctx.input(7);
  MatMulPlan p = plan_matmul(n, a.dims(), b.dims());
  auto ad = centered(ctx, a, &ctx.input(2), true);
  auto bd = centered(ctx, b, &ctx.input(5), false);
  nn::check_scratch(n, p.out_dims, sizeof(double));
  std::vector<double> acc(static_cast<size_t>(p.nb * p.M * p.N));
  matmul_kernel<double>(p, ad.data(), bd.data(), acc.data());
  auto check_vec = [&](const Tensor& s, int64_t len, const char* what) {
    if (s.numel() != 1 && s.numel() != len)
      ctx.fail_here(fmt::format("{} has {} elements, expected 1 or {}", what, s.numel(), len));
  };
  check_vec(as, p.M, "a_scale");
  check_vec(bs, p.N, "b_scale");
  check_vec(ys, p.M, "y_scale");
  check_vec(yzp, p.M, "y_zero_point");
  const auto asv = nn::load_as<double>(n, as), bsv = nn::load_as<double>(n, bs),
             ysv = nn::load_as<double>(n, ys), yzv = nn::load_as<double>(n, yzp);
  Tensor y(yzp.dtype(), p.out_dims);
  visit<KILN_NN_QUANT_TYPES>(n, yzp.dtype(), [&]<typename Q>() {
    Q* yp = y.data<Q>();
    for (int64_t r = 0; r < p.nb * p.M; ++r) {
      const int64_t i = r % p.M;
      const int64_t ai = as.numel() == 1 ? 0 : i, yi = ys.numel() == 1 ? 0 : i;
      const int64_t zi = yzp.numel() == 1 ? 0 : i;
      for (int64_t j = 0; j < p.N; ++j) {
        const double m = scale_product(as.dtype(), asv[ai], bsv[bs.numel() == 1 ? 0 : j], ysv[yi]);
        yp[r * p.N + j] = nn::quantize_one<Q>(acc[r * p.N + j] * m, yzv[zi], true);
      }
    }
  });
  ctx.set_output(0, std::move(y));
}

// ---------------------------------------------------------------------------------------------
// Gemm.

void infer_gemm(InferContext& ctx) {
  const Node& n = ctx.node();
  const auto& as = ctx.input_shape(0);
  const auto& bs = ctx.input_shape(1);
  Shape out(2);
  const bool ta = attr_int(n, "transA") != 0, tb = attr_int(n, "transB") != 0;
  if (as) {
    if (as->size() != 2) ctx.fail_here(fmt::format("A has rank {}, expected 2", as->size()));
    out[0] = (*as)[ta ? 1 : 0];
  }
  if (bs) {
    if (bs->size() != 2) ctx.fail_here(fmt::format("B has rank {}, expected 2", bs->size()));
    out[1] = (*bs)[tb ? 0 : 1];
  }
  if (as && bs) {
    const Dim& ka = (*as)[ta ? 0 : 1];
    const Dim& kb = (*bs)[tb ? 1 : 0];
    if (ka.is_known() && kb.is_known() && ka.value() != kb.value())
      ctx.fail_here(fmt::format("inner dims differ: {} and {}", ka.value(), kb.value()));
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
}

template <typename T>
T saturating_from_double(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return nn::from_num<T>(v);
  }
}

void run_gemm(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() != 2 || b.rank() != 2)
    ctx.fail_here(fmt::format("A and B must be 2-D, got {} and {}", dims_to_string(a.dims()),
                              dims_to_string(b.dims())));
  const bool ta = attr_int(n, "transA") != 0, tb = attr_int(n, "transB") != 0;
  const double alpha = attr_float(n, "alpha"), beta = attr_float(n, "beta");
  const int64_t M = a.dim(ta ? 1 : 0), K = a.dim(ta ? 0 : 1), N = b.dim(tb ? 0 : 1);
  if (b.dim(tb ? 1 : 0) != K)
    ctx.fail_here(fmt::format("inner dims differ: {} and {}", K, b.dim(tb ? 1 : 0)));
  const bool has_c = ctx.has_input(2);
  std::vector<int64_t> cd;
  if (has_c) {
    cd = ctx.input(2).dims();
    if (broadcast_dims(n, {M, N}, cd) != std::vector<int64_t>{M, N})
      ctx.fail_here(fmt::format("C of shape {} does not broadcast to [{},{}]", dims_to_string(cd),
                                M, N));
  }
  visit<KILN_NN_MATMUL_TYPES>(n, a.dtype(), [&]<typename T>() {
    using A = acc_t<T>;
    nn::check_scratch(n, {M, N}, sizeof(A));
    // A' [M, K] and B' [K, N], row-major
    auto av = nn::view_as<A>(n, a);
    auto bv = nn::view_as<A>(n, b);
    std::vector<A> at, bt;
    const A* ap = av.p;
    const A* bp = bv.p;
    if (ta) {
      at.resize(static_cast<size_t>(M * K));
      for (int64_t k = 0; k < K; ++k)
        for (int64_t i = 0; i < M; ++i) at[i * K + k] = av[k * M + i];
      ap = at.data();
    }
    if (tb) {
      bt.resize(static_cast<size_t>(K * N));
      for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < K; ++k) bt[k * N + j] = bv[j * K + k];
      bp = bt.data();
    }
    MatMulPlan p;
    p.M = M;
    p.K = K;
    p.N = N;
    p.a_off = {0};
    p.b_off = {0};
    std::vector<A> acc(static_cast<size_t>(M * N));
    matmul_kernel<A>(p, ap, bp, acc.data());
    Tensor y(a.dtype(), {M, N});
    T* yp = y.data<T>();
    nn::View<A> cv;
    if (has_c) cv = nn::view_as<A>(n, ctx.input(2));
    const auto cst = broadcast_strides(cd, {M, N});
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const int64_t o = i * N + j;
        if constexpr (std::is_floating_point_v<A>) {
          A v = static_cast<A>(alpha) * acc[o];
          if (has_c) v += static_cast<A>(beta) * cv[i * cst[0] + j * cst[1]];
          yp[o] = nn::from_num<T>(v);
        } else {
          const auto c = has_c ? cv[i * cst[0] + j * cst[1]] : A(0);
          if (alpha == 1.0 && (beta == 1.0 || !has_c)) {
            yp[o] = static_cast<T>(acc[o] + c);
          } else {
            const double v = alpha * static_cast<double>(static_cast<int64_t>(acc[o])) +
                             (has_c ? beta * static_cast<double>(static_cast<int64_t>(c)) : 0.0);
            yp[o] = saturating_from_double<T>(v);
          }
        }
      }
    ctx.set_output(0, std::move(y));
  });
}

}  // namespace

void register_nn_matmul_ops(OpRegistry& r) {
  r.add("", "MatMul")
      .versions(1)
      .inputs(2, 2)
      .outputs(1, 1)
      .shape([](InferContext& ctx) { infer_matmul(ctx, 1, ctx.input_dtype(0)); })
      .run(run_matmul);
  r.add("", "MatMulInteger")
      .versions(10)
      .inputs(2, 4)
      .outputs(1, 1)
      .shape([](InferContext& ctx) { infer_matmul(ctx, 1, DataType::kInt32); })
      .run(run_matmul_integer);
  r.add("", "QLinearMatMul")
      .versions(10)
      .inputs(8, 8)
      .outputs(1, 1)
      .shape([](InferContext& ctx) { infer_matmul(ctx, 3, ctx.input_dtype(7)); })
      .run(run_qlinear_matmul);
  r.add("", "Gemm")
      .versions(1)
      .inputs(2, 3)
      .outputs(1, 1)
      .attr("alpha", AttrKind::kFloat, 1.0f)
      .attr("beta", AttrKind::kFloat, 1.0f)
      .attr("transA", AttrKind::kInt, 0)
      .attr("transB", AttrKind::kInt, 0)
      .attr("broadcast", AttrKind::kInt)
      .shape(infer_gemm)
      .run(run_gemm);
}

}  // namespace kiln
