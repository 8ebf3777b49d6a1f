// Conv through oneDNN: 1-D to 3-D, grouped and depthwise, strides, dilations, pads (SAME
// resolved), with the bias and the chain after it (activations, residual sum, binary ops) fused
// as post-ops. The source and destination take the layout the primitive prefers (channels-last
// or blocked); weights are reordered once.

#include <functional>
#include <numeric>
#include <optional>

#include <fmt/ranges.h>

#include "engine/cpu/elementwise.h"
#include "engine/lowering.h"
#include "engine/onednn/bf16_support.h"
#include "engine/onednn/conv_geometry.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/onednn_kernels.h"
#include "engine/onednn/post_ops.h"
#include "engine/onednn/weight_cache.h"
#include "engine/threads.h"
#include "engine/tuning.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// Winograd's F(2x2 or 4x4, 3x3): 2-D, 3x3, stride 1, no dilation, no groups, and channels
// enough to fill its blocks of 16 on both sides: a stem of 3 input channels is padded to 16 in
// the transformed domain (UNet's 3 -> 16 conv at 128x128 ran 0.32 ms Winograd, direct ...).
constexpr int64_t kWinogradMinChannels = 16;
bool winograd_fits(const ConvGeometry& g) {
  return g.src.size() == 4 && g.weights.size() == 4 && g.weights[2] == 3 && g.weights[3] == 3 &&
         g.weights[0] >= kWinogradMinChannels && g.weights[1] >= kWinogradMinChannels &&
         g.strides == std::vector<int64_t>{1, 1} && g.dilations == std::vector<int64_t>{0, 0};
}

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s;
  for (int64_t v : d) s += (s.empty() ? "" : "x") + std::to_string(v);
  return s;
}

// 2 * outputs * (C/G) * kernel size; the weights' dims end with C/G and the kernel.
double conv_flops(const ConvGeometry& g) {
  double flops = 2.0;
  for (int64_t d : g.dst) flops *= static_cast<double>(d);
  for (size_t i = g.weights.size() - (g.src.size() - 1); i < g.weights.size(); ++i)
    flops *= static_cast<double>(g.weights[i]);
  return flops;
}

// The family of a 4-D layout, for a decision's key: "nChw16c" (channel blocks of 16),
// "channels-last", "row-major" (also what no layout yet means: the model's input).
std::string layout_family(const std::optional<dnnl::memory::desc>& md) {
  if (!md || is_plain(*md)) return "row-major";
  const auto& b = md->data.format_desc.blocking;
  if (b.inner_nblks != 0) return fmt::format("nChw{}c", b.inner_blks[0]);
  return b.strides[1] == 1 ? "channels-last" : "strided";
}

