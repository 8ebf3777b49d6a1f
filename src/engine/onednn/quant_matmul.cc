// MatMul and Gemm with constant int8 weights through oneDNN's int8 matmul, in the three forms
// quantizers write:
//  - static QDQ: DequantizeLinear(A: uint8/int8, constant per-tensor parameters) x
//    DequantizeLinear(constant int8 B, zero points 0, per tensor or per column) [-> bias Add]
//    [-> Relu] [-> QuantizeLinear]: constant output scales, requantization fused as for the conv;
//  - dynamic QDQ: A = DequantizeLinear(DynamicQuantizeLinear(x)): A's scale and zero point are
//    computed each run, so the output scales (s_x * s_w[n]) and the zero point are given to oneDNN
//    at run time (DNNL_RUNTIME_F32_VAL / DNNL_RUNTIME_S32_VAL);
//  - ONNX Runtime's quantize_dynamic: MatMulInteger(x_q, B, x_zp) -> Cast(float) -> Mul(scale)
//    [-> Add bias], the scale (s_x * s_w, a value computed each run) read as the output scales;
//  - QLinearMatMul with a constant int8 B (zero points 0): the static form in one node.
// A's leading dims fold into M. The bias is added to the int32 accumulator before the output
// scales in oneDNN 2.6, so it is given in the accumulator's units: b[n] / scale[n], recomputed
// each run where the scale is a run-time value. The chain after the result: the bias, then
// activations (only Relu before a QuantizeLinear). The DynamicQuantizeLinear itself is
// cpu.dynamic_quantize (native/quant_steps.cc): it may be shared by several matmuls (Q, K, V).
//
// Where oneDNN's int8 kernels would not be exact (no VNNI or AMX: vpmaddubsw's int16 sums of two
// products saturate, onednn/int8_support.h), the dynamic forms run on kiln's exact int16 kernel
// where the CPU has AVX2 ("cpu.int16_matmul", native/int16_matmul_step.h: the same scales, zero
// point, bias and activations, the integer sums exact), else compute in float
// ("onednn.quant_matmul_f32"): A's 8-bit values become floats each run (exactly), B's once, and
// one f32 matmul sums their products, which are the integer sums while they stay below 2^24 in
// magnitude (rounded to float beyond; never saturated). The scales, the zero point and the bias
// go in as for the int8 step. Without it, MatMulInteger ran on the reference kernel there (BERT-base
// dynamic int8: 5 s a run on an AVX2 Zen 3, ONNX Runtime 0.11 s).
#include <cmath>

#include "engine/lowering.h"
#include "engine/native/int16_matmul_step.h"
#include "engine/native/row_epilogue.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/onednn/int8_support.h"
#include "engine/onednn/onednn_kernels.h"
#include "engine/onednn/post_ops.h"
#include "engine/onednn/weight_cache.h"
#include "engine/qdq_pattern.h"
#include "engine/runtime_quant_params.h"
#include "engine/threads.h"
#include "ops/attrs.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct QuantMatmulForm {
  const Node* dq_a = nullptr;  // A's DequantizeLinear (a member of the group), or null
  const Value* a = nullptr;    // the 8-bit A the primitive reads
  DataType a_type = DataType::kUInt8;
  std::optional<QuantParams> a_params;                      // constant parameters (static)
  const Value *a_scale = nullptr, *a_zero_point = nullptr;  // or run-time ones (dynamic QDQ)
  const Value* w = nullptr;    // int8 constant, stored [K, N], or [N, K] when transposed
  const std::vector<int64_t>* w_dims = nullptr;  // w's (its bytes are not read to match)
  bool w_transposed = false;
  std::vector<float> w_scale;  // 1 or N; empty for MatMulInteger (in out_scale)
  const Value* out_scale = nullptr;  // MatMulInteger: the run-time scale Mul'ed into the result
  std::vector<const Node*> scaling;  // MatMulInteger: the Cast and that Mul
  const Tensor* c = nullptr;         // Gemm's C: a constant bias along N
  int64_t m = 1, k = 0, n = 0;
  const Value* result = nullptr;     // the float product (before the chain)
  std::optional<QuantParams> out;    // QLinearMatMul: the node's own requantization
  bool in_float = false;             // dynamic forms where int8 is not exact: an f32 matmul
};

