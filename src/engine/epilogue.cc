#include "engine/epilogue.h"

#include <cmath>

#include "support/error.h"

namespace kiln::engine {

namespace {

constexpr size_t kMaxUnits = 8;

bool near(std::optional<float> a, float b) { return a && std::abs(*a - b) <= 1e-4f * std::abs(b); }

// The input of binary node n that is not v (null when v is not exactly one of its two inputs).
const Value* other_input(const Node* n, const Value* v) {
  if (n->num_inputs() != 2 || !n->inputs[0] || !n->inputs[1] || n->inputs[0] == n->inputs[1])
    return nullptr;
  if (n->inputs[0] == v) return n->inputs[1];
  if (n->inputs[1] == v) return n->inputs[0];
  return nullptr;
}

PostOp eltwise(Activation a) { return {.kind = PostOp::Kind::kEltwise, .act = a}; }
PostOp linear(float alpha, float beta) {
  return eltwise({.kind = ActKind::kLinear, .alpha = alpha, .beta = beta});
}

// An activation node as the eltwise operations of a chain (epilogue_form).
std::optional<std::vector<PostOp>> activation_ops(const Node& n, const GraphFacts& f) {
  const auto a = decode_activation(n, f);
  const auto form = a ? epilogue_form(*a) : std::nullopt;
  if (!form) return std::nullopt;
  std::vector<PostOp> ops;
  for (const Activation& e : *form) ops.push_back(eltwise(e));
  return ops;
}

// x * sigmoid(x): v read by exactly Sigmoid(v) and Mul(v, sigmoid).
std::optional<EpilogueUnit> match_silu(const Value* v, const MatchContext& ctx) {
  const auto& c = ctx.facts.consumers(v);
  if (ctx.facts.is_graph_output(v) || c.size() != 2) return std::nullopt;
  const Node* s = is_op(c[0], "Sigmoid") ? c[0] : is_op(c[1], "Sigmoid") ? c[1] : nullptr;
  if (!s || !s->outputs[0]) return std::nullopt;
  const Node* m = sole_consumer(s->outputs[0], ctx);
  if (!is_op(m, "Mul") || other_input(m, v) != s->outputs[0] || !ctx.is_free(s)) return std::nullopt;
  if (!((c[0] == s && c[1] == m) || (c[1] == s && c[0] == m))) return std::nullopt;
  return EpilogueUnit{{s, m}, {eltwise({.kind = ActKind::kSwish, .alpha = 1.f})}, m->outputs[0]};
}

// x * 0.5 * (1 + erf(x / sqrt(2))), as torch exports it: Div (or Mul by 1/sqrt 2) -> Erf -> Add 1
// -> Mul by x -> Mul by 0.5, the 0.5 applied last or to x first.
std::optional<EpilogueUnit> match_gelu_erf(const Value* v, const MatchContext& ctx) {
  const auto& c = ctx.facts.consumers(v);
  if (ctx.facts.is_graph_output(v) || c.size() != 2) return std::nullopt;
  const GraphFacts& f = ctx.facts;
  for (int i = 0; i < 2; ++i) {
    const Node* d = c[i];
    const Node* other = c[1 - i];
    if (!ctx.is_free(d) || !ctx.is_free(other)) continue;
    const bool div = is_op(d, "Div") && d->inputs[0] == v && near(f.scalar(d->inputs[1]), std::sqrt(2.f));
    const bool mul = is_op(d, "Mul") && near(f.scalar(other_input(d, v)), 1 / std::sqrt(2.f));
    if (!div && !mul) continue;
    const Node* e = sole_consumer(d->outputs[0], ctx);
    if (!is_op(e, "Erf")) continue;
    const Node* a = sole_consumer(e->outputs[0], ctx);
    if (!is_op(a, "Add") || !near(f.scalar(other_input(a, e->outputs[0])), 1.f)) continue;
    const Node* m = sole_consumer(a->outputs[0], ctx);
    if (!is_op(m, "Mul")) continue;
    const EpilogueUnit unit{{}, {eltwise({.kind = ActKind::kGeluErf})}, nullptr};
    if (other == m && other_input(m, a->outputs[0]) == v) {  // (x * (1 + erf)) * 0.5
      const Node* h = sole_consumer(m->outputs[0], ctx);
      if (!is_op(h, "Mul") || !near(f.scalar(other_input(h, m->outputs[0])), 0.5f)) continue;
      return EpilogueUnit{{d, e, a, m, h}, unit.ops, h->outputs[0]};
    }
    if (is_op(other, "Mul") && near(f.scalar(other_input(other, v)), 0.5f) &&
        other_input(m, a->outputs[0]) == other->outputs[0] &&
        sole_consumer(other->outputs[0], ctx) == m)  // (x * 0.5) * (1 + erf)
      return EpilogueUnit{{d, e, a, other, m}, unit.ops, m->outputs[0]};
  }
  return std::nullopt;
}

// Whether dims `b` broadcast to `a` (same rank or fewer, each dim 1 or equal, right-aligned).
bool broadcasts_to(const std::vector<int64_t>& b, const std::vector<int64_t>& a) {
  if (b.size() > a.size()) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    const int64_t bd = b[b.size() - 1 - i], ad = a[a.size() - 1 - i];
    if (bd != 1 && bd != ad) return false;
  }
  return true;
}

// Whether constant dims run along `axis` of out only (a bias).
bool along_axis(const std::vector<int64_t>& b, const std::vector<int64_t>& out, int axis) {
  if (!broadcasts_to(b, out)) return false;
  const int off = static_cast<int>(out.size() - b.size());
  for (int i = 0; i < static_cast<int>(b.size()); ++i)
    if (b[i] != 1 && i + off != axis) return false;
  return true;
}

// An Add/Sub/Mul/Div of v with another value.
std::optional<EpilogueUnit> match_binary(const Value* v, const Node* n, const MatchContext& ctx,
                                         int bias_axis, bool have_sum) {
  const GraphFacts& f = ctx.facts;
  const Value* o = other_input(n, v);
  const auto* vd = f.dims(v);
  const auto* od = o ? f.dims(o) : nullptr;
  const auto* nd = f.dims(n->outputs[0]);
  if (!o || !vd || !od || !nd || *nd != *vd || f.dtype(o) != DataType::kFloat) return std::nullopt;
  const std::string& op = n->op_type;
  const bool first = n->inputs[0] == v;
  EpilogueUnit u{{n}, {}, n->outputs[0]};
  if (auto s = f.scalar(o)) {
    if (op == "Add") u.ops = {linear(1.f, *s)};
    else if (op == "Sub") u.ops = {first ? linear(1.f, -*s) : linear(-1.f, *s)};
    else if (op == "Mul") u.ops = {linear(*s, 0.f)};
    else if (op == "Div" && first && *s != 0) u.ops = {linear(1.f / *s, 0.f)};
    else return std::nullopt;
    return u;
  }
  if (op == "Add" && f.constant(o) && bias_axis >= 0 && along_axis(*od, *vd, bias_axis)) {
    u.is_bias = true;
    return u;
  }
  if (op == "Add" && !f.constant(o) && *od == *vd && !have_sum) {
    u.ops = {{.kind = PostOp::Kind::kSum, .operand = o}};
    return u;
  }
  if (!broadcasts_to(*od, *vd) || (!first && (op == "Sub" || op == "Div"))) return std::nullopt;
  const auto b = op == "Add" ? cpu::BinaryOp::kAdd : op == "Sub" ? cpu::BinaryOp::kSub
               : op == "Mul" ? cpu::BinaryOp::kMul : cpu::BinaryOp::kDiv;
  u.ops = {{.kind = PostOp::Kind::kBinary, .binary = b, .operand = o}};
  return u;
}

}  // namespace

