// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool through oneDNN, reading the layout
// their input was made in (channels-last after a conv) and writing the same; MaxPool of the QDQ
// form on the 8-bit values ("onednn.quant_pool").
#include "engine/onednn/pool.h"

#include "engine/lowering.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/onednn_kernels.h"
#include "engine/qdq_pattern.h"
#include "engine/threads.h"
#include "ops/window_geometry.h"

namespace kiln::engine {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct PoolGeometry {
  dnnl::algorithm alg;
  std::vector<int64_t> src, dst, kernel, strides, dilations, pad_l, pad_r;
};

std::optional<PoolGeometry> pool_geometry(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || f.dtype(n.inputs[0]) != DataType::kFloat) return {};
  if (n.num_outputs() > 1 && n.outputs[1]) return {};  // MaxPool's Indices
  const auto* x = f.dims(n.inputs[0]);
  if (!x || x->size() < 3 || x->size() > 5) return {};
  for (int64_t d : *x)
    if (d <= 0) return {};
  const int nsp = static_cast<int>(x->size()) - 2;
  PoolGeometry g;
  g.src = *x;
  g.dst = {(*x)[0], (*x)[1]};
  const std::string& op = n.op_type;
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    g.alg = op == "GlobalMaxPool" ? dnnl::algorithm::pooling_max
                                  : dnnl::algorithm::pooling_avg_exclude_padding;
    for (int i = 0; i < nsp; ++i) {
      g.dst.push_back(1);
      g.kernel.push_back((*x)[2 + i]);
      g.strides.push_back(1);
      g.dilations.push_back(0);
      g.pad_l.push_back(0);
      g.pad_r.push_back(0);
    }
    return g;
  }
  const bool include_pad = op == "AveragePool" && attr_int(n, "count_include_pad") != 0;
  g.alg = op == "MaxPool" ? dnnl::algorithm::pooling_max
          : include_pad   ? dnnl::algorithm::pooling_avg_include_padding
                          : dnnl::algorithm::pooling_avg_exclude_padding;
  if (op == "MaxPool" && attr_int(n, "storage_order", 0) != 0) return {};
  const auto fit = nn::fit_window(n, std::vector<int64_t>(x->begin() + 2, x->end()), std::nullopt, true);
  if (!fit) return {};  // the reference kernel reports it
  const nn::Window& win = fit->window;
  for (int i = 0; i < nsp; ++i) {
    const int64_t out = fit->out[i];
    // the end pad oneDNN needs for `out` windows; ceil_mode may need more than the attribute's
    const int64_t pad_r = (out - 1) * win.s[i] + win.eff_k(i) - (*x)[2 + i] - win.pb[i];
    if (pad_r > win.pe[i] && include_pad) return {};  // counts differ in the overhang
    if (pad_r < 0 || win.pb[i] >= win.eff_k(i) || pad_r >= win.eff_k(i)) return {};
    g.dst.push_back(out);
    g.kernel.push_back(win.k[i]);
    g.strides.push_back(win.s[i]);
    g.dilations.push_back(win.d[i] - 1);
    g.pad_l.push_back(win.pb[i]);
    g.pad_r.push_back(pad_r);
  }
  for (int64_t d : g.dst)
    if (d <= 0) return {};
  return g;
}

// The pooling primitive reading src as it was made (`made`), or, where oneDNN has only a slow
// kernel for that layout and the input is large enough for the reorders to cost less (64 KiB),
// reading the first layout it runs optimized (the input then reordered): on AVX2 its u8 pooling
// in 8-channel blocks is the reference loops (ResNet-50 int8's MaxPool: 58 ms), and row-major f32
// pooling is simple_nchw (9 ms for 64x112x112, 0.4 blocked).
dnnl::pooling_v2_forward::primitive_desc pool_pd(const PoolGeometry& geo, dt t,
                                                 const dnnl::memory::desc& made) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto make = [&](const dnnl::memory::desc& src) {
    dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, geo.alg, src,
                                     dnnl::memory::desc(geo.dst, t, tag::any), geo.strides,
                                     geo.kernel, geo.dilations, geo.pad_l, geo.pad_r);
    return dnnl::pooling_v2_forward::primitive_desc(d, attr, dnnl_engine());
  };
  const auto as_made = make(made);
  constexpr size_t kWorthReordering = 64 * 1024;
  if (is_optimized(as_made.impl_info_str()) || geo.src.size() != 4 ||
      made.get_size() < kWorthReordering)
    return as_made;
  for (const tag other : {tag::nhwc, tag::nChw16c, tag::nChw8c}) {
    try {
      auto pd = make(dnnl::memory::desc(geo.src, t, other));
      if (is_optimized(pd.impl_info_str())) return pd;
    } catch (const dnnl::error&) {
    }
  }
  return as_made;
}

bool match_pool(const Node& n, const MatchContext& ctx, Group& g) {
  return pool_geometry(n, ctx.facts).has_value();
}