bool is_scalar_or(const GraphFacts& f, const Value* v, int64_t n) {
  const auto* d = f.dims(v);
  if (!d) return false;
  int64_t e = 1;
  for (int64_t x : *d) e *= x;
  return (e == 1 && d->size() <= 1) || (d->size() == 1 && e == n);
}

// A's dims fold into [M, K]; B is [K, N].
bool set_dims(QuantMatmulForm& q, const GraphFacts& f, const Value* a) {
  const auto* ad = f.dims(a);
  if (!ad || ad->empty() || q.w_dims->size() != 2) return false;
  q.k = ad->back();
  for (size_t i = 0; i + 1 < ad->size(); ++i) q.m *= (*ad)[i];
  q.n = (*q.w_dims)[q.w_transposed ? 0 : 1];
  return (*q.w_dims)[q.w_transposed ? 1 : 0] == q.k && q.m > 0 && q.k > 0 && q.n > 0;
}

// A read through a DequantizeLinear: constant per-tensor parameters, or DynamicQuantizeLinear's.
bool read_a(QuantMatmulForm& q, const Value* a, const GraphFacts& f) {
  const Node* dq = a->producer;
  if (!is_op(dq, "DequantizeLinear")) return false;
  if (auto d = dequantized_input(a, f)) {
    q.a_params = d->params;
    q.a_type = d->params.type;
  } else {
    const Node* dyn = dq->inputs[0]->producer;
    if (!is_op(dyn, "DynamicQuantizeLinear") || !dq->has_input(2) || dyn->num_outputs() < 3 ||
        dq->inputs[0] != dyn->outputs[0] || dq->inputs[1] != dyn->outputs[1] ||
        dq->inputs[2] != dyn->outputs[2] || attr_int(*dq, "axis", 1) != 1)
      return false;
    q.a_scale = dyn->outputs[1];
    q.a_zero_point = dyn->outputs[2];
    q.a_type = DataType::kUInt8;
  }
  q.dq_a = dq;
  q.a = dq->inputs[0];
  return true;
}

std::optional<QuantMatmulForm> qdq_form(const Node& n, const GraphFacts& f) {
  QuantMatmulForm q;
  if (!n.has_input(0) || !n.has_input(1) || !read_a(q, n.inputs[0], f)) return std::nullopt;
  const bool gemm = n.op_type == "Gemm";
  if (gemm && (attr_int(n, "transA") != 0 || attr_float(n, "alpha") != 1.f || attr_float(n, "beta") != 1.f))
    return std::nullopt;
  q.w_transposed = gemm && attr_int(n, "transB") != 0;
  auto w = dequantized_weight(n.inputs[1], f, q.w_transposed ? 0 : 1);
  if (!w) return std::nullopt;
  q.in_float = !int8_exact(q.a_type, w->q, f);
  if (q.in_float && q.a_params) return std::nullopt;  // static: the float kernels take it
  q.w = w->q;
  q.w_dims = w->dims;
  q.w_scale = w->params.scale;
  if (!set_dims(q, f, n.inputs[0]) || (q.w_scale.size() != 1 && static_cast<int64_t>(q.w_scale.size()) != q.n))
    return std::nullopt;
  if (gemm && n.has_input(2)) {
    q.c = f.constant(n.inputs[2]);
    if (!q.c || q.c->dtype() != DataType::kFloat || !is_scalar_or(f, n.inputs[2], q.n)) return std::nullopt;
  }
  if (gemm && f.dims(n.inputs[0])->size() != 2) return std::nullopt;
  q.result = n.outputs[0];
  return q;
}

