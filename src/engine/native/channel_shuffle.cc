// ShuffleNet's channel shuffle, Reshape [N, C, S...] -> [N, g, C/g, S...], Transpose swapping
// axes 1 and 2, Reshape back to [N, C, S...], as one step that permutes the channels in the
// input's own layout: channels-last data stays channels-last, where a row-major Transpose needed
// a reorder on each side. When the input is a Concat of the groups (ShuffleNet's blocks), the
// concat is the same step: the pieces are interleaved straight into the result.
#include <cstring>
#include <unordered_set>

#include "engine/cpu/layout.h"
#include "engine/cpu/parallel.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/native/physical_order.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

struct Shuffle {
  int64_t batch = 0, channels = 0, groups = 0, spatial = 0;  // output channel c2 * groups + g1
                                                             // is input channel g1 * (C / g) + c2
};

// The only node reading v, when it is free and v is nothing else's.
const Node* sole_reader(const Value* v, const MatchContext& ctx) {
  if (!v || ctx.facts.is_graph_output(v)) return nullptr;
  const auto& c = ctx.facts.consumers(v);
  if (c.size() != 1 || !ctx.is_free(c[0]) || !ctx.facts.only_used_by(v, {c[0]})) return nullptr;
  return c[0];
}

// The shuffle a Reshape starts, with the Transpose and Reshape that end it.
std::optional<Shuffle> shuffle_of(const Node& r1, const MatchContext& ctx, const Node** t,
                                  const Node** r2) {
  const GraphFacts& f = ctx.facts;
  if (!r1.has_input(0) || !r1.outputs[0] || f.dtype(r1.inputs[0]) != DataType::kFloat) return {};
  const auto* in = f.dims(r1.inputs[0]);
  const auto* mid = f.dims(r1.outputs[0]);
  if (!in || !mid || in->size() < 3 || mid->size() != in->size() + 1) return {};
  const std::vector<int64_t>& d = *in;
  const std::vector<int64_t>& m = *mid;
  if (m[0] != d[0] || m[1] <= 0 || m[1] * m[2] != d[1]) return {};
  for (size_t i = 2; i < d.size(); ++i)
    if (m[i + 1] != d[i]) return {};
  *t = sole_reader(r1.outputs[0], ctx);
  if (!is_op(*t, "Transpose")) return {};
  std::vector<int64_t> perm(m.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[1], perm[2]);
  if (attr_ints(**t, "perm") != perm) return {};
  *r2 = sole_reader((*t)->outputs[0], ctx);
  if (!is_op(*r2, "Reshape") || !(*r2)->outputs[0]) return {};
  const auto* out = f.dims((*r2)->outputs[0]);
  if (!out || *out != d) return {};
  Shuffle s{.batch = d[0], .channels = d[1], .groups = m[1], .spatial = 1};
  for (size_t i = 2; i < d.size(); ++i) s.spatial *= d[i];
  return s;
}

// The shuffle of one input, or of the concat of its groups given as separate inputs (`pieces`).
class ChannelShuffleStep : public NativeStep {
 public:
  ChannelShuffleStep(const Node& n, Shuffle s, bool channels_last, bool pieces)
      : NativeStep(n, pieces ? "cpu.concat_shuffle" : "cpu.channel_shuffle"),
        s_(s), channels_last_(channels_last), pieces_(pieces), base_(s.groups) {}
  using NativeStep::read;
  using NativeStep::write;

  void run(RunState& st) override {
    float* y = out(st, 0).data<float>();
    const int64_t c = s_.channels, g = s_.groups, per_group = c / g, hw = s_.spatial;
    // Group g1's channel c2 of pixel p (channels-last) or image n (row-major) is at
    // base_[g1] + p * stride + c2, or base_[g1] + (n * stride + c2) * hw.
    int64_t stride = c;
    for (int64_t g1 = 0; g1 < g; ++g1) {
      if (pieces_) {
        base_[g1] = in(st, g1).data<float>();
        stride = per_group;
      } else {
        base_[g1] = in(st, 0).data<float>() + g1 * per_group * (channels_last_ ? 1 : hw);
      }
    }
    if (channels_last_) {  // per pixel, the channels interleaved
      cpu::parallel_for(s_.batch * hw, std::max<int64_t>(1, (16 << 10) / std::max<int64_t>(c, 1)),
                        [&](int64_t b, int64_t e) {
                          for (int64_t p = b; p < e; ++p) interleave(p * stride, y + p * c, per_group);
                        });
      return;
    }
    for (int64_t n = 0; n < s_.batch; ++n)  // row-major: whole planes move
      for (int64_t c2 = 0; c2 < per_group; ++c2)
        for (int64_t g1 = 0; g1 < g; ++g1)
          std::memcpy(y + (n * c + c2 * g + g1) * hw, base_[g1] + (n * stride + c2) * hw,
                      hw * sizeof(float));
  }

 private:
  // dst[c2 * g + g1] = base_[g1][at + c2]
  void interleave(int64_t at, float* dst, int64_t per_group) const {
    if (s_.groups == 2) {  // ShuffleNet's: a zip of two runs
      cpu::zip(base_[0] + at, base_[1] + at, dst, per_group);
      return;
    }
    for (int64_t c2 = 0; c2 < per_group; ++c2)
      for (int64_t g1 = 0; g1 < s_.groups; ++g1) dst[c2 * s_.groups + g1] = base_[g1][at + c2];
  }

