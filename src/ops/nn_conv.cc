// nn family: convolutions. Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv.
// Reference kernels: direct loops over (batch, output channel) in parallel, the spatial dims lifted
// to three (nn::Geom3), innermost loop along the last spatial dim.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/nn_common.h"

namespace kiln {
namespace {

using nn::Geom3;
using nn::Window;

// ---------------------------------------------------------------------------------------------
// Kernels.

// y[N, M, out] = conv(x[N, C, in], w[M, C/G, k]) (+ bias[M]); A is the accumulation type.
template <typename A>
void conv_forward(const A* x, const A* w, const A* bias, A* y, int64_t N, int64_t C, int64_t M,
                  int64_t G, const Geom3& g) {
  const int64_t Cg = C / G, Mg = M / G;
  const int64_t insz = g.in_size(), outsz = g.out_size(), ksz = g.k_size();
  // ranges of valid outputs along the last dim, per kernel position
  std::vector<int64_t> lo2(g.k[2]), hi2(g.k[2]), off2(g.k[2]);
  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
    off2[k2] = k2 * g.d[2] - g.pb[2];
    nn::valid_range(off2[k2], g.s[2], g.in[2], g.out[2], lo2[k2], hi2[k2]);
  }
#pragma omp parallel for schedule(dynamic)
  for (int64_t nm = 0; nm < N * M; ++nm) {
    const int64_t n = nm / M, m = nm % M, grp = m / Mg;
    A* yp = y + nm * outsz;
    const A b = bias ? bias[m] : A(0);
    for (int64_t i = 0; i < outsz; ++i) yp[i] = b;
    for (int64_t c = 0; c < Cg; ++c) {
      const A* xp = x + (n * C + grp * Cg + c) * insz;
      const A* wp = w + (m * Cg + c) * ksz;
      for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
        for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
          for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
            const A wv = wp[(k0 * g.k[1] + k1) * g.k[2] + k2];
            const int64_t lo = lo2[k2], hi = hi2[k2], off = off2[k2], s2 = g.s[2];
            for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
              const int64_t i0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
              if (i0 < 0 || i0 >= g.in[0]) continue;
              for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
                const int64_t i1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
                if (i1 < 0 || i1 >= g.in[1]) continue;
                const A* xr = xp + (i0 * g.in[1] + i1) * g.in[2];
                A* yr = yp + (o0 * g.out[1] + o1) * g.out[2];
                if (s2 == 1) {
                  for (int64_t o2 = lo; o2 < hi; ++o2) yr[o2] += wv * xr[o2 + off];
                } else {
                  for (int64_t o2 = lo; o2 < hi; ++o2) yr[o2] += wv * xr[o2 * s2 + off];
                }
              }
            }
          }
    }
  }
}

// y[N, M, out] = conv_transpose(x[N, C, in], w[C, M/G, k]) (+ bias[M]); g.pb are the start pads.
template <typename A>
void conv_transpose_forward(const A* x, const A* w, const A* bias, A* y, int64_t N, int64_t C,
                            int64_t M, int64_t G, const Geom3& g) {
  const int64_t Cg = C / G, Mg = M / G;
  const int64_t insz = g.in_size(), outsz = g.out_size(), ksz = g.k_size();
  // for kernel position k2: input positions i with 0 <= i*s + off < out
  std::vector<int64_t> lo2(g.k[2]), hi2(g.k[2]), off2(g.k[2]);
  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
    off2[k2] = k2 * g.d[2] - g.pb[2];
    nn::valid_range(off2[k2], g.s[2], g.out[2], g.in[2], lo2[k2], hi2[k2]);
  }