// MatMulInteger(x_q, B, x_zp) -> Cast(to float) -> Mul(scale): the Cast and the Mul are the
// group's (their intermediates read by them alone).
std::optional<QuantMatmulForm> integer_form(const Node& n, const MatchContext& ctx) {
  const GraphFacts& f = ctx.facts;
  QuantMatmulForm q;
  if (!n.has_input(0) || !n.has_input(1) || f.constant(n.inputs[0])) return std::nullopt;
  q.a = n.inputs[0];
  q.a_type = f.dtype(q.a);
  if (q.a_type != DataType::kUInt8 && q.a_type != DataType::kInt8) return std::nullopt;
  q.w = n.inputs[1];
  if (!(q.w_dims = int8_constant_dims(q.w, f))) return std::nullopt;
  q.in_float = !int8_exact(q.a_type, q.w, f);
  if (n.has_input(2)) {
    if (f.dtype(n.inputs[2]) != q.a_type || !is_scalar_or(f, n.inputs[2], 1)) return std::nullopt;
    q.a_zero_point = n.inputs[2];
  }
  if (n.has_input(3)) {  // B's zero point: zeros (symmetric weights)
    const Tensor* z = f.constant(n.inputs[3]);
    if (!z || z->dtype() != DataType::kInt8) return std::nullopt;
    for (int64_t i = 0; i < z->numel(); ++i)
      if (z->data<int8_t>()[i] != 0) return std::nullopt;
  }
  if (!set_dims(q, f, n.inputs[0])) return std::nullopt;
  const Node* cast = sole_consumer(n.outputs[0], ctx);
  if (!is_op(cast, "Cast") || attr_int(*cast, "to", 0) != static_cast<int64_t>(DataType::kFloat))
    return std::nullopt;
  const Node* mul = sole_consumer(cast->outputs[0], ctx);
  if (!is_op(mul, "Mul") || mul->num_inputs() != 2) return std::nullopt;
  const Value* s = mul->inputs[0] == cast->outputs[0] ? mul->inputs[1] : mul->inputs[0];
  if (s == cast->outputs[0] || f.dtype(s) != DataType::kFloat || !is_scalar_or(f, s, q.n)) return std::nullopt;
  q.out_scale = s;
  q.scaling = {cast, mul};
  q.result = mul->outputs[0];
  return q;
}

// Per-tensor parameters from constant inputs (scale, zero point) of type t.
std::optional<QuantParams> constant_params(const Node& n, int scale, int zp, DataType t, const GraphFacts& f) {
  const Tensor* s = n.has_input(scale) ? f.constant(n.inputs[scale]) : nullptr;
  const Tensor* z = n.has_input(zp) ? f.constant(n.inputs[zp]) : nullptr;
  if (!s || !z || s->dtype() != DataType::kFloat || s->numel() != 1 || z->dtype() != t || z->numel() != 1)
    return std::nullopt;
  const float v = s->data<float>()[0];
  if (!std::isfinite(v) || !(v > 0)) return std::nullopt;
  return QuantParams{.type = t, .scale = {v}, .zero_point = {static_cast<int32_t>(z->get_i64(0))}};
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): b a constant int8 matrix with
// zero points 0, per tensor or per column; every parameter constant.
std::optional<QuantMatmulForm> qlinear_form(const Node& n, const GraphFacts& f) {
  if (n.num_inputs() != 8 || !n.has_input(0) || f.constant(n.inputs[0])) return std::nullopt;
  QuantMatmulForm q;
  q.a = n.inputs[0];
  q.a_type = f.dtype(q.a);
  if (q.a_type != DataType::kUInt8 && q.a_type != DataType::kInt8) return std::nullopt;
  q.a_params = constant_params(n, 1, 2, q.a_type, f);
  const DataType yt = n.has_input(7) ? f.dtype(n.inputs[7]) : DataType::kUndefined;
  if (yt == DataType::kUInt8 || yt == DataType::kInt8) q.out = constant_params(n, 6, 7, yt, f);
  q.w = n.has_input(3) ? n.inputs[3] : nullptr;
  q.w_dims = int8_constant_dims(q.w, f);
  const Tensor* ws = n.has_input(4) ? f.constant(n.inputs[4]) : nullptr;
  const Tensor* wz = n.has_input(5) ? f.constant(n.inputs[5]) : nullptr;
  if (!q.a_params || !q.out || !q.w_dims || !ws || !wz ||
      ws->dtype() != DataType::kFloat || wz->dtype() != DataType::kInt8 || wz->numel() != ws->numel() ||
      !int8_exact(q.a_type, q.w, f) || !set_dims(q, f, q.a) || (ws->numel() != 1 && ws->numel() != q.n))
    return std::nullopt;
  for (int64_t i = 0; i < ws->numel(); ++i) {
    const float v = ws->data<float>()[i];
    if (!std::isfinite(v) || !(v > 0) || wz->data<int8_t>()[i] != 0) return std::nullopt;
    q.w_scale.push_back(v);
  }
  q.result = n.outputs[0];
  return q;
}

