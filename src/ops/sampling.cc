// Spatial sampling: GridSample, AffineGrid, RoiAlign (NonMaxSuppression: nms.cc).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/normalization_util.h"

namespace kiln::norm {

namespace {

// ---------------------------------------------------------------------------------------------
// GridSample: X (N, C, D1..Dr) sampled at grid (N, O1..Or, r) of normalized coordinates in [-1, 1]
// (the last grid axis lists them innermost axis first: x, y, z).

enum class Padding { kZeros, kBorder, kReflection };

// Reflects x into [lo, hi] (repeatedly, as a mirror).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t k = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(k) * range;
    return k % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t k = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(k) * range;
    return k % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void infer_grid_sample(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  const auto& xs = ctx.input_shape(0);
  const auto& gs = ctx.input_shape(1);
  if (!xs && !gs) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  int rank = xs ? static_cast<int>(xs->size()) : static_cast<int>(gs->size());
  if (xs && gs && xs->size() != gs->size())
    ctx.fail_here(fmt::format("X has rank {} but grid rank {}", xs->size(), gs->size()));
  if (rank < 3) ctx.fail_here("X must have rank 3 or more");
  Shape out(rank);
  out[0] = xs ? (*xs)[0] : (*gs)[0];
  out[1] = xs ? (*xs)[1] : Dim();
  for (int i = 2; i < rank; ++i) out[i] = gs ? (*gs)[i - 1] : Dim();
  ctx.set_output(0, dt, out);
}

void run_grid_sample(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  const int rank = x.rank();
  if (rank < 3 || grid.rank() != rank)
    ctx.fail_here(fmt::format("X {} and grid {} do not match", dims_to_string(x.dims()),
                              dims_to_string(grid.dims())));
  const int r = rank - 2;
  if (grid.dim(0) != x.dim(0) || grid.dim(rank - 1) != r)
    ctx.fail_here(fmt::format("grid {} does not fit X {}", dims_to_string(grid.dims()),
                              dims_to_string(x.dims())));
  std::string mode = attr_string(n, "mode", ctx.opset() < 20 ? "bilinear" : "linear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  if (mode != "linear" && mode != "nearest" && mode != "cubic")
    ctx.fail_here(fmt::format("unknown mode '{}'", mode));
  const std::string pm = attr_string(n, "padding_mode", "zeros");
  Padding pad;
  if (pm == "zeros")
    pad = Padding::kZeros;
  else if (pm == "border")
    pad = Padding::kBorder;
  else if (pm == "reflection")
    pad = Padding::kReflection;
  else
    ctx.fail_here(fmt::format("unknown padding_mode '{}'", pm));
  const bool align = attr_int(n, "align_corners", 0) != 0;
  // Coordinates are computed in the grid's precision (float unless double), as the reference does.
  const bool grid_double = grid.dtype() == DataType::kDouble;
  auto rnd = [&](double v) { return grid_double ? v : static_cast<double>(static_cast<float>(v)); };

  const int64_t N = x.dim(0), C = x.dim(1);
  std::vector<int64_t> sd(x.dims().begin() + 2, x.dims().end());
  std::vector<int64_t> od(grid.dims().begin() + 1, grid.dims().end() - 1);
  const int64_t in_plane = prod(sd), out_plane = prod(od);
  const std::vector<int64_t> sstride = strides_of(sd);
  std::vector<double> lo(r), hi(r);
  for (int i = 0; i < r; ++i) {
    lo[i] = align ? 0.0 : -0.5;
    hi[i] = align ? static_cast<double>(sd[i] - 1) : static_cast<double>(sd[i]) - 0.5;
  }
  const auto xv = to_doubles(n, x);
  const auto gv = to_doubles(n, grid);
  std::vector<int64_t> out_dims = {N, C};
  out_dims.insert(out_dims.end(), od.begin(), od.end());
  std::vector<double> y(static_cast<size_t>(prod(out_dims)), 0.0);

  // The index actually read for integer index i along axis a, or -1 for a zero (padding).
  auto fetch_index = [&](int64_t i, int a) -> int64_t {
    const int64_t d = sd[a];
    if (i >= 0 && i < d) return i;
    if (pad == Padding::kZeros) return -1;
    if (pad == Padding::kBorder) return std::clamp<int64_t>(i, 0, d - 1);
    const int64_t k = static_cast<int64_t>(reflect(static_cast<double>(i), lo[a], hi[a]));
    return std::clamp<int64_t>(k, 0, d - 1);
  };
  auto cubic = [](double t) {
    const double a = -0.75;
    t = std::fabs(t);
    if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0.0;
  };

  std::vector<std::vector<std::pair<int64_t, double>>> taps(r);  // per axis: (index or -1, weight)
  for (int64_t b = 0; b < N; ++b)
    for (int64_t p = 0; p < out_plane; ++p) {
      const double* g = gv.data() + (b * out_plane + p) * r;
      for (int a = 0; a < r; ++a) {
        const double nc = g[r - 1 - a];  // grid lists the innermost axis first
        const double len = static_cast<double>(sd[a]);
        double c = rnd(align ? (nc + 1) / 2.0 * (len - 1) : ((nc + 1) * len - 1) / 2.0);
        if (std::isnan(c)) c = lo[a] - 2;  // NaN samples nothing (outside the input)
        c = std::clamp(c, -1e9, 1e9);      // keeps index arithmetic defined
        if (mode == "nearest") c = std::nearbyint(c);
        if (c < lo[a] || c > hi[a]) {
          if (pad == Padding::kBorder)
            c = std::clamp(c, 0.0, len - 1);
          else if (pad == Padding::kReflection)
            c = rnd(reflect(c, lo[a], hi[a]));
        }
        auto& t = taps[a];
        t.clear();
        if (mode == "nearest") {
          t.push_back({fetch_index(static_cast<int64_t>(c), a), 1.0});
        } else {
          const double fl = std::floor(c);
          const int64_t i0 = static_cast<int64_t>(fl);
          const double f = c - fl;
          if (mode == "linear") {
            t.push_back({fetch_index(i0, a), 1 - f});
            t.push_back({fetch_index(i0 + 1, a), f});
          } else {
            for (int64_t k = -1; k <= 2; ++k) t.push_back({fetch_index(i0 + k, a), cubic(f - k)});
          }
        }
      }
      // Sum over every combination of taps, for each channel.
      std::vector<size_t> pick(r, 0);
      for (;;) {
        int64_t off = 0;
        double w = 1;
        bool zero = false;
        for (int a = 0; a < r; ++a) {
          const auto& [idx, wt] = taps[a][pick[a]];
          if (idx < 0)
            zero = true;
          else
            off += idx * sstride[a];
          w *= wt;
        }
        if (!zero && w != 0)
          for (int64_t c = 0; c < C; ++c)
            y[(b * C + c) * out_plane + p] += w * xv[(b * C + c) * in_plane + off];
        int a = r - 1;
        while (a >= 0 && ++pick[a] == taps[a].size()) pick[a--] = 0;
        if (a < 0) break;
      }
    }
  ctx.set_output(0, from_doubles(n, x.dtype(), out_dims, y));
}

// ---------------------------------------------------------------------------------------------
// AffineGrid: theta (N, 2, 3) or (N, 3, 4) applied to the normalized coordinates of an output of
// `size` (N, C, H, W) or (N, C, D, H, W); gives (N, H, W, 2) or (N, D, H, W, 3).

void infer_affine_grid(InferContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  if (auto size = ctx.input_dims_value(1)) {
    if (size->size() != 4 && size->size() != 5) ctx.fail_here("size must have 4 or 5 elements");
    Shape out = {(*size)[0]};
    for (size_t i = 2; i < size->size(); ++i) out.push_back((*size)[i]);
    out.push_back(Dim(static_cast<int64_t>(size->size() - 2)));
    ctx.set_output(0, dt, out);
    return;
  }
  const auto& ss = ctx.input_shape(1);
  if (ss && ss->size() == 1 && (*ss)[0].is_known()) {
    const int64_t k = (*ss)[0].value();
    if (k != 4 && k != 5) ctx.fail_here("size must have 4 or 5 elements");
    // size [N, C, spatial...] gives the grid [N, spatial..., k - 2]: rank k.
    Shape out(k, Dim());
    const auto& ts = ctx.input_shape(0);
    if (ts && !ts->empty()) out[0] = (*ts)[0];
    out.back() = Dim(k - 2);
    ctx.set_output(0, dt, out);
    return;
  }
  ctx.set_output(0, dt, std::nullopt);
}

void run_affine_grid(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& theta = ctx.input(0);
  const std::vector<int64_t> size = ctx.input(1).to_int64s();
  const bool align = attr_int(n, "align_corners", 0) != 0;
  if (size.size() != 4 && size.size() != 5) ctx.fail_here("size must have 4 or 5 elements");
  const int r = static_cast<int>(size.size()) - 2;
  const int64_t N = size[0];
  if (theta.rank() != 3 || theta.dim(0) != N || theta.dim(1) != r || theta.dim(2) != r + 1)
    ctx.fail_here(fmt::format("theta {} does not fit size {}", dims_to_string(theta.dims()),
                              dims_to_string(size)));
  for (int64_t s : size)
    if (s < 0) ctx.fail_here("size has a negative dim");
  std::vector<int64_t> sp(size.begin() + 2, size.end());  // (D,) H, W
  auto coord = [&](int64_t i, int64_t len) {
    if (align)
      return len == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(len - 1);
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(len);
  };
  std::vector<int64_t> out_dims = {N};
  out_dims.insert(out_dims.end(), sp.begin(), sp.end());
  out_dims.push_back(r);
  check_work(n, out_dims);
  const auto th = to_doubles(n, theta);
  const int64_t plane = prod(sp);
  const std::vector<int64_t> st = strides_of(sp);
  std::vector<double> y(static_cast<size_t>(N * plane * r));
  for (int64_t b = 0; b < N; ++b)
    for (int64_t p = 0; p < plane; ++p) {
      // Homogeneous point (x, y, [z,] 1): x along the last axis.
      std::vector<double> pt(r + 1, 1.0);
      for (int a = 0; a < r; ++a) pt[r - 1 - a] = coord((p / st[a]) % sp[a], sp[a]);
      for (int k = 0; k < r; ++k) {
        double s = 0;
        for (int j = 0; j <= r; ++j) s += th[(b * r + k) * (r + 1) + j] * pt[j];
        y[(b * plane + p) * r + k] = s;
      }
    }
  ctx.set_output(0, from_doubles(n, theta.dtype(), out_dims, y));
}

// ---------------------------------------------------------------------------------------------
// RoiAlign: X (N, C, H, W), rois (R, 4) as (x1, y1, x2, y2), batch_indices (R) -> (R, C, oh, ow).

void infer_roi_align(InferContext& ctx) {
  const Node& n = ctx.node();
  const auto& xs = ctx.input_shape(0);
  const auto& rs = ctx.input_shape(1);
  const auto& bs = ctx.input_shape(2);
  Dim rois = rs && !rs->empty() ? (*rs)[0] : (bs && !bs->empty() ? (*bs)[0] : Dim());
  if (xs && xs->size() != 4) ctx.fail_here("X must have rank 4");
  Shape out = {rois, xs ? (*xs)[1] : Dim(), Dim(attr_int(n, "output_height", 1)),
               Dim(attr_int(n, "output_width", 1))};
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void run_roi_align(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& bi = ctx.input(2);
  if (x.rank() != 4) ctx.fail_here("X must have rank 4");
  if (rois.rank() != 2 || rois.dim(1) != 4) ctx.fail_here("rois must have shape (num_rois, 4)");
  const int64_t R = rois.dim(0);
  if (bi.numel() != R) ctx.fail_here("batch_indices must have num_rois elements");
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t oh = attr_int(n, "output_height", 1), ow = attr_int(n, "output_width", 1);
  if (oh <= 0 || ow <= 0) ctx.fail_here("output_height and output_width must be positive");
  const int64_t sampling = attr_int(n, "sampling_ratio", 0);
  const double scale = attr_float(n, "spatial_scale", 1.0f);
  const std::string mode = attr_string(n, "mode", "avg");
  if (mode != "avg" && mode != "max") ctx.fail_here(fmt::format("unknown mode '{}'", mode));
  const std::string ctm = attr_string(n, "coordinate_transformation_mode",
                                      ctx.opset() < 16 ? "output_half_pixel" : "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    ctx.fail_here(fmt::format("unknown coordinate_transformation_mode '{}'", ctm));
  const bool half_pixel = ctm == "half_pixel";
  const auto xv = to_doubles(n, x);
  const auto rv = to_doubles(n, rois);
  check_work(n, {R, C, oh, ow});
  const std::vector<int64_t> batch = bi.to_int64s();
  std::vector<double> y(static_cast<size_t>(R * C * oh * ow), 0.0);

  struct Sample {
    int64_t p[4];
    double w[4];
  };
  for (int64_t k = 0; k < R; ++k) {
    const int64_t b = batch[k];
    if (b < 0 || b >= N) ctx.fail_here(fmt::format("batch index {} out of range [0, {})", b, N));
    const double off = half_pixel ? 0.5 : 0.0;
    const double x0 = rv[k * 4 + 0] * scale - off, y0 = rv[k * 4 + 1] * scale - off;
    const double x1 = rv[k * 4 + 2] * scale - off, y1 = rv[k * 4 + 3] * scale - off;
    double rw = x1 - x0, rh = y1 - y0;
    if (!half_pixel) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    // Samples per bin: sampling_ratio, or enough to cover the bin (bounded, for hostile rois).
    auto grid_of = [&](double len, int64_t bins) -> int64_t {
      if (sampling > 0) return sampling;
      const double g = std::ceil(len / static_cast<double>(bins));
      if (!(g >= 0)) return 0;
      if (g > 65536) ctx.fail_here(fmt::format("roi {} of {} pixels is too large", k, len));
      return static_cast<int64_t>(g);
    };
    const int64_t gh = grid_of(rh, oh), gw = grid_of(rw, ow);
    check_work(n, {gh, gw});
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw) {
        // Bilinear samples in this bin (shared by every channel).
        std::vector<Sample> samples;
        for (int64_t iy = 0; iy < gh; ++iy) {
          const double yy = y0 + static_cast<double>(ph) * bh +
                            (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
          for (int64_t ix = 0; ix < gw; ++ix) {
            const double xx = x0 + static_cast<double>(pw) * bw +
                              (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
            Sample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
            if (!(yy >= -1.0 && yy <= static_cast<double>(H) && xx >= -1.0 &&
                  xx <= static_cast<double>(W))) {
              samples.push_back(s);
              continue;
            }
            double sy = std::max(yy, 0.0), sx = std::max(xx, 0.0);
            int64_t ylo = static_cast<int64_t>(sy), xlo = static_cast<int64_t>(sx), yhi, xhi;
            if (ylo >= H - 1) {
              yhi = ylo = H - 1;
              sy = static_cast<double>(ylo);
            } else {
              yhi = ylo + 1;
            }
            if (xlo >= W - 1) {
              xhi = xlo = W - 1;
              sx = static_cast<double>(xlo);
            } else {
              xhi = xlo + 1;
            }
            const double ly = sy - static_cast<double>(ylo), lx = sx - static_cast<double>(xlo);
            const double hy = 1 - ly, hx = 1 - lx;
            s = {{ylo * W + xlo, ylo * W + xhi, yhi * W + xlo, yhi * W + xhi},
                 {hy * hx, hy * lx, ly * hx, ly * lx}};
            samples.push_back(s);
          }
        }
        for (int64_t c = 0; c < C; ++c) {
          const double* plane = xv.data() + (b * C + c) * H * W;
          double out = 0;
          bool first = true;
          for (const Sample& s : samples) {
            if (mode == "avg") {
              for (int q = 0; q < 4; ++q) out += s.w[q] * plane[s.p[q]];
            } else {
              double v = s.w[0] * plane[s.p[0]];
              for (int q = 1; q < 4; ++q) v = std::max(v, s.w[q] * plane[s.p[q]]);
              out = first ? v : std::max(out, v);
              first = false;
            }
          }
          if (mode == "avg") out /= count;
          y[((k * C + c) * oh + ph) * ow + pw] = out;
        }
      }
  }
  ctx.set_output(0, from_doubles(n, x.dtype(), {R, C, oh, ow}, y));
}

}  // namespace

void register_sampling(OpRegistry& r) {
  r.add("", "GridSample")
      .versions(16)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("align_corners", AttrKind::kInt)
      .attr("mode", AttrKind::kString)
      .attr("padding_mode", AttrKind::kString)
      .shape(infer_grid_sample)
      .run(run_grid_sample);

  r.add("", "AffineGrid")
      .versions(20)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("align_corners", AttrKind::kInt)
      .shape(infer_affine_grid)
      .run(run_affine_grid);

  r.add("", "RoiAlign")
      .versions(10)
      .inputs(3, 3)
      .outputs(1, 1)
      .attr("coordinate_transformation_mode", AttrKind::kString)
      .attr("mode", AttrKind::kString)
      .attr("output_height", AttrKind::kInt)
      .attr("output_width", AttrKind::kInt)
      .attr("sampling_ratio", AttrKind::kInt)
      .attr("spatial_scale", AttrKind::kFloat)
      .shape(infer_roi_align)
      .run(run_roi_align);
}

}  // namespace kiln::norm
