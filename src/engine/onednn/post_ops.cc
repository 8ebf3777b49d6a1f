#include "engine/onednn/post_ops.h"

#include <cmath>
#include <limits>

#include "engine/lowering.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/weight_cache.h"
#include "ops/attrs.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

using alg = dnnl::algorithm;
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

PostOp eltwise(alg a, float alpha = 0, float beta = 0) {
  return {.kind = PostOp::Kind::kEltwise, .alg = a, .alpha = alpha, .beta = beta};
}

// A unary activation node as post-ops.
std::optional<std::vector<PostOp>> activation(const Node& n, const GraphFacts& f) {
  if (!n.domain.empty() || n.num_outputs() != 1) return std::nullopt;
  const std::string& op = n.op_type;
  if (op == "Relu") return std::vector{eltwise(alg::eltwise_relu)};
  if (op == "LeakyRelu") return std::vector{eltwise(alg::eltwise_relu, attr_float(n, "alpha", 0.01f))};
  if (op == "Elu") return std::vector{eltwise(alg::eltwise_elu, attr_float(n, "alpha", 1.f))};
  if (op == "Sigmoid") return std::vector{eltwise(alg::eltwise_logistic)};
  if (op == "Tanh") return std::vector{eltwise(alg::eltwise_tanh)};
  if (op == "HardSwish") return std::vector{eltwise(alg::eltwise_hardswish)};
  if (op == "Abs") return std::vector{eltwise(alg::eltwise_abs)};
  if (op == "Sqrt") return std::vector{eltwise(alg::eltwise_sqrt)};
  if (op == "Exp") return std::vector{eltwise(alg::eltwise_exp)};
  if (op == "Log") return std::vector{eltwise(alg::eltwise_log)};
  if (op == "Neg") return std::vector{eltwise(alg::eltwise_linear, -1.f, 0.f)};
  if (op == "HardSigmoid")
    return std::vector{eltwise(alg::eltwise_linear, attr_float(n, "alpha", 0.2f),
                               attr_float(n, "beta", 0.5f)),
                       eltwise(alg::eltwise_clip, 0.f, 1.f)};
  if (op == "Gelu") {
    const std::string approx = attr_string(n, "approximate", "none");
    if (approx == "none") return std::vector{eltwise(alg::eltwise_gelu_erf)};
    if (approx == "tanh") return std::vector{eltwise(alg::eltwise_gelu_tanh)};
    return std::nullopt;
  }
  if (op == "Clip") {
    float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
    for (int i : {1, 2}) {
      if (!n.has_input(i)) continue;
      auto c = f.scalar(n.inputs[i]);
      if (!c) return std::nullopt;
      (i == 1 ? lo : hi) = *c;
    }
    return std::vector{eltwise(alg::eltwise_clip, lo, hi)};
  }
  return std::nullopt;
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
  return EpilogueUnit{{s, m}, {eltwise(alg::eltwise_swish, 1.f)}, m->outputs[0]};
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
    const EpilogueUnit unit{{}, {eltwise(alg::eltwise_gelu_erf)}, nullptr};
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
    if (op == "Add") u.ops = {eltwise(alg::eltwise_linear, 1.f, *s)};
    else if (op == "Sub") u.ops = {first ? eltwise(alg::eltwise_linear, 1.f, -*s)
                                         : eltwise(alg::eltwise_linear, -1.f, *s)};
    else if (op == "Mul") u.ops = {eltwise(alg::eltwise_linear, *s, 0.f)};
    else if (op == "Div" && first && *s != 0) u.ops = {eltwise(alg::eltwise_linear, 1.f / *s, 0.f)};
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
  const alg a = op == "Add" ? alg::binary_add : op == "Sub" ? alg::binary_sub
              : op == "Mul" ? alg::binary_mul : op == "Div" ? alg::binary_div : alg::undef;
  if (a == alg::undef) return std::nullopt;
  u.ops = {{.kind = PostOp::Kind::kBinary, .alg = a, .operand = o}};
  return u;
}

// Appends op to a post-op sequence. oneDNN 2.6's jit kernels give every eltwise post-op of one
// algorithm the alpha and beta of the first one (Conv -> Mul 2 -> Add 0.5 ran as x * 2 * 2), so
// a sequence holds each algorithm with one set of parameters: a linear op right after a linear
// op folds into it (a2 * (a1 * x + b1) + b2), and any other repeat with other parameters is
// refused (false, seq unchanged).
bool append_post_op(std::vector<PostOp>& seq, const PostOp& op) {
  if (op.kind != PostOp::Kind::kEltwise) {
    seq.push_back(op);
    return true;
  }
  if (op.alg == alg::eltwise_linear && !seq.empty() && seq.back().kind == PostOp::Kind::kEltwise &&
      seq.back().alg == alg::eltwise_linear) {
    PostOp& last = seq.back();
    last.beta = op.alpha * last.beta + op.beta;
    last.alpha *= op.alpha;
    return true;
  }
  for (const PostOp& p : seq)
    if (p.kind == PostOp::Kind::kEltwise && p.alg == op.alg &&
        (p.alpha != op.alpha || p.beta != op.beta))
      return false;
  seq.push_back(op);
  return true;
}

}  // namespace