#pragma omp parallel for schedule(dynamic)
  for (int64_t nm = 0; nm < N * M; ++nm) {
    const int64_t n = nm / M, m = nm % M, grp = m / Mg, mm = m % Mg;
    A* yp = y + nm * outsz;
    const A b = bias ? bias[m] : A(0);
    for (int64_t i = 0; i < outsz; ++i) yp[i] = b;
    for (int64_t c = 0; c < Cg; ++c) {
      const int64_t ic = grp * Cg + c;
      const A* xp = x + (n * C + ic) * insz;
      const A* wp = w + (ic * Mg + mm) * ksz;
      for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
        for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
          for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
            const A wv = wp[(k0 * g.k[1] + k1) * g.k[2] + k2];
            const int64_t lo = lo2[k2], hi = hi2[k2], off = off2[k2], s2 = g.s[2];
            for (int64_t i0 = 0; i0 < g.in[0]; ++i0) {
              const int64_t o0 = i0 * g.s[0] - g.pb[0] + k0 * g.d[0];
              if (o0 < 0 || o0 >= g.out[0]) continue;
              for (int64_t i1 = 0; i1 < g.in[1]; ++i1) {
                const int64_t o1 = i1 * g.s[1] - g.pb[1] + k1 * g.d[1];
                if (o1 < 0 || o1 >= g.out[1]) continue;
                const A* xr = xp + (i0 * g.in[1] + i1) * g.in[2];
                A* yr = yp + (o0 * g.out[1] + o1) * g.out[2];
                for (int64_t i2 = lo; i2 < hi; ++i2) yr[i2 * s2 + off] += wv * xr[i2];
              }
            }
          }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Shared checks and geometry.

[[noreturn]] void rt_fail(const Node& n, const std::string& msg) {
  fail(ErrorKind::kRuntime, "{}{}", n.where(), msg);
}

struct ConvSetup {
  int64_t N, C, M, G;
  Geom3 g;
  std::vector<int64_t> out_dims;
};

// Checks x [N, C, in...] and w [M, C/G, k...] and resolves the output geometry.
ConvSetup conv_setup(const Node& n, const Tensor& x, const Tensor& w) {
  if (x.rank() < 3) rt_fail(n, fmt::format("input has rank {}, expected at least 3", x.rank()));
  if (w.rank() != x.rank())
    rt_fail(n, fmt::format("weight rank {} differs from input rank {}", w.rank(), x.rank()));
  ConvSetup s;
  s.N = x.dim(0);
  s.C = x.dim(1);
  s.M = w.dim(0);
  s.G = attr_int(n, "group");
  if (s.G < 1) fail(ErrorKind::kBadModel, "{}group must be positive", n.where());
  if (s.C % s.G != 0 || s.C / s.G != w.dim(1))
    rt_fail(n, fmt::format("input has {} channels, the weight {} x group {}", s.C, w.dim(1), s.G));
  if (s.M % s.G != 0)
    rt_fail(n, fmt::format("{} output channels are not divisible by group {}", s.M, s.G));
  const int nsp = x.rank() - 2;
  std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  Window win = *nn::read_window(n, nsp, kernel);
  std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end()), out(nsp);
  for (int i = 0; i < nsp; ++i) out[i] = nn::window_out(n, win, i, in[i], ErrorKind::kRuntime);
  s.g = nn::lift3(n, win, in, out);
  s.out_dims = {s.N, s.M};
  s.out_dims.insert(s.out_dims.end(), out.begin(), out.end());
  return s;
}

void check_bias(const Node& n, const Tensor& b, int64_t M) {
  if (b.numel() != M)
    rt_fail(n, fmt::format("bias has {} elements for {} output channels", b.numel(), M));
}

// Shape inference of Conv-like ops: x at xi, w at wi.
void infer_conv(InferContext& ctx, int xi, int wi, DataType dtype) {
  const Node& n = ctx.node();
  const auto& xs = ctx.input_shape(xi);
  const auto& ws = ctx.input_shape(wi);
  int rank = xs ? static_cast<int>(xs->size()) : ws ? static_cast<int>(ws->size()) : -1;
  if (rank < 0) {
    ctx.set_output(0, dtype, std::nullopt);
    return;
  }
  if (rank < 3) ctx.fail_here(fmt::format("input has rank {}, expected at least 3", rank));
  if (xs && ws && xs->size() != ws->size())
    ctx.fail_here(fmt::format("weight rank {} differs from input rank {}", ws->size(), xs->size()));
  const int nsp = rank - 2;
  const int64_t G = attr_int(n, "group");
  if (G < 1) ctx.fail_here("group must be positive");
  if (xs && ws && (*xs)[1].is_known() && (*ws)[1].is_known() &&
      ((*xs)[1].value() % G != 0 || (*xs)[1].value() / G != (*ws)[1].value()))
    ctx.fail_here(fmt::format("input has {} channels, the weight {} x group {}", (*xs)[1].value(),
                              (*ws)[1].value(), G));
  auto win = nn::read_window(n, nsp, nn::spatial_dims(ws));
  Shape out(rank);
  if (xs) out[0] = (*xs)[0];
  if (ws) out[1] = (*ws)[0];
  for (int i = 0; i < nsp; ++i)
    if (xs && win) out[2 + i] = nn::window_out_dim(n, *win, i, (*xs)[2 + i]);
  ctx.set_output(0, dtype, out);
}

