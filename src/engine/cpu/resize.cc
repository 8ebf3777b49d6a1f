// Resize of H and W: per axis, each output position's source index (nearest) or two indices and
// a weight (linear), computed once in double as ONNX defines them; then a gather per output row
// (a copy of the row before when both read the same input row), or (linear) input rows resized
// along W and blended two by two. Pixels of several values (channels-last, channel blocks) move
// whole.
#include "engine/cpu/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {
namespace {

// Where output positions read along one axis: y[o] = x[i0[o]] * (1 - w1[o]) + x[i1[o]] * w1[o].
struct AxisMap {
  std::vector<int64_t> i0, i1;
  std::vector<float> w1;
};

// The source coordinate of output position o (ONNX's coordinate_transformation_mode).
double source_coord(ResizeCoord c, int64_t o, int64_t in, int64_t out, double scale) {
  const double x = static_cast<double>(o);
  const double len = scale * static_cast<double>(in);  // the resized length before rounding
  switch (c) {
    case ResizeCoord::kAlignCorners: return len == 1 ? 0.0 : x * (in - 1) / (len - 1);
    case ResizeCoord::kAsymmetric: return x / scale;
    case ResizeCoord::kPytorchHalfPixel: return len == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case ResizeCoord::kTfHalfPixelForNn: return (x + 0.5) / scale;
    case ResizeCoord::kHalfPixelSymmetric: {
      const double offset = static_cast<double>(in) / 2 * (1 - static_cast<double>(out) / len);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case ResizeCoord::kHalfPixel: break;
  }
  return (x + 0.5) / scale - 0.5;
}

double round_nearest(NearestRound r, double x, double scale) {
  const double fl = std::floor(x), frac = x - fl;
  if (x == fl) return x;
  switch (r) {
    case NearestRound::kRoundPreferFloor: return frac <= 0.5 ? fl : fl + 1;
    case NearestRound::kRoundPreferCeil: return frac < 0.5 ? fl : fl + 1;
    case NearestRound::kFloor: return fl;
    case NearestRound::kCeil: return fl + 1;
    case NearestRound::kSimple: break;
  }
  return scale < 1 ? std::ceil(x) : fl;  // opset < 11: down when upsampling, up when downsampling
}

AxisMap map_axis(const ResizeOptions& o, int64_t in, int64_t out, double scale) {
  AxisMap m;
  m.i0.resize(out);
  m.i1.resize(out);
  m.w1.assign(out, 0.0f);
  const int64_t last = std::max<int64_t>(in - 1, 0);
  const bool identity = scale == 1.0 && in == out;
  for (int64_t i = 0; i < out; ++i) {
    if (identity) {
      m.i0[i] = m.i1[i] = i;
      continue;
    }
    double x = source_coord(o.coord, i, in, out, scale);
    x = std::isnan(x) ? 0.0 : std::clamp(x, -1e15, 1e15);
    if (o.mode == ResizeMode::kNearest) {
      m.i0[i] = m.i1[i] = std::clamp<int64_t>(static_cast<int64_t>(round_nearest(o.nearest, x, scale)), 0, last);
      continue;
    }
    const double fl = std::floor(x);
    m.i0[i] = std::clamp<int64_t>(static_cast<int64_t>(fl), 0, last);
    m.i1[i] = std::clamp<int64_t>(static_cast<int64_t>(fl) + 1, 0, last);
    m.w1[i] = static_cast<float>(x - fl);
  }
  return m;
}

}  // namespace

std::optional<ResizeMode> parse_resize_mode(std::string_view mode) {
  if (mode == "nearest") return ResizeMode::kNearest;
  if (mode == "linear" || mode == "bilinear") return ResizeMode::kLinear;
  return std::nullopt;
}

std::optional<ResizeCoord> parse_resize_coord(std::string_view c) {
  if (c == "half_pixel") return ResizeCoord::kHalfPixel;
  if (c == "half_pixel_symmetric") return ResizeCoord::kHalfPixelSymmetric;
  if (c == "pytorch_half_pixel") return ResizeCoord::kPytorchHalfPixel;
  if (c == "align_corners") return ResizeCoord::kAlignCorners;
  if (c == "asymmetric") return ResizeCoord::kAsymmetric;
  if (c == "tf_half_pixel_for_nn") return ResizeCoord::kTfHalfPixelForNn;
  return std::nullopt;
}

std::optional<NearestRound> parse_nearest_round(std::string_view n) {
  if (n == "round_prefer_floor") return NearestRound::kRoundPreferFloor;
  if (n == "round_prefer_ceil") return NearestRound::kRoundPreferCeil;
  if (n == "floor") return NearestRound::kFloor;
  if (n == "ceil") return NearestRound::kCeil;
  if (n == "simple") return NearestRound::kSimple;
  return std::nullopt;
}

void resize_2d(const float* x, int64_t planes, int64_t h, int64_t w, float* y, int64_t out_h,
               int64_t out_w, const ResizeOptions& o, int64_t inner) {
  if (planes <= 0 || out_h <= 0 || out_w <= 0 || inner <= 0) return;
  const AxisMap mh = map_axis(o, h, out_h, o.scale_h), mw = map_axis(o, w, out_w, o.scale_w);
  const bool linear = o.mode == ResizeMode::kLinear;
  const IsaKernels& k = kernels();
  const int64_t row_len = out_w * inner;
  // An input row resized along W into dst.
  auto resize_row = [&](const float* src, float* dst) {
    if (inner == 1) {
      if (linear)
        for (int64_t ox = 0; ox < out_w; ++ox)
          dst[ox] = src[mw.i0[ox]] * (1 - mw.w1[ox]) + src[mw.i1[ox]] * mw.w1[ox];
      else
        for (int64_t ox = 0; ox < out_w; ++ox) dst[ox] = src[mw.i0[ox]];
      return;
    }
    for (int64_t ox = 0; ox < out_w; ++ox) {  // whole pixels of `inner` values
      if (linear)
        k.lerp(src + mw.i0[ox] * inner, src + mw.i1[ox] * inner, mw.w1[ox], dst + ox * inner, inner);
      else
        std::memcpy(dst + ox * inner, src + mw.i0[ox] * inner, inner * sizeof(float));
    }
  };
  constexpr int64_t kGrain = 16 << 10;  // output elements per thread
  parallel_for(planes * out_h, std::max<int64_t>(1, kGrain / row_len), [&](int64_t b, int64_t e) {
    if (!linear) {
      // Output rows that read the input row of the row before them copy that output row.
      int64_t last_key = -1;
      const float* last = nullptr;
      for (int64_t t = b; t < e; ++t) {
        const int64_t key = (t / out_h) * h + mh.i0[t % out_h];
        float* dst = y + t * row_len;
        if (key == last_key) std::memcpy(dst, last, row_len * sizeof(float));
        else resize_row(x + key * w * inner, dst);
        last_key = key;
        last = dst;
      }
      return;
    }
    // Input rows resized along W, two at a time (a linear output row blends two of them, and
    // consecutive output rows mostly share theirs), keyed by plane * h + row.
    std::vector<float> rows(2 * row_len);
    int64_t cached[2] = {-1, -1};
    auto resized_row = [&](int64_t key, int64_t keep) -> const float* {
      for (int s = 0; s < 2; ++s)
        if (cached[s] == key) return rows.data() + s * row_len;
      const int s = cached[0] == keep ? 1 : 0;
      float* dst = rows.data() + s * row_len;
      resize_row(x + key * w * inner, dst);
      cached[s] = key;
      return dst;
    };
    for (int64_t t = b; t < e; ++t) {
      const int64_t p = t / out_h, oy = t % out_h;
      const int64_t k0 = p * h + mh.i0[oy], k1 = p * h + mh.i1[oy];
      const float* top = resized_row(k0, k1);
      k.lerp(top, resized_row(k1, k0), mh.w1[oy], y + t * row_len, row_len);
    }
  }, 1);
}

}  // namespace kiln::cpu