// A float conv by `alg` from `src` to `dst` (tag::any: oneDNN's choice), its weights in oneDNN's
// choice of layout; nullopt where oneDNN has no optimized implementation of it.
std::optional<dnnl::convolution_forward::primitive_desc> optimized_conv(
    const ConvGeometry& g, dnnl::algorithm alg, const dnnl::memory::desc& src,
    const dnnl::memory::desc& dst, const dnnl::primitive_attr& attr = {}) {
  try {
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, alg, src,
                                            dnnl::memory::desc(g.weights, dt::f32, tag::any), dst,
                                            g.strides, g.dilations, g.pad_l, g.pad_r);
    dnnl::convolution_forward::primitive_desc pd(d, attr, dnnl_engine());
    if (!is_optimized(pd.impl_info_str())) return std::nullopt;
    return pd;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// One run of a float conv by `alg` reading its input as it was made (`made`; row-major when
// none), on scratch buffers: the conv in the source layout `src` (tag::any: oneDNN's choice) and
// the result in `dst`, with the reorder of the input first where the conv reads another layout.
// Null where oneDNN has no optimized implementation of it.
std::function<void()> timed_conv(const ConvGeometry& g, dnnl::algorithm alg, const dnnl::memory::desc& made,
                                 const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
  const auto made_pd = optimized_conv(g, alg, src, dst);
  if (!made_pd) return nullptr;
  const dnnl::convolution_forward::primitive_desc& pd = *made_pd;
  try {
    auto buffers = std::make_shared<std::vector<dnnl::memory>>();
    for (const auto& md : {pd.src_desc(), pd.weights_desc(), pd.dst_desc(), pd.scratchpad_desc(), made})
      buffers->push_back(zeroed_memory(md));
    auto prim = std::make_shared<dnnl::convolution_forward>(pd);
    std::shared_ptr<dnnl::reorder> reorder;
    if (!same_layout(made, pd.src_desc())) reorder = std::make_shared<dnnl::reorder>((*buffers)[4], (*buffers)[0]);
    return [prim, reorder, buffers] {
      auto& b = *buffers;
      if (reorder) reorder->execute(dnnl_stream(), b[4], b[0]);
      prim->execute(dnnl_stream(), {{DNNL_ARG_SRC, b[0]}, {DNNL_ARG_WEIGHTS, b[1]}, {DNNL_ARG_DST, b[2]},
                                    {DNNL_ARG_SCRATCHPAD, b[3]}});
      dnnl_stream().wait();
    };
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

// The bytes a float conv by `alg` keeps (its packed weights) and borrows each run (its
// scratchpad), or 0 where oneDNN has no optimized implementation of it.
size_t conv_bytes(const ConvGeometry& g, dnnl::algorithm alg, const dnnl::memory::desc& src,
                  const dnnl::memory::desc& dst) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // else its size reads 0
  const auto pd = optimized_conv(g, alg, src, dst, attr);
  return pd ? pd->weights_desc().get_size() + pd->scratchpad_desc().get_size() : 0;
}

// Memory a Winograd conv may take beyond the direct one's before its speed has to pay for it:
// its transformed weights are 1.8x (F(2x2)) to 4x (F(4x4)) the plain ones, and its scratchpad
// (about 0.5 MB a thread for F(2x2); F(4x4) holds the transformed input and output: 6.8 MB for
// the small UNet's 32 -> 16 channels at 128x128 on one thread, where it measured 5% faster and
// the model's peak RSS was 22 MB against ONNX Runtime's 20). The scratchpad is one per plan (the
// largest step's), so the usual per-thread buffers stay below the line.
constexpr size_t kWinogradSpareBytes = size_t{4} << 20;
constexpr double kWinogradCostlyMargin = 0.10;

// Whether a float conv runs by Winograd: where it fits, the order of preference says yes (fewer
// multiplications), but oneDNN's direct kernels beat its Winograd on some CPUs and shapes (brgemm
// convs, large images of few channels), so the tuner times both on the conv's threads, each from
// the input as it was made (`made_in`; none: row-major), the reorder to the layout the conv reads
// counted: Winograd in oneDNN's blocked layouts, direct writing the family of layout it reads (as
// build_conv asks), or oneDNN's choice for an input in no layout yet. Where Winograd would take
// more than kWinogradSpareBytes beyond direct, direct is the preference and Winograd has to
// measure kWinogradCostlyMargin faster.
bool winograd_chosen(const ConvGeometry& g, const std::optional<dnnl::memory::desc>& made_in, Lowering& lw) {
  if (!lw.options().winograd || !winograd_fits(g)) return false;
  ThreadScope scope(threads_for_work(conv_flops(g)));
  const dnnl::memory::desc made = made_in ? *made_in : plain_md(g.src, dt::f32);
  const dnnl::memory::desc any_src(g.src, dt::f32, tag::any), any_dst(g.dst, dt::f32, tag::any);
  dnnl::memory::desc direct_src = any_src, direct_dst = any_dst;
  if (made_in) {
    direct_src = *made_in;
    direct_dst = dnnl::memory::desc(g.dst, dt::f32, made_in->data.format_desc.blocking.inner_nblks != 0 ? tag::nChw16c : tag::nhwc);
  }
  const Candidate winograd{"winograd", [=] { return timed_conv(g, dnnl::algorithm::convolution_winograd, made, any_src, any_dst); }};
  const Candidate direct{"direct", [=] { return timed_conv(g, dnnl::algorithm::convolution_direct, made, direct_src, direct_dst); }};
  const size_t winograd_bytes = conv_bytes(g, dnnl::algorithm::convolution_winograd, any_src, any_dst);
  const size_t direct_bytes = conv_bytes(g, dnnl::algorithm::convolution_direct, direct_src, direct_dst);
  const bool costly = winograd_bytes > direct_bytes + kWinogradSpareBytes && direct_bytes != 0;
  const std::string key = fmt::format("conv f32 {}: {} {} by {}, pads {},{}, {} threads",
                                      costly ? "direct|winograd (costly)" : "winograd|direct",
                                      dims_text(g.src), layout_family(made_in), dims_text(g.weights),
                                      fmt::join(g.pad_l, ","), fmt::join(g.pad_r, ","), current_threads());
  if (!costly) return lw.tuner().choose(key, {winograd, direct}) == "winograd";
  Candidate dear = winograd;
  dear.margin = kWinogradCostlyMargin;
  return lw.tuner().choose(key, {direct, dear}) == "winograd";
}

// Whether the graph's convs would rather run channel-blocked: some may run by Winograd (oneDNN
// 2.6 has it blocked only, and what follows a blocked result stays blocked) and none is grouped
// (oneDNN's depthwise convs ran faster channels-last here: EfficientNet-B0 blocked 6.08 ms
// against 5.70, PP-OCRv4's detector with a blocked stem 28.8 against 27.2). Each of those convs
// then measures Winograd against a direct conv on the blocked input (winograd_chosen).
bool graph_prefers_blocked(const GraphFacts& f) {
  bool winograd = false;
  for (const auto& n : f.graph().nodes()) {
    if (n->op_type != "Conv" || !n->domain.empty()) continue;
    const auto geo = conv_geometry(*n, f);
    if (!geo) continue;
    if (attr_int(*n, "group") != 1) return false;
    winograd = winograd || winograd_fits(*geo);
  }
  return winograd;
}

// A conv's input made as x * s with s a per-channel scale computed at run time (the Mul of a
// squeeze-and-excitation block): the scale can go into the weights instead, which is less work
// when the weights are smaller than x.
struct InputScale {
  const Node* mul;
  const Value* x;  // the full-size operand
  const Value* s;  // [1, C, 1...] or [C, 1...]
};

std::optional<InputScale> input_scale(const Node& n, const GraphFacts& f, const ConvGeometry& geo) {
  const Value* in = n.inputs[0];
  const Node* m = in->producer;
  if (!m || m->op_type != "Mul" || !m->domain.empty() || m->num_inputs() != 2 ||
      f.is_graph_output(in) || f.consumers(in).size() != 1)
    return std::nullopt;
  int64_t weights = 1, input = 1;
  for (int64_t d : geo.weights) weights *= d;
  for (int64_t d : geo.src) input *= d;
  if (weights >= input) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const Value *x = m->inputs[i], *s = m->inputs[1 - i];
    if (!x || !s || x == s || f.constant(x) || f.constant(s) || f.dtype(s) != DataType::kFloat) continue;
    const auto *xd = f.dims(x), *sd = f.dims(s);
    if (!xd || !sd || *xd != geo.src || sd->size() > xd->size() || xd->size() - sd->size() > 1) continue;
    const size_t off = xd->size() - sd->size();  // s runs along the channels only
    bool along_channels = true;
    for (size_t k = 0; k < sd->size(); ++k) along_channels &= (*sd)[k] == (k + off == 1 ? geo.src[1] : 1);
    if (along_channels) return InputScale{m, x, s};
  }
  return std::nullopt;
}

// Whether v's readers are all float convs onednn.conv takes in bf16 (asked for the model, or
// their weights stored bf16), so v may be made in bf16: not a graph output, read by nothing else
// (a reference kernel or kiln's own would read the bytes as float), and channels-last with more
// than one channel and pixel, a layout the slot keeps (a plain bf16 one would be taken for float).
bool read_by_bf16_convs(const Value* v, const GraphFacts& f, const EngineOptions& opts) {
  const auto* d = f.dims(v);
  if (f.is_graph_output(v) || !d || d->size() != 4 || (*d)[1] < 2 || (*d)[2] * (*d)[3] < 2) return false;
  const auto& readers = f.consumers(v);
  if (readers.empty()) return false;
  for (const Node* r : readers)
    if (!is_op(r, "Conv") || r->inputs[0] != v || !conv_geometry(*r, f) ||
        input_scale(*r, f, *conv_geometry(*r, f)) || !(opts.bf16 || stored_bf16(r->inputs[1], f)))
      return false;
  return true;
}

bool match_conv(const Node& n, const MatchContext& ctx, Group& g) {
  const auto geo = conv_geometry(n, ctx.facts);
  if (!geo) return false;
  if (!ctx.standalone)
    if (auto sc = input_scale(n, ctx.facts, *geo); sc && ctx.is_free(sc->mul)) g.prologue.push_back(sc->mul);
  g.epilogue = match_epilogue(n.outputs[0], ctx, 1);
  return true;
}

// The conv of an InputScale: each run writes weights * s[input channel] where the primitive reads
// its weights. In a blocked layout (a permutation of the weights, zero-padded) that is one pass
// over the weights packed once, with the input channel of every packed element packed alongside;
// scaling the row-major weights and reordering them each run cost a oneDNN reorder per SE block
// (10 in EfficientNet-B0, 65-95 us each). Winograd's transformed weights are still linear in each
// input channel's taps but not a permutation: there, the row-major weights are scaled and
// reordered each run.
class InputScaledConv : public DnnlStep {
 public:
  // weights: ONNX's [M, C/G, k...]; dims: the primitive's (with a group dim when G > 1)
  InputScaledConv(dnnl::primitive prim, const Node* n, const Tensor& weights,
                  const std::vector<int64_t>& dims, int64_t groups, const dnnl::memory::desc& packed_md)
      : DnnlStep(std::move(prim), n, "onednn.conv"),
        channels_(weights.dim(1) * groups),
        scale_(channels_ + 1, 0.f),
        packed_(packed_md, dnnl_engine()) {
    const int64_t out = weights.dim(0), in_g = weights.dim(1), per_group = out / groups;
    const int64_t k = weights.numel() / (out * in_g);
    std::vector<int32_t> channel(static_cast<size_t>(weights.numel()));  // row-major
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in_g; ++i)
        for (int64_t j = 0, at = (o * in_g + i) * k; j < k; ++j)
          channel[at + j] = static_cast<int32_t>((o / per_group) * in_g + i);
    const auto plain = plain_md(dims, dt::f32);
    const float* w = weights.data<float>();
    if (packed_md.data.format_kind != dnnl_blocked) {
      base_.assign(w, w + weights.numel());
      set_channels(channel);
      scaled_.resize(base_.size());
      scaled_mem_ = dnnl::memory(plain, dnnl_engine(), scaled_.data());
      reorder_ = dnnl::reorder(scaled_mem_, packed_);
      target_ = scaled_.data();
      bind_constant(DNNL_ARG_WEIGHTS, packed_);
      return;
    }
    // 1 + the channel, as float (exact below 2^24): the padding comes out of the reorder as 0.
    std::vector<float> channel1(channel.size());
    for (size_t e = 0; e < channel.size(); ++e) channel1[e] = static_cast<float>(channel[e] + 1);
    const size_t packed_elems = packed_md.get_size() / sizeof(float);
    base_.resize(packed_elems);
    std::vector<float> packed_channel1(packed_elems);
    auto pack = [&](const float* from, float* to) {
      dnnl::memory src(plain, dnnl_engine(), const_cast<float*>(from)), dst(packed_md, dnnl_engine(), to);
      dnnl::reorder(src, dst).execute(dnnl_stream(), src, dst);
    };
    pack(w, base_.data());
    pack(channel1.data(), packed_channel1.data());
    dnnl_stream().wait();
    // Padding reads the scale's extra last element, 0: a NaN or inf scale stays out of it.
    std::vector<int32_t> packed_channel(packed_elems);
    for (size_t e = 0; e < packed_elems; ++e) {
      const auto c1 = static_cast<int32_t>(packed_channel1[e]);
      packed_channel[e] = c1 == 0 ? static_cast<int32_t>(channels_) : c1 - 1;
    }
    set_channels(packed_channel);
    target_ = static_cast<float*>(packed_.get_data_handle());
    bind_constant(DNNL_ARG_WEIGHTS, packed_);
  }
  void read_scale(int slot) {
    scale_at_ = inputs.size();
    inputs.push_back(slot);
  }
  void run(RunState& st) override {
    const Tensor& s = st.slots[inputs[scale_at_]].tensor;
    KILN_CHECK(s.numel() == channels_, ErrorKind::kRuntime, "{}: a scale of {} values for {} channels",
               kernel, s.numel(), channels_);
    std::copy_n(s.data<float>(), channels_, scale_.begin());
    cpu::scale_runs(base_.data(), scale_.data(), run_channel_.data(), target_,
                    static_cast<int64_t>(run_channel_.size()), run_len_);
    if (reorder_) reorder_->execute(dnnl_stream(), scaled_mem_, packed_);
    DnnlStep::run(st);
  }

 private:
  // base_ in runs of run_len_ elements of one input channel each (the output channels of a
  // blocked layout's innermost block: 16 to 64 long; a kernel's taps when row-major).
  void set_channels(const std::vector<int32_t>& channel_of) {
    int64_t len = 0;
    for (size_t e = 0, start = 0; e <= channel_of.size(); ++e)
      if (e == channel_of.size() || channel_of[e] != channel_of[start]) {
        len = std::gcd(len, static_cast<int64_t>(e - start));
        start = e;
      }
    run_len_ = std::max<int64_t>(len, 1);
    run_channel_.clear();
    for (size_t e = 0; e < channel_of.size(); e += static_cast<size_t>(run_len_))
      run_channel_.push_back(channel_of[e]);
  }

  int64_t channels_;                  // of the input: the scale's length
  std::vector<float> scale_;          // this run's scale, then a 0 for the padding
  std::vector<float> base_;           // the weights, unscaled: packed, or row-major for a reorder
  int64_t run_len_ = 1;               // base_ is runs of this many elements of one input channel
  std::vector<int32_t> run_channel_;  // per run, its input channel (padding: channels_)
  float* target_ = nullptr;           // where the scaled weights go: packed_, or scaled_
  dnnl::memory packed_;               // what the primitive reads
  // Layouts that are not a permutation (Winograd): row-major scaled weights, reordered each run.
  std::vector<float> scaled_;
  dnnl::memory scaled_mem_;
  std::optional<dnnl::reorder> reorder_;
  size_t scale_at_ = 0;
};

