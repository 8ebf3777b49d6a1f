// Resize (all modes: nearest, linear, cubic; every coordinate_transformation_mode, antialias, axes,
// keep_aspect_ratio_policy, exclude_outside, extrapolation_value) and Upsample (before opset 10).
//
// Resize is separable: each resized axis is interpolated in turn, in double precision. Along one
// axis every output position reads a few input positions ("taps") with weights; positions outside
// the input read the nearest edge element (or get zero weight with exclude_outside).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/normalization_util.h"

namespace kiln::norm {

namespace {

struct ResizeConfig {
  std::string mode = "nearest";                     // nearest, linear, cubic
  std::string ctm = "half_pixel";                   // coordinate_transformation_mode
  std::string nearest_mode = "round_prefer_floor";  // or "simple": opset < 11 (floor up, ceil down)
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
  bool antialias = false;
};

ResizeConfig resize_config(const Node& n, int opset) {
  ResizeConfig c;
  c.mode = attr_string(n, "mode", "nearest");
  if (c.mode == "bilinear" || c.mode == "trilinear") c.mode = "linear";
  if (c.mode == "bicubic") c.mode = "cubic";
  if (c.mode != "nearest" && c.mode != "linear" && c.mode != "cubic")
    fail(ErrorKind::kBadModel, "{}unknown mode '{}'", n.where(), c.mode);
  // Resize-10 (and Upsample) map coordinates asymmetrically and round nearest down when upsampling.
  const bool legacy = opset < 11 || n.op_type == "Upsample";
  c.ctm = attr_string(n, "coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel");
  c.nearest_mode = attr_string(n, "nearest_mode", legacy ? "simple" : "round_prefer_floor");
  c.cubic_a = attr_float(n, "cubic_coeff_a", -0.75f);
  c.exclude_outside = attr_int(n, "exclude_outside", 0) != 0;
  c.extrapolation = attr_float(n, "extrapolation_value", 0.0f);
  c.antialias = attr_int(n, "antialias", 0) != 0;
  static const char* const kModes[] = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",  "align_corners",
      "asymmetric", "tf_crop_and_resize",   "tf_half_pixel_for_nn"};
  if (std::find_if(std::begin(kModes), std::end(kModes),
                   [&](const char* m) { return c.ctm == m; }) == std::end(kModes))
    fail(ErrorKind::kBadModel, "{}unknown coordinate_transformation_mode '{}'", n.where(), c.ctm);
  static const char* const kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                                         "simple"};
  if (std::find_if(std::begin(kNearest), std::end(kNearest),
                   [&](const char* m) { return c.nearest_mode == m; }) == std::end(kNearest))
    fail(ErrorKind::kBadModel, "{}unknown nearest_mode '{}'", n.where(), c.nearest_mode);
  return c;
}

struct Tap {
  int64_t idx;
  double w;
};

