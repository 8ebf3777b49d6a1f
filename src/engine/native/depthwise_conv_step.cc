// Depthwise Conv 2-D (group = input channels = output channels) on cpu::depthwise_conv,
// channels-last or in oneDNN's blocks of 16 channels (whichever its input was made in), with the
// SiLU that makes its input (x * sigmoid(x), what EfficientNet's expansion convs end with) and
// the bias and activations after it fused. oneDNN 2.6 applies SiLU as a swish post-op at about
// twice the cost of kiln's; here it runs on each input row while the row is in L1, once. A
// GlobalAveragePool of the result (squeeze-and-excitation's) is summed from each row in cache.
#include "engine/cpu/depthwise_conv.h"
#include "engine/epilogue.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/native/row_epilogue.h"
#include "engine/onednn/conv_geometry.h"
#include "engine/threads.h"

namespace kiln::engine {

namespace {

using tag = dnnl::memory::format_tag;

// 2-D, or 1-D as one row of 2-D (H 1).
std::optional<cpu::DepthwiseShape> depthwise_shape(const Node& n, const GraphFacts& f) {
  auto g = conv_geometry(n, f);
  if (g && g->src.size() == 3 && g->weights.size() == 4) {  // [N, C, W]: H 1
    g->src.insert(g->src.begin() + 2, 1);
    g->dst.insert(g->dst.begin() + 2, 1);
    g->weights.insert(g->weights.begin() + 3, 1);
    g->strides.insert(g->strides.begin(), 1);
    g->dilations.insert(g->dilations.begin(), 0);
    g->pad_l.insert(g->pad_l.begin(), 0);
  }
  // grouped weights [G, M/G, C/G, kh, kw]: one filter per channel is [C, 1, 1, kh, kw]
  if (!g || g->src.size() != 4 || g->weights.size() != 5 || g->weights[0] != g->src[1] ||
      g->weights[1] != 1 || g->weights[2] != 1)
    return std::nullopt;
  if (g->dilations != std::vector<int64_t>{0, 0} || g->pad_l[0] < 0 || g->pad_l[1] < 0 ||
      g->weights[3] > cpu::kDepthwiseMaxKernel)
    return std::nullopt;
  return cpu::DepthwiseShape{
      .batch = g->src[0], .channels = g->src[1], .h = g->src[2], .w = g->src[3],
      .out_h = g->dst[2], .out_w = g->dst[3], .kh = g->weights[3], .kw = g->weights[4],
      .stride_h = g->strides[0], .stride_w = g->strides[1], .pad_top = g->pad_l[0],
      .pad_left = g->pad_l[1]};
}

bool one_dimensional(const Node& n, const GraphFacts& f) {
  const auto* d = f.dims(n.inputs[0]);
  return d && d->size() == 3;
}

// The input of conv made as a * sigmoid(a) for the conv alone: the Sigmoid and the Mul.
struct InputSilu {
  const Node* sigmoid;
  const Node* mul;
};

std::optional<InputSilu> input_silu(const Node& conv, const MatchContext& ctx) {
  const GraphFacts& f = ctx.facts;
  const Value* v = conv.inputs[0];
  const Node* m = v->producer;
  if (!is_op(m, "Mul") || m->num_inputs() != 2 || !ctx.is_free(m) || f.is_graph_output(v) ||
      f.consumers(v).size() != 1)
    return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const Value *a = m->inputs[i], *sv = m->inputs[1 - i];
    if (!a || !sv || a == sv) continue;
    const Node* s = sv->producer;
    if (!is_op(s, "Sigmoid") || !ctx.is_free(s) || s->inputs[0] != a || f.is_graph_output(sv) ||
        f.consumers(sv).size() != 1 || f.dtype(a) != DataType::kFloat)
      continue;
    return InputSilu{s, m};
  }
  return std::nullopt;
}

// A GlobalAveragePool reading v, free, of a float [N, C, H, W] result.
const Node* pooled_alongside(const Value* v, const MatchContext& ctx) {
  for (const Node* c : ctx.facts.consumers(v)) {
    if (!is_op(c, "GlobalAveragePool") || !ctx.is_free(c) || c->num_outputs() != 1) continue;
    const auto* d = ctx.facts.dims(c->outputs[0]);
    if (d && d->size() == 4) return c;
  }
  return nullptr;
}

class DepthwiseConvStep : public NativeStep {
 public:
  DepthwiseConvStep(const Node& n, cpu::DepthwiseConv conv)
      : NativeStep(n, "cpu.depthwise_conv"), conv_(std::move(conv)) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    if (outputs.size() == 1) {
      cpu::depthwise_conv(conv_, in(st, 0).data<float>(), out(st, 0).data<float>());
      return;
    }
    partials_.resize(cpu::depthwise_partials(conv_));  // sized on the first run
    cpu::depthwise_conv(conv_, in(st, 0).data<float>(), out(st, 0).data<float>(),
                        out(st, 1).data<float>(), partials_.data());
  }