std::optional<QuantMatmulForm> form_of(const Node& n, const MatchContext& ctx) {
  if (n.op_type == "QLinearMatMul") return qlinear_form(n, ctx.facts);
  return n.op_type == "MatMulInteger" ? integer_form(n, ctx) : qdq_form(n, ctx.facts);
}

bool eltwise_only(const EpilogueUnit& u, bool requant) {
  if (u.is_bias) return true;
  for (const PostOp& op : u.ops)
    if (op.kind != PostOp::Kind::kEltwise || (requant && op.act.kind != ActKind::kLeakyRelu)) return false;
  return !u.ops.empty();
}

bool match_quant_matmul(const Node& n, const MatchContext& ctx, Group& g) {
  if (ctx.standalone) return false;
  const auto q = form_of(n, ctx);
  if (!q) return false;
  if (q->dq_a) {
    if (sole_consumer(q->dq_a->outputs[0], ctx) != &n || !ctx.is_free(q->dq_a)) return false;
    g.prologue.push_back(q->dq_a);
  }
  for (const Node* s : q->scaling)
    if (!ctx.is_free(s)) return false;
  if (q->out) return true;  // QLinearMatMul: the node alone
  const int rank = static_cast<int>(ctx.facts.dims(q->result)->size());
  std::vector<EpilogueUnit> units;
  if (!q->scaling.empty())
    units.push_back(EpilogueUnit{.nodes = q->scaling, .out = q->result});
  std::vector<EpilogueUnit> chain = match_epilogue(q->result, ctx, q->c ? -1 : rank - 1);
  const bool static_a = q->a_params.has_value();
  size_t k = 0;
  while (k < chain.size() && eltwise_only(chain[k], static_a)) ++k;  // static: Relu only
  chain.resize(k);
  const Value* end = k ? chain.back().out : q->result;
  units.insert(units.end(), chain.begin(), chain.end());
  if (static_a)
    if (auto rq = quantize_of(end, ctx)) units.push_back(EpilogueUnit{.nodes = {rq->q}, .out = rq->q->outputs[0]});
  g.epilogue = std::move(units);
  return true;
}

// The step of the dynamic forms. oneDNN 2.6 runs int8 matmuls with run-time output scales or
// zero points on its gemm kernels only (VNNI, a third of its brgemm's speed with AMX), so neither
// is run-time here: the output scales are the weights' (constant), the run-time scale (x's, or
// MatMulInteger's x_scale * w_scale) multiplies in as a binary post-op, and the zero point goes
// into the bias, which is recomputed each run in the accumulator's units:
// bias[n] / scale[n] - zero_point * sum_k w[k][n].
class QuantMatmulStep : public DnnlStep {
 public:
  // w_scale: the constant part of the scale (1 or N values; empty: 1); colsum: per column.
  QuantMatmulStep(dnnl::primitive p, const Node* node, std::vector<float> w_scale,
                  std::vector<float> bias, std::vector<int32_t> colsum, int64_t scale_cols,
                  std::string_view kernel = "onednn.quant_matmul")
      : DnnlStep(std::move(p), node, kernel),
        w_scale_(std::move(w_scale)),
        bias_real_(std::move(bias)),
        colsum_(std::move(colsum)),
        scale_(dnnl::memory::desc({1, scale_cols}, dt::f32, tag::ab), dnnl_engine()),
        bias_(dnnl::memory::desc({1, static_cast<int64_t>(colsum_.size())}, dt::f32, tag::ab), dnnl_engine()),
        scale_cols_(scale_cols) {
    bind_constant(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, scale_);
    bind_constant(DNNL_ARG_BIAS, bias_);
  }
  RuntimeQuantParams params;  // the scale's run-time part, A's zero point
  void run(RunState& st) override {
    const Tensor& s = params.scale(st, scale_cols_, kernel);
    float* sc = static_cast<float*>(scale_.get_data_handle());
    for (int64_t c = 0; c < scale_cols_; ++c) sc[c] = s.data<float>()[s.numel() == 1 ? 0 : c];
    const int32_t zp = params.zero_point(st, kernel);
    float* b = static_cast<float*>(bias_.get_data_handle());
    const int64_t n = static_cast<int64_t>(colsum_.size());
    for (int64_t c = 0; c < n; ++c) {
      const float unit = sc[scale_cols_ == 1 ? 0 : c] * (w_scale_.empty() ? 1.f : w_scale_[w_scale_.size() == 1 ? 0 : c]);
      b[c] = (bias_real_.empty() ? 0.f : bias_real_[c] / unit) - static_cast<float>(zp) * static_cast<float>(colsum_[c]);
    }
    DnnlStep::run(st);
  }