// ---------------------------------------------------------------------------------------------
// ConvTranspose geometry.

struct ConvTSetup {
  int64_t N, C, M, G;
  Geom3 g;
  std::vector<int64_t> out_dims;
};

// Resolves pads and output sizes of ConvTranspose. in: spatial input dims (a value < 0 = unknown,
// giving an unknown output). Returns the output sizes (-1 = unknown) and fills w.pb / w.pe.
std::vector<int64_t> conv_transpose_geom(const Node& n, Window& w, const std::vector<int64_t>& in,
                                         ErrorKind kind) {
  const int nsp = w.nsp;
  auto op = attr_ints(n, "output_padding");
  if (op.empty()) op.assign(nsp, 0);
  if (static_cast<int>(op.size()) != nsp)
    fail(ErrorKind::kBadModel, "{}output_padding has {} values for {} spatial dims", n.where(),
         op.size(), nsp);
  auto os = attr_ints(n, "output_shape");
  if (static_cast<int>(os.size()) == nsp + 2) os.erase(os.begin(), os.begin() + 2);
  if (!os.empty() && static_cast<int>(os.size()) != nsp)
    fail(ErrorKind::kBadModel, "{}output_shape has {} values for {} spatial dims", n.where(),
         os.size(), nsp);
  for (int64_t v : op)
    if (v < 0 || v > (int64_t{1} << 31))
      fail(ErrorKind::kBadModel, "{}output_padding must be in [0, 2^31]", n.where());
  const bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  std::vector<int64_t> out(nsp, -1);
  for (int i = 0; i < nsp; ++i) {
    // before pads: s * (in - 1) + output_padding + eff_k
    const int64_t natural_no_pad =
        in[i] < 0 ? -1
                  : nn::ck_add(n, nn::ck_mul(n, w.s[i], std::max<int64_t>(in[i] - 1, -1), kind),
                               op[i] + w.eff_k(i), kind);
    if (w.auto_pad == "VALID") w.pb[i] = w.pe[i] = 0;
    if (!os.empty() || same) {
      int64_t target = !os.empty() ? os[i] : (in[i] < 0 ? -1 : nn::ck_mul(n, in[i], w.s[i], kind));
      out[i] = target;
      if (target < 0 || natural_no_pad < 0) continue;
      const int64_t total = natural_no_pad - target;
      // floor division: a negative total pads the output at the end
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (w.auto_pad == "SAME_UPPER") {
        w.pb[i] = half;
        w.pe[i] = total - half;
      } else {
        w.pb[i] = total - half;
        w.pe[i] = half;
      }
    } else if (natural_no_pad >= 0) {
      out[i] = natural_no_pad - w.pb[i] - w.pe[i];
    }
    if (out[i] != -1 && out[i] < 0)
      fail(kind, "{}output size {} in spatial dim {} is negative", n.where(), out[i], i);
  }
  return out;
}