  Shuffle s_;
  bool channels_last_, pieces_;
  std::vector<const float*> base_;
};

bool match_shuffle(const Node& n, const MatchContext& ctx, Group& g) {
  if (ctx.standalone) return false;
  const Node *t = nullptr, *r2 = nullptr;
  if (!shuffle_of(n, ctx, &t, &r2)) return false;
  g.epilogue.push_back({.nodes = {t}, .out = t->outputs[0]});
  g.epilogue.push_back({.nodes = {r2}, .out = r2->outputs[0]});
  return true;
}

// Channels last: the channel axis innermost, the batch outermost.
bool is_channels_last(const dnnl::memory::desc& md) {
  const auto order = physical_order(md);
  return order && order->size() >= 3 && order->front() == 0 && order->back() == 1;
}

bool build_shuffle(Group& g, Lowering& lw) {
  const Node& r1 = *g.anchor;
  static const std::unordered_set<const Node*> kNoneClaimed;  // the group's members are its own
  const MatchContext ctx{lw.facts(), kNoneClaimed, false};
  const Node *t = nullptr, *r2 = nullptr;
  const auto s = shuffle_of(r1, ctx, &t, &r2);
  if (!s) return false;
  const Value* x = r1.inputs[0];
  const auto md = lw.layout(x);
  const bool channels_last = md && is_channels_last(*md);
  auto step = std::make_unique<ChannelShuffleStep>(r1, *s, channels_last, false);
  step->read(channels_last ? lw.in_layout(x, *md) : lw.plain(x), *lw.facts().dims(x));
  step->write(lw.define(g.output(), channels_last ? md : std::nullopt));
  lw.add(std::move(step));
  return true;
}

// --- A Concat of g pieces along the channels that a shuffle of g groups reads: the pieces are
// the groups, interleaved in one pass (ShuffleNet's every block).

// The Reshape starting the shuffle of the concat's result, when it shuffles its pieces.
const Node* shuffle_after_concat(const Node& cat, const MatchContext& ctx, Shuffle* s,
                                 const Node** t, const Node** r2) {
  const GraphFacts& f = ctx.facts;
  if (cat.num_inputs() < 2 || !cat.outputs[0]) return nullptr;
  const auto* out = f.dims(cat.outputs[0]);
  if (!out || out->size() < 3) return nullptr;
  const int64_t axis = attr_int(cat, "axis", 0);
  if (axis != 1 && axis != 1 - static_cast<int64_t>(out->size())) return nullptr;
  for (const Value* v : cat.inputs)
    if (!v || f.constant(v) || f.dtype(v) != DataType::kFloat || !f.dims(v) ||
        *f.dims(v) != *f.dims(cat.inputs[0]))
      return nullptr;
  const Node* r1 = sole_reader(cat.outputs[0], ctx);
  if (!is_op(r1, "Reshape")) return nullptr;
  const auto shuffle = shuffle_of(*r1, ctx, t, r2);
  if (!shuffle || shuffle->groups != cat.num_inputs()) return nullptr;
  *s = *shuffle;
  return r1;
}

bool match_concat_shuffle(const Node& n, const MatchContext& ctx, Group& g) {
  if (ctx.standalone) return false;
  Shuffle s;
  const Node *t = nullptr, *r2 = nullptr;
  const Node* r1 = shuffle_after_concat(n, ctx, &s, &t, &r2);
  if (!r1) return false;
  g.epilogue.push_back({.nodes = {r1}, .out = r1->outputs[0]});
  g.epilogue.push_back({.nodes = {t}, .out = t->outputs[0]});
  g.epilogue.push_back({.nodes = {r2}, .out = r2->outputs[0]});
  return true;
}

bool build_concat_shuffle(Group& g, Lowering& lw) {
  const Node& cat = *g.anchor;
  static const std::unordered_set<const Node*> kNoneClaimed;
  const MatchContext ctx{lw.facts(), kNoneClaimed, false};
  Shuffle s;
  const Node *t = nullptr, *r2 = nullptr;
  if (!shuffle_after_concat(cat, ctx, &s, &t, &r2)) return false;
  const auto& out = *lw.facts().dims(g.output());
  std::vector<int> order = {0};  // channels-last: the batch, the spatial axes, the channels
  for (int a = 2; a < static_cast<int>(out.size()); ++a) order.push_back(a);
  order.push_back(1);
  // channels-last when every piece was made so (conv outputs), else row-major
  bool channels_last = true;
  for (const Value* v : cat.inputs) {
    const auto md = lw.layout(v);
    channels_last = channels_last && md && physical_order(*md) == order;
  }
  auto step = std::make_unique<ChannelShuffleStep>(cat, s, channels_last, true);
  for (const Value* v : cat.inputs)
    step->read(channels_last ? lw.in_layout(v, *lw.layout(v)) : lw.plain(v), *lw.facts().dims(v));
  step->write(channels_last ? lw.define(g.output(), dense_md(out, order)) : lw.define(g.output()));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuChannelShuffle{.name = "cpu.channel_shuffle",
                                              .match = match_shuffle, .build = build_shuffle};
constinit const KernelImpl kCpuConcatShuffle{.name = "cpu.concat_shuffle",
                                             .match = match_concat_shuffle,
                                             .build = build_concat_shuffle};

}  // namespace kiln::engine
