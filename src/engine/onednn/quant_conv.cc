// Conv of the QDQ form through oneDNN's int8 convolution (u8s8 or s8s8; VNNI or AMX where the CPU
// has them): DequantizeLinear(x: uint8/int8, per tensor) and DequantizeLinear(constant int8
// weights, zero points 0, per tensor or per output channel) -> Conv [-> bias Add] [-> Relu] ->
// QuantizeLinear is one primitive writing the quantized result: the integer accumulation, the
// output scales s_x * s_w[c] / s_y, the source and destination zero points and the Relu are
// oneDNN's, so the activation stays int8 between quantized ops. Without the QuantizeLinear the
// result is float (scales s_x * s_w[c]) and the chain after it (activations, residual sum,
// binary ops) is fused as for the float conv. QLinearConv (every parameter constant, weights'
// zero points 0) is the same primitive ("onednn.qlinear_conv"), and so is ConvInteger (the int32
// accumulator; the input's zero point may be computed at run time).
//
// Where the CPU has no int8 dot product (VNNI, AMX), only u8 sources with 7-bit weights are
// exact in oneDNN (onednn/int8_support.h); other convs stay float.
//
// oneDNN 2.6 adds the bias to the int32 accumulator before the output scales, so the bias is
// given in the accumulator's units: b[c] / (s_x * s_w[c]). Results differ from the QDQ form's
// reference (float convolution of the dequantized values, then rounding) by at most one step of
// the output's quantization where the float sum lands next to a rounding boundary.

#include <cmath>

#include "engine/lowering.h"
#include "engine/onednn/conv_geometry.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/int8_support.h"
#include "engine/onednn/onednn_kernels.h"
#include "engine/onednn/post_ops.h"
#include "engine/onednn/weight_cache.h"
#include "engine/qdq_pattern.h"
#include "engine/threads.h"
#include "ops/attrs.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct QuantConvForm {
  DequantizedInput x;
  DequantizedWeight w;
};

std::optional<QuantConvForm> quant_conv_form(const Node& n, const GraphFacts& f) {
  if (!n.has_input(1)) return std::nullopt;
  auto x = dequantized_input(n.inputs[0], f);
  if (!x) return std::nullopt;
  auto w = dequantized_weight(n.inputs[1], f, 0);
  if (!w || !int8_exact(x->params.type, w->q, f)) return std::nullopt;
  return QuantConvForm{std::move(*x), std::move(*w)};
}

// A link a requantization may follow inside the primitive: the bias, or Relu / LeakyRelu (which
// commute with the positive scale 1 / s_y folded into the output scales).
bool before_requantize(const EpilogueUnit& u) {
  if (u.is_bias) return true;
  for (const PostOp& op : u.ops)
    if (op.kind != PostOp::Kind::kEltwise || op.act.kind != ActKind::kLeakyRelu) return false;
  return !u.ops.empty();
}

bool ends_in_quantize(const Group& g) {
  return !g.epilogue.empty() && is_op(g.epilogue.back().nodes[0], "QuantizeLinear");
}

bool match_quant_conv(const Node& n, const MatchContext& ctx, Group& g) {
  // The DequantizeLinear of the input is this group's: alone, the node runs as a float conv.
  if (ctx.standalone) return false;
  const auto form = quant_conv_form(n, ctx.facts);
  if (!form || sole_consumer(form->x.dq->outputs[0], ctx) != &n) return false;
  const auto geo = conv_geometry(n, ctx.facts);
  if (!geo || !ctx.is_free(form->x.dq)) return false;
  g.prologue.push_back(form->x.dq);
  std::vector<EpilogueUnit> units = match_epilogue(n.outputs[0], ctx, 1);
  size_t k = 0;
  while (k < units.size() && before_requantize(units[k])) ++k;
  if (auto rq = quantize_of(k ? units[k - 1].out : n.outputs[0], ctx)) {
    units.resize(k);
    units.push_back(EpilogueUnit{.nodes = {rq->q}, .out = rq->q->outputs[0]});
  }
  g.epilogue = std::move(units);
  return true;
}

// A constant s32 memory of one value (a zero point).
dnnl::memory s32_scalar(int32_t v) {
  dnnl::memory m(dnnl::memory::desc({1}, dt::s32, tag::x), dnnl_engine());
  *static_cast<int32_t*>(m.get_data_handle()) = v;
  return m;
}