ConvTSetup conv_transpose_setup(const Node& n, const Tensor& x, const Tensor& w) {
  if (x.rank() < 3) rt_fail(n, fmt::format("input has rank {}, expected at least 3", x.rank()));
  if (w.rank() != x.rank())
    rt_fail(n, fmt::format("weight rank {} differs from input rank {}", w.rank(), x.rank()));
  ConvTSetup s;
  s.N = x.dim(0);
  s.C = x.dim(1);
  s.G = attr_int(n, "group");
  if (s.G < 1) fail(ErrorKind::kBadModel, "{}group must be positive", n.where());
  if (w.dim(0) != s.C)
    rt_fail(n, fmt::format("input has {} channels, the weight {}", s.C, w.dim(0)));
  if (s.C % s.G != 0 || (s.C == 0 && s.G != 1))
    rt_fail(n, fmt::format("{} input channels are not divisible by group {}", s.C, s.G));
  s.M = w.dim(1) * s.G;  // G <= C here: no overflow
  const int nsp = x.rank() - 2;
  std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  Window win = *nn::read_window(n, nsp, kernel);
  std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
  auto out = conv_transpose_geom(n, win, in, ErrorKind::kRuntime);
  s.g = nn::lift3(n, win, in, out);
  s.out_dims = {s.N, s.M};
  s.out_dims.insert(s.out_dims.end(), out.begin(), out.end());
  return s;
}

void infer_conv_transpose(InferContext& ctx) {
  const Node& n = ctx.node();
  const auto& xs = ctx.input_shape(0);
  const auto& ws = ctx.input_shape(1);
  const DataType dt = ctx.input_dtype(0);
  int rank = xs ? static_cast<int>(xs->size()) : ws ? static_cast<int>(ws->size()) : -1;
  if (rank < 0) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  if (rank < 3) ctx.fail_here(fmt::format("input has rank {}, expected at least 3", rank));
  if (xs && ws && xs->size() != ws->size())
    ctx.fail_here(fmt::format("weight rank {} differs from input rank {}", ws->size(), xs->size()));
  const int nsp = rank - 2;
  const int64_t G = attr_int(n, "group");
  if (G < 1) ctx.fail_here("group must be positive");
  Shape out(rank);
  if (xs) out[0] = (*xs)[0];
  if (ws) out[1] = nn::dim_mul((*ws)[1], Dim(G));
  auto win = nn::read_window(n, nsp, nn::spatial_dims(ws));
  if (win && xs) {
    std::vector<int64_t> in(nsp);
    for (int i = 0; i < nsp; ++i) {
      const Dim& d = (*xs)[2 + i];
      in[i] = d.is_known() ? d.value() : -1;
    }
    Window w = *win;
    auto o = conv_transpose_geom(n, w, in, ErrorKind::kBadModel);
    const bool fixed = !attr_ints(n, "output_shape").empty();
    for (int i = 0; i < nsp; ++i) {
      const Dim& d = (*xs)[2 + i];
      if (o[i] >= 0) {
        out[2 + i] = o[i];
      } else if (d.is_symbolic() && !fixed) {
        if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
          out[2 + i] = nn::dim_mul(d, Dim(w.s[i]));
        } else {
          auto op = attr_ints(n, "output_padding");
          const int64_t opi = op.empty() ? 0 : op[i];
          out[2 + i] = nn::add_const(nn::dim_mul(d, Dim(w.s[i])),
                                     opi + w.eff_k(i) - w.pb[i] - w.pe[i] - w.s[i]);
        }
      }
    }
  }
  ctx.set_output(0, dt, out);
}

// ---------------------------------------------------------------------------------------------
// Quantized convolution helpers.

// x - zero point as int64, the zero point a scalar (or one value).
std::vector<int64_t> centered(const Node& n, const Tensor& t, const Tensor* zp) {
  std::vector<int64_t> v = nn::load_as<int64_t>(n, t);
  if (zp) {
    if (zp->numel() != 1) rt_fail(n, "the input zero point must be a scalar");
    const int64_t z = zp->get_i64(0);
    for (auto& e : v) e -= z;
  }
  return v;
}

// w - zero point per output channel (M channels of ksz elements each).
std::vector<int64_t> centered_per_channel(const Node& n, const Tensor& w, const Tensor* zp,
                                          int64_t M) {
  std::vector<int64_t> v = nn::load_as<int64_t>(n, w);
  if (zp) {
    if (zp->numel() != 1 && zp->numel() != M)
      rt_fail(n, fmt::format("the weight zero point has {} elements for {} output channels",
                             zp->numel(), M));
    const int64_t per = M ? w.numel() / M : 0;
    for (int64_t m = 0; m < M; ++m) {
      const int64_t z = zp->get_i64(zp->numel() == 1 ? 0 : m);
      for (int64_t i = 0; i < per; ++i) v[m * per + i] -= z;
    }
  }
  return v;
}

