// Conv of the QDQ form through oneDNN's int8 convolution (u8s8 or s8s8; VNNI or AMX where the CPU
// has them): DequantizeLinear(x: uint8/int8, per tensor) and DequantizeLinear(constant int8
// weights, zero points 0, per tensor or per output channel) -> Conv [-> bias Add] [-> Relu] ->
// QuantizeLinear is one primitive writing the quantized result: the integer accumulation, the
// output scales s_x * s_w[c] / s_y, the source and destination zero points and the Relu are
// oneDNN's, so the activation stays int8 between quantized ops. Without the QuantizeLinear the
// result is float (scales s_x * s_w[c]) and the chain after it (activations, residual sum,
// binary ops) is fused as for the float conv.
//
// Where the CPU has no int8 dot product (VNNI, AMX), only u8 sources with 7-bit weights are
// exact in oneDNN (onednn/int8_support.h); other convs stay float.
//
// oneDNN 2.6 adds the bias to the int32 accumulator before the output scales, so the bias is
// given in the accumulator's units: b[c] / (s_x * s_w[c]). Results differ from the QDQ form's
// reference (float convolution of the dequantized values, then rounding) by at most one step of
// the output's quantization where the float sum lands next to a rounding boundary.

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
  if (!w || !int8_exact(x->params.type, *w->q)) return std::nullopt;
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

bool build_quant_conv(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const auto form = quant_conv_form(n, f);
  const auto geo = conv_geometry(n, f);
  if (!form || !geo) return false;
  const int rank = static_cast<int>(geo->src.size());
  const int64_t channels = geo->channels_out;
  const bool requant = ends_in_quantize(g);
  std::optional<QuantParams> out_q;
  if (requant) out_q = quant_params(*g.epilogue.back().nodes[0], f);
  if (requant && !out_q) return false;
  Group chain = g;  // the links before the requantization
  if (requant) chain.epilogue.pop_back();
  const Tensor* own_bias = n.has_input(2) ? f.constant(n.inputs[2]) : nullptr;
  if (n.has_input(2) && !own_bias) return false;
  ConvFusion fu = conv_fusion(chain, chain.epilogue.size(), rank, own_bias != nullptr, channels, f);

  // Per output channel: the accumulator's unit s_x * s_w[c], and what the output scales make of it.
  const float sx = form->x.params.scale[0];
  const auto& sw = form->w.params.scale;
  if (!form->w.params.per_tensor() && static_cast<int64_t>(sw.size()) != channels) return false;
  std::vector<float> unit(static_cast<size_t>(channels)), scales(unit.size());
  for (int64_t c = 0; c < channels; ++c) {
    unit[c] = sx * sw[sw.size() == 1 ? 0 : c];
    scales[c] = requant ? unit[c] / out_q->scale[0] : unit[c];
  }
  fu.attr.set_output_scales(sw.size() == 1 ? 0 : 1 << 1,
                            sw.size() == 1 ? std::vector<float>{scales[0]} : scales);
  const int32_t zx = form->x.params.zero_point[0], zy = requant ? out_q->zero_point[0] : 0;
  if (zx != 0) fu.attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (zy != 0) fu.attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});

  const dt src_dt = *dnnl_dtype(form->x.params.type);
  const dt dst_dt = requant ? *dnnl_dtype(out_q->type) : dt::f32;
  double flops = 2.0;
  for (int64_t d : geo->dst) flops *= static_cast<double>(d);
  for (size_t i = geo->weights.size() - (rank - 1); i < geo->weights.size(); ++i)
    flops *= static_cast<double>(geo->weights[i]);
  const int threads = threads_for_work(flops / 4);  // int8: ~4x the multiply-adds per instruction
  ThreadScope scope(threads);
  auto make_pd = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
        dnnl::memory::desc(geo->weights, dt::s8, tag::any), fu.bias_md, dst, geo->strides,
        geo->dilations, geo->pad_l, geo->pad_r);
    return dnnl::convolution_forward::primitive_desc(d, fu.attr, dnnl_engine());
  };
  const auto made_in = lw.layout(form->x.q);
  const auto any_src = dnnl::memory::desc(geo->src, src_dt, tag::any);
  const auto any_dst = dnnl::memory::desc(geo->dst, dst_dt, tag::any);
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory::desc>> tries;
  if (made_in && rank == 4) tries.emplace_back(*made_in, dnnl::memory::desc(geo->dst, dst_dt, tag::nhwc));
  if (rank == 4) tries.emplace_back(dnnl::memory::desc(geo->src, src_dt, tag::nhwc),
                                    dnnl::memory::desc(geo->dst, dst_dt, tag::nhwc));
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
  if (!pd) pd = make_pd(any_src, any_dst);

  auto step = std::make_unique<DnnlStep>(dnnl::convolution_forward(*pd), &n, "onednn.quant_conv");
  step->threads = threads;
  step->bind_constant(DNNL_ARG_WEIGHTS, lw.weights().get(*form->w.q, plain_md(geo->weights, dt::s8),
                                                         pd->weights_desc()));
  if (auto bias = combined_bias(own_bias, fu.unit_bias ? bias_constant(chain.epilogue[0], f) : nullptr,
                                channels)) {
    for (int64_t c = 0; c < channels; ++c) bias->data<float>()[c] /= unit[c];
    const auto bias_md = pd->bias_desc();
    step->bind_constant(DNNL_ARG_BIAS, lw.weights().get(*bias, bias_md, bias_md));
  }
  if (zx != 0) step->bind_constant(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, s32_scalar(zx));
  if (zy != 0) step->bind_constant(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, s32_scalar(zy));
  step->bind_input(DNNL_ARG_SRC, lw.in_layout(form->x.q, pd->src_desc()), pd->src_desc(), geo->src);
  const dnnl::memory::desc dst_md = pd->dst_desc();
  const int share = bind_post_ops(fu.post, dst_md, lw, *step);
  const int out = lw.define(g.output(), dst_md);
  step->bind_output(DNNL_ARG_DST, out, dst_md, OutputMemory::kPlanned, share);
  step->bind_scratchpad(pd->scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kOnednnQuantConv{.name = "onednn.quant_conv", .match = match_quant_conv,
                                            .build = build_quant_conv};

}  // namespace kiln::engine