std::vector<EpilogueUnit> match_epilogue(const Value* v, const MatchContext& ctx, int channel_axis) {
  std::vector<EpilogueUnit> units;
  if (ctx.standalone) return units;
  bool have_sum = false;
  std::vector<PostOp> seq;  // the post-ops of the units taken, as oneDNN will get them
  while (units.size() < kMaxUnits && v && ctx.facts.dtype(v) == DataType::kFloat) {
    std::optional<EpilogueUnit> u;
    if (const Node* c = sole_consumer(v, ctx)) {
      if (auto ops = activation(*c, ctx.facts); ops && c->has_input(0) && c->inputs[0] == v)
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

void not_fusable(const char* what) { throw dnnl::error(dnnl_unimplemented, what); }

OperandDims padded_to(int rank) {
  return [rank](std::vector<int64_t> d) -> std::optional<std::vector<int64_t>> {
    if (static_cast<int>(d.size()) > rank) return std::nullopt;
    d.insert(d.begin(), rank - d.size(), 1);
    return d;
  };
}

FusedPostOps make_post_ops(const std::vector<EpilogueUnit>& units, const OperandDims& to_dst,
                           const GraphFacts& f) {
  std::vector<PostOp> seq;
  for (const EpilogueUnit& u : units) {
    KILN_ASSERT(!u.is_bias, "a bias unit among post-ops");
    for (const PostOp& op : u.ops) {
      const bool taken = append_post_op(seq, op);
      KILN_ASSERT(taken, "post-ops the matcher would not take");
    }
  }
  FusedPostOps p;
  for (const PostOp& op : seq) {
    switch (op.kind) {
      case PostOp::Kind::kEltwise: p.ops.append_eltwise(1.f, op.alg, op.alpha, op.beta); break;
      case PostOp::Kind::kSum:
        p.ops.append_sum(1.f);
        p.sum = op.operand;
        break;
      case PostOp::Kind::kBinary: {
        const auto dims = to_dst(*f.dims(op.operand));
        if (!dims) not_fusable("an operand the destination cannot broadcast");
        const auto md = plain_md(*dims, dnnl::memory::data_type::f32);
        p.ops.append_binary(op.alg, md);
        p.operands.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(p.ops.len() - 1) | DNNL_ARG_SRC_1,
                              op.operand, op.data, md});
        break;
      }
    }
  }
  return p;
}

int bind_post_ops(const FusedPostOps& p, const dnnl::memory::desc& residual_md, Lowering& lw,
                  DnnlStep& step) {
  const GraphFacts& f = lw.facts();
  for (const FusedPostOps::Operand& o : p.operands) {
    const Tensor* c = o.data.defined() ? &o.data : f.constant(o.value);
    if (c)
      step.bind_constant(o.arg, lw.weights().get(*c, o.md, o.md));
    else
      step.bind_input(o.arg, lw.plain(o.value), o.md, *f.dims(o.value));
  }
  return p.sum ? lw.writable_copy(p.sum, residual_md, step.inputs) : -1;
}

const Tensor* bias_constant(const EpilogueUnit& u, const GraphFacts& f) {
  const Node* n = u.nodes[0];
  for (const Value* v : n->inputs)
    if (const Tensor* t = f.constant(v)) return t;
  return nullptr;
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

ConvFusion conv_fusion(const Group& g, size_t units, int rank, bool own_bias, int64_t channels_out,
                       const GraphFacts& f) {
  ConvFusion c;
  c.unit_bias = units > 0 && g.epilogue[0].is_bias;
  const std::vector<EpilogueUnit> chain(g.epilogue.begin() + (c.unit_bias ? 1 : 0),
                                        g.epilogue.begin() + units);
  c.post = make_post_ops(chain, padded_to(rank), f);
  c.attr.set_post_ops(c.post.ops);
  c.attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (own_bias || c.unit_bias)
    c.bias_md = dnnl::memory::desc({channels_out}, dnnl::memory::data_type::f32,
                                   dnnl::memory::format_tag::x);
  return c;
}

void finish_conv_step(std::unique_ptr<DnnlStep> step, const dnnl::primitive_desc_base& pd,
                      const FusedPostOps& post, const Tensor* own_bias, bool unit_bias,
                      int64_t channels_out, const Group& g, const GraphFacts& f, Lowering& lw) {
  const dnnl::memory::desc bias_md = pd.weights_desc(1), dst_md = pd.dst_desc(0);
  if (auto bias = combined_bias(own_bias, unit_bias ? bias_constant(g.epilogue[0], f) : nullptr,
                                channels_out))
    step->bind_constant(DNNL_ARG_BIAS, lw.weights().get(*bias, bias_md, bias_md));
  const int share = bind_post_ops(post, dst_md, lw, *step);
  const int out = lw.define(g.output(), dst_md);
  step->bind_output(DNNL_ARG_DST, out, dst_md, OutputMemory::kPlanned, share);
  step->bind_scratchpad(pd.scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
}

}  // namespace kiln::engine