 private:
  std::vector<float> w_scale_, bias_real_;
  std::vector<int32_t> colsum_;
  dnnl::memory scale_, bias_;
  int64_t scale_cols_;
};

// The float form: A's 8-bit values reordered to floats into a buffer of the step's own before
// each run, the matmul reading them there.
class FloatQuantMatmulStep : public QuantMatmulStep {
 public:
  FloatQuantMatmulStep(dnnl::primitive p, const Node* node, std::vector<float> w_scale,
                       std::vector<float> bias, std::vector<int32_t> colsum, int64_t scale_cols,
                       const dnnl::memory::desc& a8, const dnnl::memory::desc& a32)
      : QuantMatmulStep(std::move(p), node, std::move(w_scale), std::move(bias), std::move(colsum),
                        scale_cols, "onednn.quant_matmul_f32"),
        a8_(unbound_memory(a8)), a32_(a32, dnnl_engine()), widen_(a8_, a32_) {
    bind_constant(DNNL_ARG_SRC, a32_);
  }
  void read_a(int slot, std::vector<int64_t> dims) {
    a_slot_ = slot;
    a_dims_ = std::move(dims);
    inputs.push_back(slot);
  }
  void run(RunState& st) override {
    const Tensor& a = st.slots[a_slot_].tensor;
    KILN_CHECK(a.dims() == a_dims_, ErrorKind::kRuntime, "{}: A is {}, the plan's {}", kernel,
               dims_to_string(a.dims()), dims_to_string(a_dims_));
    a8_.set_data_handle(const_cast<void*>(a.raw()));
    widen_.execute(dnnl_stream(), a8_, a32_);
    QuantMatmulStep::run(st);
  }

 private:
  dnnl::memory a8_, a32_;
  dnnl::reorder widen_;
  int a_slot_ = -1;
  std::vector<int64_t> a_dims_;
};

// Per column of w (stored [K, N], or [N, K] when transposed): the sum of its values.
std::vector<int32_t> column_sums(const Tensor& w, bool transposed) {
  const int64_t rows = w.dim(0), cols = w.dim(1);
  const int8_t* p = w.data<int8_t>();
  std::vector<int32_t> sums(static_cast<size_t>(transposed ? rows : cols), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) sums[transposed ? r : c] += p[r * cols + c];
  return sums;
}

dnnl::memory s32_scalar(int32_t v) {
  dnnl::memory m(dnnl::memory::desc({1}, dt::s32, tag::x), dnnl_engine());
  *static_cast<int32_t*>(m.get_data_handle()) = v;
  return m;
}

