// MatMul and Gemm through oneDNN's matmul primitive.
//  - A constant 2-D right operand (a Linear layer): the left operand's leading dims fold into M,
//    the weights are reordered once into the layout the primitive wants, a constant Add along N
//    becomes the bias, and the chain after it is fused as post-ops.
//  - Two activations (attention): batched with broadcasting; a Transpose feeding an operand is
//    read through strides instead of run, and a Transpose of the result is written through
//    strides.
// Gemm: transposes as strides, alpha folded into constant weights, C as the bias (a constant
// row), a constant matrix (binary add) or a residual (sum).
#include "engine/lowering.h"
#include "engine/onednn/bf16_support.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/onednn_kernels.h"
#include "engine/onednn/post_ops.h"
#include "engine/onednn/weight_cache.h"
#include "engine/threads.h"
#include "ops/attrs.h"

#include <algorithm>
#include <functional>

namespace kiln::engine {

namespace {

using dt = dnnl::memory::data_type;

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

bool all_positive(const std::vector<int64_t>& d) {
  for (int64_t v : d)
    if (v <= 0) return false;
  return true;
}

std::vector<int64_t> perm_of(const Node& t, size_t rank) {
  std::vector<int64_t> perm = attr_ints(t, "perm");
  if (perm.empty())
    for (int i = static_cast<int>(rank) - 1; i >= 0; --i) perm.push_back(i);
  return perm;
}

// An operand of the product: the value read, and how (dims and strides in the product's terms).
struct Operand {
  const Value* value = nullptr;        // what the step reads (a Transpose's input when folded)
  const Node* transpose = nullptr;     // the folded Transpose
  std::vector<int64_t> dims, strides;  // as the primitive sees it
};

// The problem one MatMul or Gemm node poses.
struct Product {
  Operand a, b;
  std::vector<int64_t> dst;         // dims of the primitive's destination
  std::vector<int64_t> out;         // the node's output dims
  bool weights_mode = false;        // constant 2-D right operand, left's leading dims folded
  float alpha = 1;                  // Gemm: folded into the constant weights
  const Value* c = nullptr;         // Gemm's C
  float beta = 1;
};

// Whether the product may read operand v through the Transpose producing it.
using MayFold = std::function<bool(const Node* transpose)>;

// At match time: the Transpose is free and v has no other reader.
MayFold foldable_in(const MatchContext& ctx) {
  return [&ctx](const Node* t) {
    const Value* v = t->outputs[0];
    const Value* in = t->has_input(0) ? t->inputs[0] : nullptr;
    return !ctx.standalone && ctx.is_free(t) && v && in && !ctx.facts.is_graph_output(v) &&
           ctx.facts.consumers(v).size() == 1 && ctx.facts.dims(in) && !ctx.facts.constant(in) &&
           ctx.facts.dtype(in) == DataType::kFloat;
  };
}

// Operand v as the primitive reads it: through the Transpose producing it when may_fold says so.
Operand operand_of(const Value* v, const GraphFacts& f, const MayFold& may_fold) {
  Operand o{.value = v, .dims = *f.dims(v)};
  o.strides = row_major_strides(o.dims);
  const Node* t = v->producer;
  if (!is_op(t, "Transpose") || !may_fold(t)) return o;
  const auto& in = *f.dims(t->inputs[0]);
  const auto perm = perm_of(*t, in.size());
  if (perm.size() != in.size()) return o;
  const auto in_strides = row_major_strides(in);
  for (size_t i = 0; i < perm.size(); ++i) o.strides[i] = in_strides[perm[i]];
  o.value = t->inputs[0];
  o.transpose = t;
  return o;
}

void pad_rank(Operand& o, size_t rank) {
  while (o.dims.size() < rank) {
    o.strides.insert(o.strides.begin(), o.strides.front() * o.dims.front());
    o.dims.insert(o.dims.begin(), 1);
  }
}

std::optional<Product> matmul_product(const Node& n, const GraphFacts& f, const MayFold& may_fold) {
  if (n.num_inputs() != 2 || !n.has_input(0) || !n.has_input(1) || !n.outputs[0]) return {};
  const Value *a = n.inputs[0], *b = n.inputs[1];
  if (f.dtype(a) != DataType::kFloat || f.dtype(b) != DataType::kFloat) return {};
  const auto *ad = f.dims(a), *bd = f.dims(b), *od = f.dims(n.outputs[0]);
  if (!ad || !bd || !od || ad->empty() || bd->empty() || !all_positive(*ad) || !all_positive(*bd))
    return {};
  Product p;
  p.out = *od;
  const int64_t K = ad->back();
  if (f.has_constant(b) && bd->size() == 2 && !f.has_constant(a)) {
    if ((*bd)[0] != K) return {};
    int64_t m = 1;
    for (size_t i = 0; i + 1 < ad->size(); ++i) m *= (*ad)[i];
    p.weights_mode = true;
    p.a = {.value = a, .dims = {m, K}, .strides = {K, 1}};
    p.b = {.value = b, .dims = *bd, .strides = {(*bd)[1], 1}};
    p.dst = {m, (*bd)[1]};
    return p;
  }
  p.a = operand_of(a, f, may_fold);
  p.b = operand_of(b, f, may_fold);
  if (p.a.dims.size() == 1) p.a = {.value = a, .dims = {1, K}, .strides = {K, 1}};
  if (p.b.dims.size() == 1) p.b = {.value = b, .dims = {K, 1}, .strides = {1, 1}};
  const size_t rank = std::max(p.a.dims.size(), p.b.dims.size());
  pad_rank(p.a, rank);
  pad_rank(p.b, rank);
  if (p.b.dims[rank - 2] != K) return {};
  p.dst.resize(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    const int64_t x = p.a.dims[i], y = p.b.dims[i];
    if (x != y && x != 1 && y != 1) return {};
    p.dst[i] = std::max(x, y);
  }
  p.dst[rank - 2] = p.a.dims[rank - 2];
  p.dst[rank - 1] = p.b.dims[rank - 1];
  return p;
}

// Whether Gemm's C is a constant row along N (or a scalar): the bias.
bool c_is_bias(const Product& p, const GraphFacts& f) {
  if (!p.c || !f.constant(p.c)) return false;
  const auto& cd = *f.dims(p.c);
  return (cd.size() == 1 || cd[0] == 1) && (cd.back() == p.dst[1] || cd.back() == 1);
}

std::optional<Product> gemm_product(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || !n.has_input(1) || !n.outputs[0]) return {};
  const Value *a = n.inputs[0], *b = n.inputs[1];
  if (f.dtype(a) != DataType::kFloat || f.dtype(b) != DataType::kFloat) return {};
  const auto *ad = f.dims(a), *bd = f.dims(b), *od = f.dims(n.outputs[0]);
  if (!ad || !bd || !od || ad->size() != 2 || bd->size() != 2 || !all_positive(*ad) ||
      !all_positive(*bd))
    return {};
  const bool ta = attr_int(n, "transA") != 0, tb = attr_int(n, "transB") != 0;
  Product p;
  p.out = *od;
  const int64_t M = ta ? (*ad)[1] : (*ad)[0], K = ta ? (*ad)[0] : (*ad)[1];
  const int64_t N = tb ? (*bd)[0] : (*bd)[1];
  if ((tb ? (*bd)[1] : (*bd)[0]) != K) return {};
  p.a = {.value = a, .dims = {M, K}, .strides = ta ? std::vector<int64_t>{1, M} : std::vector<int64_t>{K, 1}};
  p.b = {.value = b, .dims = {K, N}, .strides = tb ? std::vector<int64_t>{1, K} : std::vector<int64_t>{N, 1}};
  p.dst = {M, N};
  p.alpha = attr_float(n, "alpha");
  p.beta = attr_float(n, "beta");
  p.weights_mode = f.has_constant(b) && !f.has_constant(a);
  if (p.alpha != 1 && !p.weights_mode) return {};
  if (n.has_input(2)) {
    p.c = n.inputs[2];
    const auto* cd = f.dims(p.c);
    if (!cd || f.dtype(p.c) != DataType::kFloat || cd->size() > 2) return {};
    if (p.beta != 1 && !f.constant(p.c)) return {};  // beta scales constants only
  }
  return p;
}

std::optional<Product> product_of(const Node& n, const GraphFacts& f, const MayFold& may_fold) {
  return n.op_type == "Gemm" ? gemm_product(n, f) : matmul_product(n, f, may_fold);
}

// A Transpose of the result, written through strides: the last unit of the chain.
std::optional<EpilogueUnit> output_transpose(const Value* v, const Product& p, const MatchContext& ctx) {
  const auto& c = ctx.facts.consumers(v);
  if (ctx.facts.is_graph_output(v) || c.size() != 1 || !is_op(c[0], "Transpose") ||
      !ctx.is_free(c[0]) || !ctx.facts.dims(c[0]->outputs[0]))
    return std::nullopt;
  auto perm = perm_of(*c[0], p.dst.size());
  if (perm.size() != p.dst.size()) return std::nullopt;
  return EpilogueUnit{.nodes = {c[0]}, .out = c[0]->outputs[0], .perm = std::move(perm)};
}

bool match_product(const Node& n, const MatchContext& ctx, Group& g) {
  const auto p = product_of(n, ctx.facts, foldable_in(ctx));
  if (!p) return false;
  if (p->a.transpose) g.prologue.push_back(p->a.transpose);
  if (p->b.transpose) g.prologue.push_back(p->b.transpose);
  if (p->out.size() != p->dst.size() && !p->weights_mode) return true;  // a 1-D operand: no chain
  const int bias_axis = p->c ? -1 : static_cast<int>(p->out.size()) - 1;
  g.epilogue = match_epilogue(n.outputs[0], ctx, bias_axis);
  const Value* last = g.epilogue.empty() ? n.outputs[0] : g.epilogue.back().out;
  if (!ctx.standalone && !p->weights_mode)
    if (auto t = output_transpose(last, *p, ctx)) g.epilogue.push_back(std::move(*t));
  return true;
}

// How operands of the chain (in the node's output dims) map onto the destination's dims.
OperandDims chain_to_dst(const Product& p) {
  if (!p.weights_mode) return padded_to(static_cast<int>(p.dst.size()));
  const std::vector<int64_t> out = p.out;
  const int64_t m = p.dst[0];
  return [out, m](std::vector<int64_t> d) -> std::optional<std::vector<int64_t>> {
    if (d.size() > out.size()) return std::nullopt;
    d.insert(d.begin(), out.size() - d.size(), 1);
    bool ones = true, full = true;
    for (size_t i = 0; i + 1 < d.size(); ++i) {
      ones &= d[i] == 1;
      full &= d[i] == out[i];
    }
    if (!ones && !full) return std::nullopt;
    return std::vector<int64_t>{ones ? 1 : m, d.back()};
  };
}

// The destination: row-major, or the strides that write a Transpose's output (perm).
dnnl::memory::desc dst_md(const Product& p, const std::vector<int64_t>& perm) {
  if (perm.empty()) return plain_md(p.dst, dt::f32);
  std::vector<int64_t> ydims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) ydims[i] = p.dst[perm[i]];
  const auto ys = row_major_strides(ydims);
  std::vector<int64_t> xs(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) xs[perm[i]] = ys[i];
  return strided_md(p.dst, xs, dt::f32);
}