void check_int8(const KernelContext& ctx, int i) {
  const DataType t = ctx.input(i).dtype();
  if (t != DataType::kUInt8 && t != DataType::kInt8)
    ctx.fail_here(fmt::format("input {} is {}, expected uint8 or int8", i, dtype_name(t)));
}

// ---------------------------------------------------------------------------------------------
// DeformConv (2-D).

template <typename A>
A bilinear(const A* plane, int64_t H, int64_t W, A h, A w) {
  if (!(h > A(-1) && h < A(H) && w > A(-1) && w < A(W))) return A(0);
  const int64_t h0 = static_cast<int64_t>(std::floor(h)), w0 = static_cast<int64_t>(std::floor(w));
  const int64_t h1 = h0 + 1, w1 = w0 + 1;
  const A lh = h - A(h0), lw = w - A(w0), hh = A(1) - lh, hw = A(1) - lw;
  auto at = [&](int64_t y, int64_t x) {
    return (y >= 0 && y < H && x >= 0 && x < W) ? plane[y * W + x] : A(0);
  };
  return hh * hw * at(h0, w0) + hh * lw * at(h0, w1) + lh * hw * at(h1, w0) + lh * lw * at(h1, w1);
}

void run_deform_conv(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& off = ctx.input(2);
  if (x.rank() != 4)
    ctx.fail_here(fmt::format("input has rank {}; kiln handles 2-D DeformConv (rank 4)", x.rank()));
  ConvSetup s = conv_setup(n, x, w);
  const int64_t OG = attr_int(n, "offset_group", 1);
  if (OG < 1 || s.C % OG != 0)
    ctx.fail_here(fmt::format("offset_group {} does not divide {} channels", OG, s.C));
  const int64_t H = x.dim(2), W = x.dim(3), kH = s.g.k[1], kW = s.g.k[2];
  const int64_t oH = s.g.out[1], oW = s.g.out[2], K = kH * kW, P = oH * oW;
  const std::vector<int64_t> off_dims{s.N, OG * K * 2, oH, oW};
  if (off.dims() != off_dims)
    ctx.fail_here(fmt::format("offset has shape {}, expected {}", dims_to_string(off.dims()),
                              dims_to_string(off_dims)));
  const bool has_mask = ctx.has_input(4);
  if (has_mask) {
    const std::vector<int64_t> mdims{s.N, OG * K, oH, oW};
    if (ctx.input(4).dims() != mdims)
      ctx.fail_here(fmt::format("mask has shape {}, expected {}",
                                dims_to_string(ctx.input(4).dims()), dims_to_string(mdims)));
  }
  if (ctx.has_input(3)) check_bias(n, ctx.input(3), s.M);
  visit<KILN_FLOAT_TYPES>(n, x.dtype(), [&]<typename T>() {
    using A = compute_t<T>;
    auto X = nn::view_as<A>(n, x);
    auto Wt = nn::view_as<A>(n, w);
    auto O = nn::view_as<A>(n, off);
    nn::View<A> Mk, B;
    if (has_mask) Mk = nn::view_as<A>(n, ctx.input(4));
    if (ctx.has_input(3)) B = nn::view_as<A>(n, ctx.input(3));
    Tensor y(dtype_of<A>, s.out_dims);
    A* yp = y.data<A>();
    const int64_t Cg = s.C / s.G, Mg = s.M / s.G, Cog = s.C / OG;
    Tensor cols_t(dtype_of<A>, {s.C * K, P});  // through the allocation cap
    A* cols = cols_t.data<A>();
    for (int64_t b = 0; b < s.N; ++b) {
      // sampled columns [C, K, P]
#pragma omp parallel for
      for (int64_t c = 0; c < s.C; ++c) {
        const int64_t og = c / Cog;
        const A* plane = X.p + (b * s.C + c) * H * W;
        for (int64_t kh = 0; kh < kH; ++kh)
          for (int64_t kw = 0; kw < kW; ++kw) {
            const int64_t k = kh * kW + kw;
            const A* oh_p = O.p + ((b * OG + og) * K * 2 + 2 * k) * P;
            const A* ow_p = oh_p + P;
            const A* m_p = has_mask ? Mk.p + ((b * OG + og) * K + k) * P : nullptr;
            A* col = cols + (c * K + k) * P;
            for (int64_t oh = 0; oh < oH; ++oh)
              for (int64_t ow = 0; ow < oW; ++ow) {
                const int64_t p = oh * oW + ow;
                const A ph = A(oh * s.g.s[1] - s.g.pb[1] + kh * s.g.d[1]) + oh_p[p];
                const A pw = A(ow * s.g.s[2] - s.g.pb[2] + kw * s.g.d[2]) + ow_p[p];
                A v = bilinear(plane, H, W, ph, pw);
                if (m_p) v *= m_p[p];
                col[p] = v;
              }
          }
      }
#pragma omp parallel for
      for (int64_t m = 0; m < s.M; ++m) {
        const int64_t grp = m / Mg;
        A* yr = yp + (b * s.M + m) * P;
        const A bias = B.p ? B[m] : A(0);
        for (int64_t p = 0; p < P; ++p) yr[p] = bias;
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t k = 0; k < K; ++k) {
            const A wv = Wt[(m * Cg + c) * K + k];
            const A* col = cols + ((grp * Cg + c) * K + k) * P;
            for (int64_t p = 0; p < P; ++p) yr[p] += wv * col[p];
          }
      }
    }
    ctx.set_output(0, nn::convert_float(n, std::move(y), x.dtype()));
  });
}

}  // namespace