// One int8 conv as the primitive computes it, from whichever form it was read.
struct Int8Conv {
  ConvGeometry geo;
  const Value* x = nullptr;
  QuantParams xp;                  // per tensor
  const Value* w = nullptr;        // int8 constant, ONNX's [M, C/G, k...]
  std::vector<float> w_scale;      // 1 or M
  std::optional<QuantParams> out;  // the requantized result; float when absent
  std::vector<float> real_bias;    // per output channel (empty: none), in the result's units
  bool int32_result = false;       // ConvInteger: the accumulator itself, no scales
  const Value* x_zero_point = nullptr;  // ConvInteger: a zero point computed at run time
};

// ConvInteger's step: its input's zero point may be a value of the run (DynamicQuantizeLinear's).
class ZeroPointConv : public DnnlStep {
 public:
  ZeroPointConv(dnnl::primitive p, const Node* n, int zp_slot)
      : DnnlStep(std::move(p), n, "onednn.quant_conv"), zp_slot_(zp_slot),
        zp_(dnnl::memory::desc({1}, dnnl::memory::data_type::s32, dnnl::memory::format_tag::x), dnnl_engine()) {
    bind_constant(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_);
    also_reads.push_back(zp_slot);
  }
  void run(RunState& st) override {
    const Tensor& z = st.slots[zp_slot_].tensor;
    KILN_CHECK(z.numel() == 1, ErrorKind::kRuntime, "{}: a zero point of {} values", kernel, z.numel());
    *static_cast<int32_t*>(zp_.get_data_handle()) = static_cast<int32_t>(z.get_i64(0));
    DnnlStep::run(st);
  }

 private:
  int zp_slot_;
  dnnl::memory zp_;
};

// Builds the step of c, with fu's post-ops (the chain after the result, before a requantization)
// and its bias descriptor; the output is g's.
bool emit_int8_conv(const Int8Conv& c, ConvFusion fu, Group& g, Lowering& lw) {
  const ConvGeometry& geo = c.geo;
  const Node& n = *g.anchor;
  const int rank = static_cast<int>(geo.src.size());
  const int64_t channels = geo.channels_out;
  const bool requant = c.out.has_value();
  const auto& sw = c.w_scale;
  if (sw.size() != 1 && static_cast<int64_t>(sw.size()) != channels) return false;
  // Per output channel: the accumulator's unit s_x * s_w[c], and what the output scales make of it.
  std::vector<float> unit(static_cast<size_t>(channels)), scales(unit.size());
  for (int64_t k = 0; k < channels; ++k) {
    unit[k] = c.xp.scale[0] * sw[sw.size() == 1 ? 0 : k];
    scales[k] = requant ? unit[k] / c.out->scale[0] : unit[k];
  }
  if (!c.int32_result)
    fu.attr.set_output_scales(sw.size() == 1 ? 0 : 1 << 1,
                              sw.size() == 1 ? std::vector<float>{scales[0]} : scales);
  const int32_t zx = c.xp.zero_point[0], zy = requant ? c.out->zero_point[0] : 0;
  if (zx != 0 || c.x_zero_point) fu.attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (zy != 0) fu.attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  if (!c.real_bias.empty())
    fu.bias_md = dnnl::memory::desc({channels}, dt::f32, tag::x);

  const dt src_dt = *dnnl_dtype(c.xp.type);
  const dt dst_dt = c.int32_result ? dt::s32 : requant ? *dnnl_dtype(c.out->type) : dt::f32;
  double flops = 2.0;
  for (int64_t d : geo.dst) flops *= static_cast<double>(d);
  for (size_t i = geo.weights.size() - (rank - 1); i < geo.weights.size(); ++i)
    flops *= static_cast<double>(geo.weights[i]);
  const int threads = threads_for_work(flops / 4);  // int8: ~4x the multiply-adds per instruction
  ThreadScope scope(threads);
  auto make_pd = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
        dnnl::memory::desc(geo.weights, dt::s8, tag::any), fu.bias_md, dst, geo.strides,
        geo.dilations, geo.pad_l, geo.pad_r);
    return dnnl::convolution_forward::primitive_desc(d, fu.attr, dnnl_engine());
  };
  const auto made_in = lw.layout(c.x);
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory::desc>> tries;
  if (made_in && rank == 4) tries.emplace_back(*made_in, dnnl::memory::desc(geo.dst, dst_dt, tag::nhwc));
  if (rank == 4) tries.emplace_back(dnnl::memory::desc(geo.src, src_dt, tag::nhwc),
                                    dnnl::memory::desc(geo.dst, dst_dt, tag::nhwc));
  std::optional<dnnl::convolution_forward::primitive_desc> pd;
  for (const auto& [src, dst] : tries) {
    try {
      auto p = make_pd(src, dst);
      const std::string impl = p.impl_info_str();
      if (impl.rfind("brg", 0) == 0 || impl.rfind("jit", 0) == 0) {
        pd = p;
        break;
      }
    } catch (const dnnl::error&) {
    }
  }
  if (!pd)
    pd = make_pd(dnnl::memory::desc(geo.src, src_dt, tag::any), dnnl::memory::desc(geo.dst, dst_dt, tag::any));

  std::unique_ptr<DnnlStep> step;
  if (c.x_zero_point)
    step = std::make_unique<ZeroPointConv>(dnnl::convolution_forward(*pd), &n, lw.plain(c.x_zero_point));
  else
    step = std::make_unique<DnnlStep>(dnnl::convolution_forward(*pd), &n, "onednn.quant_conv");
  step->threads = threads;
  step->bind_constant(DNNL_ARG_WEIGHTS, lw.packed_constant(c.w, plain_md(geo.weights, dt::s8),
                                                          pd->weights_desc()));
  if (!c.real_bias.empty()) {
    Tensor bias(DataType::kFloat, {channels});
    for (int64_t k = 0; k < channels; ++k) bias.data<float>()[k] = c.real_bias[k] / unit[k];
    const auto bias_md = pd->bias_desc();
    step->bind_constant(DNNL_ARG_BIAS, lw.weights().get(bias, bias_md, bias_md));
  }
  if (zx != 0 && !c.x_zero_point) step->bind_constant(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, s32_scalar(zx));
  if (zy != 0) step->bind_constant(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, s32_scalar(zy));
  step->bind_input(DNNL_ARG_SRC, lw.in_layout(c.x, pd->src_desc()), pd->src_desc(), geo.src);
  const dnnl::memory::desc dst_md = pd->dst_desc();
  const int share = bind_post_ops(fu.post, dst_md, lw, *step);
  const int out = lw.define(g.output(), dst_md);
  step->bind_output(DNNL_ARG_DST, out, dst_md, OutputMemory::kPlanned, share);
  step->bind_scratchpad(pd->scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
  return true;
}

