// Concats of float32 pieces in the layouts they were made in, as kiln's copies (cpu.concat steps)
// rather than oneDNN 2.6's concat: pieces in one dense permuted layout (channels-last, in memory
// order a row-major concat), channel-blocked pieces filling whole blocks, channels-last pieces
// next to channel-blocked ones; and, for DenseNet, a channel concat with the BatchNormalization
// (and Relu) after it applied as the pieces are copied. Row-major pieces are the any-type
// cpu.concat's (data_movement_steps.cc); other mixtures go on to onednn.concat.
#include <algorithm>

#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/native/physical_order.h"
#include "engine/onednn/batch_norm.h"
#include "engine/onednn/dnnl_context.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

using dt = dnnl::memory::data_type;

// The single free reader of v when it is a `op` node reading it as its first input.
const Node* sole_reader(const Value* v, std::string_view op, const MatchContext& ctx) {
  const Node* c = sole_consumer(v, ctx);
  return is_op(c, op) && c->inputs[0] == v ? c : nullptr;
}

// A channel concat whose every piece is read elsewhere too (none can be written in place, so
// each is copied) followed by a BatchNormalization and maybe a Relu reading only its result
// (DenseNet's layers: the features so far, concatenated, normalized): those are applied as the
// pieces are copied, where the normalization read and wrote the whole concat once more.
void match_normalization_after(const Node& n, const MatchContext& ctx, Group& g) {
  const auto* out = ctx.facts.dims(n.outputs[0]);
  if (ctx.standalone || n.num_inputs() < 2 || out->size() != 4 || concat_axis(n, 4) != 1) return;
  for (const Value* v : n.inputs)
    if (ctx.facts.consumers(v).size() < 2 && !ctx.facts.is_graph_output(v)) return;
  const Node* bn = sole_reader(n.outputs[0], "BatchNormalization", ctx);
  if (!bn || !batch_norm_fits(*bn, ctx.facts)) return;
  g.epilogue.push_back(EpilogueUnit{.nodes = {bn}, .out = bn->outputs[0]});
  if (const Node* relu = sole_reader(bn->outputs[0], "Relu", ctx))
    g.epilogue.push_back(EpilogueUnit{.nodes = {relu}, .out = relu->outputs[0]});
}

bool match_concat(const Node& n, const MatchContext& ctx, Group& g) {
  return float_concat_axis(n, ctx.facts).has_value();
}

// A concat the copies take, with a normalization after it to fuse.
bool match_normalizing_concat(const Node& n, const MatchContext& ctx, Group& g) {
  if (!match_concat(n, ctx, g)) return false;
  match_normalization_after(n, ctx, g);
  return !g.epilogue.empty();
}