std::optional<std::vector<Activation>> epilogue_form(const Activation& a) {
  switch (a.kind) {
    case ActKind::kRelu: return std::vector{Activation{.kind = ActKind::kLeakyRelu}};
    case ActKind::kNeg: return std::vector{Activation{.kind = ActKind::kLinear, .alpha = -1.f}};
    case ActKind::kHardSigmoid:
      return std::vector{Activation{.kind = ActKind::kLinear, .alpha = a.alpha, .beta = a.beta},
                         Activation{.kind = ActKind::kClip, .alpha = 0.f, .beta = 1.f}};
    case ActKind::kErf:
    case ActKind::kReciprocal: return std::nullopt;
    default: return std::vector{a};
  }
}

bool append_post_op(std::vector<PostOp>& seq, const PostOp& op) {
  if (op.kind != PostOp::Kind::kEltwise) {
    seq.push_back(op);
    return true;
  }
  if (op.act.kind == ActKind::kLinear && !seq.empty() && seq.back().kind == PostOp::Kind::kEltwise &&
      seq.back().act.kind == ActKind::kLinear) {
    Activation& last = seq.back().act;
    last.beta = op.act.alpha * last.beta + op.act.beta;
    last.alpha *= op.act.alpha;
    return true;
  }
  for (const PostOp& p : seq)
    if (p.kind == PostOp::Kind::kEltwise && p.act.kind == op.act.kind && p.act != op.act)
      return false;
  seq.push_back(op);
  return true;
}