// Gemm's C as a link of the chain when it is not the bias.
std::vector<EpilogueUnit> c_units(const Product& p, const GraphFacts& f) {
  if (!p.c || c_is_bias(p, f)) return {};
  const bool full = *f.dims(p.c) == p.dst && !f.constant(p.c);
  PostOp op = full ? PostOp{.kind = PostOp::Kind::kSum, .operand = p.c}
                   : PostOp{.kind = PostOp::Kind::kBinary, .binary = kiln::cpu::BinaryOp::kAdd,
                            .operand = p.c};
  if (const Tensor* c = f.constant(p.c); c && p.beta != 1) {  // beta * C, made once
    op.data = Tensor(DataType::kFloat, c->dims());
    for (int64_t i = 0; i < c->numel(); ++i)
      op.data.data<float>()[i] = p.beta * static_cast<float>(c->get_f64(i));
  }
  return {EpilogueUnit{.ops = {op}}};
}

// Gemm's own bias (beta * C) when C is a constant row.
std::optional<Tensor> own_bias(const Product& p, const GraphFacts& f) {
  if (!c_is_bias(p, f)) return std::nullopt;
  return gemm_bias(*f.constant(p.c), p.beta, p.dst[1]);
}

// The constant weights as the primitive reads them: alpha folded in when it is not 1.
Tensor weights_of(const Product& p, const GraphFacts& f) {
  const Tensor& w = *f.constant(p.b.value);
  if (p.alpha == 1 && w.dtype() == DataType::kFloat) return w;
  Tensor s(DataType::kFloat, w.dims());
  for (int64_t i = 0; i < w.numel(); ++i) s.data<float>()[i] = p.alpha * static_cast<float>(w.get_f64(i));
  return s;
}