bool build_conv(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const ConvGeometry geo = *conv_geometry(n, f);
  const int rank = static_cast<int>(geo.src.size());
  // the input: x of an InputScale in the prologue, else the node's
  const auto scale = g.prologue.empty() ? std::nullopt : input_scale(n, f, geo);
  const Value* x = scale ? scale->x : n.inputs[0];
  // bf16: the input reordered to bf16, the weights packed in bf16, the result float
  const bool bf16 = !scale && use_bf16(lw.options(), n.inputs[1], f);
  const dt in_dt = bf16 ? dt::bf16 : dt::f32;
  // and the result in bf16 too when only bf16 convs read it (they would reorder it to bf16)
  const Tensor* own_bias = n.has_input(2) ? f.constant(n.inputs[2]) : nullptr;
  struct Made {
    dnnl::convolution_forward::primitive_desc pd;
    FusedPostOps post;
    bool unit_bias;
  };
  const int threads = threads_for_work(conv_flops(geo));
  ThreadScope scope(threads);
  const auto made_in = lw.layout(x);
  // A conv on data in no layout yet (the stem, on the model's input) writes channel-blocked
  // (in whole blocks) when the graph prefers it: the network then runs blocked from the start,
  // where a channels-last stem needed a reorder before each Winograd conv's input and concats
  // mixing the two (SqueezeNet 1.1: 2.42-2.56 -> 1.98-2.49 ms; ResNet-50, DenseNet-121 even).
  const bool blocked_stem = !made_in && rank == 4 && geo.channels_out % 16 == 0 &&
                            lw.options().winograd && graph_prefers_blocked(f);
  const bool winograd = !bf16 && winograd_chosen(geo, made_in, lw);
  const Made made = fuse_longest(g, 0, [&](size_t units) {
    ConvFusion fu = conv_fusion(g, units, rank, own_bias != nullptr, geo.channels_out, f);
    auto make_pd = [&](dnnl::algorithm alg, const dnnl::memory::desc& src,
                       const dnnl::memory::desc& dst) {
      dnnl::convolution_forward::desc d(
          dnnl::prop_kind::forward_inference, alg, src,
          dnnl::memory::desc(geo.weights, in_dt, tag::any), fu.bias_md, dst, geo.strides,
          geo.dilations, geo.pad_l, geo.pad_r);
      return dnnl::convolution_forward::primitive_desc(d, fu.attr, dnnl_engine());
    };
    const auto any_src = dnnl::memory::desc(geo.src, in_dt, tag::any);
    const auto any_dst = dnnl::memory::desc(geo.dst, dt::f32, tag::any);
    // Candidates, best first; the first an optimized implementation takes wins.
    std::vector<std::tuple<dnnl::algorithm, dnnl::memory::desc, dnnl::memory::desc>> tries;
    if (bf16 && rank == 4) {  // channels-last, as AMX's brgemm convs read it
      const bool bf16_out = units == g.epilogue.size() && read_by_bf16_convs(g.output(), f, lw.options()) && !fu.post.sum;
      tries.emplace_back(dnnl::algorithm::convolution_direct, dnnl::memory::desc(geo.src, in_dt, tag::nhwc),
                         dnnl::memory::desc(geo.dst, bf16_out ? dt::bf16 : dt::f32, tag::nhwc));
    }
    if (winograd) {  // 3x3, stride 1: fewer multiplications (where measured faster)
      if (made_in) tries.emplace_back(dnnl::algorithm::convolution_winograd, *made_in, any_dst);
      tries.emplace_back(dnnl::algorithm::convolution_winograd, any_src, any_dst);
    }
    // The input as it was made and the result in the same family of layout (channels-last or
    // channel-blocked): no reorder on either side.
    if (made_in && rank == 4 && !bf16) {
      const bool blocked = made_in->data.format_desc.blocking.inner_nblks != 0;
      tries.emplace_back(dnnl::algorithm::convolution_direct, *made_in,
                         dnnl::memory::desc(geo.dst, dt::f32, blocked ? tag::nChw16c : tag::nhwc));
    }
    if (blocked_stem && !bf16)
      tries.emplace_back(dnnl::algorithm::convolution_direct, any_src,
                         dnnl::memory::desc(geo.dst, dt::f32, tag::nChw16c));
    for (const auto& [alg, src, dst] : tries) {
      try {
        auto pd = make_pd(alg, src, dst);
        if (is_optimized(pd.impl_info_str())) return Made{pd, std::move(fu.post), fu.unit_bias};
      } catch (const dnnl::error&) {
      }
    }
    return Made{make_pd(dnnl::algorithm::convolution_direct, any_src, any_dst), std::move(fu.post),
                fu.unit_bias};
  });
  std::unique_ptr<DnnlStep> step;
  if (scale) {
    auto scaled = std::make_unique<InputScaledConv>(dnnl::convolution_forward(made.pd), &n,
                                                    *f.constant(n.inputs[1]), geo.weights,
                                                    attr_int(n, "group"), made.pd.weights_desc());
    scaled->read_scale(lw.plain(scale->s));
    step = std::move(scaled);
  } else {
    step = std::make_unique<DnnlStep>(dnnl::convolution_forward(made.pd), &n,
                                      bf16 ? "onednn.conv_bf16" : "onednn.conv");
    const Tensor* stored = bf16 ? stored_bf16_tensor(n.inputs[1], f) : nullptr;  // packed from the bf16 bytes
    step->bind_constant(DNNL_ARG_WEIGHTS,
                        stored ? lw.weights().get(*stored, plain_md(geo.weights, dt::bf16), made.pd.weights_desc())
                               : lw.packed_constant(n.inputs[1], plain_md(geo.weights, dt::f32),
                                                    made.pd.weights_desc()));
  }
  step->threads = threads;
  step->bind_input(DNNL_ARG_SRC, lw.in_layout(x, made.pd.src_desc()), made.pd.src_desc(), geo.src);
  finish_conv_step(std::move(step), made.pd, made.post, own_bias, made.unit_bias, geo.channels_out,
                   g, f, lw);
  return true;
}

}  // namespace

constinit const KernelImpl kOnednnConv{.name = "onednn.conv", .match = match_conv,
                                       .build = build_conv};

}  // namespace kiln::engine