std::vector<EpilogueUnit> match_epilogue(const Value* v, const MatchContext& ctx, int channel_axis) {
  std::vector<EpilogueUnit> units;
  if (ctx.standalone) return units;
  bool have_sum = false;
  std::vector<PostOp> seq;  // the post-ops of the units taken, as oneDNN will get them
  while (units.size() < kMaxUnits && v && ctx.facts.dtype(v) == DataType::kFloat) {
    std::optional<EpilogueUnit> u;
    if (const Node* c = sole_consumer(v, ctx)) {
      if (auto ops = activation_ops(*c, ctx.facts); ops && c->has_input(0) && c->inputs[0] == v)
        u = EpilogueUnit{{c}, *ops, c->outputs[0]};
      else if (is_op(c, "Add") || is_op(c, "Sub") || is_op(c, "Mul") || is_op(c, "Div"))
        u = match_binary(v, c, ctx, units.empty() ? channel_axis : -1, have_sum);
    } else {
      u = match_silu(v, ctx);
      if (!u) u = match_gelu_erf(v, ctx);
    }
    if (!u) break;
    std::vector<PostOp> with_u = seq;
    bool fits = true;
    for (const PostOp& p : u->ops) fits = fits && append_post_op(with_u, p);
    if (!fits) break;
    seq = std::move(with_u);
    for (const PostOp& p : u->ops) have_sum |= p.kind == PostOp::Kind::kSum;
    v = u->out;
    units.push_back(std::move(*u));
  }
  return units;
}

const Tensor* bias_constant(const EpilogueUnit& u, const GraphFacts& f) {
  const Node* n = u.nodes[0];
  for (const Value* v : n->inputs)
    if (const Tensor* t = f.constant(v)) return t;
  return nullptr;
}

Tensor gemm_bias(const Tensor& c, float beta, int64_t channels) {
  Tensor b(DataType::kFloat, {channels});
  for (int64_t i = 0; i < channels; ++i)
    b.data<float>()[i] = beta * static_cast<float>(c.get_f64(c.numel() == 1 ? 0 : i));
  return b;
}

std::optional<Tensor> combined_bias(const Tensor* own, const Tensor* unit, int64_t channels) {
  if (!own && !unit) return std::nullopt;
  Tensor b(DataType::kFloat, {channels});
  float* p = b.data<float>();
  for (const Tensor* t : {own, unit}) {
    if (!t) continue;
    KILN_CHECK(t->numel() == channels, ErrorKind::kBadModel, "a bias of {} values for {} channels",
               t->numel(), channels);
    for (int64_t i = 0; i < channels; ++i) p[i] += static_cast<float>(t->get_f64(i));
  }
  return b;
}

}  // namespace kiln::engine