bool build_product(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  // the problem as matched: through the Transposes of the prologue
  const Product p = *product_of(n, f, [&](const Node* t) {
    return std::find(g.prologue.begin(), g.prologue.end(), t) != g.prologue.end();
  });
  const bool bias_unit = !g.epilogue.empty() && g.epilogue[0].is_bias;
  const auto to_dst = chain_to_dst(p);
  std::optional<Tensor> c_bias = own_bias(p, f);
  struct Made {
    dnnl::matmul::primitive_desc pd;
    FusedPostOps post;
    bool unit_bias;
    dnnl::memory::desc dst;
  };
  double flops = 2.0 * static_cast<double>(p.a.dims.back());
  for (int64_t d : p.dst) flops *= static_cast<double>(d);
  const int threads = threads_for_work(flops);
  ThreadScope scope(threads);
  // bf16 (constant weights): A reordered to bf16, the weights packed in bf16, the result float
  const bool bf16 = p.weights_mode && use_bf16(lw.options(), p.b.value, f);
  const dt in_dt = bf16 ? dt::bf16 : dt::f32;
  const Made made = fuse_longest(g, 0, [&](size_t units) {
    const bool unit_bias = bias_unit && units > 0;
    const bool transposed = units > 0 && !g.epilogue[units - 1].perm.empty();
    std::vector<EpilogueUnit> chain = c_units(p, f);
    chain.insert(chain.end(), g.epilogue.begin() + (unit_bias ? 1 : 0),
                 g.epilogue.begin() + units - (transposed ? 1 : 0));
    FusedPostOps post = make_post_ops(chain, to_dst, f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(post.ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto a_md = strided_md(p.a.dims, p.a.strides, in_dt);
    const auto b_md = p.weights_mode ? dnnl::memory::desc(p.b.dims, in_dt, dnnl::memory::format_tag::any)
                                     : strided_md(p.b.dims, p.b.strides, dt::f32);
    dnnl::memory::desc bias_md;
    if (c_bias || unit_bias) {
      std::vector<int64_t> bd(p.dst.size(), 1);
      bd.back() = p.dst.back();
      bias_md = plain_md(bd, dt::f32);
    }
    const auto d = dst_md(p, transposed ? g.epilogue[units - 1].perm : std::vector<int64_t>{});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, bias_md, d), attr, dnnl_engine());
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0 && (transposed || !g.prologue.empty()))
      not_fusable("strided operands only through a reference implementation");
    return Made{pd, std::move(post), unit_bias, d};
  });
  auto step = std::make_unique<DnnlStep>(dnnl::matmul(made.pd), &n, bf16 ? "onednn.matmul_bf16" : "onednn.matmul");
  step->threads = threads;
  const int a_slot = bf16 ? lw.in_layout(p.a.value, plain_md(*f.dims(p.a.value), dt::bf16)) : lw.plain(p.a.value);
  step->bind_input(DNNL_ARG_SRC, a_slot, made.pd.src_desc(), *f.dims(p.a.value));
  if (const Tensor* stored = bf16 && p.alpha == 1 ? stored_bf16_tensor(p.b.value, f) : nullptr) {
    step->bind_constant(DNNL_ARG_WEIGHTS, lw.weights().get(*stored, strided_md(p.b.dims, p.b.strides, dt::bf16),
                                                           made.pd.weights_desc()));
  } else if (p.weights_mode && p.alpha == 1 && f.dtype(p.b.value) == DataType::kFloat) {
    step->bind_constant(DNNL_ARG_WEIGHTS, lw.packed_constant(p.b.value, strided_md(p.b.dims, p.b.strides, dt::f32),
                                                             made.pd.weights_desc()));
  } else if (p.weights_mode) {
    const Tensor w = weights_of(p, f);
    step->bind_constant(DNNL_ARG_WEIGHTS, lw.weights().get(w, strided_md(p.b.dims, p.b.strides, dt::f32),
                                                           made.pd.weights_desc()));
  } else {
    step->bind_input(DNNL_ARG_WEIGHTS, lw.plain(p.b.value), made.pd.weights_desc(), *f.dims(p.b.value));
  }
  const Tensor* unit_bias = made.unit_bias ? bias_constant(g.epilogue[0], f) : nullptr;
  if (auto bias = combined_bias(c_bias ? &*c_bias : nullptr, unit_bias, p.dst.back()))
    step->bind_constant(DNNL_ARG_BIAS, lw.weights().get(*bias, made.pd.bias_desc(), made.pd.bias_desc()));
  const bool transposed = !g.epilogue.empty() && !g.epilogue.back().perm.empty();
  const auto residual_md = transposed ? made.dst : plain_md(p.out, dt::f32);
  const int share = bind_post_ops(made.post, residual_md, lw, *step);
  const int out = lw.define(g.output());
  step->bind_output(DNNL_ARG_DST, out, made.dst, OutputMemory::kPlanned, share);
  step->bind_scratchpad(made.pd.scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kOnednnMatmul{.name = "onednn.matmul", .match = match_product,
                                         .build = build_product};

}  // namespace kiln::engine