double cubic_kernel(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

// The input coordinate of output position o along one axis; sets *outside for tf_crop_and_resize
// positions that fall outside the input.
double source_coord(const ResizeConfig& c, int64_t o, int64_t in, int64_t out, double scale,
                    double roi0, double roi1, bool* outside) {
  const double x = static_cast<double>(o);
  const double len = scale * static_cast<double>(in);  // the resized length before rounding
  *outside = false;
  if (c.ctm == "align_corners") return len == 1 ? 0.0 : x * (in - 1) / (len - 1);
  if (c.ctm == "asymmetric") return x / scale;
  if (c.ctm == "pytorch_half_pixel") return len == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (c.ctm == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (c.ctm == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / len;
    const double offset = static_cast<double>(in) / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (c.ctm == "tf_crop_and_resize") {
    double r = len == 1 ? (roi1 - roi0) * (in - 1) / 2 : x * (roi1 - roi0) * (in - 1) / (len - 1);
    r += roi0 * (in - 1);
    *outside = r < 0 || r > static_cast<double>(in - 1);
    return r;
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

// The taps of every output position along one axis; `extrap` marks positions that take the
// extrapolation value.
void map_axis(const ResizeConfig& c, int64_t in, int64_t out, double scale, double roi0,
              double roi1, std::vector<std::vector<Tap>>& taps, std::vector<bool>& extrap) {
  taps.assign(out, {});
  extrap.assign(out, false);
  for (int64_t o = 0; o < out; ++o) {
    bool outside = false;
    double x = source_coord(c, o, in, out, scale, roi0, roi1, &outside);
    if (std::isnan(x)) {
      if (c.ctm == "tf_crop_and_resize") outside = true;
      x = 0;
    }
    x = std::clamp(x, -1e15, 1e15);  // keeps index arithmetic defined for hostile roi values
    if (outside) {
      extrap[o] = true;
      continue;
    }
    std::vector<Tap>& t = taps[o];
    const double fl = std::floor(x);
    const double frac = x - fl;
    if (c.mode == "nearest") {
      double r;
      if (x == fl)
        r = x;
      else if (c.nearest_mode == "round_prefer_floor")
        r = frac <= 0.5 ? fl : fl + 1;
      else if (c.nearest_mode == "round_prefer_ceil")
        r = frac < 0.5 ? fl : fl + 1;
      else if (c.nearest_mode == "floor")
        r = fl;
      else if (c.nearest_mode == "ceil")
        r = fl + 1;
      else
        r = scale < 1 ? std::ceil(x) : fl;  // "simple"
      t.push_back({static_cast<int64_t>(r), 1.0});
    } else if (!c.antialias || scale >= 1) {
      const int64_t x0 = static_cast<int64_t>(fl);
      if (c.mode == "linear") {
        t.push_back({x0, 1 - frac});
        t.push_back({x0 + 1, frac});
      } else {
        for (int64_t k = -1; k <= 2; ++k)
          t.push_back({x0 + k, cubic_kernel(x - (x0 + k), c.cubic_a)});
      }
    } else {
      // Antialiased downsampling: the kernel stretched by 1 / scale, weights normalized.
      const double support = (c.mode == "linear" ? 1.0 : 2.0) / scale;
      double sum = 0;
      for (int64_t k = static_cast<int64_t>(std::floor(x - support));
           k <= static_cast<int64_t>(std::ceil(x + support)); ++k) {
        const double d = scale * (static_cast<double>(k) - x);
        const double w =
            c.mode == "linear" ? std::max(0.0, 1 - std::fabs(d)) : cubic_kernel(d, c.cubic_a);
        if (w == 0) continue;
        t.push_back({k, w});
        sum += w;
      }
      if (sum != 0)
        for (Tap& tp : t) tp.w /= sum;
    }
    if (c.exclude_outside) {
      double sum = 0;
      for (Tap& tp : t) {
        if (tp.idx < 0 || tp.idx >= in) tp.w = 0;
        sum += tp.w;
      }
      if (sum != 0)
        for (Tap& tp : t) tp.w /= sum;
    }
    for (Tap& tp : t) tp.idx = std::clamp<int64_t>(tp.idx, 0, std::max<int64_t>(in - 1, 0));
  }
}

struct ResizePlan {
  std::vector<int64_t> out_dims;
  std::vector<double> scales;      // per axis of X
  std::vector<double> roi0, roi1;  // per axis of X
  std::vector<bool> resized;       // the axes that are interpolated
};

// Reads a float tensor's values (scales, roi) as doubles; an empty or omitted one gives {}.
std::vector<double> float_values(const KernelContext& ctx, int i) {
  if (!ctx.has_input(i)) return {};
  const Tensor& t = ctx.input(i);
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) v[k] = t.get_f64(k);
  return v;
}

ResizePlan plan_resize(const KernelContext& ctx, const ResizeConfig& c,
                       const std::vector<int64_t>& in, int scales_input, int sizes_input,
                       int roi_input) {
  const Node& n = ctx.node();
  const int rank = static_cast<int>(in.size());
  std::vector<int> axes;
  if (auto a = attr_ints_opt(n, "axes")) {
    for (int64_t v : *a) {
      const int ax = normalize_axis(n, v, rank);
      if (std::find(axes.begin(), axes.end(), ax) != axes.end())
        ctx.fail_here(fmt::format("axis {} repeated in axes", v));
      axes.push_back(ax);
    }
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  const size_t na = axes.size();
  ResizePlan p;
  p.out_dims = in;
  p.scales.assign(rank, 1.0);
  p.roi0.assign(rank, 0.0);
  p.roi1.assign(rank, 1.0);
  p.resized.assign(rank, false);
  const std::vector<double> scales =
      scales_input >= 0 ? float_values(ctx, scales_input) : std::vector<double>{};
  std::vector<int64_t> sizes;
  if (sizes_input >= 0 && ctx.has_input(sizes_input)) sizes = ctx.input(sizes_input).to_int64s();
  if (!scales.empty() && !sizes.empty()) ctx.fail_here("only one of scales and sizes may be given");
  if (!scales.empty()) {
    if (scales.size() != na)
      ctx.fail_here(fmt::format("scales has {} elements, expected {}", scales.size(), na));
    for (size_t i = 0; i < na; ++i) {
      if (!(scales[i] > 0)) ctx.fail_here(fmt::format("scale {} must be positive", scales[i]));
      const int a = axes[i];
      p.scales[a] = scales[i];
      const double o = std::floor(scales[i] * static_cast<double>(in[a]));
      if (!(o < 9e18)) ctx.fail_here(fmt::format("output dim {} too large", o));
      p.out_dims[a] = static_cast<int64_t>(o);
    }
  } else if (!sizes.empty()) {
    if (sizes.size() != na)
      ctx.fail_here(fmt::format("sizes has {} elements, expected {}", sizes.size(), na));
    for (int64_t s : sizes)
      if (s < 0) ctx.fail_here(fmt::format("size {} is negative", s));
    const std::string policy = attr_string(n, "keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t i = 0; i < na; ++i) {
        const int a = axes[i];
        p.out_dims[a] = sizes[i];
        p.scales[a] = static_cast<double>(sizes[i]) / static_cast<double>(in[a]);
      }
    } else if (policy == "not_larger" || policy == "not_smaller") {
      double s = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
      for (size_t i = 0; i < na; ++i) {
        const double r = static_cast<double>(sizes[i]) / static_cast<double>(in[axes[i]]);
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      for (size_t i = 0; i < na; ++i) {
        const int a = axes[i];
        p.scales[a] = s;
        const double o = s * static_cast<double>(in[a]) + 0.5;
        if (!(o < 9e18)) ctx.fail_here(fmt::format("output dim {} too large", o));
        p.out_dims[a] = static_cast<int64_t>(o);
      }
    } else {
      ctx.fail_here(fmt::format("unknown keep_aspect_ratio_policy '{}'", policy));
    }
  } else {
    ctx.fail_here("one of scales and sizes must be given");
  }
  if (c.ctm == "tf_crop_and_resize") {
    const std::vector<double> roi =
        roi_input >= 0 ? float_values(ctx, roi_input) : std::vector<double>{};
    if (!roi.empty()) {
      if (roi.size() != 2 * na)
        ctx.fail_here(fmt::format("roi has {} elements, expected {}", roi.size(), 2 * na));
      for (size_t i = 0; i < na; ++i) {
        p.roi0[axes[i]] = roi[i];
        p.roi1[axes[i]] = roi[na + i];
      }
    }
  }
  for (int a = 0; a < rank; ++a) {
    const bool identity = p.scales[a] == 1.0 && p.out_dims[a] == in[a] &&
                          (c.ctm != "tf_crop_and_resize" || (p.roi0[a] == 0 && p.roi1[a] == 1));
    p.resized[a] = !identity;
  }
  return p;
}

// Numeric tensors as doubles and back (integers round to nearest even and saturate, as ONNX does).
std::vector<double> load_numeric(const Node& n, const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  visit<KILN_NUMERIC_TYPES>(n, t.dtype(), [&]<typename T>() {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i)
      v[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
  });
  return v;
}

Tensor store_numeric(const Node& n, DataType dt, const std::vector<int64_t>& dims,
                     const std::vector<double>& v) {
  Tensor t(dt, dims);
  visit<KILN_NUMERIC_TYPES>(n, dt, [&]<typename T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (is_float_like_v<T>) {
        p[i] = T(static_cast<compute_t<T>>(v[i]));
      } else {
        double r = std::nearbyint(v[i]);
        if (std::isnan(r)) r = 0;
        r = std::clamp(r, static_cast<double>(std::numeric_limits<T>::lowest()),
                       static_cast<double>(std::numeric_limits<T>::max()));
        p[i] = static_cast<T>(r);
      }
    }
  });
  return t;
}

void run_resize_core(KernelContext& ctx, const ResizeConfig& c, int scales_input, int sizes_input,
                     int roi_input) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const ResizePlan p = plan_resize(ctx, c, x.dims(), scales_input, sizes_input, roi_input);
  check_work(n, p.out_dims);
  std::vector<double> cur = load_numeric(n, x);
  std::vector<int64_t> dims = x.dims();
  for (int a = 0; a < x.rank(); ++a) {
    if (!p.resized[a]) continue;
    const int64_t in = dims[a], out = p.out_dims[a];
    std::vector<int64_t> next_dims = dims;
    next_dims[a] = out;
    check_work(n, next_dims);
    if (in == 0 && out > 0) ctx.fail_here("cannot resize an empty axis to a non-empty one");
    std::vector<std::vector<Tap>> taps;
    std::vector<bool> extrap;
    map_axis(c, in, out, p.scales[a], p.roi0[a], p.roi1[a], taps, extrap);
    const int64_t outer = prod(dims, 0, a), inner = prod(dims, a + 1, dims.size());
    std::vector<double> next(static_cast<size_t>(outer * out * inner), 0.0);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < out; ++j) {
        double* dst = next.data() + (o * out + j) * inner;
        if (extrap[j]) {
          std::fill(dst, dst + inner, c.extrapolation);
          continue;
        }
        for (const Tap& t : taps[j]) {
          if (t.w == 0) continue;
          const double* src = cur.data() + (o * in + t.idx) * inner;
          for (int64_t k = 0; k < inner; ++k) dst[k] += t.w * src[k];
        }
      }
    cur = std::move(next);
    dims[a] = out;
  }
  ctx.set_output(0, store_numeric(n, x.dtype(), dims, cur));
}

// ---------------------------------------------------------------------------------------------
// Shape inference: the output dims from constant scales or (maybe symbolic) sizes.

void infer_resize_core(InferContext& ctx, int scales_input, int sizes_input) {
  const Node& n = ctx.node();
  const DataType dt = ctx.input_dtype(0);
  const auto& in = ctx.input_shape(0);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(in->size());
  std::vector<int> axes;
  if (auto a = attr_ints_opt(n, "axes")) {
    for (int64_t v : *a) axes.push_back(normalize_axis(n, v, rank));
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  Shape out = *in;
  auto unknown_axes = [&] {
    for (int a : axes) out[a] = Dim();
  };
  const Tensor* sc = scales_input >= 0 ? ctx.input_constant(scales_input) : nullptr;
  const bool has_sizes = sizes_input >= 0 && ctx.has_input(sizes_input);
  const std::optional<std::vector<Dim>> sizes =
      has_sizes ? ctx.input_dims_value(sizes_input) : std::nullopt;
  const std::string policy = attr_string(n, "keep_aspect_ratio_policy", "stretch");
  if (sc && sc->numel() > 0) {
    if (sc->numel() != static_cast<int64_t>(axes.size()))
      ctx.fail_here(fmt::format("scales has {} elements, expected {}", sc->numel(), axes.size()));
    for (size_t i = 0; i < axes.size(); ++i) {
      const double s = sc->get_f64(i);
      const Dim& d = (*in)[axes[i]];
      if (d.is_known())
        out[axes[i]] = static_cast<int64_t>(std::floor(s * static_cast<double>(d.value())));
      else if (s == std::floor(s) && s >= 1)
        out[axes[i]] = Dim(static_cast<int64_t>(s)) * d;
      else
        out[axes[i]] = Dim();
    }
  } else if (sizes && sizes->size() == axes.size()) {
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = (*sizes)[i];
    } else {
      // keep_aspect_ratio: computable only when every size and input dim is known.
      bool known = true;
      for (size_t i = 0; i < axes.size(); ++i)
        known = known && (*sizes)[i].is_known() && (*in)[axes[i]].is_known();
      if (!known) {
        unknown_axes();
      } else {
        double s = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
        for (size_t i = 0; i < axes.size(); ++i) {
          const double r = static_cast<double>((*sizes)[i].value()) /
                           static_cast<double>((*in)[axes[i]].value());
          s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
        }
        for (int a : axes)
          out[a] = static_cast<int64_t>(s * static_cast<double>((*in)[a].value()) + 0.5);
      }
    }
  } else {
    unknown_axes();
  }
  ctx.set_output(0, dt, out);
}

}  // namespace

