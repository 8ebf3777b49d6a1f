#include "quant/qparams.h"

#include <algorithm>
#include <cmath>

#include "support/error.h"

namespace kiln::quant {

namespace {

struct QRange {
  int32_t qmin, qmax;
};

QRange qrange(DataType t, bool symmetric) {
  if (t == DataType::kInt8) return symmetric ? QRange{-127, 127} : QRange{-128, 127};
  KILN_ASSERT(t == DataType::kUInt8, "quantized type other than int8/uint8");
  return {0, 255};
}

// Float to float tensor element access: weights may arrive in any float type.
float element(const Tensor& t, int64_t i) { return static_cast<float>(t.get_f64(i)); }

}  // namespace

int64_t quantize_value(float x, float scale, int32_t zero_point, DataType type) {
  const QRange r = qrange(type, false);
  const double q = std::nearbyint(static_cast<double>(x) / scale) + zero_point;  // half to even
  return static_cast<int64_t>(std::clamp<double>(q, r.qmin, r.qmax));
}

float dequantize_value(int64_t q, float scale, int32_t zero_point) {
  return static_cast<float>(q - zero_point) * scale;
}

void add_params(QuantParams& p, Range r, bool symmetric) {
  float lo = std::min(r.min, 0.0f), hi = std::max(r.max, 0.0f);
  if (!std::isfinite(lo)) lo = 0;
  if (!std::isfinite(hi)) hi = 0;
  const QRange q = qrange(p.type, symmetric);
  float scale;
  int32_t zp;
  if (symmetric) {
    const float amax = std::max(-lo, hi);
    scale = 2 * amax / static_cast<float>(q.qmax - q.qmin);
    zp = (q.qmax + q.qmin + 1) / 2;  // int8: 0, uint8: 128
  } else {
    scale = (hi - lo) / static_cast<float>(q.qmax - q.qmin);
    zp = scale > 0 ? static_cast<int32_t>(std::clamp<double>(std::nearbyint(q.qmin - lo / scale),
                                                             q.qmin, q.qmax))
                   : 0;
  }
  if (!(scale > 0) || !std::isfinite(scale)) {
    scale = 1;
    zp = symmetric ? (q.qmax + q.qmin + 1) / 2 : (p.type == DataType::kUInt8 ? 0 : 0);
  }
  p.scale.push_back(scale);
  p.zero_point.push_back(zp);
}

QuantParams params_for(Range r, DataType type, bool symmetric) {
  QuantParams p;
  p.type = type;
  add_params(p, r, symmetric);
  return p;
}

QuantizedWeight quantize_weight(const Tensor& w, DataType type, int axis) {
  QuantizedWeight out;
  out.params.type = type;
  out.params.axis = axis;
  out.values = Tensor(type, w.dims());
  const int64_t n = w.numel();
  const int64_t channels = axis < 0 ? 1 : w.dim(axis);
  int64_t inner = 1;
  if (axis >= 0)
    for (int d = axis + 1; d < w.rank(); ++d) inner *= w.dim(d);
  auto channel_of = [&](int64_t i) { return axis < 0 ? 0 : (i / inner) % channels; };
  std::vector<Range> ranges(channels, Range{0, 0});
  for (int64_t i = 0; i < n; ++i) {
    Range& r = ranges[channel_of(i)];
    const float v = element(w, i);
    if (std::isfinite(v)) {
      r.min = std::min(r.min, v);
      r.max = std::max(r.max, v);
    }
  }
  for (const Range& r : ranges) add_params(out.params, r, /*symmetric=*/true);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = channel_of(i);
    out.values.set_f64(i, static_cast<double>(quantize_value(
                              element(w, i), out.params.scale[c], out.params.zero_point[c], type)));
  }
  return out;
}

Tensor quantize_bias(const Tensor& b, float in_scale, const std::vector<float>& w_scale) {
  Tensor out(DataType::kInt32, b.dims());
  for (int64_t i = 0; i < b.numel(); ++i) {
    const double s = static_cast<double>(in_scale) * w_scale[w_scale.size() == 1 ? 0 : i];
    const double q = s > 0 ? std::nearbyint(b.get_f64(i) / s) : 0;
    out.data<int32_t>()[i] = static_cast<int32_t>(std::clamp<double>(q, INT32_MIN, INT32_MAX));
  }
  return out;
}

Tensor scale_tensor(const QuantParams& p) {
  const bool per_channel = p.axis >= 0;
  Tensor t(DataType::kFloat, per_channel ? std::vector<int64_t>{int64_t(p.scale.size())}
                                         : std::vector<int64_t>{});
  for (size_t i = 0; i < p.scale.size(); ++i) t.data<float>()[i] = p.scale[i];
  return t;
}

Tensor zero_point_tensor(const QuantParams& p, DataType type) {
  const bool per_channel = p.axis >= 0;
  Tensor t(type, per_channel ? std::vector<int64_t>{int64_t(p.zero_point.size())}
                             : std::vector<int64_t>{});
  for (size_t i = 0; i < p.zero_point.size(); ++i) t.set_f64(int64_t(i), p.zero_point[i]);
  return t;
}

Tensor zero_point_tensor(const QuantParams& p) { return zero_point_tensor(p, p.type); }

}  // namespace kiln::quant
