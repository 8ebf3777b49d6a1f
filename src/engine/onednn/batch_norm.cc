// BatchNormalization (inference) through oneDNN with the constant statistics, in the layout its
// input was made in; a Relu reading only its result is fused (oneDNN's fuse_norm_relu).
#include "engine/onednn/batch_norm.h"

#include <cmath>

#include "engine/lowering.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/onednn_kernels.h"
#include "engine/onednn/weight_cache.h"
#include "engine/threads.h"
#include "ops/attrs.h"

namespace kiln::engine {

bool batch_norm_fits(const Node& n, const GraphFacts& f) {
  if (n.num_inputs() != 5 || !n.has_input(0) || f.dtype(n.inputs[0]) != DataType::kFloat) return false;
  if (attr_int(n, "training_mode") != 0) return false;
  for (int i = 1; i < n.num_outputs(); ++i)
    if (n.outputs[i]) return false;
  const auto* x = f.dims(n.inputs[0]);
  if (!x || x->size() < 2 || x->size() > 5) return false;
  for (int64_t d : *x)
    if (d <= 0) return false;
  for (int i = 1; i < 5; ++i) {
    const Tensor* t = n.has_input(i) ? f.constant(n.inputs[i]) : nullptr;
    if (!t || t->dtype() != DataType::kFloat || t->numel() != (*x)[1]) return false;
  }
  return true;
}

ChannelAffine batch_norm_affine(const Node& n, const GraphFacts& f) {
  const float* scale = f.constant(n.inputs[1])->data<float>();
  const float* bias = f.constant(n.inputs[2])->data<float>();
  const float* mean = f.constant(n.inputs[3])->data<float>();
  const float* var = f.constant(n.inputs[4])->data<float>();
  const double eps = attr_float(n, "epsilon");
  const auto channels = static_cast<size_t>(f.constant(n.inputs[1])->numel());
  ChannelAffine a{std::vector<float>(channels), std::vector<float>(channels)};
  for (size_t c = 0; c < channels; ++c) {
    const double s = scale[c] / std::sqrt(static_cast<double>(var[c]) + eps);
    a.scale[c] = static_cast<float>(s);
    a.shift[c] = static_cast<float>(bias[c] - s * mean[c]);
  }
  return a;
}

namespace {

using dt = dnnl::memory::data_type;

bool match_batch_norm(const Node& n, const MatchContext& ctx, Group& g) {
  if (!batch_norm_fits(n, ctx.facts)) return false;
  const auto& c = ctx.facts.consumers(n.outputs[0]);
  if (!ctx.standalone && !ctx.facts.is_graph_output(n.outputs[0]) && c.size() == 1 &&
      ctx.is_free(c[0]) && c[0]->op_type == "Relu" && c[0]->domain.empty())
    g.epilogue.push_back(EpilogueUnit{.nodes = {c[0]}, .out = c[0]->outputs[0]});
  return true;
}

bool build_batch_norm(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const auto& x = *f.dims(n.inputs[0]);
  const auto layout = lw.layout(n.inputs[0]);
  const dnnl::memory::desc src_md = layout ? *layout : plain_md(x, dt::f32);
  double bytes = 2 * sizeof(float);
  for (int64_t d : x) bytes *= static_cast<double>(d);
  const int threads = threads_for_bytes(bytes);
  ThreadScope scope(threads);
  auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  if (!g.epilogue.empty()) flags = flags | dnnl::normalization_flags::fuse_norm_relu;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::batch_normalization_forward::primitive_desc pd(
      dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, src_md,
                                              attr_float(n, "epsilon"), flags),
      attr, dnnl_engine());
  auto step = std::make_unique<DnnlStep>(dnnl::batch_normalization_forward(pd), &n, "onednn.batch_norm");
  step->threads = threads;
  step->bind_input(DNNL_ARG_SRC, lw.in_layout(n.inputs[0], pd.src_desc()), pd.src_desc(), x);
  const dnnl::memory::desc channel_md({x[1]}, dt::f32, dnnl::memory::format_tag::x);
  const int args[] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE};
  for (int i = 1; i < 5; ++i)
    step->bind_constant(args[i - 1], lw.weights().get(*f.constant(n.inputs[i]), channel_md, channel_md));
  const int out = lw.define(g.output(), pd.dst_desc());
  step->bind_output(DNNL_ARG_DST, out, pd.dst_desc(), OutputMemory::kPlanned, -1);
  step->bind_scratchpad(pd.scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kOnednnBatchNorm{.name = "onednn.batch_norm",
                                            .match = match_batch_norm, .build = build_batch_norm};

}  // namespace kiln::engine