 private:
  cpu::DepthwiseConv conv_;
  std::vector<float> partials_;  // the pooled means' sums per task
};

// A 2-D one taken only with the SiLU making its input: alone, oneDNN's brdgmm depthwise kernel
// was faster (it reads its input in place; this copies each row into the ring). A 1-D one always:
// oneDNN 2.6 runs those as a gemm per channel (Silero VAD v4's 258-channel 5-tap conv on 8
// positions took 0.14 ms there, for 10 K multiply-adds).
bool match_depthwise(const Node& n, const MatchContext& ctx, Group& g) {
  if (!depthwise_shape(n, ctx.facts)) return false;
  const bool one_d = one_dimensional(n, ctx.facts);
  const auto silu = ctx.standalone ? std::nullopt : input_silu(n, ctx);
  if (!silu && !one_d) return false;
  if (ctx.standalone) return true;
  if (silu) g.prologue = {silu->sigmoid, silu->mul};
  g.epilogue = match_epilogue(n.outputs[0], ctx, 1);
  keep_row_ops(g.epilogue);
  if (const Node* pool = pooled_alongside(g.output(), ctx)) g.side = {pool};
  return true;
}

bool build_depthwise(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const cpu::DepthwiseShape s = *depthwise_shape(n, f);
  // A prologue is {Sigmoid(a), Mul(a, sigmoid)}: the step reads a and applies the SiLU itself.
  const bool silu = !g.prologue.empty();
  const Value* x = silu ? g.prologue[0]->inputs[0] : n.inputs[0];
  cpu::DepthwiseConv conv{.shape = s};
  if (silu) conv.prologue = {cpu::RowOp{.op = cpu::UnaryOp::kSwish, .p = {.alpha = 1.0f}}};
  // The layout x was made in when it is 16-channel blocks; else channels-last. 1-D: [N, C, W],
  // which lies in memory as [N, C, 1, W] would.
  const bool one_d = one_dimensional(n, f);
  std::vector<int64_t> x_dims = {s.batch, s.channels, s.h, s.w};
  std::vector<int64_t> y_dims = {s.batch, s.channels, s.out_h, s.out_w};
  if (one_d) {
    x_dims.erase(x_dims.begin() + 2);
    y_dims.erase(y_dims.begin() + 2);
  }
  const auto made = lw.layout(x);
  const tag blocked_tag = one_d ? tag::nCw16c : tag::nChw16c, last_tag = one_d ? tag::nwc : tag::nhwc;
  const dnnl::memory::desc blocked(x_dims, dnnl::memory::data_type::f32, blocked_tag);
  if (made && s.channels % cpu::kDepthwiseBlock == 0 && *made == blocked)
    conv.layout = cpu::ChannelLayout::kBlocked16;
  const tag t = conv.layout == cpu::ChannelLayout::kBlocked16 ? blocked_tag : last_tag;
  RowEpilogue e =
      row_epilogue(g, n.has_input(2) ? f.constant(n.inputs[2]) : nullptr, s.channels, f);
  conv.epilogue = std::move(e.ops);
  cpu::pack_depthwise(conv, f.constant(n.inputs[1])->data<float>(),
                      e.bias ? e.bias->data<float>() : nullptr);
  auto step = std::make_unique<DepthwiseConvStep>(n, std::move(conv));
  step->threads = threads_for_work(
      2.0 * static_cast<double>(s.batch * s.channels * s.out_h * s.out_w * s.kh * s.kw));
  step->read(lw.in_layout(x, dnnl::memory::desc(x_dims, dnnl::memory::data_type::f32, t)), x_dims);
  step->write(lw.define(g.output(), dnnl::memory::desc(y_dims, dnnl::memory::data_type::f32, t)));
  if (!g.side.empty()) step->write(lw.define(g.side[0]->outputs[0]));  // [N, C, 1, 1]
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuDepthwiseConv{.name = "cpu.depthwise_conv",
                                             .match = match_depthwise, .build = build_depthwise};

}  // namespace kiln::engine
