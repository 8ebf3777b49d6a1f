// Concat, Split and Slice of float32 through oneDNN, in the layouts their tensors were made in:
// the channel concat of conv outputs (SqueezeNet, Inception, DenseNet) and the channel split of
// ShuffleNet stay channels-last. Split and Slice copy windows of the input (oneDNN sub-memory
// descriptors): a Split's offsets follow from its output dims, a Slice's from its constant starts
// (steps of 1).
#include "engine/lowering.h"
#include "engine/native/native_step.h"
#include "engine/native/physical_order.h"
#include "engine/onednn/batch_norm.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/onednn_kernels.h"
#include "engine/threads.h"
#include "ops/attrs.h"

#include <algorithm>

namespace kiln::engine {

namespace {

using dt = dnnl::memory::data_type;

double bytes_of(const std::vector<int64_t>& dims) {
  double n = sizeof(float);
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

// A float32 tensor with known, positive dims.
const std::vector<int64_t>* usable(const Value* v, const GraphFacts& f) {
  if (!v || f.dtype(v) != DataType::kFloat) return nullptr;
  const auto* d = f.dims(v);
  if (!d || d->empty()) return nullptr;
  for (int64_t x : *d)
    if (x <= 0) return nullptr;
  return d;
}

std::optional<int> concat_axis(const Node& n, int rank) {
  const int64_t a = attr_int(n, "axis", 0);
  if (a < -rank || a >= rank) return std::nullopt;
  return static_cast<int>(a < 0 ? a + rank : a);
}

dnnl::memory::desc layout_or_plain(const Value* v, Lowering& lw) {
  const auto l = lw.layout(v);
  return l ? *l : plain_md(*lw.facts().dims(v), dt::f32);
}

// A reorder from a window of slot `x` (layout src, logical dims in) into a new slot for v, in the
// window's own axis order made dense.
void copy_window(const Node& n, Lowering& lw, int x, const dnnl::memory::desc& src,
                 const std::vector<int64_t>& in, const Value* v, const std::vector<int64_t>& offsets,
                 std::string_view kernel) {
  const auto& d = *lw.facts().dims(v);
  const auto window = src.submemory_desc(d, offsets);
  const auto order = physical_order(src);
  const auto dst = order ? dense_md(d, *order) : plain_md(d, dt::f32);
  const int threads = threads_for_bytes(2 * bytes_of(d));
  ThreadScope scope(threads);
  dnnl::reorder::primitive_desc pd(dnnl_engine(), window, dnnl_engine(), dst);
  auto step = std::make_unique<DnnlStep>(dnnl::reorder(pd), &n, kernel);
  step->threads = threads;
  step->bind_input(DNNL_ARG_FROM, x, window, in);
  step->bind_output(DNNL_ARG_TO, lw.define(v, dst), dst, OutputMemory::kPlanned, -1);
  lw.add(std::move(step));
}

// --- Concat

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
  const auto* out = usable(n.outputs.empty() ? nullptr : n.outputs[0], ctx.facts);
  if (!out || n.num_inputs() < 1 || !concat_axis(n, static_cast<int>(out->size()))) return false;
  for (const Value* v : n.inputs)
    if (!usable(v, ctx.facts) || ctx.facts.constant(v)) return false;
  return true;
}

// The same, only with a normalization after it to fuse (a fusing implementation of its own, so
// that other fusing ones, such as the concat of a channel shuffle, still see plain concats).
bool match_normalizing_concat(const Node& n, const MatchContext& ctx, Group& g) {
  if (!match_concat(n, ctx, g)) return false;
  match_normalization_after(n, ctx, g);
  return !g.epilogue.empty();
}

dnnl::memory::desc blocked_md(const std::vector<int64_t>& d, int64_t block) {
  return dnnl::memory::desc(d, dt::f32, block == 16 ? dnnl::memory::format_tag::nChw16c
                                                    : dnnl::memory::format_tag::nChw8c);
}

// The channel block of md when it holds [N, C, H, W] in whole blocks of 16 or 8 channels
// (nChw16c, nChw8c; Winograd convs write those), 0 when channels-last, -1 otherwise.
int64_t channel_block(const dnnl::memory::desc& md, const std::vector<int64_t>& d) {
  if (d.size() != 4) return -1;
  if (physical_order(md) == std::vector<int>{0, 2, 3, 1}) return 0;
  for (const int64_t block : {16, 8})
    if (d[1] % block == 0 && md == blocked_md(d, block)) return block;
  return -1;
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
    if (!normalization.empty() && block == 16) {
      g.epilogue = std::move(normalization);
      std::vector<int64_t> channels;
      for (size_t i = 0; i < n.inputs.size(); ++i) channels.push_back(dims(i)[1]);
      ChannelAffine bn = batch_norm_affine(*g.epilogue[0].nodes[0], lw.facts());
      add_normalizing_concat_step(n, reads(), lw.define(g.output(), blocked_md(out, 16)),
                                  std::move(channels), std::move(bn.scale), std::move(bn.shift),
                                  g.epilogue.size() == 2, lw);
      return true;
    }
    std::vector<int64_t> lens;
    for (size_t i = 0; i < n.inputs.size(); ++i) lens.push_back(dims(i)[1] / block);
    add_concat_step(n, reads(), lw.define(n.outputs[0], blocked_md(out, block)), lens, out[0],
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
  const auto dst = block ? blocked_md(out, block) : dense_md(out, {0, 2, 3, 1});
  add_channel_concat_step(n, reads(), std::move(blocks), block, lw.define(n.outputs[0], dst), lw);
  return true;
}

bool build_concat(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const auto& out = *lw.facts().dims(n.outputs[0]);
  const int axis = *concat_axis(n, static_cast<int>(out.size()));
  std::vector<dnnl::memory::desc> srcs;
  bool all_plain = true;
  for (const Value* v : n.inputs) {
    srcs.push_back(layout_or_plain(v, lw));
    all_plain = all_plain && is_plain(srcs.back());
  }
  // Row-major pieces are the native cpu.concat's (oneDNN 2.6's simple concat took 9 ms for
  // PP-OCR's four [1, 24, 160, 160] maps, 10 MB, about 1 GB/s); laid-out ones may be too.
  if (all_plain) return false;
  if (build_concat_copies(g, srcs, axis, lw)) return true;
  const int threads = threads_for_bytes(2 * bytes_of(out));
  ThreadScope scope(threads);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // the result in the axis order of the first input made in a dense non-row-major layout
  // (channels-last stays so), else row-major
  dnnl::memory::desc dst = plain_md(out, dt::f32);
  for (const auto& s : srcs)
    if (const auto order = physical_order(s); order && !is_plain(s)) {
      dst = dense_md(out, *order);
      break;
    }
  dnnl::concat::primitive_desc pd(dst, axis, srcs, dnnl_engine(), attr);
  auto step = std::make_unique<DnnlStep>(dnnl::concat(pd), &n, "onednn.concat");
  step->threads = threads;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    step->bind_input(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), lw.in_layout(n.inputs[i], srcs[i]),
                     srcs[i], *lw.facts().dims(n.inputs[i]));
  const int y = lw.define(n.outputs[0], pd.dst_desc());
  step->bind_output(DNNL_ARG_DST, y, pd.dst_desc(), OutputMemory::kPlanned, -1);
  step->bind_scratchpad(pd.scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
  return true;
}

// --- Split

bool match_split(const Node& n, const MatchContext& ctx, Group& g) {
  const auto* in = usable(n.has_input(0) ? n.inputs[0] : nullptr, ctx.facts);
  if (!in || ctx.facts.constant(n.inputs[0]) || !concat_axis(n, static_cast<int>(in->size())))
    return false;
  const int axis = *concat_axis(n, static_cast<int>(in->size()));
  int64_t total = 0;
  for (const Value* v : n.outputs) {
    const auto* d = usable(v, ctx.facts);
    if (!d || d->size() != in->size()) return false;
    total += (*d)[axis];
  }
  return total == (*in)[axis];
}

bool build_split(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const auto& in = *f.dims(n.inputs[0]);
  const int axis = *concat_axis(n, static_cast<int>(in.size()));
  const dnnl::memory::desc src = layout_or_plain(n.inputs[0], lw);
  const int x = lw.in_layout(n.inputs[0], src);
  std::vector<int64_t> offsets(in.size(), 0);
  for (const Value* v : n.outputs) {
    copy_window(n, lw, x, src, in, v, offsets, "onednn.split");
    offsets[axis] += (*f.dims(v))[axis];
  }
  return true;
}

// --- Slice with constant starts and steps of 1: the window's offsets.

std::optional<std::vector<int64_t>> slice_offsets(const Node& n, const GraphFacts& f) {
  const auto* in = usable(n.has_input(0) ? n.inputs[0] : nullptr, f);
  const auto* out = usable(n.outputs.empty() ? nullptr : n.outputs[0], f);
  if (!in || !out || in->size() != out->size() || f.constant(n.inputs[0]) || !n.has_input(1))
    return std::nullopt;
  const int rank = static_cast<int>(in->size());
  auto ints = [&](int i) -> std::optional<std::vector<int64_t>> {
    const Tensor* t = n.has_input(i) ? f.constant(n.inputs[i]) : nullptr;
    if (!t || !is_integer(t->dtype())) return std::nullopt;
    return t->to_int64s();
  };
  const auto starts = ints(1);
  if (!starts) return std::nullopt;
  std::vector<int64_t> axes;
  if (n.has_input(3)) {
    auto a = ints(3);
    if (!a) return std::nullopt;
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (n.has_input(4)) {
    auto steps = ints(4);
    if (!steps) return std::nullopt;
    for (int64_t s : *steps)
      if (s != 1) return std::nullopt;
  }
  if (axes.size() != starts->size()) return std::nullopt;
  std::vector<int64_t> offsets(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return std::nullopt;
    const int64_t dim = (*in)[a];
    int64_t s = (*starts)[i] < 0 ? (*starts)[i] + dim : (*starts)[i];
    offsets[a] = std::clamp<int64_t>(s, 0, dim);
  }
  for (int i = 0; i < rank; ++i)
    if (offsets[i] + (*out)[i] > (*in)[i]) return std::nullopt;
  return offsets;
}

bool match_slice(const Node& n, const MatchContext& ctx, Group& g) {
  return slice_offsets(n, ctx.facts).has_value();
}

bool build_slice(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const auto offsets = *slice_offsets(n, lw.facts());
  const dnnl::memory::desc src = layout_or_plain(n.inputs[0], lw);
  copy_window(n, lw, lw.in_layout(n.inputs[0], src), src, *lw.facts().dims(n.inputs[0]),
              n.outputs[0], offsets, "onednn.slice");
  return true;
}

}  // namespace

constinit const KernelImpl kOnednnSlice{.name = "onednn.slice", .match = match_slice,
                                        .build = build_slice};
constinit const KernelImpl kOnednnNormalizingConcat{
    .name = "onednn.concat", .match = match_normalizing_concat, .build = build_concat};
constinit const KernelImpl kOnednnConcat{.name = "onednn.concat", .match = match_concat,
                                         .build = build_concat};
constinit const KernelImpl kOnednnSplit{.name = "onednn.split", .match = match_split,
                                        .build = build_split};

}  // namespace kiln::engine