void register_nn_conv_ops(OpRegistry& r) {
  auto window_attrs = [](OpSchema& s) -> OpSchema& {
    return s.attr("auto_pad", AttrKind::kString)
        .attr("dilations", AttrKind::kInts)
        .attr("group", AttrKind::kInt, 1)
        .attr("kernel_shape", AttrKind::kInts)
        .attr("pads", AttrKind::kInts)
        .attr("strides", AttrKind::kInts);
  };

  window_attrs(r.add("", "Conv").versions(1).inputs(2, 3).outputs(1, 1))
      .shape([](InferContext& ctx) { infer_conv(ctx, 0, 1, ctx.input_dtype(0)); })
      .run([](KernelContext& ctx) {
        const Node& n = ctx.node();
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(1);
        ConvSetup s = conv_setup(n, x, w);
        if (ctx.has_input(2)) check_bias(n, ctx.input(2), s.M);
        visit<KILN_FLOAT_TYPES>(n, x.dtype(), [&]<typename T>() {
          using A = compute_t<T>;
          auto X = nn::view_as<A>(n, x);
          auto W = nn::view_as<A>(n, w);
          nn::View<A> B;
          if (ctx.has_input(2)) B = nn::view_as<A>(n, ctx.input(2));
          Tensor y(dtype_of<A>, s.out_dims);
          conv_forward<A>(X.p, W.p, B.p, y.data<A>(), s.N, s.C, s.M, s.G, s.g);
          ctx.set_output(0, nn::convert_float(n, std::move(y), x.dtype()));
        });
      });

  window_attrs(r.add("", "ConvTranspose").versions(1).inputs(2, 3).outputs(1, 1))
      .attr("output_padding", AttrKind::kInts)
      .attr("output_shape", AttrKind::kInts)
      .shape(infer_conv_transpose)
      .run([](KernelContext& ctx) {
        const Node& n = ctx.node();
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(1);
        ConvTSetup s = conv_transpose_setup(n, x, w);
        if (ctx.has_input(2)) check_bias(n, ctx.input(2), s.M);
        visit<KILN_FLOAT_TYPES>(n, x.dtype(), [&]<typename T>() {
          using A = compute_t<T>;
          auto X = nn::view_as<A>(n, x);
          auto W = nn::view_as<A>(n, w);
          nn::View<A> B;
          if (ctx.has_input(2)) B = nn::view_as<A>(n, ctx.input(2));
          Tensor y(dtype_of<A>, s.out_dims);
          conv_transpose_forward<A>(X.p, W.p, B.p, y.data<A>(), s.N, s.C, s.M, s.G, s.g);
          ctx.set_output(0, nn::convert_float(n, std::move(y), x.dtype()));
        });
      });

  window_attrs(r.add("", "ConvInteger").versions(10).inputs(2, 4).outputs(1, 1))
      .shape([](InferContext& ctx) { infer_conv(ctx, 0, 1, DataType::kInt32); })
      .run([](KernelContext& ctx) {
        const Node& n = ctx.node();
        check_int8(ctx, 0);
        check_int8(ctx, 1);
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(1);
        ConvSetup s = conv_setup(n, x, w);
        auto X = centered(n, x, ctx.has_input(2) ? &ctx.input(2) : nullptr);
        auto W = centered_per_channel(n, w, ctx.has_input(3) ? &ctx.input(3) : nullptr, s.M);
        Tensor y(DataType::kInt32, s.out_dims);
        std::vector<int64_t> acc(static_cast<size_t>(y.numel()));
        conv_forward<int64_t>(X.data(), W.data(), nullptr, acc.data(), s.N, s.C, s.M, s.G, s.g);
        int32_t* yp = y.data<int32_t>();
        for (size_t i = 0; i < acc.size(); ++i) yp[i] = static_cast<int32_t>(acc[i]);
        ctx.set_output(0, std::move(y));
      });

  window_attrs(r.add("", "QLinearConv").versions(10).inputs(8, 9).outputs(1, 1))
      .shape([](InferContext& ctx) { infer_conv(ctx, 0, 3, ctx.input_dtype(7)); })
      .run([](KernelContext& ctx) {
        const Node& n = ctx.node();
        check_int8(ctx, 0);
        check_int8(ctx, 3);
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(3);
        ConvSetup s = conv_setup(n, x, w);
        const Tensor& xs = ctx.input(1);
        const Tensor& ws = ctx.input(4);
        const Tensor& ys = ctx.input(6);
        const Tensor& yzp = ctx.input(7);
        if (xs.numel() != 1 || ys.numel() != 1 || yzp.numel() != 1)
          ctx.fail_here("x_scale, y_scale and y_zero_point must be scalars");
        if (ws.numel() != 1 && ws.numel() != s.M)
          ctx.fail_here(fmt::format("w_scale has {} elements for {} output channels", ws.numel(),
                                    s.M));
        auto X = centered(n, x, &ctx.input(2));
        auto W = centered_per_channel(n, w, &ctx.input(5), s.M);
        std::vector<int64_t> bias;
        if (ctx.has_input(8)) {
          check_bias(n, ctx.input(8), s.M);
          bias = nn::load_as<int64_t>(n, ctx.input(8));
        }
        Tensor y(yzp.dtype(), s.out_dims);
        std::vector<int64_t> acc(static_cast<size_t>(y.numel()));
        conv_forward<int64_t>(X.data(), W.data(), bias.empty() ? nullptr : bias.data(),
                              acc.data(), s.N, s.C, s.M, s.G, s.g);
        const float xsv = static_cast<float>(xs.get_f64(0)), ysv = static_cast<float>(ys.get_f64(0));
        const double zp = static_cast<double>(yzp.get_i64(0));
        const int64_t outsz = s.g.out_size();
        visit<uint8_t, int8_t>(n, yzp.dtype(), [&]<typename Q>() {
          Q* yp = y.data<Q>();
          for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i) {
            const int64_t m = outsz ? (i / outsz) % s.M : 0;
            const float wsv = static_cast<float>(ws.get_f64(ws.numel() == 1 ? 0 : m));
            const double scale = static_cast<double>(xsv * wsv / ysv);
            yp[i] = nn::quantize_one<Q>(static_cast<double>(acc[i]) * scale, zp, true);
          }
        });
        ctx.set_output(0, std::move(y));
      });

  r.add("", "DeformConv")
      .versions(19)
      .inputs(3, 5)
      .outputs(1, 1)
      .attr("dilations", AttrKind::kInts)
      .attr("group", AttrKind::kInt, 1)
      .attr("kernel_shape", AttrKind::kInts)
      .attr("offset_group", AttrKind::kInt)
      .attr("pads", AttrKind::kInts)
      .attr("strides", AttrKind::kInts)
      .shape([](InferContext& ctx) { infer_conv(ctx, 0, 1, ctx.input_dtype(0)); })
      .run(run_deform_conv);
}

}  // namespace kiln