bool build_quant_matmul(Group& g, Lowering& lw) {
  const Node& node = *g.anchor;
  const GraphFacts& f = lw.facts();
  std::unordered_set<const Node*> none;
  const auto q = form_of(node, MatchContext{f, none, false});
  if (!q) return false;
  const bool requant = q->out || (!g.epilogue.empty() && is_op(g.epilogue.back().nodes[0], "QuantizeLinear"));
  std::optional<QuantParams> out_q = q->out;
  if (requant && !out_q && !(out_q = quant_params(*g.epilogue.back().nodes[0], f))) return false;
  std::vector<EpilogueUnit> chain;  // the activations after the bias
  std::vector<float> bias;          // real units
  for (const EpilogueUnit& u : g.epilogue) {
    if (is_op(u.nodes[0], "QuantizeLinear") || u.out == q->result) continue;
    if (u.is_bias) {
      const Tensor* b = bias_constant(u, f);
      if (!b || b->numel() != q->n) return false;
      bias.resize(q->n, 0.f);
      for (int64_t c = 0; c < q->n; ++c) bias[c] += static_cast<float>(b->get_f64(c));
    } else {
      chain.push_back(u);
    }
  }
  if (q->c) {
    bias.resize(q->n, 0.f);
    for (int64_t c = 0; c < q->n; ++c) bias[c] += static_cast<float>(q->c->get_f64(q->c->numel() == 1 ? 0 : c));
  }
  const bool runtime_scale = !q->a_params;
  if (q->in_float && (!runtime_scale || requant)) return false;
  const bool per_column = q->out_scale ? f.dims(q->out_scale)->size() == 1 && f.dims(q->out_scale)->at(0) == q->n
                                       : q->w_scale.size() > 1;
  const int64_t scale_cols = q->out_scale ? (per_column ? q->n : 1) : 1;
  const auto row_ops = row_ops_of(chain);
  if (q->in_float && row_ops) {  // kiln's exact int16 kernel where the CPU has AVX2
    const Int16MatmulSpec s{.node = &node, .a = q->a, .a_signed = q->a_type == DataType::kInt8,
                            .w = f.constant(q->w), .w_transposed = q->w_transposed, .m = q->m, .k = q->k, .n = q->n,
                            .w_scale = q->out_scale ? std::vector<float>{} : q->w_scale,
                            .scale = q->out_scale ? q->out_scale : q->a_scale, .scale_cols = scale_cols,
                            .zero_point = q->a_zero_point, .bias = bias, .ops = *row_ops,
                            .out = g.output()};
    if (add_int16_matmul(s, lw)) return true;
  }
  FusedPostOps post = make_post_ops(chain, padded_to(2), f);  // eltwise only
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const int mask = per_column ? 1 << 1 : 0;
  std::vector<float> scales;  // constant output scales
  if (runtime_scale) {
    dnnl::post_ops ops;  // the run-time scale first, then the chain
    ops.append_binary(dnnl::algorithm::binary_mul, plain_md({1, scale_cols}, dt::f32));
    for (int i = 0; i < post.ops.len(); ++i) {
      float sc, alpha, beta;
      dnnl::algorithm alg;
      post.ops.get_params_eltwise(i, sc, alg, alpha, beta);
      ops.append_eltwise(sc, alg, alpha, beta);
    }
    attr.set_post_ops(ops);
    if (!q->out_scale) {  // dynamic QDQ: the weights' scales are constant
      const bool w_cols = q->w_scale.size() > 1;
      attr.set_output_scales(w_cols ? 1 << 1 : 0, q->w_scale);
    }
  } else {
    attr.set_post_ops(post.ops);
    const float sa = q->a_params->scale[0];
    for (int64_t c = 0; c < (per_column ? q->n : 1); ++c)
      scales.push_back(sa * q->w_scale[q->w_scale.size() == 1 ? 0 : c] / (requant ? out_q->scale[0] : 1.f));
    attr.set_output_scales(mask, scales);
  }
  const int32_t za = q->a_params ? q->a_params->zero_point[0] : 0, zy = requant ? out_q->zero_point[0] : 0;
  if (za != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (zy != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  const auto a8_md = plain_md({q->m, q->k}, *dnnl_dtype(q->a_type));
  const dt w_dt = q->in_float ? dt::f32 : dt::s8;
  const auto a_md = q->in_float ? plain_md({q->m, q->k}, dt::f32) : a8_md;
  const auto w_md = dnnl::memory::desc({q->k, q->n}, w_dt, tag::any);
  const dt dst_dt = requant ? *dnnl_dtype(out_q->type) : dt::f32;
  const auto d_md = plain_md({q->m, q->n}, dst_dt);
  const auto bias_md = bias.empty() && !runtime_scale ? dnnl::memory::desc()
                                                      : dnnl::memory::desc({1, q->n}, dt::f32, tag::ab);
  const int threads = threads_for_work(2.0 * q->m * q->k * q->n / 4);
  ThreadScope scope(threads);
  std::optional<dnnl::matmul::primitive_desc> made;
  try {
    made.emplace(dnnl::matmul::desc(a_md, w_md, bias_md, d_md), attr, dnnl_engine());
  } catch (const dnnl::error&) {
    if (!q->in_float) throw;
    return false;  // the float kernels take it
  }
  const dnnl::matmul::primitive_desc& pd = *made;

  // Constant scales: the bias in accumulator units now; run-time ones: each run.
  std::unique_ptr<DnnlStep> step;
  if (runtime_scale) {
    std::vector<float> w_scale = q->out_scale ? std::vector<float>{} : q->w_scale;
    // (Summing BERT-base's 85 M int8 weights again took 100 ms of every new plan.)
    using Sums = std::vector<int32_t>;
    const auto sums = [&] { return std::make_shared<const Sums>(column_sums(*f.constant(q->w), q->w_transposed)); };
    const char* kind = q->w_transposed ? "int8 row sums" : "int8 column sums";
    Sums colsum = q->w->is_constant() ? *lw.weights().derived<Sums>(q->w, kind, sums) : *sums();
    std::unique_ptr<QuantMatmulStep> s;
    if (q->in_float) {
      auto fs = std::make_unique<FloatQuantMatmulStep>(dnnl::matmul(pd), &node, std::move(w_scale), bias,
                                                       std::move(colsum), scale_cols, a8_md, a_md);
      fs->read_a(lw.plain(q->a), *f.dims(q->a));
      s = std::move(fs);
    } else {
      s = std::make_unique<QuantMatmulStep>(dnnl::matmul(pd), &node, std::move(w_scale), bias,
                                            std::move(colsum), scale_cols);
    }
    const Value* sv = q->out_scale ? q->out_scale : q->a_scale;
    s->params.read_by(*s, lw.plain(sv), q->a_zero_point ? lw.plain(q->a_zero_point) : -1);
    step = std::move(s);
  } else {
    step = std::make_unique<DnnlStep>(dnnl::matmul(pd), &node, "onednn.quant_matmul");
    if (!bias.empty()) {
      Tensor b(DataType::kFloat, {1, q->n});
      for (int64_t c = 0; c < q->n; ++c)
        b.data<float>()[c] = bias[c] / (scales[per_column ? c : 0] * (requant ? out_q->scale[0] : 1.f));
      step->bind_constant(DNNL_ARG_BIAS, lw.weights().get(b, bias_md, bias_md));
    }
    if (za != 0) step->bind_constant(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, s32_scalar(za));
  }
  if (zy != 0) step->bind_constant(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, s32_scalar(zy));
  step->threads = threads;
  // (In the float form the reorder into the primitive's layout also widens s8 to f32.)
  const auto w_plain = q->w_transposed ? dnnl::memory::desc({q->k, q->n}, dt::s8, tag::ba)
                                       : dnnl::memory::desc({q->k, q->n}, dt::s8, tag::ab);
  step->bind_constant(DNNL_ARG_WEIGHTS, lw.packed_constant(q->w, w_plain, pd.weights_desc()));
  if (!q->in_float) step->bind_input(DNNL_ARG_SRC, lw.plain(q->a), a_md, *f.dims(q->a));
  bind_post_ops(post, d_md, lw, *step);
  const int out = lw.define(g.output());
  step->bind_output(DNNL_ARG_DST, out, d_md, OutputMemory::kPlanned, -1);
  step->bind_scratchpad(pd.scratchpad_desc(), lw.scratchpad());
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kOnednnQuantMatmul{.name = "onednn.quant_matmul", .match = match_quant_matmul,
                                              .build = build_quant_matmul};

}  // namespace kiln::engine
