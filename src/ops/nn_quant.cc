// nn family: linear quantization. QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.
// Granularity (from the scale's shape): per tensor, per axis (1-D scale along `axis`) or blocked
// (scale of the input's rank, `block_size` elements along `axis` sharing one scale).
#include <algorithm>
#include <cmath>

#include "ops/nn_common.h"

namespace kiln {
namespace {

// Maps an element of x to the index of its scale / zero point.
struct QuantMap {
  enum Kind { kTensor, kAxis, kBlocked } kind = kTensor;
  int64_t axis_len = 1, inner = 1, block = 0, scale_axis = 1;
  int64_t param(int64_t i) const {
    switch (kind) {
      case kTensor: return 0;
      case kAxis: return (i / inner) % axis_len;
      default: {
        const int64_t o = i / (axis_len * inner), a = (i / inner) % axis_len, in = i % inner;
        return (o * scale_axis + a / block) * inner + in;
      }
    }
  }
};

QuantMap quant_map(const KernelContext& ctx, const Tensor& x, const Tensor& scale,
                   const Tensor* zp) {
  const Node& n = ctx.node();
  QuantMap m;
  const int64_t block = attr_int(n, "block_size", 0);
  if (block < 0) fail(ErrorKind::kBadModel, "{}block_size must not be negative", n.where());
  if (zp && zp->dims() != scale.dims() && !(zp->numel() == 1 && scale.numel() == 1))
    ctx.fail_here(fmt::format("zero point shape {} differs from the scale's {}",
                              dims_to_string(zp->dims()), dims_to_string(scale.dims())));
  if (block == 0 && scale.numel() == 1 && scale.rank() <= 1) return m;
  if (x.rank() == 0) ctx.fail_here("a scalar input takes a scalar scale");
  const int axis = normalize_axis(n, attr_int(n, "axis", 1), x.rank());
  m.axis_len = x.dim(axis);
  m.inner = 1;
  for (int i = axis + 1; i < x.rank(); ++i) m.inner *= x.dim(i);
  if (block == 0) {
    if (scale.rank() != 1 || scale.dim(0) != m.axis_len)
      ctx.fail_here(fmt::format("scale of shape {} for axis {} of size {}",
                                dims_to_string(scale.dims()), axis, m.axis_len));
    m.kind = QuantMap::kAxis;
    return m;
  }
  if (scale.rank() != x.rank())
    ctx.fail_here(fmt::format("blocked scale has rank {}, the input {}", scale.rank(), x.rank()));
  for (int i = 0; i < x.rank(); ++i) {
    const int64_t want = i == axis ? (x.dim(i) + block - 1) / block : x.dim(i);
    if (scale.dim(i) != want)
      ctx.fail_here(fmt::format("blocked scale of shape {} for input {} and block_size {}",
                                dims_to_string(scale.dims()), dims_to_string(x.dims()), block));
  }
  m.kind = QuantMap::kBlocked;
  m.block = block;
  m.scale_axis = scale.dim(axis);
  return m;
}

// Rounds v to the precision of dtype t (the precision of QuantizeLinear's division).
inline double round_to(DataType t, double v) {
  switch (t) {
    case DataType::kDouble: return v;
    case DataType::kFloat16: return static_cast<float>(Half(static_cast<float>(v)));
    case DataType::kBFloat16: return static_cast<float>(BFloat16(static_cast<float>(v)));
    default: return static_cast<float>(v);
  }
}

DataType quantize_out_dtype(const Node& n, const DataType* zp) {
  const int64_t od = attr_int(n, "output_dtype", 0);
  if (od != 0 && !is_valid_dtype(static_cast<int32_t>(od)))
    fail(ErrorKind::kBadModel, "{}output_dtype {} is not a data type", n.where(), od);
  if (zp) {
    if (od != 0 && static_cast<DataType>(od) != *zp)
      fail(ErrorKind::kBadModel, "{}output_dtype {} differs from the zero point's type {}",
           n.where(), dtype_name(static_cast<DataType>(od)), dtype_name(*zp));
    return *zp;
  }
  return od ? static_cast<DataType>(od) : DataType::kUInt8;
}

void run_quantize(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const DataType zdt = zp ? zp->dtype() : DataType::kUndefined;
  const DataType out = quantize_out_dtype(n, zp ? &zdt : nullptr);
  const QuantMap m = quant_map(ctx, x, scale, zp);
  const bool saturate = attr_int(n, "saturate", 1) != 0;
  const int64_t prec_attr = attr_int(n, "precision", 0);
  const DataType prec = prec_attr ? static_cast<DataType>(prec_attr) : scale.dtype();
  const auto xv = nn::load_as<double>(n, x);
  const auto sv = nn::load_as<double>(n, scale);
  std::vector<double> zv = zp ? nn::load_as<double>(n, *zp) : std::vector<double>(1, 0.0);
  Tensor y(out, x.dims());
  visit<KILN_NN_QUANT_TYPES>(n, out, [&]<typename Q>() {
    Q* yp = y.data<Q>();
    const int64_t total = x.numel();
#pragma omp parallel for if (total > 65536)
    for (int64_t i = 0; i < total; ++i) {
      const int64_t p = m.param(i);
      const double v = round_to(prec, round_to(prec, xv[i]) / round_to(prec, sv[p]));
      yp[i] = nn::quantize_one<Q>(v, zv[zp ? p : 0], saturate);
    }
  });
  ctx.set_output(0, std::move(y));
}

void infer_quantize(InferContext& ctx) {
  const Node& n = ctx.node();
  DataType zdt = DataType::kUndefined;
  if (ctx.has_input(2)) zdt = ctx.input_dtype(2);
  const DataType out = quantize_out_dtype(n, ctx.has_input(2) ? &zdt : nullptr);
  ctx.set_output(0, out, ctx.input_shape(0));
}

DataType dequantize_out_dtype(const Node& n, DataType scale) {
  const int64_t od = attr_int(n, "output_dtype", 0);
  if (od != 0 && !is_valid_dtype(static_cast<int32_t>(od)))
    fail(ErrorKind::kBadModel, "{}output_dtype {} is not a data type", n.where(), od);
  return od ? static_cast<DataType>(od) : scale;
}

void run_dequantize(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (zp && zp->dtype() != x.dtype())
    ctx.fail_here(fmt::format("zero point type {} differs from the input's {}",
                              dtype_name(zp->dtype()), dtype_name(x.dtype())));
  const DataType out = dequantize_out_dtype(n, scale.dtype());
  const QuantMap m = quant_map(ctx, x, scale, zp);
  // The common case (int8 / uint8 weights or activations, float scales, per tensor or per axis)
  // without the per-element double loads: the same float arithmetic as below, so the same bits,
  // at the speed shape inference needs when it evaluates a model's constant weights.
  if (out == DataType::kFloat && scale.dtype() == DataType::kFloat && m.kind != QuantMap::kBlocked &&
      (x.dtype() == DataType::kInt8 || x.dtype() == DataType::kUInt8)) {
    Tensor y(out, x.dims());
    float* yp = y.data<float>();
    const float* sp = scale.data<float>();
    const bool s8 = x.dtype() == DataType::kInt8;
    const auto* q8 = static_cast<const uint8_t*>(x.raw());
    const auto* z8 = zp ? static_cast<const uint8_t*>(zp->raw()) : nullptr;
    auto value = [&](const uint8_t* b, int64_t i) -> float {
      return s8 ? static_cast<float>(static_cast<int8_t>(b[i])) : static_cast<float>(b[i]);
    };
    const int64_t total = x.numel(), inner = m.kind == QuantMap::kAxis ? m.inner : total;
    for (int64_t start = 0; start < total; start += std::max<int64_t>(inner, 1)) {
      const int64_t p = m.param(start);
      const float z = z8 ? value(z8, p) : 0.0f, sc = sp[p];
      const int64_t end = std::min(total, start + std::max<int64_t>(inner, 1));
      for (int64_t i = start; i < end; ++i) yp[i] = (value(q8, i) - z) * sc;
    }
    ctx.set_output(0, std::move(y));
    return;
  }
  const auto xv = nn::load_as<double>(n, x);
  const auto sv = nn::load_as<double>(n, scale);
  std::vector<double> zv = zp ? nn::load_as<double>(n, *zp) : std::vector<double>(1, 0.0);
  const DataType cdt = nn::compute_dtype(out == DataType::kDouble || scale.dtype() == DataType::kDouble
                                             ? DataType::kDouble
                                             : DataType::kFloat);
  Tensor y(out, x.dims());
  visit<KILN_FLOAT_TYPES>(n, out, [&]<typename T>() {
    T* yp = y.data<T>();
    const int64_t total = x.numel();
    for (int64_t i = 0; i < total; ++i) {
      const int64_t p = m.param(i);
      double v;
      if (cdt == DataType::kDouble) {
        v = (xv[i] - zv[zp ? p : 0]) * sv[p];
      } else {
        v = static_cast<float>(static_cast<float>(xv[i] - zv[zp ? p : 0]) *
                               static_cast<float>(sv[p]));
      }
      yp[i] = nn::from_num<T>(v);
    }
  });
  ctx.set_output(0, std::move(y));
}

void run_dynamic_quantize(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  const auto xv = nn::load_as<float>(n, x);
  float lo = 0.0f, hi = 0.0f;
  for (float v : xv) {
    if (std::isnan(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const float scale = (hi == lo ? 1.0f : (hi - lo)) / 255.0f;
  const float zpf = std::clamp(0.0f - lo / scale, 0.0f, 255.0f);
  const uint8_t zp = static_cast<uint8_t>(std::nearbyint(zpf));
  Tensor y(DataType::kUInt8, x.dims());
  uint8_t* yp = y.data<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i)
    yp[i] = nn::quantize_one<uint8_t>(static_cast<double>(xv[i] / scale), zp, true);
  Tensor ys(DataType::kFloat, {});
  ys.data<float>()[0] = scale;
  Tensor yz(DataType::kUInt8, {});
  yz.data<uint8_t>()[0] = zp;
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, std::move(ys));
  ctx.set_output(2, std::move(yz));
}

}  // namespace

void register_nn_quant_ops(OpRegistry& r) {
  r.add("", "QuantizeLinear")
      .versions(10)
      .inputs(2, 3)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .attr("block_size", AttrKind::kInt)
      .attr("output_dtype", AttrKind::kInt)
      .attr("precision", AttrKind::kInt)
      .attr("saturate", AttrKind::kInt)
      .shape(infer_quantize)
      .run(run_quantize);
  r.add("", "DequantizeLinear")
      .versions(10)
      .inputs(2, 3)
      .outputs(1, 1)
      .attr("axis", AttrKind::kInt)
      .attr("block_size", AttrKind::kInt)
      .attr("output_dtype", AttrKind::kInt)
      .shape([](InferContext& ctx) {
        ctx.set_output(0, dequantize_out_dtype(ctx.node(), ctx.input_dtype(1)),
                       ctx.input_shape(0));
      })
      .run(run_dequantize);
  r.add("", "DynamicQuantizeLinear")
      .versions(11)
      .inputs(1, 1)
      .outputs(3, 3)
      .shape([](InferContext& ctx) {
        ctx.set_output(0, DataType::kUInt8, ctx.input_shape(0));
        ctx.set_output(1, DataType::kFloat, Shape{});
        ctx.set_output(2, DataType::kUInt8, Shape{});
      })
      .run(run_dynamic_quantize);
}

}  // namespace kiln
