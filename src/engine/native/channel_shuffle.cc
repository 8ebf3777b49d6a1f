// ShuffleNet's channel shuffle, Reshape [N, C, S...] -> [N, g, C/g, S...], Transpose swapping
// axes 1 and 2, Reshape back to [N, C, S...], as one step that permutes the channels in the
// input's own layout: channels-last data stays channels-last, where a row-major Transpose needed
// a reorder on each side.
#include <cstring>
#include <unordered_set>

#include "engine/cpu/parallel.h"
#include "engine/lowering.h"
#include "engine/native/native_step.h"
#include "engine/native/physical_order.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

struct Shuffle {
  int64_t batch = 0, channels = 0, groups = 0, spatial = 0;  // output channel c2 * groups + g1
                                                             // is input channel g1 * (C / g) + c2
};

bool is_op(const Node* n, const char* op) { return n && n->domain.empty() && n->op_type == op; }

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

class ChannelShuffleStep : public NativeStep {
 public:
  ChannelShuffleStep(const Node& n, Shuffle s, bool channels_last)
      : NativeStep(n, "cpu.channel_shuffle"), s_(s), channels_last_(channels_last) {}
  using NativeStep::read;
  using NativeStep::write;

  void run(RunState& st) override {
    const float* x = in(st, 0).data<float>();
    float* y = out(st, 0).data<float>();
    const int64_t c = s_.channels, g = s_.groups, per_group = c / g, hw = s_.spatial;
    if (channels_last_) {  // per pixel, the channels interleaved
      cpu::parallel_for(s_.batch * hw, std::max<int64_t>(1, (16 << 10) / std::max<int64_t>(c, 1)),
                        [&](int64_t b, int64_t e) {
                          for (int64_t p = b; p < e; ++p) {
                            const float* src = x + p * c;
                            float* dst = y + p * c;
                            for (int64_t c2 = 0; c2 < per_group; ++c2)
                              for (int64_t g1 = 0; g1 < g; ++g1) dst[c2 * g + g1] = src[g1 * per_group + c2];
                          }
                        });
      return;
    }
    for (int64_t n = 0; n < s_.batch; ++n)  // row-major: whole planes move
      for (int64_t c2 = 0; c2 < per_group; ++c2)
        for (int64_t g1 = 0; g1 < g; ++g1)
          std::memcpy(y + (n * c + c2 * g + g1) * hw, x + (n * c + g1 * per_group + c2) * hw,
                      hw * sizeof(float));
  }

 private:
  Shuffle s_;
  bool channels_last_;
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
  auto step = std::make_unique<ChannelShuffleStep>(r1, *s, channels_last);
  step->read(channels_last ? lw.in_layout(x, *md) : lw.plain(x), *lw.facts().dims(x));
  step->write(lw.define(g.output(), channels_last ? md : std::nullopt));
  lw.add(std::move(step));
  return true;
}

}  // namespace

void register_native_shuffle(KernelTable& t) {
  t.add("", "Reshape", DataType::kFloat,
        {.name = "cpu.channel_shuffle", .fuses = true, .match = match_shuffle, .build = build_shuffle});
}

}  // namespace kiln::engine