bool build_quant_conv(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const auto form = quant_conv_form(n, f);
  const auto geo = conv_geometry(n, f);
  if (!form || !geo) return false;
  Int8Conv c{.geo = *geo, .x = form->x.q, .xp = form->x.params, .w = form->w.q,
             .w_scale = form->w.params.scale};
  const bool requant = ends_in_quantize(g);
  if (requant && !(c.out = quant_params(*g.epilogue.back().nodes[0], f))) return false;
  Group chain = g;  // the links before the requantization
  if (requant) chain.epilogue.pop_back();
  const Tensor* own_bias = n.has_input(2) ? f.constant(n.inputs[2]) : nullptr;
  if (n.has_input(2) && !own_bias) return false;
  ConvFusion fu = conv_fusion(chain, chain.epilogue.size(), static_cast<int>(geo->src.size()),
                              own_bias != nullptr, geo->channels_out, f);
  if (auto b = combined_bias(own_bias, fu.unit_bias ? bias_constant(chain.epilogue[0], f) : nullptr,
                             geo->channels_out))
    c.real_bias.assign(b->data<float>(), b->data<float>() + b->numel());
  return emit_int8_conv(c, std::move(fu), g, lw);
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B]): the same primitive, every
// parameter constant, w int8 with zero points 0, B int32 in the accumulator's units.
std::optional<Int8Conv> qlinear_conv(const Node& n, const GraphFacts& f) {
  if (n.num_inputs() < 8) return std::nullopt;
  for (int i = 1; i < n.num_inputs(); ++i)
    if (!n.has_input(i) && i != 8) return std::nullopt;
  const Value* x = n.inputs[0];
  const DataType xt = f.dtype(x), yt = f.dtype(n.inputs[7]);
  const Value* w = n.inputs[3];
  const std::vector<int64_t>* w_dims = int8_constant_dims(w, f);
  const Tensor *xs = f.constant(n.inputs[1]), *xz = f.constant(n.inputs[2]), *ws = f.constant(n.inputs[4]),
               *wz = f.constant(n.inputs[5]), *ys = f.constant(n.inputs[6]), *yz = f.constant(n.inputs[7]);
  if (!xs || !xz || !w_dims || !ws || !wz || !ys || !yz || f.constant(x)) return std::nullopt;
  if ((xt != DataType::kUInt8 && xt != DataType::kInt8) || xz->dtype() != xt ||
      wz->dtype() != DataType::kInt8 || (yt != DataType::kUInt8 && yt != DataType::kInt8) ||
      xs->dtype() != DataType::kFloat || ws->dtype() != DataType::kFloat || ys->dtype() != DataType::kFloat ||
      xs->numel() != 1 || xz->numel() != 1 || ys->numel() != 1 || yz->numel() != 1 || !int8_exact(xt, w, f))
    return std::nullopt;
  auto geo = conv_geometry_of(n, f.dims(x), *w_dims);
  if (!geo) return std::nullopt;
  const int64_t m = geo->channels_out;
  if (ws->numel() != 1 && ws->numel() != m) return std::nullopt;
  for (int64_t i = 0; i < wz->numel(); ++i)
    if (wz->data<int8_t>()[i] != 0) return std::nullopt;
  auto finite_positive = [](float v) { return std::isfinite(v) && v > 0; };
  Int8Conv c{.geo = *geo, .x = x, .w = w};
  c.xp = QuantParams{.type = xt, .scale = {xs->data<float>()[0]}, .zero_point = {static_cast<int32_t>(xz->get_i64(0))}};
  c.out = QuantParams{.type = yt, .scale = {ys->data<float>()[0]}, .zero_point = {static_cast<int32_t>(yz->get_i64(0))}};
  c.w_scale.assign(ws->data<float>(), ws->data<float>() + ws->numel());
  if (!finite_positive(c.xp.scale[0]) || !finite_positive(c.out->scale[0])) return std::nullopt;
  for (float v : c.w_scale)
    if (!finite_positive(v)) return std::nullopt;
  if (n.has_input(8)) {  // B in accumulator units: the real bias is B * unit
    const Tensor* b = f.constant(n.inputs[8]);
    if (!b || b->dtype() != DataType::kInt32 || b->numel() != m) return std::nullopt;
    for (int64_t k = 0; k < m; ++k)
      c.real_bias.push_back(static_cast<float>(b->data<int32_t>()[k]) * c.xp.scale[0] *
                            c.w_scale[c.w_scale.size() == 1 ? 0 : k]);
  }
  return c;
}

