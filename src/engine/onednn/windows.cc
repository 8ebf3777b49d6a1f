// Concat, Split and Slice of float32 through oneDNN, in the layouts their tensors were made in:
// the channel split of ShuffleNet stays channels-last, and concats of pieces in layouts kiln's
// copies do not take (native/concat_layouts.cc) keep theirs. Split and Slice copy windows of the input (oneDNN sub-memory
// descriptors): a Split's offsets follow from its output dims, a Slice's from its constant starts
// (steps of 1).
#include "engine/lowering.h"
#include "engine/native/native_step.h"
#include "engine/native/physical_order.h"
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

bool match_concat(const Node& n, const MatchContext& ctx, Group& g) {
  return float_concat_axis(n, ctx.facts).has_value();
}

bool build_concat(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const auto& out = *lw.facts().dims(n.outputs[0]);
  const int axis = *float_concat_axis(n, lw.facts());
  std::vector<dnnl::memory::desc> srcs;
  bool all_plain = true;
  for (const Value* v : n.inputs) {
    srcs.push_back(layout_or_plain(v, lw));
    all_plain = all_plain && is_plain(srcs.back());
  }
  // Row-major pieces are the native cpu.concat's (oneDNN 2.6's simple concat took 9 ms for
  // PP-OCR's four [1, 24, 160, 160] maps, 10 MB, about 1 GB/s).
  if (all_plain) return false;
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
constinit const KernelImpl kOnednnConcat{.name = "onednn.concat", .match = match_concat,
                                         .build = build_concat};
constinit const KernelImpl kOnednnSplit{.name = "onednn.split", .match = match_split,
                                        .build = build_split};

}  // namespace kiln::engine
