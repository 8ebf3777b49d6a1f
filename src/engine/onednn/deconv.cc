// ConvTranspose through oneDNN's deconvolution: explicit pads (output_padding taken off the end
// pad), strides, dilations, groups; the bias and the chain after it fused as post-ops. SAME pads
// and output_shape stay on the reference kernel. Kernels equal to their strides go first to
// cpu.patch_deconv (native/patch_deconv_step.cc).
#include "engine/onednn/deconv_geometry.h"
#include "engine/onednn/onednn_kernels.h"

#include "engine/lowering.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/post_ops.h"
#include "engine/onednn/weight_cache.h"
#include "engine/threads.h"
#include "ops/attrs.h"

namespace kiln::engine {

std::optional<DeconvGeometry> deconv_geometry(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || !n.has_input(1) || !n.outputs[0] || f.dtype(n.inputs[0]) != DataType::kFloat)
    return std::nullopt;
  const auto* x = f.dims(n.inputs[0]);
  const auto* y = f.dims(n.outputs[0]);
  const Tensor* w = f.constant(n.inputs[1]);
  const Tensor* b = n.has_input(2) ? f.constant(n.inputs[2]) : nullptr;
  if (!x || !y || !w || w->dtype() != DataType::kFloat || (n.has_input(2) && !b)) return std::nullopt;
  const int rank = static_cast<int>(x->size()), nsp = rank - 2;
  if (rank < 3 || rank > 5 || w->rank() != rank || y->size() != x->size()) return std::nullopt;
  for (const auto* d : {x, y, &w->dims()})
    for (int64_t v : *d)
      if (v <= 0) return std::nullopt;
  if (attr_string(n, "auto_pad", "NOTSET") != "NOTSET" || n.attr("output_shape")) return std::nullopt;
  const int64_t G = attr_int(n, "group"), C = (*x)[1];
  if (G < 1 || w->dim(0) != C || C % G != 0) return std::nullopt;
  const int64_t M = w->dim(1) * G;
  if ((*y)[1] != M || (b && b->numel() != M)) return std::nullopt;
  auto ints = [&](const char* name, int64_t dflt, size_t count) {
    auto v = attr_ints(n, name);
    if (v.empty()) v.assign(count, dflt);
    return v;
  };
  const auto s = ints("strides", 1, nsp), d = ints("dilations", 1, nsp);
  const auto pads = ints("pads", 0, 2 * nsp), op = ints("output_padding", 0, nsp);
  if (s.size() != size_t(nsp) || d.size() != size_t(nsp) || pads.size() != size_t(2 * nsp) ||
      op.size() != size_t(nsp))
    return std::nullopt;
  DeconvGeometry g{.src = *x, .dst = *y, .channels_out = M};
  for (int i = 0; i < nsp; ++i) {
    const int64_t k = w->dim(2 + i);
    g.strides.push_back(s[i]);
    g.dilations.push_back(d[i] - 1);
    g.pad_l.push_back(pads[i]);
    g.pad_r.push_back(pads[nsp + i] - op[i]);
    if ((*x)[2 + i] - 1 < 0 || s[i] < 1 || d[i] < 1 ||
        ((*x)[2 + i] - 1) * s[i] + (k - 1) * d[i] + 1 - pads[i] - g.pad_r.back() != (*y)[2 + i])
      return std::nullopt;
  }
  // ONNX's weights are [C, M/G, k...]; oneDNN's [G, M/G, C/G, k...] (no G dim when G is 1)
  int64_t ksize = 1;
  for (int i = 2; i < rank; ++i) ksize *= w->dim(i);
  const int64_t cg = C / G, mg = M / G;
  std::vector<int64_t> kstrides;
  for (int i = 2; i < rank; ++i) {
    int64_t st = 1;
    for (int j = i + 1; j < rank; ++j) st *= w->dim(j);
    kstrides.push_back(st);
  }
  if (G > 1) {
    g.weights = {G, mg, cg};
    g.weight_strides = {cg * mg * ksize, ksize, mg * ksize};
  } else {
    g.weights = {M, C};
    g.weight_strides = {ksize, M * ksize};
  }
  for (int i = 2; i < rank; ++i) {
    g.weights.push_back(w->dim(i));
    g.weight_strides.push_back(kstrides[i - 2]);
  }
  return g;
}

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

bool match_deconv(const Node& n, const MatchContext& ctx, Group& g) {
  if (!deconv_geometry(n, ctx.facts)) return false;
  g.epilogue = match_epilogue(n.outputs[0], ctx, 1);
  return true;
}

bool build_deconv(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const DeconvGeometry geo = *deconv_geometry(n, f);
  const int rank = static_cast<int>(geo.src.size());
  const Tensor* own_bias = n.has_input(2) ? f.constant(n.inputs[2]) : nullptr;
  double flops = 2.0 * static_cast<double>(geo.src[1]);
  for (size_t i = 2; i < geo.src.size(); ++i) flops *= static_cast<double>(geo.src[i]);
  flops *= static_cast<double>(geo.channels_out);
  const int threads = threads_for_work(flops);
  ThreadScope scope(threads);
  struct Made {
    dnnl::deconvolution_forward::primitive_desc pd;
    FusedPostOps post;
    bool unit_bias;
  };
  const Made made = fuse_longest(g, 0, [&](size_t units) {
    ConvFusion fu = conv_fusion(g, units, rank, own_bias != nullptr, geo.channels_out, f);
    dnnl::deconvolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
        dnnl::memory::desc(geo.src, dt::f32, tag::any), dnnl::memory::desc(geo.weights, dt::f32, tag::any),
        fu.bias_md, dnnl::memory::desc(geo.dst, dt::f32, tag::any), geo.strides, geo.dilations,
        geo.pad_l, geo.pad_r);
    return Made{dnnl::deconvolution_forward::primitive_desc(d, fu.attr, dnnl_engine()),
                std::move(fu.post), fu.unit_bias};
  });
  auto step = std::make_unique<DnnlStep>(dnnl::deconvolution_forward(made.pd), &n, "onednn.deconv");
  step->threads = threads;
  step->bind_input(DNNL_ARG_SRC, lw.in_layout(n.inputs[0], made.pd.src_desc()), made.pd.src_desc(), geo.src);
  step->bind_constant(DNNL_ARG_WEIGHTS,
                      lw.packed_constant(n.inputs[1], strided_md(geo.weights, geo.weight_strides, dt::f32),
                                         made.pd.weights_desc()));
  finish_conv_step(std::move(step), made.pd, made.post, own_bias, made.unit_bias, geo.channels_out,
                   g, f, lw);
  return true;
}

}  // namespace

constinit const KernelImpl kOnednnDeconv{.name = "onednn.deconv", .match = match_deconv,
                                         .build = build_deconv};

}  // namespace kiln::engine