// ConvInteger(x, w[, x_zp, w_zp]): the int32 accumulator; w int8 with zero points 0, x's zero
// point a constant or a value of the run (ONNX Runtime's quantize_dynamic on a CNN).
std::optional<Int8Conv> conv_integer(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || !n.has_input(1) || f.constant(n.inputs[0])) return std::nullopt;
  const Value* x = n.inputs[0];
  const DataType xt = f.dtype(x);
  const Value* w = n.inputs[1];
  const std::vector<int64_t>* w_dims = int8_constant_dims(w, f);
  if ((xt != DataType::kUInt8 && xt != DataType::kInt8) || !w_dims || !int8_exact(xt, w, f))
    return std::nullopt;
  if (n.has_input(3)) {
    const Tensor* wz = f.constant(n.inputs[3]);
    if (!wz || wz->dtype() != DataType::kInt8) return std::nullopt;
    for (int64_t i = 0; i < wz->numel(); ++i)
      if (wz->data<int8_t>()[i] != 0) return std::nullopt;
  }
  auto geo = conv_geometry_of(n, f.dims(x), *w_dims);
  if (!geo) return std::nullopt;
  Int8Conv c{.geo = *geo, .x = x, .w = w, .w_scale = {1.f}, .int32_result = true};
  c.xp = QuantParams{.type = xt, .scale = {1.f}, .zero_point = {0}};
  if (n.has_input(2)) {
    const Value* z = n.inputs[2];
    const auto* zd = f.dims(z);
    if (f.dtype(z) != xt || !zd || zd->size() > 1 || (zd->size() == 1 && (*zd)[0] != 1)) return std::nullopt;
    if (const Tensor* zc = f.constant(z))
      c.xp.zero_point[0] = static_cast<int32_t>(zc->get_i64(0));
    else
      c.x_zero_point = z;
  }
  return c;
}

std::optional<Int8Conv> qoperator_conv(const Node& n, const GraphFacts& f) {
  return n.op_type == "ConvInteger" ? conv_integer(n, f) : qlinear_conv(n, f);
}

bool match_qlinear_conv(const Node& n, const MatchContext& ctx, Group& g) {
  return qoperator_conv(n, ctx.facts).has_value();
}

bool build_qlinear_conv(Group& g, Lowering& lw) {
  const auto c = qoperator_conv(*g.anchor, lw.facts());
  if (!c) return false;
  ConvFusion fu;
  fu.attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return emit_int8_conv(*c, std::move(fu), g, lw);
}

}  // namespace

constinit const KernelImpl kOnednnQuantConv{.name = "onednn.quant_conv", .match = match_quant_conv,
                                            .build = build_quant_conv};
constinit const KernelImpl kOnednnQLinearConv{.name = "onednn.qlinear_conv", .match = match_qlinear_conv,
                                              .build = build_qlinear_conv};

}  // namespace kiln::engine