bool build_pool(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const PoolGeometry geo = *pool_geometry(n, lw.facts());
  const auto layout = lw.layout(n.inputs[0]);
  const dnnl::memory::desc src_md = layout ? *layout : plain_md(geo.src, dt::f32);
  double work = 1;
  for (int64_t d : geo.src) work *= static_cast<double>(d);
  const int threads = threads_for_bytes(work * sizeof(float));
  ThreadScope scope(threads);
  const auto pd = pool_pd(geo, dt::f32, src_md);
  auto step = std::make_unique<DnnlStep>(dnnl::pooling_v2_forward(pd), &n, "onednn.pool");
  step->threads = threads;
  step->bind_input(DNNL_ARG_SRC, lw.in_layout(n.inputs[0], pd.src_desc()), pd.src_desc(), geo.src);
  const int out = lw.define(n.outputs[0], pd.dst_desc());
  step->bind_output(DNNL_ARG_DST, out, pd.dst_desc(), OutputMemory::kPlanned, -1);
  step->bind_scratchpad(pd.scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
  return true;
}

// MaxPool of the QDQ form, DequantizeLinear -> MaxPool -> QuantizeLinear with the same parameters
// (ONNX Runtime's form for it): the max of the 8-bit values themselves (dequantization is
// increasing, and the requantization gives each value back exactly).
std::optional<DequantizedInput> quant_max_pool(const Node& n, const MatchContext& ctx) {
  if (ctx.standalone || n.op_type != "MaxPool" || !pool_geometry(n, ctx.facts)) return std::nullopt;
  auto x = dequantized_input(n.inputs[0], ctx.facts);
  if (!x || sole_consumer(x->dq->outputs[0], ctx) != &n || !ctx.is_free(x->dq)) return std::nullopt;
  const auto y = quantize_of(n.outputs[0], ctx);
  if (!y || y->params.type != x->params.type || y->params.scale != x->params.scale ||
      y->params.zero_point != x->params.zero_point)
    return std::nullopt;
  return x;
}

bool match_quant_max_pool(const Node& n, const MatchContext& ctx, Group& g) {
  const auto x = quant_max_pool(n, ctx);
  if (!x) return false;
  g.prologue.push_back(x->dq);
  const Node* q = sole_consumer(n.outputs[0], ctx);
  g.epilogue.push_back(EpilogueUnit{.nodes = {q}, .out = q->outputs[0]});
  return true;
}

bool build_quant_max_pool(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const PoolGeometry geo = *pool_geometry(n, lw.facts());
  const auto x = dequantized_input(n.inputs[0], lw.facts());
  if (!x) return false;
  const dt t = *dnnl_dtype(x->params.type);
  const auto layout = lw.layout(x->q);
  const dnnl::memory::desc src_md = layout ? *layout : plain_md(geo.src, t);
  double work = 1;
  for (int64_t d : geo.src) work *= static_cast<double>(d);
  const int threads = threads_for_bytes(work);
  ThreadScope scope(threads);
  const auto pd = pool_pd(geo, t, src_md);
  auto step = std::make_unique<DnnlStep>(dnnl::pooling_v2_forward(pd), &n, "onednn.quant_pool");
  step->threads = threads;
  step->bind_input(DNNL_ARG_SRC, lw.in_layout(x->q, pd.src_desc()), pd.src_desc(), geo.src);
  const int out = lw.define(g.output(), pd.dst_desc());
  step->bind_output(DNNL_ARG_DST, out, pd.dst_desc(), OutputMemory::kPlanned, -1);
  step->bind_scratchpad(pd.scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
  return true;
}

}  // namespace

std::function<void()> timed_onednn_pool(const Node& n, const GraphFacts& f, const dnnl::memory::desc& made) {
  const auto geo = pool_geometry(n, f);
  if (!geo) return nullptr;
  try {
    const auto pd = pool_pd(*geo, dt::f32, made);
    if (!is_optimized(pd.impl_info_str()) || pd.src_desc() != made) return nullptr;
    auto buffers = std::make_shared<std::vector<dnnl::memory>>();
    for (const auto& md : {pd.src_desc(), pd.dst_desc(), pd.scratchpad_desc()}) buffers->push_back(zeroed_memory(md));
    auto prim = std::make_shared<dnnl::pooling_v2_forward>(pd);
    return [prim, buffers] {
      auto& b = *buffers;
      prim->execute(dnnl_stream(), {{DNNL_ARG_SRC, b[0]}, {DNNL_ARG_DST, b[1]}, {DNNL_ARG_SCRATCHPAD, b[2]}});
      dnnl_stream().wait();
    };
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

constinit const KernelImpl kOnednnPool{.name = "onednn.pool", .match = match_pool,
                                       .build = build_pool};
constinit const KernelImpl kOnednnQuantMaxPool{.name = "onednn.quant_pool", .match = match_quant_max_pool,
                                               .build = build_quant_max_pool};

}  // namespace kiln::engine