void register_resize(OpRegistry& r) {
  r.add("", "Resize")
      .versions(10)
      .inputs(1, 4)
      .outputs(1, 1)
      .attr("antialias", AttrKind::kInt)
      .attr("axes", AttrKind::kInts)
      .attr("coordinate_transformation_mode", AttrKind::kString)
      .attr("cubic_coeff_a", AttrKind::kFloat)
      .attr("exclude_outside", AttrKind::kInt)
      .attr("extrapolation_value", AttrKind::kFloat)
      .attr("keep_aspect_ratio_policy", AttrKind::kString)
      .attr("mode", AttrKind::kString)
      .attr("nearest_mode", AttrKind::kString)
      .shape([](InferContext& ctx) {
        resize_config(ctx.node(), ctx.opset());  // validates the attributes
        infer_resize_core(ctx, 2, 3);
      })
      .run([](KernelContext& ctx) {
        run_resize_core(ctx, resize_config(ctx.node(), ctx.opset()), 2, 3, 1);
      });

  // Upsample (deprecated in opset 10): (X, scales), nearest or linear, asymmetric coordinates.
  r.add("", "Upsample")
      .versions(7, 10)
      .inputs(2, 2)
      .outputs(1, 1)
      .attr("mode", AttrKind::kString)
      .shape([](InferContext& ctx) {
        resize_config(ctx.node(), ctx.opset());
        infer_resize_core(ctx, 1, -1);
      })
      .run([](KernelContext& ctx) {
        run_resize_core(ctx, resize_config(ctx.node(), ctx.opset()), 1, -1, -1);
      });
}

}  // namespace kiln::norm