// Concats that are kiln's copies (cpu.concat) rather than oneDNN 2.6's: pieces in one dense
// permuted layout (channels-last: in memory order a row-major concat; the result keeps the
// layout; DenseNet's channel concats ran at 13 GB/s in oneDNN's), channel-blocked pieces along
// the channels filling whole blocks ([N, C/b, H, W, b]: a concat of the C/b axis), and
// channels-last pieces next to channel-blocked ones (DenseNet's block input and its Winograd
// convs' outputs, which oneDNN sends to its reference concat). False when none fits.
bool build_concat_copies(Group& g, const std::vector<dnnl::memory::desc>& srcs, int axis,
                         Lowering& lw) {
  const Node& n = *g.anchor;
  const auto& out = *lw.facts().dims(n.outputs[0]);
  // The normalization after it is applied only by the blocked copies below; elsewhere it is
  // dropped (lowered on its own).
  std::vector<EpilogueUnit> normalization = std::move(g.epilogue);
  g.epilogue.clear();
  const auto dims = [&](size_t i) -> const std::vector<int64_t>& { return *lw.facts().dims(n.inputs[i]); };
  const auto reads = [&] {
    std::vector<int> r;
    for (size_t i = 0; i < n.inputs.size(); ++i) r.push_back(lw.in_layout(n.inputs[i], srcs[i]));
    return r;
  };
  const auto order = physical_order(srcs[0]);
  bool same_order = order.has_value();
  for (const auto& s : srcs) same_order = same_order && physical_order(s) == order;
  if (same_order) {
    const auto at = std::find(order->begin(), order->end(), axis) - order->begin();
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < static_cast<int64_t>(order->size()); ++i)
      if (i != at) (i < at ? outer : inner) *= out[(*order)[i]];
    std::vector<int64_t> lens;
    for (size_t i = 0; i < n.inputs.size(); ++i) lens.push_back(dims(i)[axis]);
    add_concat_step(n, reads(), lw.define(n.outputs[0], dense_md(out, *order)), lens, outer, inner, lw);
    return true;
  }
  if (axis != 1 || out.size() != 4) return false;
  std::vector<int64_t> blocks;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    blocks.push_back(channel_block(srcs[i], dims(i)));
    if (blocks.back() < 0) return false;
  }
  if (std::all_of(blocks.begin(), blocks.end(), [&](int64_t b) { return b == blocks[0]; })) {
    const int64_t block = blocks[0];  // > 0: all channels-last was same_order
    if (!normalization.empty()) {
      g.epilogue = std::move(normalization);
      std::vector<int64_t> channels;
      for (size_t i = 0; i < n.inputs.size(); ++i) channels.push_back(dims(i)[1]);
      ChannelAffine bn = batch_norm_affine(*g.epilogue[0].nodes[0], lw.facts());
      add_normalizing_concat_step(n, reads(), lw.define(g.output(), channel_blocked_md(out, block)),
                                  std::move(channels), block, std::move(bn.scale),
                                  std::move(bn.shift), g.epilogue.size() == 2, lw);
      return true;
    }
    std::vector<int64_t> lens;
    for (size_t i = 0; i < n.inputs.size(); ++i) lens.push_back(dims(i)[1] / block);
    add_concat_step(n, reads(), lw.define(n.outputs[0], channel_blocked_md(out, block)), lens, out[0],
                    out[2] * out[3] * block, lw);
    return true;
  }
  // Channels-last and channel-blocked pieces: blocked when every piece fills whole blocks (what
  // follows then stays blocked, the Winograd convs read it without a reorder, and with one image
  // the blocked pieces are written in place), else channels-last.
  int64_t block = 0;
  for (int64_t b : blocks) block = std::max(block, b);
  for (size_t i = 0; i < n.inputs.size() && block > 0; ++i)
    if ((blocks[i] != 0 && blocks[i] != block) || dims(i)[1] % block != 0) block = 0;
  const auto dst = block ? channel_blocked_md(out, block) : dense_md(out, {0, 2, 3, 1});
  add_channel_concat_step(n, reads(), std::move(blocks), block, lw.define(n.outputs[0], dst), lw);
  return true;
}

// The pieces' layouts, when one is not row-major (row-major ones are the any-type cpu.concat's).
std::optional<std::vector<dnnl::memory::desc>> laid_out_sources(const Node& n, Lowering& lw) {
  std::vector<dnnl::memory::desc> srcs;
  bool all_plain = true;
  for (const Value* v : n.inputs) {
    const auto l = lw.layout(v);
    srcs.push_back(l ? *l : plain_md(*lw.facts().dims(v), dt::f32));
    all_plain = all_plain && is_plain(srcs.back());
  }
  if (all_plain) return std::nullopt;
  return srcs;
}

bool build_concat(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const auto srcs = laid_out_sources(n, lw);
  return srcs && build_concat_copies(g, *srcs, *float_concat_axis(n, lw.facts()), lw);
}

}  // namespace

std::optional<int> float_concat_axis(const Node& n, const GraphFacts& f) {
  const auto* out = usable(n.outputs.empty() ? nullptr : n.outputs[0], f);
  if (!out || n.num_inputs() < 1) return std::nullopt;
  const auto axis = concat_axis(n, static_cast<int>(out->size()));
  if (!axis) return std::nullopt;
  for (const Value* v : n.inputs)
    if (!usable(v, f) || f.constant(v)) return std::nullopt;
  return axis;
}

// The copies alone, and with the normalization after them (a fusing implementation of its own,
// so that other fusing ones, such as the concat of a channel shuffle, still see plain concats).
constinit const KernelImpl kCpuConcatLaidOut{.name = "cpu.concat_laid_out",
                                             .match = match_concat, .build = build_concat};
constinit const KernelImpl kCpuConcatNormalizing{.name = "cpu.concat_normalizing",
                                                 .match = match_normalizing_concat,
                                                 .build = build_concat};

}  // namespace kiln::engine
